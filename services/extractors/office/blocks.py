"""unstructured's element stream -> blocks with heading paths, slide numbers, sheet names and table chunks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from services.extractors.document import Block

_WS = re.compile(r"[ \t\r\f\v\u00a0]+")
_ORDERED_LABEL = re.compile(r"^\s*(\d{1,4}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)]\s")
_SKIPPED_CATEGORIES = {"PageBreak", "PageNumber"}


def clean(text: str | None) -> str:
    """Collapse runs of spaces inside lines and trim; keep line breaks."""
    if not text:
        return ""
    lines = (_WS.sub(" ", ln).strip() for ln in str(text).replace("\r\n", "\n").split("\n"))
    return "\n".join(ln for ln in lines if ln)


@dataclass
class Builder:
    """Walks unstructured's element stream and builds blocks with heading paths."""

    rows_per_block: int
    max_html: int
    mode: str = "document"  # document | slides | sheets | flat
    root_path: tuple[str, ...] = ()
    blocks: list[Block] = field(default_factory=list)
    _stack: list[tuple[int, str]] = field(default_factory=list)
    _list: list[str] = field(default_factory=list)
    _list_ctx: tuple[tuple[str, ...], int | None, dict[str, str]] | None = None
    _unit: object = None  # the current slide number or sheet name
    _titles_in_unit: int = 0

    def path(self) -> tuple[str, ...]:
        return self.root_path + tuple(t for _, t in self._stack)

    def flush_list(self) -> None:
        if self._list and self._list_ctx is not None:
            path, page, attrs = self._list_ctx
            body = "\n".join(i if _ORDERED_LABEL.match(i) else f"- {i}" for i in self._list)
            self.blocks.append(Block("list", body, path, page, attributes=dict(attrs)))
        self._list, self._list_ctx = [], None

    def _push_heading(self, level: int, text: str, page: int | None, attrs: dict[str, str]) -> None:
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        self.blocks.append(Block("heading", text, self.path(), page, attributes={**attrs, "level": str(level)}))

    def add(self, el: Any) -> None:
        category = getattr(el, "category", type(el).__name__)
        md = el.metadata
        page: int | None = getattr(md, "page_number", None)
        attrs: dict[str, str] = {}
        if self.mode == "slides":
            if page != self._unit:
                self.flush_list()
                self._unit, self._stack, self._titles_in_unit = page, [], 0
            if page is not None:
                attrs["slide"] = str(page)
        elif self.mode == "sheets":
            sheet = getattr(md, "page_name", None) or f"Sheet {page}"
            attrs["sheet"] = sheet
            if sheet != self._unit:
                self.flush_list()
                self._unit, self._stack = sheet, []
                self._push_heading(1, sheet, page, attrs)
        if category in _SKIPPED_CATEGORIES:
            return
        text = clean(el.text)
        if not text:
            return
        if category == "ListItem":
            ctx = (self.path(), page, attrs)
            if self._list_ctx is not None and self._list_ctx[:2] != ctx[:2]:
                self.flush_list()
            self._list_ctx = ctx
            self._list.append(text.replace("\n", " "))
            return
        self.flush_list()
        if category == "Title" and self.mode != "flat":
            depth = getattr(md, "category_depth", None)
            level = (depth + 1) if isinstance(depth, int) and depth >= 0 else 1
            if self.mode == "slides":  # the slide's title first, other short text boxes under it
                level = 1 if self._titles_in_unit == 0 else 2
                self._titles_in_unit += 1
            elif self.mode == "sheets":
                level += 1  # below the sheet name
            self._push_heading(level, text.replace("\n", " "), page, attrs)
        elif category == "Table":
            self._add_table(el, text, page, attrs)
        elif category == "CodeSnippet":
            self.blocks.append(Block("code", text, self.path(), page, attributes=attrs))
        else:
            extra = {"role": category.lower()} if category in ("Header", "Footer") else {}
            self.blocks.append(Block("paragraph", text, self.path(), page, attributes={**attrs, **extra}))

    def _add_table(self, el: Any, text: str, page: int | None, attrs: dict[str, str]) -> None:
        html = getattr(el.metadata, "text_as_html", None)
        rows = _table_rows(html) if html else []
        if not rows:
            rows = [[text]]
        for block_text, extra in table_chunks(rows, self.rows_per_block):
            if html and len(rows) - 1 <= self.rows_per_block and len(html) <= self.max_html:
                extra["html"] = html
            self.blocks.append(Block("table", block_text, self.path(), page, attributes={**attrs, **extra}))

    def finish(self) -> list[Block]:
        self.flush_list()
        return self.blocks


def _table_rows(html: str) -> list[list[str]]:
    """The rows of an HTML table as lists of cell texts (empty rows dropped)."""
    from lxml import html as lxml_html

    try:
        root = lxml_html.fromstring(html)
    except (ValueError, TypeError):
        return []
    rows: list[list[str]] = []
    for tr in root.iter("tr"):
        cells = [clean(td.text_content()).replace("\n", " ") for td in tr if td.tag in ("td", "th")]
        while cells and not cells[-1]:
            cells.pop()
        if any(cells):
            rows.append(cells)
    return rows


def table_chunks(rows: list[list[str]], per_block: int) -> list[tuple[str, dict[str, str]]]:
    """Table text in groups of ``per_block`` data rows, each group starting with the header row.

    Cells are joined with `` | `` and rows with newlines, so every cell is searchable as
    plain words and every chunk says what its columns mean.  ``rows`` attributes count data
    rows from 1 (the header is row 0).
    """
    lines = [" | ".join(r) for r in rows]
    header, data = lines[0], lines[1:]
    if not data:
        return [(header, {"rows": "0"})]
    out: list[tuple[str, dict[str, str]]] = []
    for start in range(0, len(data), per_block):
        part = data[start : start + per_block]
        out.append(("\n".join([header, *part]), {"rows": f"{start + 1}-{start + len(part)}"}))
    return out

