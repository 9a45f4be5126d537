"""Word (.docx), OpenDocument text, EPUB and RTF: documents read with their own properties."""

from __future__ import annotations

from secondbrain.errors import PermanentError
from services.extractors.document import Extracted
from services.extractors.office.reading import Reading


def extract_docx(ex: Reading, raw: bytes) -> Extracted:
    doc = ex.document("docx", raw)
    pages = [b.page for b in doc.blocks if b.page is not None]
    if pages:  # only when Word recorded rendered page breaks
        doc.metadata["pages"] = str(max(pages))
    return doc


def extract_odt(ex: Reading, raw: bytes) -> Extracted:
    return ex.document("odt", raw)


def extract_epub(ex: Reading, raw: bytes) -> Extracted:
    return ex.document("epub", raw)


def extract_rtf(ex: Reading, raw: bytes) -> Extracted:
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise PermanentError("the .rtf file is not an RTF document (it does not start with {\\rtf); "
                             "upload it with its real type or extension")
    return ex.document("rtf", raw)
