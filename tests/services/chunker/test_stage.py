"""The chunker stage reads the times each passage speaks of against the passage's own time: a
note's or chat record's time, or the moment of a recording it was said at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from secondbrain.events.models import ChunksCreated, DocumentExtracted, Segment
from secondbrain.stores.memory import MemoryMetadataStore
from secondbrain.stores.objects_fs import FileObjectStore
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage

pytestmark = pytest.mark.fast  # no services: in the fast lane

PARIS = ZoneInfo("Europe/Paris")


def extracted(segments: list[tuple[str, str, float | None]], *, captured_at: datetime, modality: str = "note",
              recording_start: datetime | None = None) -> DocumentExtracted:
    text, segs, pos = "", [], 0
    for i, (kind, body, t) in enumerate(segments):
        if text:
            text += "\n"
            pos += 1
        segs.append(Segment(index=i, kind=kind, text="", char_start=pos, char_end=pos + len(body),
                            t_start=t, t_end=None if t is None else t + 30,
                            attributes={"speaker": body.split(":")[0]} if kind == "turn" else {}))
        text += body
        pos += len(body)
    return DocumentExtracted(event_id="e", job_id="j", user_id="alice", artifact_id="a", source_id="s",
                             document_id="d", title="t", modality=modality, content_type="text/plain",
                             captured_at=captured_at, captured_at_source="user", ingested_at=datetime.now(UTC),
                             text_length=len(text), segments=segs, text=text, recording_start=recording_start)


def chunked(tmp_path: Path, ev: DocumentExtracted) -> ChunksCreated:
    store = MemoryMetadataStore()  # the job the passages belong to is live: its fence lets the chunk list be written
    store.intake.request_url(ev.user_id, ev.job_id, "https://example.org/page", None, [])
    stage = ChunkerStage(FileObjectStore(tmp_path), ChunkingConfig(), fence=store.fence, zone=PARIS)
    (out,) = stage.process(ev)
    return out


def test_a_note_speaks_of_the_day_before_it_was_written(tmp_path: Path) -> None:
    written = datetime(2026, 3, 20, 9, tzinfo=PARIS)
    out = chunked(tmp_path, extracted([("paragraph", "Yesterday we agreed the budget.", None)], captured_at=written))
    (m,) = out.chunks[0].mentions
    assert (m.start, m.end, m.expression) == (datetime(2026, 3, 19, tzinfo=PARIS), datetime(2026, 3, 20, tzinfo=PARIS),
                                              "Yesterday")


def test_a_chat_record_window_keeps_what_each_turn_speaks_of(tmp_path: Path) -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    out = chunked(tmp_path, extracted([("turn", "Melanie: We went camping last weekend!", None),
                                       ("turn", "Caroline: Lovely! I'll visit you next month.", None)],
                                      captured_at=said))
    spoken = {m.expression: m.start.astimezone(PARIS).date().isoformat() for c in out.chunks for m in c.mentions}
    assert spoken == {"last weekend": "2023-05-06", "next month": "2023-06-01"}


def test_a_recording_reads_its_words_at_the_moment_they_were_said(tmp_path: Path) -> None:
    """A recording started at 23:50: "yesterday", said 20 minutes in, is the day the recording began."""
    start = datetime(2026, 3, 20, 23, 50, tzinfo=PARIS)
    out = chunked(tmp_path, extracted([("speech", "ok so first the agenda for tonight", 0.0)] + [
        ("speech", f"filler sentence number {i} about nothing much at all really", 30.0 * i) for i in range(1, 40)] + [
        ("speech", "yesterday the supplier called about the invoice", 1200.0)],
        captured_at=start, modality="audio", recording_start=start))
    (m,) = [m for c in out.chunks for m in c.mentions]
    assert m.start == datetime(2026, 3, 20, tzinfo=PARIS)  # said on the 21st (00:10), not the 19th
    assert start + timedelta(minutes=20) > m.end
