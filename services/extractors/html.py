"""Web pages (HTML) -> a structured document of the page's main content (pure, no I/O).

The main content is found by trafilatura and rendered as Markdown, which
:func:`services.extractors.text.markdown_blocks` turns into blocks with heading paths, so
navigation, sidebars, footers and cookie banners never reach the index.  Author, site name,
description and canonical URL come from ``trafilatura.extract_metadata``; the published and
modified dates from htmldate, run on the page's date-stating markup only and checked by
:func:`services.extractors.dates.page_date`: dates guessed from the text or the URL are never
used, because a wrong date would misplace the page on the user's timeline.
"""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from lxml import etree
from lxml import html as lxml_html
from lxml.html.builder import E

from secondbrain.errors import PermanentError
from services.extractors import dates
from services.extractors import text as text_extractor
from services.extractors.document import Block, Extracted, ExtractionContext

HTML_TYPES = {"text/html", "application/xhtml+xml"}
NO_TEXT_REASON = "the page has no readable text (it may need JavaScript to render)"

# Labels that servers and old pages use for what is really windows-1252 (WHATWG Encoding).
_WINDOWS_1252_ALIASES = {"iso8859-1", "ascii", "latin-1", "cp1252"}
_SINGLE_BYTE_LATIN = re.compile(r"^(iso8859-\d+|cp125\d|ascii|latin-1|mac-roman)$")
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.I)
_HTTP_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.I)
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_MAGIC = ((b"%PDF-", "a PDF document"), (b"\x89PNG", "a PNG image"), (b"GIF8", "a GIF image"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"PK\x03\x04", "a ZIP archive or office document"),
          (b"\x1f\x8b", "a gzip archive"))
_TITLE_SEPARATORS = (" | ", " - ", " \u2013 ", " \u2014 ", " · ", " :: ", " » ")
_ARTICLE_TYPES = ("Article", "BlogPosting", "Report", "Posting", "CreativeWork", "Blog")
_PAGE_TYPES = ("WebPage", "ItemPage", "AboutPage", "QAPage", "FAQPage")
# <meta> names that state a date: article:published_time, DC.date.issued, last-modified...
_DATE_META_KEY = re.compile(r"date|time|publish|issued|modified|created|updated", re.I)
# trafilatura always runs htmldate over the whole page; its answer is ignored (it may be a guess)
# and fast mode at least spares that run htmldate's slowest, free-text search.
_TRAFILATURA_DATE_CONFIG = {"extensive_search": False, "original_date": True}
_LEADING_MARKER = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])\s+)(.*)$")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


# --------------------------------------------------------------------------- decoding


def _codec_name(label: str) -> str | None:
    """The Python codec for a charset label, or None when the label is unknown or not a text encoding."""
    try:
        info = codecs.lookup(label.strip().strip("'\"").lower())
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):  # rot13, base64... are not charsets
        return None
    name = info.name
    if name in _WINDOWS_1252_ALIASES:
        return "cp1252"  # WHATWG: these labels mean windows-1252 on the web
    if name.startswith("utf-16") or name.startswith("utf-32"):
        return "utf-8"  # WHATWG: a UTF-16 label without a BOM means the page is really UTF-8
    return name


def _declared_charset(raw: bytes, content_type: str) -> str | None:
    """The charset the HTTP header states, else the one a ``<meta>`` tag near the top states."""
    m = _HTTP_CHARSET.search(content_type or "")
    if m and (name := _codec_name(m.group(1))):
        return name
    m2 = _META_CHARSET.search(raw[:8192])
    if m2 and (name := _codec_name(m2.group(1).decode("ascii", "replace"))):
        return name
    return None


def decode_html(raw: bytes, content_type: str = "") -> str:
    """Decode an HTML page: BOM, then HTTP charset, then ``<meta charset>``, else UTF-8.

    Never raises on undecodable bytes (they become U+FFFD); raises ``PermanentError`` for
    empty or binary input.
    """
    if not raw.strip():
        raise PermanentError("the page is empty: there is nothing to index")
    for magic, what in _MAGIC:
        if raw.startswith(magic):
            raise PermanentError(f"this is {what}, not a web page; upload it as a file of its real type")
    if raw.startswith(codecs.BOM_UTF8):
        text = raw[3:].decode("utf-8", "replace")
    elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = raw.decode("utf-16", "replace")
    else:
        if b"\x00" in raw[:65536]:
            raise PermanentError("the page looks binary, not HTML; upload it as a file of its real type")
        declared = _declared_charset(raw, content_type)
        if declared is None or (declared != "utf-8" and _SINGLE_BYTE_LATIN.match(declared)):
            # Servers often send a default "ISO-8859-1" for pages that really are UTF-8; bytes that
            # validate as UTF-8 almost never are legacy single-byte text, so UTF-8 wins then.
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode(declared or "utf-8", "replace")
        else:
            try:
                text = raw.decode(declared, "replace")
            except LookupError:  # pragma: no cover - _codec_name already checked the label
                text = raw.decode("utf-8", "replace")
    controls = sum(1 for c in text[:65536] if unicodedata.category(c) == "Cc" and c not in "\n\r\t\f")
    if "\x00" in text or controls > max(8, min(len(text), 65536) // 100):
        raise PermanentError("the page looks binary, not HTML; upload it as a file of its real type")
    if not text.strip():
        raise PermanentError("the page is empty: there is nothing to index")
    return text


# --------------------------------------------------------------------------- metadata


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = re.sub(r"\s+", " ", value).strip()
    return value or None


def _meta(tree: Any, *, prop: tuple[str, ...] = (), name: tuple[str, ...] = ()) -> str | None:
    """The content of the first matching ``<meta property=...>`` or ``<meta name=...>`` (case-insensitive)."""
    wanted_p = {p.lower() for p in prop}
    wanted_n = {n.lower() for n in name}
    found: dict[str, str] = {}
    for el in tree.iter("meta"):
        content = _clean(el.get("content"))
        if not content:
            continue
        key_p = (el.get("property") or "").strip().lower()
        key_n = (el.get("name") or "").strip().lower()
        for key in (key_p, key_n):
            if key and (key in wanted_p or key in wanted_n):
                found.setdefault(key, content)
    for key in (*prop, *name):  # the caller's order is the priority order
        if key.lower() in found:
            return found[key.lower()]
    return None


def _json_ld_nodes(tree: Any) -> list[dict[str, Any]]:
    """Top-level JSON-LD objects of the page, with the members of any ``@graph`` flattened in."""
    nodes: list[dict[str, Any]] = []
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "", strict=False)
        except ValueError:
            continue  # sloppy JSON-LD is common; the page still has other metadata
        stack = data if isinstance(data, list) else [data]
        for item in stack:
            if not isinstance(item, dict):
                continue
            nodes.append(item)
            graph = item.get("@graph")
            if isinstance(graph, list):
                nodes.extend(g for g in graph if isinstance(g, dict))
    return nodes


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("@type")
    if isinstance(t, str):
        return [t]
    return [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


def _main_nodes(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Article-like nodes first, then web-page nodes: only they describe *this* page."""
    yield from (n for n in nodes if any(t.endswith(_ARTICLE_TYPES) for t in _types(n)))
    yield from (n for n in nodes if any(t in _PAGE_TYPES for t in _types(n)))


def _date_evidence(tree: Any) -> tuple[Any, list[str]]:
    """A small page holding only the markup where this page states its own dates, and those values.

    htmldate reads this instead of the page: on the whole page it also takes dates from the
    text, the URL, listings of other articles and copyright years, which are guesses.  Kept:
    ``<meta>`` tags whose name says they hold a date, the dates of this page's own JSON-LD
    node (not of items it lists or events it announces), and ``<time datetime>`` in the
    article or its header or marked ``itemprop``/``pubdate``.
    """
    head, body = E.head(), E.body()
    values: list[str] = []
    for el in tree.iter("meta"):
        keys = {a: v for a in ("name", "property", "itemprop", "http-equiv") if (v := el.get(a))}
        content = el.get("content")
        if content and _DATE_META_KEY.search(" ".join(keys.values())):
            head.append(E.meta(**keys, content=content))
            values.append(content)
    for node in _main_nodes(_json_ld_nodes(tree)):
        stated = {k: v for k in ("datePublished", "dateModified") if isinstance(v := node.get(k), str)}
        if stated:
            head.append(E.script(json.dumps(stated), type="application/ld+json"))
            values.extend(stated.values())
    for el in tree.xpath("//article//time[@datetime] | //header//time[@datetime]"
                         " | //time[@datetime][@itemprop or @pubdate]"):
        body.append(E.time(**{a: v for a in ("datetime", "itemprop", "pubdate", "class") if (v := el.get(a))}))
        values.append(el.get("datetime"))
    return E.html(head, body), values


def _strip_site_suffix(title: str, site_name: str | None, h1: str | None) -> str:
    """Drop a " | Site" style suffix, but only when it is obviously the site's name."""
    for sep in _TITLE_SEPARATORS:
        if sep not in title:
            continue
        head, _, tail = title.rpartition(sep)
        if site_name and tail.strip().lower() == site_name.lower() and head.strip():
            return head.strip()
        if h1 and head.strip().lower() == h1.lower():
            return head.strip()
    return title


def _page_facts(tree: Any, source_uri: str) -> tuple[str | None, dict[str, str], datetime | None, str | None]:
    """Title, metadata, published time and language stated by the page's markup."""
    import trafilatura

    meta: dict[str, str] = {}
    url = source_uri if urlsplit(source_uri).scheme in ("http", "https") else ""
    if url:
        meta["url"] = url
    # trafilatura reads author, site name, description and canonical URL (meta tags, JSON-LD,
    # bylines).  Its date is not used: it comes from htmldate's full search, guesses included.
    facts = trafilatura.extract_metadata(tree, default_url=url or None, date_config=_TRAFILATURA_DATE_CONFIG)
    for key, value in (("site_name", facts.sitename), ("author", facts.author), ("description", facts.description)):
        if value := _clean(value):
            meta[key] = value
    if facts.url and facts.url != url and urlsplit(facts.url).scheme in ("http", "https"):
        meta["canonical_url"] = facts.url
    root = tree.getroot() if hasattr(tree, "getroot") else tree
    lang = _clean(root.get("lang") or root.get("xml:lang")) or _meta(tree, name=("content-language",)) or next(
        (_clean(m.get("content")) for m in tree.iter("meta")
         if (m.get("http-equiv") or "").lower() == "content-language" and m.get("content")), None)
    if lang:
        meta["language"] = lang
    evidence, stated = _date_evidence(tree)
    published = dates.page_date(evidence, stated, original=True)
    if published:
        meta["published"] = published.isoformat()
    modified = dates.page_date(evidence, stated, original=False)
    if modified and modified != published:
        meta["modified"] = modified.isoformat()

    # The title is read here, not by trafilatura: it cuts "<title>Cats | Dogs</title>" to "Cats".
    h1_el = next(iter(tree.iter("h1")), None)
    h1 = _clean(h1_el.text_content()) if h1_el is not None else None
    title_el = next(iter(tree.iter("title")), None)
    raw_title = _meta(tree, prop=("og:title",)) or (
        _clean(title_el.text_content()) if title_el is not None else None) or h1
    title = _strip_site_suffix(raw_title, meta.get("site_name"), h1) if raw_title else None
    language = lang.split("-")[0].split("_")[0].lower() if lang else None
    return title, meta, published, language


# --------------------------------------------------------------------------- content


def _parse(text: str) -> Any:
    """Parse decoded HTML into an lxml tree; comments and processing instructions are dropped."""
    text = _XML_DECLARATION.sub("", text, count=1)  # lxml refuses str input with an encoding declaration
    parser = lxml_html.HTMLParser(remove_comments=True, remove_pis=True, collect_ids=False,
                                  default_doctype=False, huge_tree=True)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise PermanentError("the page could not be read as HTML") from exc


_MD = None


def _inline_parser() -> Any:
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark")
    return _MD


def plain_inline(md: str) -> str:
    """The visible text of a Markdown inline fragment: escapes undone, emphasis markers dropped.

    trafilatura escapes literal ``*``, ``_``, ``[`` ... and marks bold/italic; the index should
    hold the words as the page shows them ("snake_case", not "snake\\_case" or "**word**").
    """
    if not any(c in md for c in "\\*_`[]<&!~"):
        return md
    tokens = _inline_parser().parseInline(md)
    out: list[str] = []
    for tok in tokens:
        for child in tok.children or []:
            if child.type in ("text", "code_inline"):
                out.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                out.append("\n")
            elif child.type == "image":
                out.append(child.content)
    return "".join(out)


def _plain_lines(text: str, kind: str) -> str:
    """Plain text for a list, table or quote block, keeping its line structure and markers."""
    lines: list[str] = []
    for line in text.split("\n"):
        if kind == "table":
            if re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line):
                lines.append(line.strip())  # the header separator row
                continue
            cells = _UNESCAPED_PIPE.split(line.strip().strip("|") if line.strip() else "")
            lines.append("| " + " | ".join(plain_inline(c.strip()).replace("|", "\\|") for c in cells) + " |")
            continue
        m = _LEADING_MARKER.match(line) if kind == "list" else None
        if m:
            lines.append(m.group(1) + plain_inline(m.group(2)))
        else:
            lines.append(plain_inline(line))
    return "\n".join(lines)


def _to_document_blocks(md_blocks: list[Block]) -> list[Block]:
    """Convert Markdown blocks into document blocks with plain text and plain heading paths."""
    cache: dict[str, str] = {}

    def plain_heading(h: str) -> str:
        if h not in cache:
            cache[h] = plain_inline(h).strip()
        return cache[h]

    blocks: list[Block] = []
    for b in md_blocks:
        path = tuple(plain_heading(h) for h in b.heading_path)
        if b.kind == "code":
            body = b.text
        elif b.kind in ("list", "table", "quote"):
            body = _plain_lines(b.text, b.kind)
        else:
            body = plain_inline(b.text).strip()
        if body.strip():
            blocks.append(Block(kind=b.kind, text=body, heading_path=path, attributes=dict(b.attributes)))
    return blocks


def _main_markdown(tree: Any, url: str | None) -> str:
    """Markdown of the page's main content (trafilatura); empty when there is none."""
    import trafilatura

    try:
        md = trafilatura.extract(tree, url=url, output_format="markdown", include_comments=False,
                                 include_tables=True, include_formatting=True, include_links=False,
                                 include_images=False, with_metadata=False, deduplicate=False)
    except (ValueError, TypeError, etree.LxmlError):  # a library bug on odd markup must not kill the job
        md = None
    return md or ""


def _fallback_blocks(tree: Any) -> list[Block]:
    """Plain paragraphs of the body text, for pages trafilatura finds nothing in."""
    body = tree.find("body")
    if body is None:
        return []
    for bad in body.xpath(".//script | .//style | .//template | .//noscript | .//nav | .//footer | .//aside"):
        bad.drop_tree()
    text = body.text_content()
    paras = [re.sub(r"[ \t\r\f\v]+", " ", p).strip() for p in re.split(r"\n\s*\n|\n", text)]
    return [Block("paragraph", p) for p in paras if p]


class HtmlExtractor:
    """Extracts the main content of a web page into blocks with heading paths."""

    modality = "web"

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract ``raw`` HTML; ``PermanentError`` for empty, binary or text-less pages."""
        text = decode_html(raw, ctx.content_type)
        tree = _parse(text)
        # Read the metadata before trafilatura, which prunes the tree in place.
        title, meta, published, language = _page_facts(tree, ctx.source_uri)
        for el in tree.xpath("//noscript"):
            el.drop_tree()  # "please enable JavaScript" is not the page's content
        url = meta.get("url")
        md = _main_markdown(tree, url)
        blocks = _to_document_blocks(text_extractor.markdown_blocks(md)) if md.strip() else []
        if not blocks:
            blocks = _fallback_blocks(_parse(text))
            blocks = [b for b in blocks if b.text.strip() and b.text.strip() != (title or "").strip()]
            if blocks:
                meta["extraction"] = "fallback"
        if not blocks:
            raise PermanentError(NO_TEXT_REASON)
        if title is None:
            title = next((b.text for b in blocks if b.kind == "heading"), None)
        return Extracted(title=title, modality=self.modality, blocks=blocks, metadata=meta,
                         stated_time=published, stated_time_source="published", language=language)


def supports(content_type: str, filename: str | None) -> bool:
    """Whether this extractor handles the artifact."""
    ct = content_type.split(";")[0].strip().lower()
    if ct in HTML_TYPES:
        return True
    return bool(ct in ("", "application/octet-stream") and filename
                and filename.lower().endswith((".html", ".htm", ".xhtml")))
