"""A source's text as a reader takes it in: the statements it makes, each with the headings it sits under.

Structure is context, not content.  A heading ("Flights", "## Hotel", a short title line standing alone)
labels the statements under it and is never a statement itself; list items and table rows are statements
of their own (a table row reads as "column: value; ..."), front matter is skipped, and inline Markdown is
kept apart from the plain words (``markdown`` keeps ``**12 December**`` for a page that renders it
safely, ``text`` reads "12 December").  A speaker's turn ("Caroline: ...") keeps who said it.

Each statement also knows where it is in the source text (``start``/``end``), so a citation can point at
the page or the second of the quoted words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from secondbrain.sentences import sentences

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u00b7\u25aa]|\d{1,3}[.)]|\[[ xX]\])\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SPEAKER = re.compile(
    r"^(?:\[[^\]]{1,12}\]\s*)?((?:[A-Z][\w'.-]*)(?:\s[A-Z][\w'.-]*){0,2}|Speaker\s*\d+|SPEAKER_\d+)\s?:\s+")
_TERMINAL = re.compile("[.!?:;\u2026][\"'\u201d\u2019)\\]]*$")

# Inline Markdown: what is kept as words, and what goes.
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=[^\s*_~])(.+?)(?<=[^\s*_~])\1")  # "****1234" is no emphasis
_CODE = re.compile(r"`+([^`]+)`+")
_TAG = re.compile(r"</?[A-Za-z][^>]{0,200}>")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")


def plain(markdown: str) -> str:
    """The words of inline Markdown without its marks: ``**12 December**`` -> 12 December, a link -> its text."""
    text = _IMAGE.sub(lambda m: m.group(1), markdown)
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _CODE.sub(lambda m: m.group(1), text)
    for _ in range(3):  # nested emphasis (***bold italic***)
        text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _TAG.sub("", text)
    text = _ESCAPE.sub(lambda m: m.group(1), text)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True, slots=True)
class Statement:
    """One thing a source says: a sentence, a list item or a table row, with its context."""

    text: str  # plain words
    markdown: str  # as written (inline Markdown kept)
    index: int  # its place among the source's statements
    start: int  # where it is in the source text (character offsets)
    end: int
    headings: tuple[str, ...] = ()  # the headings it sits under, outermost first
    kind: str = "sentence"  # sentence, item, row
    speaker: str | None = None  # who said it, in a chat or a transcript with speakers
    columns: tuple[str, ...] = ()  # a table row's column names, which its text names only past two columns


@dataclass(slots=True)
class _Block:
    kind: str  # heading, item, row, prose, meta
    lines: list[tuple[int, str]] = field(default_factory=list)  # (offset, line)
    level: int = 0


def read(text: str, headings: tuple[str, ...] | list[str] = (),
         speakers: frozenset[str] = frozenset()) -> list[Statement]:
    """The statements of a source's text, in order; ``headings`` are those the text starts under, ``speakers``
    the people whose turns it holds (a chat, a transcript): "Name: ..." names a speaker only for them."""
    out: list[Statement] = []
    stack: list[tuple[int, str]] = [(i + 1, h) for i, h in enumerate(headings) if h]
    columns: list[str] | None = None
    said_since_heading = False  # content came after the deepest heading (a next unmarked title is its sibling)
    blocks = _blocks(text)
    for i, block in enumerate(blocks):
        first = block.lines[0][1].strip()
        if block.kind == "heading":
            title = plain(first)
            known = [j for j, (_lvl, h) in enumerate(stack) if h == title]
            if known:  # the text repeats a heading it starts under: back to that level
                stack = stack[:known[-1] + 1]
            else:
                level = block.level or (stack[-1][0] if stack and said_since_heading else _level_after(stack))
                stack = [(lvl, h) for lvl, h in stack if lvl < level] + [(level, title)]
            columns = None
            said_since_heading = False
            continue
        if block.kind == "meta":
            continue
        context = tuple(h for _lvl, h in stack)
        said_since_heading = True
        if block.kind == "row":
            cells = [c.strip() for c in first.strip().strip("|").split("|")]
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if columns is None and nxt is not None and nxt.kind == "meta" and nxt.lines[0][1].strip().startswith(
                    ("|", ":", "-")):
                columns = [plain(c) for c in cells]  # the header row names the columns
                continue
            out.append(Statement(_row(cells, columns), first, len(out), block.lines[0][0],
                                 block.lines[0][0] + len(block.lines[0][1]), context, "row",
                                 columns=tuple(columns or ())))
            continue
        if block.kind == "item":
            offset = block.lines[0][0]
            raw = " ".join(line.strip() for _o, line in block.lines)
            body = _CHECKBOX.sub("", _ITEM.sub("", raw, count=1))
            end = block.lines[-1][0] + len(block.lines[-1][1])
            out.append(Statement(plain(body), body, len(out), offset, end, context, "item",
                                 _speaker(plain(body), speakers)))
            continue
        columns = None
        out.extend(_sentences(block, context, len(out), speakers))
    return out


def _row(cells: list[str], columns: list[str] | None) -> str:
    """A table row as a person reads it out: "cedar boards: £186" (what the row is about, then what it says of
    it); the columns are named when there are more than two ("Cabinets: Cost EUR 9,400; Supplier Nordhaus")."""
    values = [plain(c) for c in cells]
    if not any(values):
        return ""
    rest = [(columns[j] if columns and j < len(columns) else "", v) for j, v in enumerate(values) if j and v]
    if len(rest) <= 1:
        return f"{values[0]}: {rest[0][1]}" if rest and values[0] else values[0] or (rest[0][1] if rest else "")
    return f"{values[0]}: " + "; ".join(f"{name} {v}" if name else v for name, v in rest)


def _level_after(stack: list[tuple[int, str]]) -> int:
    """A heading that does not say its level (a title line): one below the deepest known."""
    return (stack[-1][0] + 1) if stack else 1


def _sentences(block: _Block, context: tuple[str, ...], first_index: int,
               speakers: frozenset[str]) -> list[Statement]:
    """The sentences of a prose block, each placed in the source text."""
    offset = block.lines[0][0]
    raw = "\n".join(line for _o, line in block.lines)
    out: list[Statement] = []
    cursor = 0
    current: str | None = None  # the speaker of the turn a sentence belongs to (its later sentences too)
    for sentence in sentences(raw):
        start, end = _locate(raw, sentence, cursor)
        cursor = end
        words = plain(sentence)
        if not words:
            continue
        named = _speaker(words, speakers)
        if named is not None or _starts_turn(raw, start):
            current = named
        out.append(Statement(words, sentence, first_index + len(out), offset + start, offset + end, context,
                             "sentence", current))
    return out


def _starts_turn(raw: str, start: int) -> bool:
    """Whether the sentence at ``start`` opens a line (a new turn, when it names no speaker: nobody's)."""
    return start == 0 or raw[:start].rstrip(" \t").endswith("\n")


def _locate(raw: str, sentence: str, cursor: int) -> tuple[int, int]:
    """Where a whitespace-collapsed sentence lies in ``raw`` (from ``cursor``)."""
    words = sentence.split()
    if not words:
        return cursor, cursor
    start = raw.find(words[0], cursor)
    if start < 0:
        return cursor, cursor
    pos = start
    for w in words:
        found = raw.find(w, pos)
        if found < 0:
            break
        pos = found + len(w)
    return start, pos


def _speaker(text: str, speakers: frozenset[str]) -> str | None:
    m = _SPEAKER.match(text) if speakers else None
    return m.group(1) if m and m.group(1) in speakers else None


def _blocks(text: str) -> list[_Block]:
    """The text cut into headings, list items, table rows and runs of prose (hard-wrapped lines together)."""
    lines: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    blocks: list[_Block] = []
    i = 0
    if lines and lines[0][1].strip() == "---":  # front matter: metadata, not something the note says
        for j in range(1, min(len(lines), 200)):
            if lines[j][1].strip() in ("---", "..."):
                blocks.append(_Block("meta", lines[: j + 1]))
                i = j + 1
                break
    while i < len(lines):
        offset, line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            blocks.append(_Block("heading", [(offset, heading.group(2))], len(heading.group(1))))
            i += 1
            continue
        nxt = lines[i + 1][1] if i + 1 < len(lines) else ""
        if _SETEXT.match(nxt) and not _ITEM.match(line) and stripped:
            blocks.append(_Block("heading", [(offset, stripped)], 1 if nxt.strip().startswith("=") else 2))
            i += 2
            continue
        if _TABLE_RULE.match(line) and "|" in line:
            blocks.append(_Block("meta", [(offset, line)]))
            i += 1
            continue
        if stripped.startswith("|") or (stripped.count("|") >= 2 and "|" in nxt and _TABLE_RULE.match(nxt)):
            blocks.append(_Block("row", [(offset, line)]))
            i += 1
            continue
        if _ITEM.match(line):
            item = _Block("item", [(offset, line)])
            i += 1
            # an item's wrapped continuation lines are indented and not items themselves
            while i < len(lines) and lines[i][1].startswith((" ", "\t")) and lines[i][1].strip() \
                    and not _ITEM.match(lines[i][1]):
                item.lines.append(lines[i])
                i += 1
            blocks.append(item)
            continue
        prose = _Block("prose", [(offset, line)])
        i += 1
        while i < len(lines) and lines[i][1].strip() and not _HEADING.match(lines[i][1]) \
                and not _ITEM.match(lines[i][1]) and not lines[i][1].strip().startswith("|") \
                and not _record_line(prose.lines[-1][1], lines[i][1]):
            prose.lines.append(lines[i])
            i += 1
        if _title_line(prose, lines, i):
            prose.kind = "heading"
        blocks.append(prose)
    return _split_titles(blocks)


# A line that stands as a unit of its own (a receipt's, a label's, a sign's): in capitals, or ending in a
# number ("Flat white 3.40", "21 Nov 2026 12:41"), or followed by a labelled line ("To: Elm Road").
_CAPITALS = re.compile(r"^[^a-z]*[A-Z]{2,}[^a-z]*$")
_ENDS_IN_NUMBER = re.compile(r"\d(?:[.,:]\d+)?\s*$")
_LABELLED = re.compile(r"^\s*[A-Z][\w'-]*(?: [\w'-]+){0,2}:\s+\S")


def _record_line(line: str, following: str) -> bool:
    """Whether a line break ends a unit: a hard-wrapped sentence goes on in lower case or after a word that
    needs more ("launch date is" / "14 March"); a receipt's lines do not."""
    if not re.match(r"\s*[A-Z0-9\u00a3$\u20ac*]", following):
        return False
    return bool(_CAPITALS.match(line.strip()) or _ENDS_IN_NUMBER.search(line) or (_LABELLED.match(following)
                and _LABELLED.match(line)))


def _title_line(block: _Block, lines: list[tuple[int, str]], after: int) -> bool:
    """A single short line with no sentence punctuation, standing alone before something else: a title or a
    section heading the extractor wrote without its marks ("Flights", "Lisbon trip plan")."""
    if len(block.lines) != 1:
        return False
    line = block.lines[0][1].strip()
    words = line.split()
    if not words or len(words) > 8 or _TERMINAL.search(line) or not line[:1].isupper() or _SPEAKER.match(line):
        return False
    if any(ch.isdigit() for ch in line):
        return False  # "Gym locker code 5521": a fact, not a heading
    rest = [ln for _o, ln in lines[after:] if ln.strip()]
    return bool(rest)  # something follows it in the source


def _split_titles(blocks: list[_Block]) -> list[_Block]:
    """A prose block whose first line is a title glued to the text under it ("Sourdough starter guide"
    above "Feed the starter daily."): the title becomes a heading of its own."""
    out: list[_Block] = []
    for b in blocks:
        if b.kind == "prose" and len(b.lines) > 1:
            first = b.lines[0][1].strip()
            second = b.lines[1][1].strip()
            if (len(first.split()) <= 8 and not _TERMINAL.search(first) and first[:1].isupper()
                    and not any(ch.isdigit() for ch in first) and second[:1].isupper() and not _SPEAKER.match(first)
                    and _TERMINAL.search(b.lines[-1][1].strip() or ".")):
                out.append(_Block("heading", [b.lines[0]]))
                out.append(_Block("prose", b.lines[1:]))
                continue
        out.append(b)
    return out
