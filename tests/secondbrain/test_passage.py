"""The indexed passage: the one shape of a vector payload, written by the embedder and read by search,
re-indexing and exports; payloads stored before (lists joined in strings) still read the same."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from secondbrain import ids
from secondbrain.events import Chunk, ChunksCreated, TimeMention
from secondbrain.events.models import WordTime
from secondbrain.passage import IndexedPassage
from secondbrain.search_hits import hit_from_payload
from services.embedder.stage import embedding_input, indexed_passage

pytestmark = pytest.mark.fast  # no services: in the fast lane

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
DOC = "doc-1"


def _event(chunk: Chunk, **more: object) -> ChunksCreated:
    return ChunksCreated(event_id="e1", job_id="j1", user_id="alice", artifact_id="a1", source_id="s1",
                         document_id=DOC, title="Caroline and Melanie", modality="text", content_type="text/plain",
                         captured_at=T0, ingested_at=T0 + timedelta(minutes=1), chunks=[chunk], chunk_count=1,
                         source_uri="file:chat.txt", captured_at_source="user", **more)  # type: ignore[arg-type]


CHAT = Chunk(chunk_id=ids.chunk_id(DOC, 3), index=3, text="Caroline: I went to a support group yesterday.",
             char_start=120, char_end=166, token_count=12, heading_path=["Session 1"], kind="chat",
             speakers=["Caroline", "Melanie"], turn_ids=["D1:3", "D1:4"],
             mentions=[TimeMention(start=datetime(2023, 5, 7, tzinfo=UTC), end=datetime(2023, 5, 8, tzinfo=UTC),
                                   expression="yesterday")])

# What the embedder stored before the passage had a type: the same chunk, lists joined in attributes.
OLD_PAYLOAD = {
    "user_id": "alice", "document_id": DOC, "artifact_id": "a1", "source_id": "s1", "job_id": "j1",
    "chunk_id": ids.chunk_id(DOC, 3), "chunk_index": 3, "title": "Caroline and Melanie", "modality": "text",
    "content_type": "text/plain", "captured_at": "2023-05-08T13:56:00.000000Z",
    "ingested_at": "2023-05-08T13:57:00.000000Z", "text": "Caroline: I went to a support group yesterday.",
    "char_start": 120, "char_end": 166, "heading_path": ["Session 1"], "kind": "chat", "page": None,
    "t_start": None, "t_end": None, "token_count": 12, "embedding_model": "minilm", "source_uri": "file:chat.txt",
    "captured_at_source": "user", "version": 1,
    "attributes": {"speakers": "Caroline, Melanie", "turn_ids": "D1:3 D1:4"},
    "mentions": [{"start": "2023-05-07T00:00:00.000000Z", "end": "2023-05-08T00:00:00.000000Z",
                  "expression": "yesterday"}],
    "mentioned_at": ["2023-05-07T00:00:00.000000Z", "2023-05-07T23:59:59.999999Z"],
}


def test_a_payload_stored_before_reads_into_the_same_passage() -> None:
    new = indexed_passage(_event(CHAT), CHAT, "minilm")
    assert IndexedPassage.from_payload(OLD_PAYLOAD) == new
    assert IndexedPassage.from_payload(new.to_payload()) == new
    assert new.speakers == ("Caroline", "Melanie") and new.turn_ids == ("D1:3", "D1:4")


def test_new_payloads_keep_lists_as_lists_and_what_filters_read() -> None:
    payload = indexed_passage(_event(CHAT), CHAT, "minilm").to_payload()
    assert payload["speakers"] == ["Caroline", "Melanie"] and payload["turn_ids"] == ["D1:3", "D1:4"]
    assert "attributes" not in payload  # nothing else to say
    # Everything the old payload had for the stores' filters and the hit is there, unchanged.
    for key in ("user_id", "document_id", "source_id", "job_id", "modality", "captured_at", "ingested_at",
                "mentioned_at", "chunk_index", "mentions", "text", "heading_path"):
        assert payload[key] == OLD_PAYLOAD[key], key


def test_a_hit_shows_the_same_json_from_either_shape() -> None:
    new = indexed_passage(_event(CHAT), CHAT, "minilm").to_payload()
    old_json, new_json = hit_from_payload("p", 0.5, OLD_PAYLOAD).to_json(), hit_from_payload("p", 0.5, new).to_json()
    assert old_json == new_json
    assert new_json["attributes"] == {"speakers": "Caroline, Melanie", "turn_ids": "D1:3 D1:4"}
    # the lists as lists too, for clients that read JSON rather than split strings
    assert (new_json["speakers"], new_json["turn_ids"], new_json["links"]) == (["Caroline", "Melanie"],
                                                                             ["D1:3", "D1:4"], [])
    assert new_json["mentions"] == OLD_PAYLOAD["mentions"]


def test_a_recording_passage_has_its_wall_clock_times_and_the_text_the_models_saw() -> None:
    speech = Chunk(chunk_id=ids.chunk_id(DOC, 0), index=0, text="The budget is approved.", char_start=0,
                   char_end=23, token_count=5, heading_path=["Caroline and Melanie", "Budget"], kind="speech",
                   t_start=90.0, t_end=95.5,
                   word_times=[WordTime(offset=0, second=90.0), WordTime(offset=4, second=90.4)])
    passage = indexed_passage(_event(speech, recording_start=T0), speech, "minilm")
    payload = passage.to_payload()
    assert (payload["at_start"], payload["at_end"]) == ("2023-05-08T13:57:30.000000Z", "2023-05-08T13:57:35.500000Z")
    assert payload["word_times"] == [[0, 90.0], [4, 90.4]] and "attributes" not in payload
    assert IndexedPassage.from_payload(payload).word_times == tuple(speech.word_times)
    # a point stored before kept them as JSON in its attributes: read the same, and shown there as before
    before = {**payload, "attributes": {"word_times": "[[0,90.0],[4,90.4]]"}}
    del before["word_times"]
    old = IndexedPassage.from_payload(before)
    assert old.word_times == tuple(speech.word_times) and old.attributes == {}
    assert old.shown_attributes() == {"word_times": "[[0,90.0],[4,90.4]]"}
    # a payload's pairs are read as the old JSON is: in order, none negative or endless, bad shapes ignored
    odd = IndexedPassage.from_payload({**payload, "word_times": [[4, 90.4], [0, 90.0], [9, -1.0], [12, 1e999]]})
    assert odd.word_times == tuple(speech.word_times)
    assert IndexedPassage.from_payload({**payload, "word_times": [["x"]]}).word_times == ()
    assert "speakers" not in payload and "mentions" not in payload
    # Re-indexing embeds exactly what the stage embedded.
    assert IndexedPassage.from_payload(payload).embedding_text() == embedding_input("Caroline and Melanie", speech)
    assert passage.placement() == {
        "chunk_id": speech.chunk_id, "chunk_index": 0, "text": speech.text, "char_start": 0, "char_end": 23,
        "heading_path": ["Caroline and Melanie", "Budget"], "kind": "speech", "t_start": 90.0, "t_end": 95.5,
        "at_start": "2023-05-08T13:57:30.000000Z", "at_end": "2023-05-08T13:57:35.500000Z", "token_count": 5}


def test_a_note_passage_keeps_its_links_whole() -> None:
    old = {**OLD_PAYLOAD, "kind": "paragraph", "attributes": {"tags": "garden", "links": "Tomato plan | Compost"}}
    passage = IndexedPassage.from_payload(old)
    assert passage.links == ("Tomato plan", "Compost") and passage.tags == ("garden",) and passage.attributes == {}
    assert passage.to_payload()["links"] == ["Tomato plan", "Compost"]
    assert hit_from_payload("p", 1.0, passage.to_payload()).to_json()["attributes"] == old["attributes"]


def test_a_notes_tags_are_a_list_in_the_payload_and_old_payloads_read_as_lists() -> None:
    """A note's tags: a list from the payload to the hit; a payload that kept them space-joined, in its
    attributes or as the ``tags`` value itself, reads as the list of their words."""
    for old in ({**OLD_PAYLOAD, "attributes": {"tags": "garden work/plans"}},
                {**OLD_PAYLOAD, "tags": "garden work/plans"}, {**OLD_PAYLOAD, "tags": ["garden", "work/plans"]}):
        passage = IndexedPassage.from_payload(old)
        assert passage.tags == ("garden", "work/plans") and "tags" not in passage.attributes, old
        payload = passage.to_payload()
        assert payload["tags"] == ["garden", "work/plans"] and "tags" not in payload.get("attributes", {})
        hit = hit_from_payload("p", 1.0, payload)
        # the list, and the attributes as clients before the list read them
        assert hit.tags == ("garden", "work/plans") and hit.to_json()["attributes"]["tags"] == "garden work/plans"
    assert "tags" not in IndexedPassage.from_payload(OLD_PAYLOAD).to_payload()


def test_the_passage_type_needs_no_pipeline() -> None:
    # Stores, search and exports read it without the Kafka side being importable.
    code = "import sys, secondbrain.passage; print(sorted(m for m in sys.modules if m.startswith(PREFIXES)))"
    out = subprocess.run([sys.executable, "-c", code.replace("PREFIXES", repr(("secondbrain.pipeline", "services")))],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_recurring_events_passage_keeps_its_series_and_the_span_a_window_matches() -> None:
    from secondbrain.temporal import recurrence

    series = recurrence.series(datetime(2026, 3, 3, 18, tzinfo=UTC), zone="Europe/London",
                               duration=timedelta(minutes=45), rules=["FREQ=WEEKLY;COUNT=8"])
    endless = recurrence.series(datetime(2020, 1, 1, tzinfo=UTC), zone="UTC", rules=["FREQ=HOURLY"])
    for s, until in ((series, "2026-04-21T18:45:00.000000Z"), (endless, "9999-12-31T00:00:00.000000Z")):
        passage = IndexedPassage(chunk_id="c1", document_id="d1", title="Physio", text="Knee exercises.",
                                 captured_at="2026-03-03T18:00:00.000000Z", recurrence=s)
        payload = passage.to_payload()
        assert payload["recurs_from"] == s.start.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
        assert payload["recurs_until"] >= until[:10]
        back = IndexedPassage.from_payload(payload)  # what search, the agenda and a re-index read
        assert back.recurrence == s and back == passage
        assert hit_from_payload("c1", 0.0, payload).to_json()["repeats"] == recurrence.describe(s)
    plain = IndexedPassage(chunk_id="c2", text="No repeats.").to_payload()
    assert "recurrence" not in plain and "recurs_from" not in plain
    assert IndexedPassage.from_payload({**plain, "recurrence": {"start": "garbage"}}).recurrence is None
