"""Structure-aware chunking: sizes, exact offsets, overlap, code, headings, pages, no text lost."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from secondbrain.events.models import Segment
from services.chunker.logic import (
    ChunkDraft,
    ChunkingConfig,
    approx_tokens,
    chunk_segments,
    speech_windows,
)
from services.extractors.text import extract_text
from tests.examples import examples

pytestmark = pytest.mark.fast  # no services: in the fast lane

SMALL = ChunkingConfig(target=30, max_tokens=40, min_tokens=20, overlap=8)


def SegmentIn(index: int, kind: str, text: str, char_start: int, char_end: int,
              heading_path: Sequence[str] = (), page: int | None = None, t_start: float | None = None,
              t_end: float | None = None) -> Segment:
    """A document segment as the extractor makes it (the one segment type from extractor to chunker)."""
    return Segment(index=index, kind=kind, text=text, char_start=char_start, char_end=char_end,
                   heading_path=list(heading_path), page=page, t_start=t_start, t_end=t_end)


def build(blocks: Sequence[tuple[str, str, tuple[str, ...], int | None]]) -> tuple[list[Segment], str]:
    """Segments (kind, text, heading_path, page) laid out like the extractor does (blank-line separated)."""
    segments: list[Segment] = []
    pieces: list[str] = []
    pos = 0
    for i, (kind, text, path, page) in enumerate(blocks):
        if i:
            pieces.append("\n\n")
            pos += 2
        segments.append(SegmentIn(i, kind, text, pos, pos + len(text), path, page))
        pieces.append(text)
        pos += len(text)
    return segments, "".join(pieces)


def from_markdown(source: str, cfg: ChunkingConfig | None = None) -> tuple[list[ChunkDraft], str]:
    doc = extract_text(source.encode(), content_type="text/markdown", filename="doc.md", is_note=False)
    segments = [SegmentIn(s.index, s.kind, s.text, s.char_start, s.char_end, s.heading_path)
                for s in doc.segments]
    return chunk_segments(segments, doc.full_text, cfg), doc.full_text


def sentences(n: int, prefix: str = "s", words: int = 6) -> list[str]:
    """``n`` distinct sentences of ``words`` words plus a full stop (words + 1 tokens each)."""
    return [" ".join([f"{prefix}{i}"] + [f"w{i}x{j}" for j in range(words - 1)]) + "." for i in range(n)]


def check_invariants(chunks: list[ChunkDraft], full_text: str) -> None:
    for i, c in enumerate(chunks):
        assert c.index == i
        assert full_text[c.char_start:c.char_end] == c.text, f"chunk {i} offsets do not match its text"
        assert c.text and c.text == c.text.strip()
        assert c.token_count == approx_tokens(c.text)


# --------------------------------------------------------------------------- sizes and offsets


def test_chunks_stay_within_max_tokens() -> None:
    text = " ".join(sentences(60))  # 420 tokens in one paragraph
    chunks, full = from_markdown(text, SMALL)
    check_invariants(chunks, full)
    assert len(chunks) > 5
    assert all(c.token_count <= SMALL.max_tokens for c in chunks)
    # chunks are reasonably full, not a sentence each
    assert sum(c.token_count for c in chunks[:-1]) / (len(chunks) - 1) >= SMALL.min_tokens


def test_default_config_sizes() -> None:
    text = "\n\n".join(" ".join(sentences(12, prefix=f"p{k}s", words=9)) for k in range(20))  # ~2400 tokens
    chunks, full = from_markdown(text)
    check_invariants(chunks, full)
    cfg = ChunkingConfig()
    assert all(c.token_count <= cfg.max_tokens for c in chunks)
    assert all(c.token_count >= cfg.min_tokens for c in chunks[:-1])


def test_single_oversize_sentence_is_cut_by_tokens() -> None:
    big = " ".join(f"long{i}" for i in range(70)) + "."  # 71 tokens > max 40
    before = sentences(6, prefix="a")
    after = sentences(6, prefix="b")
    chunks, full = from_markdown(" ".join([*before, big, *after]), SMALL)
    check_invariants(chunks, full)
    assert all(c.token_count <= SMALL.max_tokens for c in chunks), [c.token_count for c in chunks]
    start = full.index(big)
    pieces = [c.text for c in chunks if start <= c.char_start < start + len(big)]
    assert len(pieces) == 2 and " ".join(pieces) == big  # in order, nothing lost or repeated
    assert pieces[1].endswith("long69.")  # the full stop stays with its word


def test_long_paragraph_without_punctuation_is_cut_to_max_tokens() -> None:
    """5,000 words and no sentence end: one "sentence" far over the limit is cut by tokens."""
    words = [f"w{i}" for i in range(5000)]
    chunks, full = from_markdown("# Dump\n\n" + " ".join(words))
    check_invariants(chunks, full)
    cfg = ChunkingConfig()
    assert len(chunks) >= 5000 // cfg.max_tokens
    assert all(c.token_count <= cfg.max_tokens for c in chunks), [c.token_count for c in chunks]
    assert " ".join(c.text for c in chunks).split() == words  # in order, nothing lost or repeated
    assert all(c.heading_path == ("Dump",) for c in chunks)


def test_overlap_never_pushes_a_chunk_over_the_limit() -> None:
    """A sentence that fits a chunk alone must not be glued to the previous chunk's overlap
    when both together exceed max_tokens."""
    near_max = " ".join(f"near{i}" for i in range(37)) + "."  # 38 tokens: fits alone (max 40)
    text = " ".join([*sentences(5, prefix="a", words=3), near_max, *sentences(5, prefix="b", words=3)])
    chunks, full = from_markdown(text, SMALL)
    check_invariants(chunks, full)
    assert all(c.token_count <= SMALL.max_tokens for c in chunks), [c.token_count for c in chunks]
    assert any(c.text == near_max for c in chunks)


# --------------------------------------------------------------------------- overlap


def test_overlap_when_a_section_is_cut_midway() -> None:
    chunks, full = from_markdown("# Only section\n\n" + " ".join(sentences(30)), SMALL)
    check_invariants(chunks, full)
    assert len(chunks) >= 3
    for prev, nxt in pairwise(chunks):
        assert nxt.char_start < prev.char_end, "consecutive chunks of one section must overlap"
        shared = full[nxt.char_start:prev.char_end]
        assert approx_tokens(shared) <= 2 * SMALL.overlap
        assert shared.endswith(".")  # whole sentences are repeated, never half of one
        assert nxt.char_end > prev.char_end  # and each chunk still moves forward


def test_no_overlap_across_heading_boundaries() -> None:
    sections = [f"# Section {k}\n\n" + " ".join(sentences(4, prefix=f"k{k}s")) for k in range(4)]  # 28 tokens
    chunks, full = from_markdown("\n\n".join(sections), SMALL)
    check_invariants(chunks, full)
    assert len(chunks) == 4
    for k, c in enumerate(chunks):
        assert c.heading_path == (f"Section {k}",)
        assert c.text.startswith(f"Section {k}")  # the heading travels with its content
    for prev, nxt in pairwise(chunks):
        assert nxt.char_start >= prev.char_end


def test_small_sections_are_merged() -> None:
    sections = [f"## Part {k}\n\nShort note {k}." for k in range(4)]
    chunks, full = from_markdown("\n\n".join(sections), SMALL)
    check_invariants(chunks, full)
    assert len(chunks) == 1
    assert "Short note 0." in chunks[0].text and "Short note 3." in chunks[0].text


def test_zero_overlap_config_gives_disjoint_chunks() -> None:
    cfg = ChunkingConfig(target=30, max_tokens=40, min_tokens=20, overlap=0)
    chunks, full = from_markdown(" ".join(sentences(30)), cfg)
    check_invariants(chunks, full)
    for prev, nxt in pairwise(chunks):
        assert nxt.char_start >= prev.char_end


# --------------------------------------------------------------------------- code


CODE = "def f(x):\n    return x * 2\n\nprint(f(21))"


def test_code_block_is_its_own_chunk() -> None:
    source = f"# Guide\n\nIntro sentence here.\n\n```python\n{CODE}\n```\n\nAfter the code."
    chunks, full = from_markdown(source, SMALL)
    check_invariants(chunks, full)
    code = [c for c in chunks if c.kind == "code"]
    assert [c.text for c in code] == [CODE]
    assert code[0].heading_path == ("Guide",)
    text_chunks = [c for c in chunks if c.kind == "text"]
    assert {c.kind for c in chunks} == {"code", "text"}
    assert all(CODE not in c.text and "print(f(21))" not in c.text for c in text_chunks)
    assert any("Intro sentence here." in c.text for c in text_chunks)
    assert any("After the code." in c.text for c in text_chunks)


def test_text_after_a_heading_and_code_does_not_swallow_the_code() -> None:
    """A heading directly followed by code must not make the next text chunk span the code block."""
    long_code = "\n".join(f"x{i} = compute({i}, {i + 1}, {i + 2})" for i in range(40))  # > max tokens
    source = f"# Setup\n\n```python\n{long_code}\n```\n\nThen run it."
    chunks, full = from_markdown(source, SMALL)
    check_invariants(chunks, full)
    text_chunks = [c for c in chunks if c.kind == "text"]
    assert len(text_chunks) == 1
    assert "compute" not in text_chunks[0].text
    assert text_chunks[0].text.endswith("Then run it.")
    assert text_chunks[0].heading_path == ("Setup",)
    assert all(c.token_count <= SMALL.max_tokens for c in chunks)


def test_long_code_block_is_split_by_lines() -> None:
    lines = [f"value_{i} = transform(items[{i}], factor={i})" for i in range(30)]  # 14 tokens a line
    code = "\n".join(lines)
    chunks, full = from_markdown(f"```\n{code}\n```", SMALL)
    check_invariants(chunks, full)
    assert len(chunks) > 1
    assert all(c.kind == "code" for c in chunks)
    assert all(c.token_count <= SMALL.max_tokens for c in chunks)
    # every piece is made of whole lines, in order, with nothing lost and nothing repeated
    pieces = [c.text.split("\n") for c in chunks]
    assert [ln for p in pieces for ln in p] == lines
    for prev, nxt in pairwise(chunks):
        assert nxt.char_start > prev.char_end


def test_code_chunks_have_no_overlap_with_text() -> None:
    text = " ".join(sentences(8))
    chunks, full = from_markdown(f"{text}\n\n```\n{CODE}\n```\n\n{text.replace('s', 't')}", SMALL)
    check_invariants(chunks, full)
    code_idx = next(i for i, c in enumerate(chunks) if c.kind == "code")
    assert chunks[code_idx - 1].char_end <= chunks[code_idx].char_start
    assert chunks[code_idx + 1].char_start >= chunks[code_idx].char_end


# --------------------------------------------------------------------------- headings


def test_heading_paths() -> None:
    source = (
        "# Book\n\nPreface text.\n\n## Chapter 1\n\nChapter one text.\n\n### Scene\n\nScene text.\n\n"
        "## Chapter 2\n\nChapter two text."
    )
    cfg = ChunkingConfig(target=3, max_tokens=10, min_tokens=1, overlap=0)  # one section per chunk
    chunks, full = from_markdown(source, cfg)
    check_invariants(chunks, full)
    paths = {c.text.split("\n\n")[-1]: c.heading_path for c in chunks}
    assert paths == {
        "Preface text.": ("Book",),
        "Chapter one text.": ("Book", "Chapter 1"),
        "Scene text.": ("Book", "Chapter 1", "Scene"),
        "Chapter two text.": ("Book", "Chapter 2"),
    }


def test_document_of_only_headings_still_yields_a_chunk() -> None:
    chunks, full = from_markdown("# One\n\n## Two\n\n### Three")
    check_invariants(chunks, full)
    assert len(chunks) == 1
    assert chunks[0].text == "One\n\nTwo\n\nThree"
    assert chunks[0].heading_path == ("One",)


def test_outline_of_many_headings_respects_max_tokens() -> None:
    source = "\n\n".join(f"# Topic number {i} of the outline" for i in range(30))  # 6 tokens each
    chunks, full = from_markdown(source, SMALL)
    check_invariants(chunks, full)
    assert len(chunks) > 1
    assert all(c.token_count <= SMALL.max_tokens for c in chunks)
    assert " ".join(c.text for c in chunks).split() == full.split()


def test_trailing_empty_section_keeps_its_heading() -> None:
    chunks, full = from_markdown("# Notes\n\nSome text here.\n\n## Open questions", SMALL)
    check_invariants(chunks, full)
    assert any("Open questions" in c.text for c in chunks)


def test_empty_section_before_code_keeps_its_heading() -> None:
    chunks, full = from_markdown(f"# Empty\n\n# Example\n\n```\n{CODE}\n```\n\nDone.", SMALL)
    check_invariants(chunks, full)
    assert any("Empty" in c.text or "Empty" in c.heading_path for c in chunks)
    assert [c.text for c in chunks if c.kind == "code"] == [CODE]


def test_empty_input_gives_no_chunks() -> None:
    assert chunk_segments([], "") == []


# --------------------------------------------------------------------------- sentences


def test_closing_quote_stays_with_its_sentence() -> None:
    text = 'She said "stop here." Then he left the room. (It was late.) Everyone went home.'
    segments, full = build([("paragraph", text, (), None)])
    cfg = ChunkingConfig(target=4, max_tokens=8, min_tokens=2, overlap=0)
    chunks = chunk_segments(segments, full, cfg)
    check_invariants(chunks, full)
    texts = [c.text for c in chunks]
    assert 'She said "stop here."' in texts
    assert "(It was late.)" in texts
    assert not any(t.startswith(('"', ")")) for t in texts)


def test_list_items_are_sentence_boundaries() -> None:
    items = [f"- item {i} " + " ".join(f"w{j}" for j in range(8)) for i in range(8)]
    chunks, full = from_markdown("\n".join(items), SMALL)
    check_invariants(chunks, full)
    assert len(chunks) > 1
    for c in chunks:
        assert c.text.startswith("- item")  # cut between items, not inside one


# --------------------------------------------------------------------------- pages


def _pages_of(chunk: ChunkDraft, segments: list[Segment]) -> set[int | None]:
    return {s.page for s in segments if s.char_start < chunk.char_end and s.char_end > chunk.char_start}


def test_chunks_never_cross_page_boundaries() -> None:
    blocks: list[tuple[str, str, tuple[str, ...], int | None]] = []
    for page in range(1, 5):
        for k in range(page):  # pages of growing length: 1..4 paragraphs of 14 tokens
            blocks.append(("paragraph", " ".join(sentences(2, prefix=f"p{page}k{k}s")), (), page))
    segments, full = build(blocks)
    chunks = chunk_segments(segments, full, SMALL)
    check_invariants(chunks, full)
    for c in chunks:
        assert _pages_of(c, segments) == {c.page}, f"chunk {c.index} spans pages {_pages_of(c, segments)}"
    assert {c.page for c in chunks} == {1, 2, 3, 4}


def test_heading_at_the_bottom_of_a_page_does_not_drag_a_chunk_across_pages() -> None:
    segments, full = build([
        ("paragraph", " ".join(sentences(3, prefix="first")), (), 1),  # 21 tokens: >= min_tokens
        ("heading", "Results", ("Results",), 1),
        ("paragraph", "Second page text about the results.", ("Results",), 2),
    ])
    chunks = chunk_segments(segments, full, SMALL)
    check_invariants(chunks, full)
    for c in chunks:
        assert _pages_of(c, segments) == {c.page}
    page2 = [c for c in chunks if c.page == 2]
    assert len(page2) == 1 and page2[0].heading_path == ("Results",)
    assert page2[0].text.endswith("Second page text about the results.")


def test_page_numbers_are_kept_on_chunks() -> None:
    segments, full = build([("paragraph", " ".join(sentences(10)), (), 7)])
    chunks = chunk_segments(segments, full, SMALL)
    assert chunks and all(c.page == 7 for c in chunks)


def test_time_ranges_cover_the_chunk() -> None:
    segments = []
    pieces = []
    pos = 0
    for i, sent in enumerate(sentences(12)):
        if i:
            pieces.append("\n\n")
            pos += 2
        segments.append(SegmentIn(i, "speech", sent, pos, pos + len(sent), (), None, i * 2.0, i * 2.0 + 1.5))
        pieces.append(sent)
        pos += len(sent)
    full = "".join(pieces)
    chunks = chunk_segments(segments, full, SMALL)
    check_invariants(chunks, full)
    for c in chunks:
        inside = [s for s in segments if s.char_start >= c.char_start and s.char_end <= c.char_end]
        assert c.t_start == min(s.t_start for s in inside if s.t_start is not None)
        assert c.t_end == max(s.t_end for s in inside if s.t_end is not None)


# --------------------------------------------------------------------------- determinism


def test_deterministic() -> None:
    source = ("# A\n\n" + " ".join(sentences(40)) + f"\n\n```\n{CODE}\n```\n\n## B\n\n"
              + " ".join(sentences(9)))
    first, _ = from_markdown(source, SMALL)
    for _ in range(3):
        again, _ = from_markdown(source, SMALL)
        assert again == first


# --------------------------------------------------------------------------- property: no text lost

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=7)
_SENT = st.tuples(st.lists(_WORD, min_size=1, max_size=30), st.sampled_from([".", "!", "?", '."', ".)"])).map(
    lambda t: " ".join(t[0]).capitalize() + t[1])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str], list[str], list[str]]:
    """Markdown text, its sentences, its headings and its code lines."""
    parts: list[str] = []
    all_sentences: list[str] = []
    headings: list[str] = []
    code_lines: list[str] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["heading", "paragraph", "paragraph", "paragraph", "code", "list"]))
        if kind == "heading":
            h = " ".join(draw(st.lists(_WORD, min_size=1, max_size=3)))
            headings.append(h)
            parts.append("#" * draw(st.integers(1, 3)) + " " + h)
        elif kind == "paragraph":
            sents = draw(st.lists(_SENT, min_size=1, max_size=12))
            all_sentences += sents
            parts.append(" ".join(sents))
        elif kind == "list":
            sents = draw(st.lists(_SENT, min_size=1, max_size=6))
            all_sentences += sents
            parts.append("\n".join(f"- {s}" for s in sents))
        else:
            lines = [" = ".join(draw(st.lists(_WORD, min_size=1, max_size=12)))
                     for _ in range(draw(st.integers(1, 15)))]
            code_lines += lines
            parts.append("```\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(parts), all_sentences, headings, code_lines


@settings(max_examples=examples(150), deadline=None)
@given(documents(), st.sampled_from([SMALL, ChunkingConfig(target=12, max_tokens=16, min_tokens=6, overlap=4),
                                     ChunkingConfig()]))
def test_every_sentence_appears_in_a_chunk(doc: tuple[str, list[str], list[str], list[str]],
                                           cfg: ChunkingConfig) -> None:
    source, sents, headings, code_lines = doc
    chunks, full = from_markdown(source, cfg)
    check_invariants(chunks, full)
    assert chunks
    texts = [c.text for c in chunks]
    spans = [(c.char_start, c.char_end) for c in chunks]
    for s in sents:
        if approx_tokens(s) < cfg.max_tokens:  # (one token spare for a list item's marker)
            assert any(s in t for t in texts), f"sentence lost: {s!r}"
        else:  # cut by tokens: every token of every occurrence is in a chunk
            for m in re.finditer(re.escape(s), full):
                for tok in re.finditer(r"\w+|[^\w\s]", s):
                    pos = m.start() + tok.start()
                    assert any(a <= pos < b for a, b in spans), f"part of a long sentence lost: {s!r}"
    # code: every token of every line, in order, nothing repeated (a line longer than a chunk is cut)
    assert " ".join(c.text for c in chunks if c.kind == "code").split() == " ".join(code_lines).split()
    for h in headings:
        assert any(h in t for t in texts) or any(h in c.heading_path for c in chunks), f"heading lost: {h!r}"
    for c in chunks:
        assert c.token_count <= cfg.max_tokens, f"chunk over the limit: {c}"
        if c.kind == "text":
            assert not re.search(r"^[\"')]", c.text), c.text
    # chunks advance through the document
    starts = [c.char_start for c in chunks if c.kind == "text"]
    assert starts == sorted(starts)


# --------------------------------------------------------------------------- speech


@given(st.lists(st.tuples(st.floats(0.0, 5.0), st.floats(0.5, 40.0)), min_size=1, max_size=60))
def test_speech_windows_cover_segments_in_order(gaps_and_lengths: list[tuple[float, float]]) -> None:
    spans, t = [], 0.0
    for gap, length in gaps_and_lengths:
        spans.append((t + gap, t + gap + length))
        t += gap + length
    windows = speech_windows(spans, 30.0, 90.0)
    assert [i for w in windows for i in w] == list(range(len(spans)))  # all, once, in order
    for k, w in enumerate(windows):
        duration = spans[w[-1]][1] - spans[w[0]][0]
        assert duration <= 90.0 + 1e-9 or len(w) == 1
        if k < len(windows) - 1:
            # Only the last window may be short, unless the next segment could not fit.
            nxt = windows[k + 1][0]
            assert duration >= 30.0 - 1e-9 or spans[nxt][1] - spans[w[0]][0] > 90.0


def test_speech_windows_cut_at_the_longest_pause() -> None:
    # Twenty 5-s segments (124 s in all) with 1-s pauses and one 6-s pause after segment 6 (at 41 s).
    spans, t = [], 0.0
    for i in range(20):
        spans.append((t, t + 5.0))
        t += 5.0 + (6.0 if i == 6 else 1.0)
    windows = speech_windows(spans, 30.0, 90.0)
    assert windows[0] == list(range(7))


def test_speech_chunks_carry_time_spans() -> None:
    pieces, segments, pos = [], [], 0
    for i in range(40):  # 40 segments of 4 s: about 160 s of talk
        text = f"Segment {i} talks about topic {i % 7} with enough words to matter."
        if i:
            pieces.append("\n\n")
            pos += 2
        segments.append(SegmentIn(i, "speech", text, pos, pos + len(text), (), None, i * 4.0, i * 4.0 + 3.5))
        pieces.append(text)
        pos += len(text)
    full = "".join(pieces)
    chunks = chunk_segments(segments, full, ChunkingConfig())
    check_invariants(chunks, full)
    assert all(c.kind == "speech" for c in chunks)
    assert all(30.0 <= c.t_end - c.t_start <= 90.0 for c in chunks[:-1])  # type: ignore[operator]
    assert chunks[0].t_start == 0.0 and chunks[-1].t_end == 39 * 4.0 + 3.5
    for a, b in pairwise(chunks):
        assert a.t_end is not None and b.t_start is not None and a.t_end <= b.t_start


def test_markdown_passages_carry_their_own_links() -> None:
    from services.chunker.stage import passage_links

    text = ("See [[Tomato plan#Soil|the soil]], [[Compost]] and [the guide](https://example.org/beds \"Beds\"); "
            "![x](a.png)")
    assert passage_links(text, markdown=True) == ["Tomato plan", "Compost", "https://example.org/beds"]
    assert passage_links("no links here", markdown=True) == []
    assert passage_links("[[Not markdown]]", markdown=False) == []
