"""A recording's passages carry the times of their words, so a quoted sentence is cited at the second
it is said, not at a second spread over the passage's span."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from secondbrain.events.models import ChunksCreated, DocumentExtracted, Segment, WordTime
from secondbrain.stores.memory import MemoryMetadataStore
from secondbrain.stores.objects_fs import FileObjectStore
from secondbrain.word_times import quoted_second
from services.chunker.logic import (
    WORD_TIMES_MAX,
    ChunkDraft,
    ChunkingConfig,
    chunk_segments,
    chunk_word_times,
)
from services.chunker.stage import ChunkerStage

pytestmark = pytest.mark.fast  # no services: in the fast lane


def recording(spoken: Sequence[tuple[str, float]], *, words: bool = True,
              word_s: float = 0.4) -> tuple[list[Segment], str]:
    """Speech segments as the audio extractor lays them out (blank-line separated), each (text, start) with
    its words said ``word_s`` apart (``words`` attribute as the extractor writes it, Whisper's leading spaces)."""
    segments: list[Segment] = []
    pieces: list[str] = []
    pos = 0
    for i, (text, start) in enumerate(spoken):
        if i:
            pieces.append("\n\n")
            pos += 2
        said = [[f" {w}", round(start + k * word_s, 2), round(start + (k + 1) * word_s, 2)]
                for k, w in enumerate(text.split())]
        attrs = {"words": json.dumps(said, separators=(",", ":"))} if words else {}
        segments.append(Segment(index=i, kind="speech", text=text, char_start=pos, char_end=pos + len(text),
                                t_start=start, t_end=said[-1][2], attributes=attrs))  # type: ignore[arg-type]
        pieces.append(text)
        pos += len(text)
    return segments, "".join(pieces)


def talk() -> list[tuple[str, float]]:
    """Two short remarks, a long silence, then steady talk: a sentence begins 15 s into the recording."""
    out = [("Hello everyone and welcome.", 0.0), ("Let us wait for the others.", 2.0)]
    out.append(("The budget for the garden shed is four hundred euros.", 15.0))
    out += [(f"Remark number {i} goes on about the weather for a while.", 20.0 + 5.0 * i) for i in range(10)]
    return out


def test_a_sentence_fifteen_seconds_into_a_recording_is_cited_at_fifteen_seconds() -> None:
    segments, full = recording(talk())
    chunks = chunk_segments(segments, full, ChunkingConfig())
    first = chunks[0]
    assert first.kind == "speech" and first.t_start == 0.0 and first.word_times
    at = first.text.index("The budget")
    assert quoted_second(first.word_times, first.t_start, first.t_end, len(first.text), at) == 15.0
    # a word inside the sentence: "garden" is its 5th word, said 4 x 0.4 s after the first
    assert quoted_second(first.word_times, first.t_start, first.t_end, len(first.text),
                         first.text.index("garden")) == 16.6
    # what spreading the chunk's span over its text would say: seconds off (the silence is not in the text)
    spread = quoted_second((), first.t_start, first.t_end, len(first.text), at)
    assert spread is not None and abs(spread - 15.0) > 3


def test_every_word_of_every_chunk_maps_to_its_second() -> None:
    segments, full = recording(talk() + [(f"Later point {i} is about the harvest.", 80.0 + 3.0 * i)
                                         for i in range(30)])
    chunks = chunks_of(segments, full, ChunkingConfig())
    assert len(chunks) >= 2
    for c in chunks:
        rows = pairs(c.word_times)
        assert rows[0][0] == 0 and [r[0] for r in rows] == sorted(r[0] for r in rows)
        for seg in segments:
            if c.char_start <= seg.char_start < c.char_end:
                at = seg.char_start
                for word, start, _end in json.loads(seg.attributes["words"]):
                    at = full.index(word.strip(), at)
                    second = quoted_second(c.word_times, c.t_start, c.t_end, len(c.text), at - c.char_start)
                    assert second == round(start, 1)
                    at += len(word.strip())


def pairs(word_times: Sequence[WordTime]) -> list[list[float]]:
    return [[w.offset, w.second] for w in word_times]


def chunks_of(segments: list[Segment], full: str, cfg: ChunkingConfig) -> list[ChunkDraft]:
    chunks = chunk_segments(segments, full, cfg)
    assert chunks and all(c.kind == "speech" for c in chunks)
    return chunks


def test_a_chunk_cut_inside_a_long_segment_starts_with_the_word_said_at_its_first_character() -> None:
    """Fast talk over the token budget: the window is packed by sentences, chunks begin mid-segment."""
    text = " ".join(f"Sentence {i} has a few more words in it." for i in range(30))
    segments, full = recording([(text, 100.0)], word_s=0.25)
    chunks = chunks_of(segments, full, ChunkingConfig(target=30, max_tokens=40, min_tokens=20, overlap=8))
    assert len(chunks) > 3
    for c in chunks:
        assert c.word_times[0].offset == 0
        word = c.text.split()[0]
        k = len(full[:c.char_start].split())  # words said before the chunk
        assert word == text.split()[k]
        assert quoted_second(c.word_times, c.t_start, c.t_end, len(c.text), 0) == round(100.0 + 0.25 * k, 1)


def test_segments_without_words_give_their_starts() -> None:
    segments, full = recording(talk(), words=False)
    first = chunk_segments(segments, full, ChunkingConfig())[0]
    assert pairs(first.word_times)[:3] == [[0, 0.0], [full.index("Let us"), 2.0], [full.index("The budget"), 15.0]]
    at = first.text.index("garden")  # inside the sentence said from 15 s: its start
    assert quoted_second(first.word_times, first.t_start, first.t_end, len(first.text), at) == 15.0


def test_a_malformed_words_attribute_falls_back_to_the_segment_start() -> None:
    segments, full = recording(talk())
    bad = [Segment(**{**{f: getattr(s, f) for f in ("index", "kind", "text", "char_start", "char_end", "t_start",
                                                      "t_end")}, "attributes": {"words": "[[not json"}})
           for s in segments]
    first = chunk_segments(bad, full, ChunkingConfig())[0]
    assert pairs(first.word_times)[2] == [full.index("The budget"), 15.0]


def test_word_times_are_capped_and_thinned_evenly() -> None:
    marks = [(k * 5, k * 0.3) for k in range(2000)]
    rows = pairs(chunk_word_times(marks, 0, 10_000))
    assert len(rows) == WORD_TIMES_MAX and rows[0] == [0, 0.0] and rows[-1] == [9995, 599.7]
    gaps = {b[0] - a[0] for a, b in pairwise(rows)}
    assert gaps <= {15, 20}  # 1999 / 599 words apart, rounded
    assert chunk_word_times([(0, 1.0)], 0, 50) == ()  # one mark: the chunk's start says it all


def test_other_chunks_carry_no_word_times() -> None:
    text = "A note about the garden. It has a shed."
    seg = Segment(index=0, kind="paragraph", text=text, char_start=0, char_end=len(text))
    (chunk,) = chunk_segments([seg], text, ChunkingConfig())
    assert chunk.word_times == ()


def test_the_chunk_event_carries_word_times(tmp_path: Path) -> None:
    segments, full = recording(talk())
    ev = DocumentExtracted(event_id="e", job_id="j", user_id="alice", artifact_id="a", source_id="s",
                           document_id="d", title="t", modality="audio", content_type="audio/mpeg",
                           captured_at=datetime(2026, 3, 20, tzinfo=UTC), captured_at_source="user",
                           ingested_at=datetime.now(UTC), text_length=len(full),
                           segments=[Segment(**{**{f: getattr(s, f) for f in (
                               "index", "kind", "char_start", "char_end", "t_start", "t_end", "attributes")},
                               "text": ""}) for s in segments], text=full)
    store = MemoryMetadataStore()
    store.intake.request_url(ev.user_id, ev.job_id, "https://example.org/page", None, [])
    (out,) = ChunkerStage(FileObjectStore(tmp_path), ChunkingConfig(), fence=store.fence).process(ev)
    chunk = out.chunks[0]
    assert chunk.attributes == {} and chunk.word_times  # typed, not a string in the attributes
    assert ChunksCreated.from_record(out.to_record()).chunks[0].word_times == chunk.word_times
    assert quoted_second(chunk.word_times, chunk.t_start, chunk.t_end, len(chunk.text),
                         chunk.text.index("The budget")) == 15.0
