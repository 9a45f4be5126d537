"""reStructuredText and Org documents (converted by pandoc)."""

from __future__ import annotations

import io

from services.extractors.document import Extracted
from services.extractors.office.properties import text_markup_properties
from services.extractors.office.reading import Reading
from services.extractors.text import decode_text


def extract_rst(ex: Reading, raw: bytes) -> Extracted:
    return _markup(ex, "rst", raw)


def extract_org(ex: Reading, raw: bytes) -> Extracted:
    return _markup(ex, "org", raw)


def _markup(ex: Reading, fmt: str, raw: bytes) -> Extracted:
    text = decode_text(raw)  # pandoc reads UTF-8 only
    elements = ex.partition(fmt, file=io.BytesIO(text.encode("utf-8")))
    builder = ex.builder()
    for el in elements:
        builder.add(el)
    return ex.finish(fmt, builder.finish(), elements, text_markup_properties(text, fmt))
