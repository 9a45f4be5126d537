"""Conversations as dated records: chat transcripts through the real stages, stores and search API.

A chat transcript (``text/x-chat``: ``[id] Speaker: text`` per line) keeps each turn's speaker
and id; the chunker cuts overlapping windows of consecutive turns; every hit names the turns it
holds and carries the conversation's event time, and questions about a dated event find what
was said about it the day after.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from itertools import pairwise
from zoneinfo import ZoneInfo

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain import sniff
from secondbrain.embedding import OpenAICompatibleEmbedder
from secondbrain.errors import PermanentError
from secondbrain.events.models import ArtifactSubmitted, Segment
from secondbrain.infra.ports import free_port
from secondbrain.pipeline import core
from secondbrain.runtime import Runtime
from secondbrain.search_hits import SearchHit, hit_from_payload
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig, approx_tokens, chunk_segments
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor, extract_text
from services.query.engine import Filters, QueryEngine, _diversify
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread

UTCZ = ZoneInfo("UTC")
USER = "carol"


def chat(text: str) -> tuple[list[Segment], str]:
    """Extract a transcript: its segments go to the chunker as they are (one segment type)."""
    doc = extract_text(text.encode(), content_type="text/x-chat", filename=None, is_note=False)
    return doc.segments, doc.full_text


def transcript(n: int, words: int = 6) -> str:
    speakers = ("Caroline", "Melanie")
    return "\n".join(f"[D1:{i}] {speakers[i % 2]}: message {i} " + "word " * words for i in range(1, n + 1))


# --------------------------------------------------------------------------- extraction


def test_a_transcript_becomes_one_segment_per_turn_with_speaker_and_id() -> None:
    doc = extract_text(b"# Caroline and Melanie\n[D1:1] Caroline: Hey Mel! Good to see you!\n"
                       b"[D1:2] Melanie: Hey Caroline!\nHow are you?\nhttps://example.org is the link\n\n"
                       b"Caroline: I went to the group at 10:30 yesterday.\n", content_type="text/x-chat",
                       filename=None, is_note=False)
    assert doc.title == "Caroline and Melanie"
    assert [s.kind for s in doc.segments] == ["turn"] * 3
    assert [s.attributes for s in doc.segments] == [
        {"speaker": "Caroline", "turn_id": "D1:1"}, {"speaker": "Melanie", "turn_id": "D1:2"},
        {"speaker": "Caroline"}]
    # Lines that are not turns continue the turn before; a URL or a time never starts one.
    assert doc.segments[1].text == "Melanie: Hey Caroline!\nHow are you?\nhttps://example.org is the link"
    assert doc.segments[2].text == "Caroline: I went to the group at 10:30 yesterday."
    for s in doc.segments:
        assert doc.full_text[s.char_start:s.char_end] == s.text
    assert doc.metadata["speakers"] == "Caroline, Melanie"


def test_a_transcript_without_a_title_is_named_by_its_speakers_and_one_without_turns_is_refused() -> None:
    doc = extract_text(b"Ana: hi\nBo: hello", content_type="application/octet-stream", filename="x.chat",
                       is_note=False)
    assert doc.title == "Conversation between Ana and Bo"
    with pytest.raises(PermanentError, match="no turns"):
        extract_text(b"just a line of prose\nand another", content_type="text/x-chat", filename=None, is_note=False)


def test_chat_files_are_recognised_by_type_and_extension() -> None:
    assert sniff.resolve(b"Ana: hi", "text/x-chat", None).content_type == "text/x-chat"
    assert sniff.resolve(b"Ana: hi", "application/octet-stream", "talk.chat").content_type == "text/x-chat"
    # Plain text that happens to look like turns stays plain text.
    plain = extract_text(b"Note: buy milk\nTodo: call Bo", content_type="text/plain", filename=None, is_note=False)
    assert {s.kind for s in plain.segments} == {"paragraph"}


# --------------------------------------------------------------------------- chunking


def test_turns_are_chunked_as_overlapping_windows_naming_their_turns() -> None:
    segs, full = chat(transcript(6))
    chunks = chunk_segments(segs, full)
    assert [c.turn_ids for c in chunks] == [
        ("D1:1", "D1:2", "D1:3"), ("D1:2", "D1:3", "D1:4"), ("D1:3", "D1:4", "D1:5"), ("D1:4", "D1:5", "D1:6")]
    assert {c.kind for c in chunks} == {"chat"}
    assert chunks[0].speakers == ("Melanie", "Caroline")
    for c in chunks:
        assert full[c.char_start:c.char_end] == c.text and c.token_count == approx_tokens(c.text)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_windows_shrink_to_max_tokens_and_every_turn_is_in_a_chunk() -> None:
    segs, full = chat("\n".join(f"[T{i}] Ana: " + "word " * (5 * i) for i in range(1, 9)))
    cfg = ChunkingConfig(max_tokens=60)
    chunks = chunk_segments(segs, full, cfg)
    held = [c.turn_ids for c in chunks]
    assert {t for ids in held for t in ids} == {f"T{i}" for i in range(1, 9)}
    assert all(c.token_count <= 60 for c in chunks)
    assert held[-1][-1] == "T8"
    # No window is held whole by the one before it.
    assert all(not set(b) <= set(a) for a, b in pairwise(held))


def test_a_turn_longer_than_a_chunk_is_cut_and_a_preamble_is_packed_as_text() -> None:
    long_turn = "Bo: " + " ".join(f"Sentence {i} is about the harbour." for i in range(120))
    segs, full = chat(f"Recorded at the harbour office.\nAna: short question?\n{long_turn}\nAna: thanks")
    chunks = chunk_segments(segs, full, ChunkingConfig(max_tokens=200, target=150, min_tokens=100))
    assert chunks[0].kind == "text" and chunks[0].text == "Recorded at the harbour office."
    assert all(c.token_count <= 200 for c in chunks)
    assert sum(c.speakers == ("Bo",) for c in chunks) >= 3  # the long turn, in pieces
    assert chunks[-1].speakers[-1] == "Ana"


# --------------------------------------------------------------------------- through the stages


SESSIONS = [  # (captured at, transcript)
    (datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
     "[D1:1] Caroline: Hey Mel! How have you been?\n"
     "[D1:2] Melanie: Swamped with the kids and work. What's up with you?\n"
     "[D1:3] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\n"
     "[D1:4] Melanie: That sounds wonderful, I'm glad you found it.\n"
     "[D1:5] Caroline: The transgender stories were so inspiring!\n"
     "[D1:6] Melanie: I painted a lake sunrise last year, want to see it?\n"
     "[D1:7] Caroline: Yes please, I love your paintings.\n"
     "[D1:8] Melanie: Here it is. [shares a photo: a painting of a sunrise over a lake]\n"),
    (datetime(2023, 5, 25, 13, 14, tzinfo=UTC),
     "[D2:1] Melanie: I ran a charity race for mental health last Saturday!\n"
     "[D2:2] Caroline: That's amazing, how did it go?\n"
     "[D2:3] Melanie: It made me realise that self-care is important.\n"),
    (datetime(2023, 5, 27, 9, 0, tzinfo=UTC),
     "[D3:1] Caroline: Another support group meeting this week, the group keeps growing.\n"
     "[D3:2] Melanie: Good to hear, the group sounds like a great place.\n"),
]


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("chat"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="UTC", kafka_bootstrap="127.0.0.1:9", default_user=USER,
                            auth="off")  # keys are tested in test_auth.py
        runtime = build_runtime(settings, vectors=True, models=True)
        runtime.metadata.users.ensure_user(USER)
        assert runtime.vectors and runtime.embedder and runtime.sparse
        m = runtime.metadata
        extract = ExtractorStage(runtime.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                 fence=m.fence,
                                 catalog=m.catalog,
                                 lifecycle=m.lifecycle, extractors=ExtractorSet({"text": TextExtractor()}),
                                 max_bytes=1 << 20)
        chunk = ChunkerStage(runtime.objects, ChunkingConfig(), fence=m.fence)
        embed = EmbedderStage(runtime.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                              vectors=runtime.vectors, embedder=runtime.embedder, sparse=runtime.sparse)
        for n, (at, text) in enumerate(SESSIONS, 1):
            raw = text.encode()
            ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=USER, source_uri=f"file:session-{n}.chat",
                                   content_type="text/x-chat", size_bytes=len(raw), submitted_at=datetime.now(UTC),
                                   producer="test", content=raw, filename=f"session-{n}.chat", captured_at=at)
            (doc,) = core.run(extract, ev, m.jobs, trusted=True)
            (chunks,) = core.run(chunk, doc, m.jobs)
            assert core.run(embed, chunks, m.jobs)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def engine(rt: Runtime) -> QueryEngine:
    assert rt.vectors and rt.embedder and rt.sparse
    return QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, per_document=3)


NOW = datetime(2023, 6, 1, tzinfo=UTC)  # the questions are asked after the conversation


def test_hits_name_their_turns_and_carry_the_conversation_time(engine: QueryEngine) -> None:
    hits = engine.search(USER, engine.plan("When did Caroline go to the LGBTQ support group?", tz=UTCZ, now=NOW), k=5)
    assert "D1:3" in hits[0].turn_ids
    assert hits[0].kind == "chat" and hits[0].captured_at.startswith("2023-05-08T13:56")
    assert all(h.turn_ids for h in hits)
    # The API shows them as it always has: space-separated in the hit's attributes.
    assert "D1:3" in hits[0].to_json()["attributes"]["turn_ids"].split()


def test_a_conversation_is_not_cut_off_after_three_windows(engine: QueryEngine) -> None:
    # Six windows of the first session; ordinary documents stay capped at three chunks each.
    hits = engine.search(USER, engine.plan("Caroline Melanie painting support group kids", tz=UTCZ, now=NOW), k=20)
    assert sum(h.captured_at.startswith("2023-05-08") for h in hits) > 3


def test_overlapping_windows_count_for_their_new_turns_in_the_cap() -> None:
    # 200-token windows of one session, each overlapping the previous by two of its three turns:
    # counted whole, four would fill the cap of 3 x 300 tokens; counted by what they add, all pass.
    def window(i: int, doc: str = "s1") -> SearchHit:
        return hit_from_payload(f"c{doc}{i}", 1.0, {
            "document_id": doc, "kind": "chat", "token_count": 200, "chunk_index": i,
            "attributes": {"turn_ids": f"D1:{i} D1:{i + 1} D1:{i + 2}"}})

    hits = [window(i) for i in range(8)]
    assert len(_diversify(hits, 3)) == 8
    # Disjoint windows still fill it: 200 / 300 each, so five pass and the sixth is left out.
    disjoint = [window(3 * i) for i in range(6)]
    assert [h.chunk_id for h in _diversify(disjoint, 3)] == [h.chunk_id for h in disjoint[:5]]


def test_a_window_widened_with_its_neighbours_holds_each_turn_once(engine: QueryEngine) -> None:
    plan = engine.plan("When did Caroline go to the LGBTQ support group?", tz=UTCZ, now=NOW)
    sources = engine.sources(USER, plan, k=3)
    widened = [src for src in sources if src.neighbours]
    assert widened, "short conversation windows come with the windows around them"
    for src in widened:
        lines = [line for line in src.text.splitlines() if line.strip()]
        assert len(lines) == len(set(lines)), src.text  # overlapping windows are stitched, not repeated
        assert src.tokens < sum(1 for _ in lines) * 80


def test_overlapping_hits_of_one_conversation_become_one_source(engine: QueryEngine) -> None:
    plan = engine.plan("Caroline Melanie painting support group kids", tz=UTCZ, now=NOW)
    hits = engine.search(USER, plan, k=6)
    assert len({h.document_id for h in hits}) < len(hits)  # several windows of one session are hits
    sources = engine.sources(USER, plan, k=6)
    lines = [line for src in sources for line in src.text.splitlines() if line.strip()]
    assert len(lines) == len(set(lines))  # no turn is shown twice, under two numbers
    for src in sources:
        assert len(src.text) == src.char_end - src.char_start  # still an exact span, citable by offsets


def test_a_dated_question_finds_what_was_said_about_it_the_day_after(engine: QueryEngine) -> None:
    # The support group met on 7 May; the conversation that reports it ("yesterday") is from 8 May.
    plan = engine.plan("What did Caroline say about the support group on 7 May 2023?", tz=UTCZ, now=NOW)
    assert plan.query_class == "temporal+semantic" and plan.end == datetime(2023, 5, 8, tzinfo=UTCZ)
    assert plan.soft_window
    hits = engine.search(USER, plan, k=10)
    # The later mentions (25 and 27 May) are past the week in which reports on the day are looked for.
    assert hits and {h.captured_at[:10] for h in hits} == {"2023-05-08"}
    assert all("D3:1" not in h.turn_ids for h in hits)
    # Asked about 25 May, the support-group meeting told on 27 May (two days after the day and its
    # day after) is found by its words, after the day's own conversation; 8 May (before) is not added.
    plan = engine.plan("What did Caroline say about the support group on 25 May 2023?", tz=UTCZ, now=NOW)
    hits = engine.search(USER, plan, k=10)
    dates = [h.captured_at[:10] for h in hits]
    assert "2023-05-27" in dates and "2023-05-08" not in dates
    assert dates[0] == "2023-05-25" and dates.index("2023-05-27") > dates.index("2023-05-25")
    assert any("D3:1" in h.turn_ids for h in hits)
    # A client's explicit range stays a wall.
    hard = engine.plan("support group", tz=UTCZ, now=NOW, filters=Filters(
        start=datetime(2023, 5, 7, tzinfo=UTCZ), end=datetime(2023, 5, 9, tzinfo=UTCZ)))
    assert not hard.soft_window
    assert {h.captured_at[:10] for h in engine.search(USER, hard, k=10)} == {"2023-05-08"}
    # A time-only question lists exactly the day, without the day after.
    listing = engine.plan("what happened on 7 May 2023?", tz=UTCZ, now=NOW)
    assert listing.query_class == "temporal" and engine.list_window(USER, listing) == []


@pytest.fixture(scope="module")
def server(rt: Runtime) -> Iterator[str]:
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
        yield url


def test_search_reads_relative_times_as_of_the_time_given(server: str) -> None:
    params: dict[str, str | int] = {"q": "what did Melanie say about the charity race last week?", "tz": "UTC",
                                    "k": 10}
    # As of 1 June 2023, "last week" is 22-29 May: the race conversation of 25 May is in it.
    body = httpx.get(f"{server}/v1/search", params={**params, "now": "2023-06-01T10:00:00Z"}, timeout=30).json()
    assert body["time_range"]["start"].startswith("2023-05-22") and body["report_lag_hours"] == 24
    assert body["hits"] and "D2:1" in body["hits"][0]["attributes"]["turn_ids"]
    assert body["hits"][0]["kind"] == "chat" and body["hits"][0]["token_count"] > 0
    # As of today, last week holds none of it.
    assert httpx.get(f"{server}/v1/search", params=params, timeout=30).json()["hits"] == []
    for mode in ("sparse", "dense"):
        hits = httpx.get(f"{server}/v1/search", params={**params, "now": "2023-06-01T10:00:00Z", "mode": mode},
                         timeout=30).json()["hits"]
        assert hits and all(h["captured_at"].startswith("2023-05-2") for h in hits)


def test_search_says_503_when_the_embedding_endpoint_is_down(rt: Runtime) -> None:
    # The same data, searched through an OpenAI-compatible embedding endpoint that is not there.
    down = replace(rt, embedder=OpenAICompatibleEmbedder(f"http://127.0.0.1:{free_port()}/v1", "m", timeout_s=2),
                   embedders=None)
    client = TestClient(create_app(down, gateway=False, query=True), base_url="http://localhost")
    r = client.get("/v1/search", params={"q": "support group", "tz": "UTC"})
    assert r.status_code == 503 and r.headers["retry-after"] == "5"
    assert "try again" in r.json()["detail"] and "127.0.0.1" in r.json()["detail"]
    # BM25 alone needs no embedding model and still answers.
    r = client.get("/v1/search", params={"q": "support group", "tz": "UTC", "mode": "sparse"})
    assert r.status_code == 200 and r.json()["hits"]


def test_chunks_indexed_before_attributes_existed_still_read() -> None:
    hit = hit_from_payload("p1", 0.5, {"text": "an old passage", "chunk_index": 2, "token_count": 3})
    assert hit.attributes == {} and hit.kind == "" and hit.to_json()["attributes"] == {}
