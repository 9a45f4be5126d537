"""reStructuredText and Org documents (converted by pandoc)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from services.extractors.document import Extracted
from services.extractors.office.properties import text_markup_properties
from services.extractors.text import decode_text

if TYPE_CHECKING:
    from services.extractors.office.extractor import OfficeExtractor


def extract_rst(ex: OfficeExtractor, raw: bytes) -> Extracted:
    return _markup(ex, "rst", raw)


def extract_org(ex: OfficeExtractor, raw: bytes) -> Extracted:
    return _markup(ex, "org", raw)


def _markup(ex: OfficeExtractor, fmt: str, raw: bytes) -> Extracted:
    text = decode_text(raw)  # pandoc reads UTF-8 only
    elements = ex._partition(fmt, file=io.BytesIO(text.encode("utf-8")))
    builder = ex.builder()
    for el in elements:
        builder.add(el)
    return ex.finish(fmt, builder.finish(), elements, text_markup_properties(text, fmt))
