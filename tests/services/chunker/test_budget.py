"""A document's passage budget (SB_MAX_CHUNKS_PER_DOCUMENT), and a whole file on one line.

One 5 MB single-line Markdown file became 2,622 passages and took a quarter of an hour to embed.  A
document over the budget now fails in the chunk stage with a sentence saying what to do, before its
passages are read for times or stored; and cutting such a line no longer holds every token of it in
memory at once.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.serve import build_stages
from secondbrain import keys
from secondbrain.errors import PermanentError
from secondbrain.events.models import DocumentExtracted
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig, chunk_segments
from services.extractors.text import extract_text

ONE_LINE = b"word " * (1024 * 1024)  # 5 MiB, no line break, no sentence end: 2,622 passages of 400 words


def document(raw: bytes, doc_id: str) -> DocumentExtracted:
    doc = extract_text(raw, content_type="text/markdown", filename="big.md", is_note=False)
    now = datetime.now(UTC)
    return DocumentExtracted(event_id=f"e-{doc_id}", job_id=f"j-{doc_id}", user_id="alice", artifact_id="a",
                             source_id="s", document_id=doc_id, title="big", modality=doc.modality,
                             content_type="text/markdown", captured_at=now, captured_at_source="user",
                             ingested_at=now, text_length=len(doc.full_text), segments=doc.segments,
                             text=doc.full_text)


@pytest.fixture()
def runtime(dsn: str, tmp_path: Path) -> Iterator[Any]:
    def make(**settings: Any) -> Runtime:
        rt = build_runtime(Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                                    kafka_bootstrap="127.0.0.1:9", **settings), vectors=False, models=False)
        made.append(rt)
        return rt

    made: list[Runtime] = []
    yield make
    for rt in made:
        rt.close()


def test_a_document_over_the_budget_fails_with_what_to_do(runtime: Any) -> None:
    rt = runtime(max_chunks_per_document=20)
    (stage,) = build_stages(rt, ["chunk"])
    text = b"\n\n".join(b"Paragraph %d. " % i + b"Some words about the garden plan. " * 40 for i in range(30))
    with pytest.raises(PermanentError) as refused:
        stage.process(document(text, "d-over"))
    n = len(chunk_segments(*_segments(text), ChunkingConfig()))
    assert n > 20
    assert str(refused.value) == (f"the document would make {n} passages, over the limit of 20 for one document: "
                                  "split it into smaller files, or ask the operator to raise "
                                  "SB_MAX_CHUNKS_PER_DOCUMENT")
    assert rt.objects.stat(keys.chunks_key("alice", "d-over")) is None  # nothing stored for it
    # Within the budget (or with none), the same document is chunked (for a live job: its passages are kept).
    for limit in (n, 0):
        within = runtime(max_chunks_per_document=limit)
        within.metadata.users.ensure_user("alice")
        within.metadata.intake.request_url("alice", f"j-d-{limit}", f"https://example.org/{limit}", None, [])
        (stage,) = build_stages(within, ["chunk"])
        (out,) = stage.process(document(text, f"d-{limit}"))
        assert out.chunk_count == n


def test_the_default_budget_refuses_a_5_mb_line_and_lets_a_long_book_through(runtime: Any) -> None:
    (stage,) = build_stages(runtime(), ["chunk"])
    with pytest.raises(PermanentError, match=r"^the document would make 2622 passages, over the limit of 2000 "):
        stage.process(document(ONE_LINE, "d-line"))
    # A 250,000-word book (longer than most novels) stays well under the default.
    sentence = b"The old captain walked slowly along the harbour wall, thinking of the storm. "
    book = b"\n\n".join(sentence * 10 for _ in range(250_000 // 140))
    assert 500 < len(chunk_segments(*_segments(book), ChunkingConfig())) < 2000


def test_a_5_mb_line_is_cut_without_holding_all_its_tokens() -> None:
    segments, text = _segments(ONE_LINE)
    tracemalloc.start()
    try:
        drafts = chunk_segments(segments, text, ChunkingConfig())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(drafts) == 2622 and all(d.token_count <= 400 for d in drafts)
    assert drafts[0].text == "word " * 399 + "word" and drafts[-1].char_end == len(text.rstrip())
    # The passages' own text is about 5 MB; a list of a million tokens was 140 MB more.
    assert peak < 40 * 1024 * 1024, peak


def _segments(raw: bytes) -> tuple[Any, str]:
    doc = extract_text(raw, content_type="text/markdown", filename="big.md", is_note=False)
    return doc.segments, doc.full_text
