"""A note's HTML (Evernote's ENML, Keep's and Apple Notes' HTML, Bear's) as Markdown: headings, paragraphs,
lists and checklists, links, emphasis, quotes, code and tables kept; scripts, styles and the page's head
dropped.  A note is read whole (unlike a web page, nothing in it is boilerplate), so this is a plain walk
over the tree, not a content extractor.

Evernote's ``<en-todo checked="true"/>`` becomes ``[x]`` and ``<en-media hash=...>`` names its attachment
(``media`` maps the hash to a file name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lxml import etree
from lxml import html as lxml_html

_BLOCKS = {"p", "div", "section", "article", "header", "footer", "main", "aside", "figure", "figcaption",
           "address", "center", "dl", "dt", "dd", "en-note", "body", "form", "fieldset", "details", "summary"}
_DROP = {"", "script", "style", "head", "title", "meta", "link", "noscript", "template", "svg", "button", "select"}
_SPACES = re.compile(r"[ \t\r\n\u00a0]+")


def html_to_markdown(markup: str | bytes, *, media: Mapping[str, str] | None = None) -> str:
    """Markdown for an HTML fragment or page (empty when it holds no text)."""
    if isinstance(markup, bytes):
        markup = markup.decode("utf-8", "replace")
    markup = re.sub(r"^\s*<\?xml[^>]*\?>", "", markup)
    markup = re.sub(r"<!DOCTYPE[^>]*>", "", markup, flags=re.I)
    if not markup.strip():
        return ""
    try:
        root = lxml_html.fromstring(markup)
    except (etree.ParserError, ValueError):
        return _SPACES.sub(" ", re.sub(r"<[^>]+>", " ", markup)).strip()
    writer = _Writer(media or {})
    writer.block(root)
    text = "\n".join(line.rstrip() for line in "".join(writer.out).split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


class _Writer:
    def __init__(self, media: Mapping[str, str]) -> None:
        self.media = media
        self.out: list[str] = []

    # --- blocks
    def block(self, el: etree._Element, *, quote: str = "") -> None:
        """Write ``el``'s children as blocks, gathering inline runs into paragraphs."""
        run: list[str] = []

        def flush() -> None:
            text = "".join(run).strip()
            run.clear()
            if text:
                self.para(text, quote)

        if el.text:
            run.append(_SPACES.sub(" ", el.text))
        for child in el:
            tag = _tag(child)
            if tag in _DROP:  # also comments and processing instructions (no tag name)
                pass
            elif tag in _BLOCKS or tag in ("ul", "ol", "table", "blockquote", "pre", "hr") or re.fullmatch(r"h[1-6]",
                                                                                                          tag):
                flush()
                self.block_element(child, tag, quote)
            elif tag == "br":
                run.append("\n")
            else:
                run.append(self.inline(child))
            if child.tail:
                run.append(_SPACES.sub(" ", child.tail))
        flush()

    def para(self, text: str, quote: str) -> None:
        lines = [ln.strip() for ln in text.split("\n")]
        body = "\n".join(ln for ln in lines if ln) if any(lines) else ""
        if body.startswith(("[x] ", "[ ] ")):  # a checklist line: a list item, next to the others
            self.out.append(f"{quote}- {body}\n")
        elif body:
            if self.out and self.out[-1].lstrip("> ").startswith("- ["):
                self.out.append("\n")
            self.out.append("\n".join(quote + ln for ln in body.split("\n")) + "\n\n")

    def block_element(self, el: etree._Element, tag: str, quote: str) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            text = _flat(self.inline_children(el))
            if text:
                self.out.append(f"{quote}{'#' * int(tag[1])} {text}\n\n")
        elif tag in ("ul", "ol"):
            self.list(el, ordered=tag == "ol", depth=0, quote=quote)
            self.out.append("\n")
        elif tag == "table":
            self.table(el, quote)
        elif tag == "blockquote":
            self.block(el, quote=quote + "> ")
        elif tag == "pre":
            code = el.text_content().strip("\n")
            if code.strip():
                self.out.append(f"{quote}```\n{code}\n```\n\n")
        elif tag == "hr":
            self.out.append(f"{quote}---\n\n")
        else:
            self.block(el, quote=quote)

    def list(self, el: etree._Element, *, ordered: bool, depth: int, quote: str) -> None:
        n = 0
        for li in el:
            if _tag(li) != "li":
                continue
            n += 1
            marker = f"{n}." if ordered else "-"
            nested: list[etree._Element] = []
            text_parts: list[str] = [_SPACES.sub(" ", li.text)] if li.text else []
            for child in li:
                tag = _tag(child)
                if tag in ("ul", "ol"):
                    nested.append(child)
                elif tag not in _DROP:
                    text_parts.append(self.inline(child) if tag not in _BLOCKS else " " + self.inline_children(child)
                                      + " ")
                if child.tail:
                    text_parts.append(_SPACES.sub(" ", child.tail))
            text = _flat("".join(text_parts))
            self.out.append(f"{quote}{'  ' * depth}{marker} {text}\n")
            for sub in nested:
                self.list(sub, ordered=_tag(sub) == "ol", depth=depth + 1, quote=quote)

    def table(self, el: etree._Element, quote: str) -> None:
        rows = []
        for tr in el.iter("tr"):
            cells = [_flat(self.inline_children(td)).replace("|", "\\|") for td in tr if _tag(td) in ("td", "th")]
            if any(cells):
                rows.append(cells)
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        self.out.append("\n".join(quote + ln for ln in lines) + "\n\n")

    # --- inline
    def inline_children(self, el: etree._Element) -> str:
        parts = [_SPACES.sub(" ", el.text)] if el.text else []
        for child in el:
            tag = _tag(child)
            if tag not in _DROP:
                parts.append("\n" if tag == "br" else self.inline(child))
            if child.tail:
                parts.append(_SPACES.sub(" ", child.tail))
        return "".join(parts)

    def inline(self, el: etree._Element) -> str:
        tag = _tag(el)
        if tag == "en-todo":
            return "[x] " if el.get("checked", "").lower() == "true" else "[ ] "
        if tag == "input" and el.get("type", "").lower() == "checkbox":
            return "[x] " if el.get("checked") is not None else "[ ] "
        if tag == "en-media":
            name = self.media.get(el.get("hash", ""), "")
            return f" [attachment: {name}] " if name else " [attachment] "
        if tag == "img":
            alt = (el.get("alt") or el.get("title") or "").strip()
            return f" [image: {alt}] " if alt else ""
        inner = self.inline_children(el)
        if not inner.strip():
            return inner
        if tag == "a":
            href = (el.get("href") or "").strip()
            if href.lower().startswith(("http://", "https://", "mailto:")):
                return f"[{_flat(inner)}]({href})"
            return inner
        if tag in ("b", "strong"):
            return _wrap(inner, "**")
        if tag in ("i", "em", "cite"):
            return _wrap(inner, "*")
        if tag in ("s", "strike", "del"):
            return _wrap(inner, "~~")
        if tag == "code":
            return f"`{inner.strip()}`"
        return inner


def _tag(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):  # a comment or a processing instruction
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _wrap(text: str, mark: str) -> str:
    """Emphasis around the words, with the spaces that surround them left outside (Markdown needs that)."""
    stripped = text.strip()
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return f"{lead}{mark}{stripped}{mark}{trail}"
