"""Asking, over HTTP on real stores: a one-shot question kept nowhere, a regenerated answer and an edited
question kept beside the turn they revise (marked, read with the turns before it), conversations found
by their titles and questions, and "what did I save today?" listed by the time each thing was saved."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import core
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from tests.pg import base_dsn, fresh_database
from tests.query_corpus import ask
from tests.serving import serve_in_thread

ZONE = "Europe/Paris"
TZ = ZoneInfo(ZONE)
LAST_YEAR = datetime.now(TZ).year - 1
NOTES = [  # (title, text, when it happened) in the order they are saved
    ("Ferry trip", "The ferry to the island left at 7:40 and the harbour café sold **saffron buns**.",
     datetime(LAST_YEAR, 11, 20, 9, 0, tzinfo=TZ)),
    ("Dentist", "My dentist appointment with Dr. Adeyemi is on the 3rd of December at 9:30.", None),
    ("Bike lock", "The combination of the blue bike lock is 4-7-1-9.", None),
]


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("asking-again"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone=ZONE, kafka_bootstrap="127.0.0.1:9", auth="required")
        runtime = build_runtime(settings, vectors=True, models=True)
        m = runtime.metadata
        extract = ExtractorStage(runtime.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                 fence=m.fence,
                                 catalog=m.catalog, lifecycle=m.lifecycle,
                                 extractors=ExtractorSet({"text": TextExtractor()}), max_bytes=1 << 20)
        chunk = ChunkerStage(runtime.objects, ChunkingConfig(), fence=m.fence)
        assert runtime.vectors and runtime.embedder and runtime.sparse
        embed = EmbedderStage(runtime.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                              vectors=runtime.vectors, embedder=runtime.embedder, sparse=runtime.sparse)
        for user in ("alice", "bob"):
            m.users.ensure_user(user)
        for title, text, at in NOTES:
            raw = text.encode()
            now = datetime.now(UTC)
            ev = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id="alice", source_uri=f"note:{title}",
                                   content_type="text/markdown", size_bytes=len(raw), submitted_at=now,
                                   producer="test", content=raw, title=title, captured_at=(at or now).astimezone(UTC),
                                   attributes={"kind": "note"})
            (doc,) = core.run(extract, ev, m.jobs, trusted=True)
            (chunks,) = core.run(chunk, doc, m.jobs)
            core.run(embed, chunks, m.jobs)
        yield runtime
        runtime.close()


@pytest.fixture(scope="module")
def base(rt: Runtime) -> Iterator[str]:
    with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
        yield url


@pytest.fixture(scope="module")
def keys(rt: Runtime) -> dict[str, dict[str, str]]:
    return {user: {"Authorization": f"Bearer {rt.metadata.api_keys.create_api_key(user, 'test')[1]}"}
            for user in ("alice", "bob")}


def asked(base: str, question: str, headers: dict[str, str], **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``meta`` and ``done`` events of one question."""
    events = dict(ask(base, question, headers=headers, tz=ZONE, **extra))
    assert "error" not in events, events.get("error")
    return events["meta"], events["done"]


def conversations(base: str, headers: dict[str, str], **params: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{base}/v1/conversations", params=params, headers=headers)
    assert r.status_code == 200, r.text
    return list(r.json()["conversations"])


def test_a_one_shot_question_is_answered_and_kept_nowhere(base: str, keys: dict[str, dict[str, str]]) -> None:
    alice = keys["alice"]
    before = conversations(base, alice)
    _, done = asked(base, "What is the combination of the bike lock?", alice, keep=False)
    assert "4-7-1-9" in done["answer"] and done["grounded"]
    assert conversations(base, alice) == before  # nothing was kept
    r = httpx.get(f"{base}/v1/conversations/{done['conversation_id']}", headers=alice)
    assert r.status_code == 404
    # Kept (the default, what the web page does): listed.
    _, done = asked(base, "What is the combination of the bike lock?", alice)
    assert done["conversation_id"] in [c["conversation_id"] for c in conversations(base, alice)]


def test_a_regenerated_answer_and_an_edited_question_stay_beside_what_they_revise(
        base: str, keys: dict[str, dict[str, str]]) -> None:
    alice = keys["alice"]
    first = "When is my dentist appointment?"
    _, done = asked(base, first, alice)
    conv = done["conversation_id"]
    meta, _ = asked(base, "And who is it with?", alice, conversation_id=conv)
    assert meta["carried_over"]["subject"] == "my dentist appointment"
    # Regenerated: the same question, read as it was then (nothing before it to take from), marked.
    meta, done = asked(base, first, alice, conversation_id=conv, revises={"question": first, "how": "regenerate"})
    assert meta["revises"] == {"question": first, "how": "regenerate"}
    assert meta["carried_over"] is None and "9:30" in done["answer"]
    # Edited and sent again: read with the turns before the question it replaces (the first one).
    meta, done = asked(base, "And where is it?", alice, conversation_id=conv,
                       revises={"question": "And who is it with?", "how": "edit"})
    assert meta["revises"] == {"question": "And who is it with?", "how": "edit"}
    assert meta["carried_over"]["subject"] == "my dentist appointment"
    turns = httpx.get(f"{base}/v1/conversations/{conv}", headers=alice).json()["turns"]
    assert [t["question"] for t in turns] == [first, "And who is it with?", first, "And where is it?"]
    assert [(t["meta"] or {}).get("revises") for t in turns] == [
        None, None, {"question": first, "how": "regenerate"}, {"question": "And who is it with?", "how": "edit"}]
    assert all(t["answer"] for t in turns)  # both answers to the first question are kept
    # A revision must say what it revises, in words the API can keep.
    for bad in ({"question": first}, {"question": first, "how": "rewrite"}, {"question": "", "how": "edit"},
                {"question": "a\x00b", "how": "edit"}):
        r = httpx.post(f"{base}/v1/ask", json={"question": first, "conversation_id": conv, "revises": bad},
                       headers=alice)
        assert r.status_code == 422, (bad, r.status_code)


def test_conversations_are_found_by_their_titles_and_questions(base: str, keys: dict[str, dict[str, str]]) -> None:
    alice, bob = keys["alice"], keys["bob"]
    _, done = asked(base, "Where did the ferry go?", alice)
    ferry = done["conversation_id"]
    assert httpx.patch(f"{base}/v1/conversations/{ferry}", json={"title": "Island_trip 100%"},
                       headers=alice).status_code == 200
    _, done = asked(base, "What was sold at the harbour café?", alice, conversation_id=ferry)
    found = [c["conversation_id"] for c in conversations(base, alice, q="HARBOUR CAFÉ")]
    assert found == [ferry]  # a later question, any case
    assert [c["conversation_id"] for c in conversations(base, alice, q="island_trip")] == [ferry]  # the title
    assert [c["conversation_id"] for c in conversations(base, alice, q="100%")] == [ferry]
    assert conversations(base, alice, q="island-trip") == []  # "_" is itself, not a wildcard
    assert conversations(base, alice, q="saffron") == []  # answers are not searched, only what was asked
    assert conversations(base, bob, q="ferry") == []  # nobody else's
    assert len(conversations(base, alice, q="  ")) == len(conversations(base, alice))  # blank: all
    for hostile in ("%00", "a" * 201, "%ED%A0%80", "%FF", "%25%5C"):  # NUL, too long, a surrogate, not UTF-8...
        r = httpx.get(f"{base}/v1/conversations?q={hostile}", headers=alice)
        assert r.status_code in (200, 400, 422), (hostile, r.status_code)  # an answer or a refusal, never a 5xx


def test_what_was_saved_today_is_listed_by_when_it_was_saved_with_years(
        base: str, keys: dict[str, dict[str, str]]) -> None:
    _, done = asked(base, "What did I save today?", keys["alice"], keep=False)
    lines = done["answer"].splitlines()
    assert lines[0] == "You saved 3 items then, the latest first:"
    assert [re.sub(r" \(.*", "", line) for line in lines[1:]] == ["- Bike lock", "- Dentist", "- Ferry trip"]
    today = datetime.now(TZ)
    day = f"{today:%a} {today.day} {today:%b}"
    for line in lines[1:]:
        assert f"saved {day} " in line and str(today.year) not in line, line  # this year's dates: no year
    ferry = NOTES[0][2]
    assert ferry is not None
    assert f", dated {ferry:%a} {ferry.day} {ferry:%b} {LAST_YEAR})" in lines[3]  # another year's: with it
    # Asked about when things happened, the year is said too when it is not this one.
    _, done = asked(base, f"What happened on 20 November {LAST_YEAR}?", keys["alice"], keep=False)
    assert f"(note, {ferry:%a} {ferry.day} {ferry:%b} {LAST_YEAR} 09:00) [1]" in done["answer"]
    assert timedelta(0) <= datetime.now(TZ) - today < timedelta(hours=1)  # the day did not change meanwhile
