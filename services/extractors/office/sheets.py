"""Excel workbooks (.xlsx, .xls) and CSV tables: one heading per sheet, tables in chunks of rows."""

from __future__ import annotations

import io

from services.extractors.document import Extracted
from services.extractors.office.properties import properties
from services.extractors.office.reading import Reading
from services.extractors.text import decode_text


def extract_xlsx(ex: Reading, raw: bytes, fmt: str = "xlsx") -> Extracted:
    elements = ex.partition("xlsx", file=io.BytesIO(raw), include_header=False, find_subtable=True)
    builder = ex.builder("sheets")
    for el in elements:
        builder.add(el)
    blocks = builder.finish()
    sheets = list(dict.fromkeys(b.attributes["sheet"] for b in blocks if "sheet" in b.attributes))
    # A sheet heading alone is not content.
    if all(b.kind == "heading" for b in blocks):
        blocks = []
    return ex.finish(fmt, blocks, elements, properties(raw, fmt), extra_meta={"sheets": ", ".join(sheets)})


def extract_xls(ex: Reading, raw: bytes) -> Extracted:
    return extract_xlsx(ex, raw, "xls")


def extract_csv(ex: Reading, raw: bytes) -> Extracted:
    text = decode_text(raw)  # UTF-8, UTF-16 with BOM, else Windows-1252, like text files
    elements = ex.partition("csv", file=io.BytesIO(text.encode("utf-8")), encoding="utf-8", include_header=False)
    builder = ex.builder()
    for el in elements:
        builder.add(el)
    blocks = builder.finish()
    columns = next((b.text.split("\n", 1)[0] for b in blocks if b.kind == "table"), "")
    rows = sum(1 for ln in text.split("\n") if ln.strip())
    return ex.finish("csv", blocks, elements, {}, title=None, extra_meta={"columns": columns, "lines": str(rows)})
