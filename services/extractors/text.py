"""Plain text and Markdown -> a structured document (pure functions, no I/O).

The document's full text is the segments' texts joined by a blank line, and every
segment records its character offsets into that text, so a chunk (and a citation) can
point at an exact span.  Markdown keeps its structure: headings become the heading path
of what follows them, code blocks stay whole and are marked as code.

Chat transcripts (``text/x-chat``, ``.chat``) are one turn per line, ``Speaker: what they said``,
optionally led by the message's id in brackets (``[D3:7] Caroline: ...``); a line that is not a
turn continues the one before it, and a first line ``# Title`` names the conversation.  Each turn
becomes a segment of kind ``turn`` with its speaker and id as attributes, so chunks (and
citations) can name the exact messages they hold.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from secondbrain.errors import PermanentError
from secondbrain.events.models import Recurrence, Segment
from secondbrain.temporal import recurrence
from services.extractors import dates
from services.extractors.document import Block, Extracted, ExtractionContext, assemble

MARKDOWN_TYPES = {"text/markdown", "text/x-markdown"}
TEXT_TYPES = {"text/plain"}
MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkd")
CHAT_TYPES = {"text/x-chat"}
CHAT_EXTENSIONS = (".chat",)
# "[id] Speaker: text": a speaker of up to 64 characters without a colon, then ": " and the text
# (so "http://example.org" or "10:30" never start a turn).
_TURN = re.compile(r"(?:\[(?P<id>[^\]\n]{1,64})\][ \t]*)?"
                   r"(?P<speaker>[^\s:\[\]#][^:\n\[\]]{0,63}?):[ \t]+(?P<text>\S.*)")


@dataclass(frozen=True, slots=True)
class ExtractedText:
    """The result of extracting a text or Markdown artifact."""

    title: str | None
    modality: str
    segments: list[Segment]
    full_text: str
    metadata: dict[str, str]
    stated_time: datetime | None = None  # a date the file itself states (front matter)
    recurrence: Recurrence | None = None  # front matter's ``recurrence``: the note is a recurring event
    tags: list[str] = field(default_factory=list)  # front matter's tags: its passages carry them


def decode_text(raw: bytes) -> str:
    """Decode bytes as text: UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252.

    Binary content is refused instead of being indexed as garbage.
    """
    if not raw.strip():
        raise PermanentError("the file is empty: there is nothing to index")
    utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))
    if not utf16 and b"\x00" in raw[:65536]:
        raise PermanentError("the file looks binary, not text; upload it with its real type")
    if utf16:
        try:
            text = raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise PermanentError("the file claims to be UTF-16 but is not valid UTF-16") from exc
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                text = raw.decode("cp1252")
            except UnicodeDecodeError as exc:
                raise PermanentError(
                    "the file is not text in a known encoding; save it as UTF-8 and upload it again"
                ) from exc
    controls = sum(1 for c in text if unicodedata.category(c) == "Cc" and c not in "\n\r\t\f")
    if "\x00" in text or controls > max(8, len(text) // 100):
        raise PermanentError("the file looks binary, not text; upload it with its real type")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise PermanentError("the file is empty: there is nothing to index")
    return text


def is_markdown(content_type: str, filename: str | None) -> bool:
    """Whether the artifact should be parsed as Markdown."""
    if content_type.split(";")[0].strip().lower() in MARKDOWN_TYPES:
        return True
    return bool(filename and filename.lower().endswith(MARKDOWN_EXTENSIONS))


_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    meta: dict[str, str] = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return meta, text[m.end():]


_FM_TAGS = re.compile(r"^(?:tags|tag|keywords):[ \t]*(.*(?:\n[ \t]+-.*)*)", re.M | re.I)
def front_matter_tags(text: str) -> list[str]:
    """A note's tags from its front matter, in Obsidian's forms: ``tags: [a, b]``, ``tags: a, b``,
    ``tags: a b`` or a YAML list of ``- a`` lines; lower-case, without ``#``, each once."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return []
    found = _FM_TAGS.search(m.group(1))
    if not found:
        return []
    raw = found.group(1).replace("\n", ",").strip().strip("[]")
    out: list[str] = []
    for piece in re.split(r"[,\s]+", raw):
        tag = piece.strip().strip("-'\"#[]").lower()
        if tag and tag not in out:
            out.append(tag)
    return out


_PARSERS = threading.local()


def _markdown_parser() -> Any:
    """This thread's Markdown parser: building one costs more than parsing a short note with it."""
    md = getattr(_PARSERS, "md", None)
    if md is None:
        from markdown_it import MarkdownIt

        md = _PARSERS.md = MarkdownIt("commonmark").enable("table")
    return md


def markdown_blocks(text: str) -> list[Block]:
    """Split Markdown into blocks with their heading path (code, tables, lists kept whole)."""
    tokens = _markdown_parser().parse(text)
    lines = text.split("\n")
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    i = 0

    def source(tok_map: list[int] | None) -> str:
        if not tok_map:
            return ""
        return "\n".join(lines[tok_map[0] : tok_map[1]]).strip("\n")

    def heading_path() -> tuple[str, ...]:
        return tuple(h for _, h in path)

    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            title = tokens[i + 1].content.strip()
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
            blocks.append(Block("heading", title, heading_path(), attributes={"level": str(level)}))
            i += 3
            continue
        if tok.type in ("fence", "code_block"):
            attrs = {"language": tok.info.strip().split(" ")[0]} if tok.info.strip() else {}
            code = tok.content.rstrip("\n")
            if code.strip():
                blocks.append(Block("code", code, heading_path(), attributes=attrs))
            i += 1
            continue
        if tok.type == "paragraph_open" and tok.level == 0:
            content = tokens[i + 1].content.strip()
            if content:
                blocks.append(Block("paragraph", content, heading_path()))
            i += 3
            continue
        if tok.type in ("bullet_list_open", "ordered_list_open", "table_open", "blockquote_open") \
                and tok.level == 0:
            kind = {"bullet_list_open": "list", "ordered_list_open": "list", "table_open": "table",
                    "blockquote_open": "quote"}[tok.type]
            body = source(tok.map)
            if kind == "quote":
                body = "\n".join(re.sub(r"^\s*>\s?", "", ln) for ln in body.split("\n"))
            if body.strip():
                blocks.append(Block(kind, body.strip(), heading_path()))
            close = tok.type.replace("_open", "_close")
            depth = 0
            while i < len(tokens):  # skip to the matching close token
                if tokens[i].type == tok.type:
                    depth += 1
                elif tokens[i].type == close:
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            i += 1
            continue
        if tok.type == "html_block":
            stripped = re.sub(r"<[^>]+>", " ", tok.content)
            stripped = re.sub(r"[ \t]+", " ", stripped).strip()
            if stripped:
                blocks.append(Block("paragraph", stripped, heading_path()))
        i += 1
    return blocks


def text_blocks(text: str) -> list[Block]:
    """Split plain text into paragraphs at blank lines."""
    parts = re.split(r"\n[ \t]*\n+", text)
    return [Block("paragraph", p.strip("\n")) for p in parts if p.strip()]


def is_chat(content_type: str, filename: str | None) -> bool:
    """Whether the artifact is a chat transcript."""
    if content_type.split(";")[0].strip().lower() in CHAT_TYPES:
        return True
    return bool(filename and filename.lower().endswith(CHAT_EXTENSIONS))


def chat_blocks(text: str) -> tuple[str | None, list[Block]]:
    """The title (a first ``# `` line) and one ``turn`` block per turn of a chat transcript.

    A block's text is ``Speaker: text`` (who said it stays in what is indexed and shown); its
    attributes hold ``speaker`` and, when the line gave one, the message id as ``turn_id``.
    Lines before the first turn are kept as a paragraph.
    """
    title: str | None = None
    blocks: list[Block] = []
    preamble: list[str] = []
    turn: tuple[str, str | None, list[str]] | None = None  # speaker, id, lines

    def close() -> None:
        if turn is not None:
            speaker, turn_id, lines = turn
            attrs = {"speaker": speaker, **({"turn_id": turn_id} if turn_id else {})}
            blocks.append(Block("turn", f"{speaker}: " + "\n".join(lines).strip(), attributes=attrs))

    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if title is None and not blocks and turn is None and not preamble and line.startswith("# "):
            title = line[2:].strip() or None
            continue
        m = _TURN.fullmatch(line)
        if m:
            close()
            if preamble and not blocks:
                blocks.append(Block("paragraph", "\n".join(preamble)))
            turn = (m["speaker"].strip(), (m["id"] or "").strip() or None, [m["text"]])
        elif turn is not None:
            turn[2].append(line)
        else:
            preamble.append(line)
    close()
    if preamble and not blocks:
        blocks.append(Block("paragraph", "\n".join(preamble)))
    return title, blocks


def _first_line_title(text: str, limit: int = 80) -> str:
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    first = re.sub(r"^#+\s*", "", first)
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def extract_text(raw: bytes, *, content_type: str, filename: str | None, is_note: bool) -> ExtractedText:
    """Extract a text or Markdown artifact into segments with offsets."""
    text = decode_text(raw)
    if not is_note and is_chat(content_type, filename):
        chat_title, turns = chat_blocks(text)
        if not any(b.kind == "turn" for b in turns):
            raise PermanentError("the chat transcript has no turns; write one per line as 'Speaker: text'")
        segments, full = assemble(turns)
        speakers = list(dict.fromkeys(b.attributes["speaker"] for b in turns if b.kind == "turn"))
        return ExtractedText(title=chat_title or ("Conversation between " + " and ".join(speakers[:4])),
                             modality="text", segments=segments, full_text=full,
                             metadata={"transcript": "chat", "speakers": ", ".join(speakers)})
    markdown = is_markdown(content_type, filename) or is_note  # notes are written in Markdown too
    meta: dict[str, str] = {}
    stated: datetime | None = None
    tags: list[str] = []
    if markdown:
        front, body = _front_matter(text)
        blocks = markdown_blocks(body)
        meta.update({f"front_matter.{k}": v for k, v in front.items() if k in ("title", "date", "tags")})
        tags = front_matter_tags(text)
        if tags:  # the document's metadata says them too, as before (and readers of documents.extracted v3)
            meta["tags"] = " ".join(tags)
        if "date" in front:
            stated = dates.iso_datetime(front["date"])
        series = _series(front.get("recurrence"), meta)
    else:
        front, blocks, series = {}, text_blocks(text), None
    if not blocks:
        raise PermanentError("the file has no text content to index")
    segments, full = assemble(blocks)
    h1 = next((b.text for b in blocks if b.kind == "heading" and b.attributes.get("level") == "1"), None)
    title = front.get("title") or h1
    if title is None and not filename:
        title = _first_line_title(full)
    modality = "note" if is_note else ("markdown" if markdown else "text")
    return ExtractedText(title=title, modality=modality, segments=segments, full_text=full,
                         metadata=meta, stated_time=stated, recurrence=series if markdown else None,
                         tags=tags)


def _series(raw: str | None, meta: dict[str, str]) -> Recurrence | None:
    """The series a note's ``recurrence`` front matter holds (one line of JSON, as the calendar importer writes
    it), checked like one made from a calendar; a note whose series cannot be read stays a note (and says why)."""
    if not raw:
        return None
    try:
        series = recurrence.from_json(json.loads(raw))
    except (ValueError, RecursionError) as exc:
        meta["recurrence_error"] = str(exc)[:300]
        return None
    meta["repeats"] = recurrence.describe(series)
    return series


def supports(content_type: str, filename: str | None) -> bool:
    """Whether this extractor handles the artifact."""
    ct = content_type.split(";")[0].strip().lower()
    if ct in MARKDOWN_TYPES or ct in TEXT_TYPES or ct in CHAT_TYPES:
        return True
    return bool(ct in ("", "application/octet-stream") and filename
                and filename.lower().endswith((*MARKDOWN_EXTENSIONS, *CHAT_EXTENSIONS, ".txt", ".text")))


class TextExtractor:
    """The :class:`~services.extractors.document.Extractor` for notes, plain text and Markdown."""

    modality = "text"

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract text or Markdown (notes are Markdown) into blocks with heading paths."""
        doc = extract_text(raw, content_type=ctx.content_type, filename=ctx.filename, is_note=ctx.is_note)
        blocks = [Block(s.kind, s.text, tuple(s.heading_path), attributes=s.attributes) for s in doc.segments]
        # Text whose source is an http(s) address is a web page (a page's text the browser sent, a plain
        # text page fetched): listed and asked about as one ("the article I saved").
        web = not ctx.is_note and ctx.source_uri.lower().startswith(("http://", "https://"))
        return Extracted(title=doc.title, modality="web" if web else doc.modality, blocks=blocks,
                         metadata=dict(doc.metadata), stated_time=doc.stated_time, stated_time_source="file_metadata",
                         recurrence=doc.recurrence, tags=list(doc.tags))
