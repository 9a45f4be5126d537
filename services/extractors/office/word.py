"""Word (.docx), OpenDocument text, EPUB and RTF: documents read with their own properties."""

from __future__ import annotations

from typing import TYPE_CHECKING

from secondbrain.errors import PermanentError
from services.extractors.document import Extracted

if TYPE_CHECKING:
    from services.extractors.office.extractor import OfficeExtractor


def extract_docx(ex: OfficeExtractor, raw: bytes) -> Extracted:
    doc = ex.document("docx", raw)
    pages = [b.page for b in doc.blocks if b.page is not None]
    if pages:  # only when Word recorded rendered page breaks
        doc.metadata["pages"] = str(max(pages))
    return doc


def extract_odt(ex: OfficeExtractor, raw: bytes) -> Extracted:
    return ex.document("odt", raw)


def extract_epub(ex: OfficeExtractor, raw: bytes) -> Extracted:
    return ex.document("epub", raw)


def extract_rtf(ex: OfficeExtractor, raw: bytes) -> Extracted:
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise PermanentError("the .rtf file is not an RTF document (it does not start with {\\rtf); "
                             "upload it with its real type or extension")
    return ex.document("rtf", raw)
