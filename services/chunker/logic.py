"""Structure-aware chunking (pure functions, no I/O).

Segments are cut into sentence-sized units, then packed greedily into chunks of about
``target`` tokens (never more than ``max_tokens``: a longer sentence is cut by tokens).
A chunk prefers to end at a section boundary (a heading, a page, a code block); when it has
to cut inside a section, the next chunk repeats the last ``overlap`` tokens of sentences so
no statement loses its context.  Code blocks become their own chunks of kind ``code``.
Conversation turns are chunked as overlapping windows of consecutive turns (kind ``chat``):
one turn rarely makes sense without the one it answers.
Offsets always point into the document's full text, so a chunk's text is an exact span.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from secondbrain.events.models import Segment, WordTime

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?…。])[\"')\]]*\s+(?=\S)|\n+(?=\s*(?:[-*+•]|\d+[.)])\s)")


def approx_tokens(text: str) -> int:
    """A cheap stand-in for word-piece counts: words and punctuation marks."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """One chunk with its provenance."""

    index: int
    text: str
    char_start: int
    char_end: int
    token_count: int
    heading_path: tuple[str, ...]
    kind: str
    page: int | None
    t_start: float | None
    t_end: float | None
    word_times: tuple[WordTime, ...] = ()  # speech chunks: when its words are said (see ``chunk_word_times``)
    speakers: tuple[str, ...] = ()  # chat chunks: the speakers of its turns, in order of first turn
    turn_ids: tuple[str, ...] = ()  # chat chunks: its turns, when the transcript gave every one an id


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    """Sizes in approximate tokens; ``turn_window``: conversation turns per chat chunk."""

    target: int = 300
    max_tokens: int = 400
    min_tokens: int = 200
    overlap: int = 40
    turn_window: int = 3


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    tokens: int
    seg: Segment


def _split_long(seg: Segment, full_text: str, max_tokens: int) -> list[_Unit]:
    """Cut a segment into sentence units (code into line groups) no longer than ``max_tokens``."""
    text = full_text[seg.char_start:seg.char_end]
    if seg.kind == "code":
        bounds = [m.end() for m in re.finditer(r"\n", text)]
    else:
        # m.end(): closing quotes/brackets stay with their sentence (whitespace is stripped below)
        bounds = [m.end() for m in _SENTENCE_END.finditer(text)]
    pieces: list[tuple[int, int]] = []
    prev = 0
    for b in [*bounds, len(text)]:
        if b > prev:
            pieces.append((prev, b))
            prev = b
    units: list[_Unit] = []
    for a, b in pieces:
        # strip whitespace so units start and end on content
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a >= b:
            continue
        if b - a <= _SHORT_PIECE_CHARS:
            piece_tokens = len(_TOKEN.findall(text, a, b))
            if piece_tokens <= max_tokens:
                units.append(_Unit(seg.char_start + a, seg.char_start + b, piece_tokens, seg))
                continue
        # A single "sentence" longer than a chunk (a table row dump, minified text, prose without
        # punctuation, a whole file on one line): cut by tokens.
        units.extend(_Unit(seg.char_start + start, seg.char_start + end, count, seg)
                     for start, end, count in _token_groups(text, a, b, max_tokens))
    return units


# Pieces up to this many characters are counted in one go; longer ones are cut as their tokens stream
# by, so a megabyte-long line never becomes a list of a million tokens (about 140 MB for 5 MB of text).
_SHORT_PIECE_CHARS = 64 * 1024


def _token_groups(text: str, a: int, b: int, max_tokens: int) -> Iterator[tuple[int, int, int]]:
    """``text[a:b]`` in runs of at most ``max_tokens`` tokens, as (start, end, tokens).  A run does not
    start with punctuation when it can be helped: closing quotes and full stops stay with the words
    before them.  Holds ``max_tokens + 1`` tokens at a time, whatever the length of the text."""
    tokens = _TOKEN.finditer(text, a, b)
    window: list[re.Match[str]] = []
    while True:
        window.extend(itertools.islice(tokens, max_tokens + 1 - len(window)))
        if not window:
            return
        cut = limit = min(max_tokens, len(window))
        while 0 < cut < len(window) and not _WORD.match(window[cut].group()):
            cut -= 1
        if cut == 0:  # nothing but punctuation up to the limit: cut at the limit
            cut = limit
        yield window[0].start(), window[cut - 1].end(), cut
        del window[:cut]


def _units(segments: Sequence[Segment], full_text: str, max_tokens: int) -> list[_Unit]:
    out: list[_Unit] = []
    for seg in segments:
        if seg.char_end <= seg.char_start:
            continue
        if seg.kind == "code":
            tokens = approx_tokens(full_text[seg.char_start:seg.char_end])
            out.append(_Unit(seg.char_start, seg.char_end, tokens, seg))
        else:
            out.extend(_split_long(seg, full_text, max_tokens))
    return out


PAUSE_STEP_S = 0.5  # pauses are compared in half-second steps: 0.3 s vs 0.4 s is noise


def speech_windows(spans: Sequence[tuple[float, float]], min_s: float = 30.0,
                   max_s: float = 90.0) -> list[list[int]]:
    """Group consecutive speech segments, given as (start, end) seconds, into windows of about
    ``min_s``-``max_s`` seconds.

    Cuts fall on segment boundaries; among the cuts that give a window of ``min_s``..``max_s``,
    the one at the longest pause wins (ties: the longer window), avoiding a remainder shorter
    than ``min_s``.  Guarantees: windows cover every index once, in order; a window spans at
    most ``max_s`` unless it is a single longer segment; a window spans at least ``min_s``
    unless it is the last or the next segment would push it past ``max_s``.
    """
    n = len(spans)
    # reach[k]: the latest end among segments k..n-1 (windows measure first start -> latest end)
    reach = [0.0] * n
    for k in range(n - 1, -1, -1):
        reach[k] = max(spans[k][1], reach[k + 1] if k + 1 < n else spans[k][1])
    windows: list[list[int]] = []
    i = 0
    while i < n:
        start = spans[i][0]
        ends = [spans[i][1]]  # ends[m]: latest end of the window i..i+m
        j = i
        while j + 1 < n and max(ends[-1], spans[j + 1][1]) - start <= max_s:
            j += 1
            ends.append(max(ends[-1], spans[j][1]))
        if j == n - 1:
            windows.append(list(range(i, n)))
            break
        cands = [k for k in range(i, j + 1) if ends[k - i] - start >= min_s]
        if not cands:
            k = j  # the next segment would overflow max_s: cut as late as possible
        else:
            fair = [c for c in cands if reach[c + 1] - spans[c + 1][0] >= min_s] or cands
            # longest pause (in half-second steps) after the cut, then the longest window
            scored = [(math.floor(max(0.0, spans[c + 1][0] - ends[c - i]) / PAUSE_STEP_S), c) for c in fair]
            k = max(scored)[1]
        windows.append(list(range(i, k + 1)))
        i = k + 1
    return windows


def chunk_speech(segments: Sequence[Segment], full_text: str, cfg: ChunkingConfig,
                 min_s: float = 30.0, max_s: float = 90.0) -> list[ChunkDraft]:
    """Chunks aligned to speech: each holds whole speech segments spanning about 30-90 s.

    A window whose text is over ``max_tokens`` (fast talkers) is packed by the generic path
    restricted to that window, so chunks stay within the embedder's budget; each chunk keeps
    the start and end time of the speech it holds.
    """
    spans = [(s.t_start or 0.0, s.t_end if s.t_end is not None else (s.t_start or 0.0)) for s in segments]
    chunks: list[ChunkDraft] = []
    for window in speech_windows(spans, min_s, max_s):
        segs = [segments[k] for k in window]
        start, end = segs[0].char_start, segs[-1].char_end
        text = full_text[start:end]
        tokens = approx_tokens(text)
        if tokens <= cfg.max_tokens:
            pieces = [ChunkDraft(0, text, start, end, tokens, tuple(segs[0].heading_path), "speech", None,
                                 spans[window[0]][0], spans[window[-1]][1])]
        else:
            pieces = [replace(c, kind="speech") for c in _pack(segs, full_text, cfg)]
        base = len(chunks)
        marks = _speech_marks(segs, full_text)
        for k, c in enumerate(pieces):
            chunks.append(replace(c, index=base + k, word_times=chunk_word_times(marks, c.char_start, c.char_end)))
    return chunks


WORD_TIMES_MAX = 600  # entries per chunk; a 90 s window of fast talk is about 300 words
_WORD_SEARCH_CHARS = 200  # a word not found this close after the previous one is skipped, not guessed


def _speech_marks(segments: Sequence[Segment], full_text: str) -> list[tuple[int, float]]:
    """(offset in the full text, second) of each word start of the speech segments, in order; the
    segment's start for a segment without words (or whose ``words`` attribute cannot be read).

    Words are found in the segment's text one after the other (the recogniser's words, stripped, are
    the pieces of its text); a word that is not there is skipped."""
    marks: list[tuple[int, float]] = []
    for seg in segments:
        if seg.t_start is None or seg.char_end <= seg.char_start:
            continue
        text = full_text[seg.char_start:seg.char_end]
        found: list[tuple[int, float]] = []
        cursor = 0
        for word, start in _words(seg.attributes.get("words", "")):
            at = text.find(word, cursor, cursor + len(word) + _WORD_SEARCH_CHARS)
            if at < 0:
                continue
            found.append((at, start))
            cursor = at + len(word)
        if not found or found[0][0] > 0:
            found.insert(0, (0, seg.t_start))  # the segment begins before its first word found
        marks.extend((seg.char_start + at, start) for at, start in found)
    return marks


def _words(raw: str) -> list[tuple[str, float]]:
    """(word, start second) from a speech block's ``words`` attribute (``[[word, start, end], ...]``);
    empty when it is missing or cannot be read."""
    if not raw:
        return []
    try:
        rows = json.loads(raw)
        out = [(str(r[0]).strip(), float(r[1])) for r in rows]
    except (ValueError, TypeError, IndexError, KeyError):
        return []
    return [(w, t) for w, t in out if w and math.isfinite(t)]


def chunk_word_times(marks: Sequence[tuple[int, float]], char_start: int, char_end: int) -> tuple[WordTime, ...]:
    """A speech chunk's ``word_times``: the offset of each word's start in the chunk's text and the second
    (0.1 s) it is said at, so a citation can name the second of
    a quoted sentence rather than one spread over the chunk's span.  A chunk starting inside a segment
    begins with the word said at its first character.  At most ``WORD_TIMES_MAX`` entries (evenly
    thinned, the first kept); empty when there is less than two to tell (the chunk's start says it)."""
    rows: list[list[float]] = []
    before: float | None = None
    for at, second in marks:
        if at <= char_start:
            before = second
        if char_start <= at < char_end:
            rows.append([at - char_start, round(second, 1)])
    if before is not None and (not rows or rows[0][0] > 0):
        rows.insert(0, [0, round(before, 1)])
    if len(rows) > WORD_TIMES_MAX:
        step = (len(rows) - 1) / (WORD_TIMES_MAX - 1)
        rows = [rows[round(i * step)] for i in range(WORD_TIMES_MAX)]
    if len(rows) < 2:
        return ()
    return tuple(WordTime(offset=int(a), second=s) for a, s in rows)


def chunk_turns(turns: Sequence[Segment], full_text: str, cfg: ChunkingConfig) -> list[ChunkDraft]:
    """Chunks of conversation turns: a window of ``cfg.turn_window`` consecutive turns starting at
    every turn (so each turn is found with the one it answers and the one answering it), fewer
    when the window would pass ``cfg.max_tokens``.

    A window that another one already holds whole is skipped, so every turn is in at least one
    chunk and the last chunk ends with the last turn.  A turn longer than ``max_tokens`` is cut by
    the generic packer.  Each chunk names its turns (``turn_ids``, when the transcript gave ids) and
    ``speakers``; its time span is that of the turns (when known).
    """
    chunks: list[ChunkDraft] = []
    tokens = [approx_tokens(full_text[t.char_start:t.char_end]) for t in turns]
    covered = 0  # turns[:covered] are in a chunk already
    for i in range(len(turns)):
        if tokens[i] > cfg.max_tokens:
            for piece in _pack([turns[i]], full_text, cfg):
                speakers, turn_ids = _turn_lists([turns[i]])
                chunks.append(replace(piece, index=len(chunks), kind="chat", speakers=speakers, turn_ids=turn_ids))
            covered = max(covered, i + 1)
            continue
        j, total = i + 1, tokens[i]
        while j < len(turns) and j - i < max(1, cfg.turn_window) and total + tokens[j] <= cfg.max_tokens:
            total += tokens[j]
            j += 1
        if j <= covered:
            continue  # inside the previous window
        window = turns[i:j]
        start, end = window[0].char_start, window[-1].char_end
        text = full_text[start:end]
        starts = [t.t_start for t in window if t.t_start is not None]
        ends = [t.t_end for t in window if t.t_end is not None]
        speakers, turn_ids = _turn_lists(window)
        chunks.append(ChunkDraft(len(chunks), text, start, end, approx_tokens(text), tuple(window[0].heading_path),
                                 "chat", window[0].page, min(starts) if starts else None, max(ends) if ends else None,
                                 speakers=speakers, turn_ids=turn_ids))
        covered = j
        if j == len(turns):
            break
    return chunks


def _turn_lists(turns: Sequence[Segment]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The speakers of ``turns`` (each once) and their ids (none unless every turn has one)."""
    ids = tuple(t.attributes.get("turn_id", "") for t in turns)
    speakers = tuple(dict.fromkeys(t.attributes["speaker"] for t in turns if t.attributes.get("speaker")))
    return speakers, ids if all(ids) else ()


def chunk_segments(segments: Sequence[Segment], full_text: str,
                   cfg: ChunkingConfig | None = None) -> list[ChunkDraft]:
    """Pack a document's segments into chunks (speech by time windows, conversation turns by windows
    of turns, the rest by structure)."""
    cfg = cfg or ChunkingConfig()
    if segments and all(s.kind == "speech" and s.t_start is not None for s in segments):
        return chunk_speech(segments, full_text, cfg)
    if any(s.kind == "turn" for s in segments):
        # Runs of turns by windows, anything between them (a preamble) by structure, in order.
        chunks: list[ChunkDraft] = []
        run: list[Segment] = []
        rest: list[Segment] = []
        for seg in [*segments, None]:
            is_turn = seg is not None and seg.kind == "turn"
            if run and not is_turn:
                chunks.extend(chunk_turns(run, full_text, cfg))
                run = []
            if rest and (is_turn or seg is None):
                chunks.extend(_pack(rest, full_text, cfg))
                rest = []
            if seg is not None:
                (run if is_turn else rest).append(seg)
        return [replace(c, index=k) for k, c in enumerate(chunks)]
    return _pack(segments, full_text, cfg)


def _draft(units: list[_Unit], full_text: str, index: int, kind: str | None = None) -> ChunkDraft:
    """The chunk of ``units`` (contiguous), the ``index``-th of its document."""
    first, last = units[0], units[-1]
    text = full_text[first.start:last.end]
    starts = [u.seg.t_start for u in units if u.seg.t_start is not None]
    ends = [u.seg.t_end for u in units if u.seg.t_end is not None]
    # A chunk may span a short intro and the next section: cite the section holding most of its text.
    weight: dict[tuple[str, ...], int] = {}
    for u in units:
        if u.seg.kind != "heading":
            weight[tuple(u.seg.heading_path)] = weight.get(tuple(u.seg.heading_path), 0) + u.tokens
    path = max(weight, key=lambda p: weight[p]) if weight else tuple(first.seg.heading_path)
    return ChunkDraft(
        index=index, text=text, char_start=first.start, char_end=last.end,
        token_count=approx_tokens(text), heading_path=tuple(path),
        kind=kind or ("code" if all(u.seg.kind == "code" for u in units) else "text"),
        page=first.seg.page, t_start=min(starts) if starts else None, t_end=max(ends) if ends else None,
    )


class _Packer:
    """Greedy structure-aware packing of segments into chunks: the units of the chunk being filled (``cur``,
    ``cur_tokens`` long) and the chunks made so far."""

    def __init__(self, full_text: str, cfg: ChunkingConfig) -> None:
        self.full_text = full_text
        self.cfg = cfg
        self.chunks: list[ChunkDraft] = []
        self.cur: list[_Unit] = []
        self.cur_tokens = 0

    def emit(self, units: list[_Unit], kind: str | None = None) -> None:
        self.chunks.append(_draft(units, self.full_text, len(self.chunks), kind))

    def flush(self, carry_overlap: bool) -> None:
        cur, cfg = self.cur, self.cfg
        if not cur:
            return
        if all(u.seg.kind == "heading" for u in cur):
            return  # a heading alone is carried into the next chunk, not indexed by itself
        self.emit(cur)
        if carry_overlap and cfg.overlap > 0:
            keep: list[_Unit] = []
            total = 0
            for u in reversed(cur):
                # Whole sentences only; one sentence up to twice the overlap is still worth repeating.
                too_long = total + u.tokens > cfg.overlap and (keep or u.tokens > 2 * cfg.overlap)
                if too_long or u.seg.kind in ("heading", "code"):
                    break
                keep.insert(0, u)
                total += u.tokens
            if len(keep) == len(cur):  # never repeat a whole chunk
                keep, total = [], 0
            self.cur, self.cur_tokens = keep, total
        else:
            self.cur, self.cur_tokens = [], 0

    def drop_carried(self, before: Segment) -> None:
        """Drop what ``cur`` carries (overlap, pending headings) instead of putting it before ``before``.
        Headings of empty sections (not on ``before``'s path) get a chunk so their text is not lost."""
        cur = self.cur
        if cur and all(u.seg.kind == "heading" for u in cur) \
                and any(u.seg.text not in before.heading_path for u in cur):
            self.emit(cur)
        self.cur, self.cur_tokens = [], 0

    def add(self, unit: _Unit) -> None:
        """One more unit: into the chunk being filled, after closing it where a boundary or the size says so."""
        seg, cfg = unit.seg, self.cfg
        if seg.kind == "code":
            self.flush(carry_overlap=False)
            # A pending heading is not carried past the code: the next chunk would span the code
            # block (a chunk is one contiguous span); the code's path names the heading.
            self.drop_carried(seg)
            for piece in (_split_long(seg, self.full_text, cfg.max_tokens) if unit.tokens > cfg.max_tokens
                          else [unit]):
                self.emit([piece], kind="code")
            return
        boundary = bool(self.cur) and (
            seg.kind == "heading"
            or seg.page != self.cur[-1].seg.page
            or (seg.t_start is None) != (self.cur[-1].seg.t_start is None)
        )
        if boundary and self.cur_tokens >= cfg.min_tokens:
            self.flush(carry_overlap=False)
        elif self.cur and self.cur_tokens + unit.tokens > cfg.max_tokens:
            self.flush(carry_overlap=not boundary)
        elif self.cur and self.cur_tokens >= cfg.target and not boundary:
            self.flush(carry_overlap=True)
        if self.cur and self.cur_tokens + unit.tokens > cfg.max_tokens:
            self.drop_carried(seg)  # the carried overlap/headings would push this chunk over the limit
        if seg.page is not None and self.cur and seg.page != self.cur[-1].seg.page:
            self.flush(carry_overlap=False)  # a chunk never spans two pages: citations name one page
            self.drop_carried(seg)  # a heading left pending belongs to the previous page
        self.cur.append(unit)
        self.cur_tokens += unit.tokens


def _pack(segments: Sequence[Segment], full_text: str, cfg: ChunkingConfig) -> list[ChunkDraft]:
    """Greedy structure-aware packing of segments into chunks."""
    packer = _Packer(full_text, cfg)
    for unit in _units(segments, full_text, cfg.max_tokens):
        packer.add(unit)
    if packer.cur:
        # Trailing headings too (a document of headings only, an empty last section): there is no
        # next chunk to carry them into, and dropping them would lose their text.
        packer.emit(packer.cur)
    return packer.chunks
