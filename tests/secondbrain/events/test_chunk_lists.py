"""A chunk's speakers, turn ids and links: Avro arrays from ``chunks_created`` v5, read from the joined
strings of v3 and v4 events (and of claim-checked chunk lists written then) into the same lists."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from secondbrain import ids
from secondbrain.events import Chunk, ChunksCreated, EventCodec, TimeMention
from secondbrain.events.models import WordTime

pytestmark = pytest.mark.fast  # no services: in the fast lane

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DOC = "doc-1"


@pytest.fixture(scope="module")
def codec() -> EventCodec:
    return EventCodec()


def _event(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """A chunks_created record as an older producer wrote it (only the fields every version has)."""
    return {"event_id": "e1", "job_id": "j1", "user_id": "alice", "artifact_id": "a1", "source_id": "s1",
            "document_id": DOC, "title": "Chat", "modality": "text", "content_type": "text/plain",
            "captured_at": T0, "ingested_at": T0, "chunks": chunks, "chunks_ref": None,
            "chunk_count": len(chunks)}


def _old_chunk(attributes: dict[str, str], **more: Any) -> dict[str, Any]:
    return {"chunk_id": ids.chunk_id(DOC, 0), "index": 0, "text": "Ana: hi\nBo: hello", "char_start": 0,
            "char_end": 17, "token_count": 5, "heading_path": ["Chat"], "kind": "chat", "page": None,
            "t_start": None, "t_end": None, "attributes": attributes, **more}


OLD_ATTRIBUTES = {"speakers": "Ana, Bo", "turn_ids": "D1:1 D1:2", "links": "Tomato plan | https://example.org/beds",
                  "tags": "garden plans"}


@pytest.mark.parametrize("version", [3, 4])
def test_v3_and_v4_events_decode_into_lists(codec: EventCodec, version: int) -> None:
    more = {"mentions": [{"start": T0, "end": T0.replace(day=3), "expression": "today"}]} if version == 4 else {}
    data = codec.encode_record("chunks_created", _event([_old_chunk(OLD_ATTRIBUTES, **more)]), version=version)
    assert codec.identify(data).version == version
    event = codec.decode(data, ChunksCreated)
    (chunk,) = event.chunks
    assert chunk.speakers == ["Ana", "Bo"]
    assert chunk.turn_ids == ["D1:1", "D1:2"]
    assert chunk.links == ["Tomato plan", "https://example.org/beds"]
    assert chunk.tags == ["garden", "plans"]
    assert chunk.attributes == {}  # the lists are no longer strings in the attributes
    if version == 4:
        assert chunk.mentions == [TimeMention(start=T0, end=T0.replace(day=3), expression="today")]


def test_v5_carries_the_lists_as_avro_arrays(codec: EventCodec) -> None:
    chunk = Chunk(chunk_id=ids.chunk_id(DOC, 0), index=0, text="Ana, Jr.: hi", char_start=0, char_end=12,
                  token_count=4, heading_path=[], kind="chat", speakers=["Ana, Jr.", "Bo"], turn_ids=["t 1"],
                  links=["a | b"], tags=["x", "work/plans"], attributes={"kept": "x"})
    event = ChunksCreated(**{**_event([]), "chunks": [chunk], "chunk_count": 1})
    data = codec.encode(event)
    assert codec.identify(data).version == ChunksCreated.SCHEMA_VERSION == 8
    (back,) = codec.decode(data, ChunksCreated).chunks
    # Commas, spaces and bars inside a value survive: nothing is joined or split on the way.
    assert (back.speakers, back.turn_ids, back.links) == (["Ana, Jr.", "Bo"], ["t 1"], ["a | b"])
    assert back.tags == ["x", "work/plans"] and back.attributes == {"kept": "x"}
    assert back == chunk


def test_the_old_and_new_shape_of_a_chunk_read_the_same() -> None:
    old = Chunk.from_record(_old_chunk(OLD_ATTRIBUTES))
    new = Chunk.from_record(json.loads(json.dumps(old.to_record())))  # a claim check written today
    assert old == new
    assert new.to_record()["speakers"] == ["Ana", "Bo"] and "speakers" not in new.to_record()["attributes"]


def test_a_chunk_without_lists_has_empty_ones(codec: EventCodec) -> None:
    data = codec.encode_record("chunks_created", _event([_old_chunk({})]), version=3)
    (chunk,) = codec.decode(data, ChunksCreated).chunks
    assert (chunk.speakers, chunk.turn_ids, chunk.links, chunk.tags, chunk.attributes) == ([], [], [], [], {})


@pytest.mark.parametrize("version", [3, 4, 5])
def test_word_times_kept_as_json_in_the_attributes_decode_into_records(codec: EventCodec, version: int) -> None:
    """Before v6 a recording's word times travelled as compact JSON in the attributes."""
    more: dict[str, Any] = {"mentions": []} if version >= 4 else {}
    if version == 5:
        more |= {"speakers": [], "turn_ids": [], "links": []}
    old = _old_chunk({"word_times": "[[0,90.0],[4,90.4]]", "tags": "memo"}, **more)
    data = codec.encode_record("chunks_created", _event([old]), version=version)
    (chunk,) = codec.decode(data, ChunksCreated).chunks
    assert chunk.word_times == [WordTime(offset=0, second=90.0), WordTime(offset=4, second=90.4)]
    assert chunk.tags == ["memo"] and chunk.attributes == {}
    # written again today: an array of records, nothing in the attributes
    again = codec.decode(codec.encode(ChunksCreated(**{**_event([]), "chunks": [chunk], "chunk_count": 1})),
                         ChunksCreated).chunks[0]
    assert again == chunk and again.to_record()["word_times"] == [{"offset": 0, "second": 90.0},
                                                                  {"offset": 4, "second": 90.4}]


def _document(**more: Any) -> dict[str, Any]:
    """A documents.extracted record with only the fields every version has."""
    return {"event_id": "e1", "job_id": "j1", "user_id": "alice", "artifact_id": "a1", "source_id": "s1",
            "document_id": DOC, "title": "Garden", "modality": "note", "content_type": "text/markdown",
            "captured_at": T0, "captured_at_source": "user", "ingested_at": T0, "text_length": 0, "segments": [],
            "body_ref": None, **more}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_documents_tags_before_v4_are_read_from_its_metadata_as_a_list(codec: EventCodec, version: int) -> None:
    """Before ``documents.extracted`` v4 a note's tags came space-joined in its metadata."""
    from secondbrain.events import DocumentExtracted

    data = codec.encode_record("document_extracted", _document(metadata={"tags": "garden work/plans"}),
                               version=version)
    assert codec.decode(data, DocumentExtracted).tags == ["garden", "work/plans"]
    none = codec.encode_record("document_extracted", _document(metadata={}), version=version)
    assert codec.decode(none, DocumentExtracted).tags == []


def test_v4_carries_a_documents_tags_as_an_array(codec: EventCodec) -> None:
    from secondbrain.events import DocumentExtracted

    event = DocumentExtracted(**{**_document(), "tags": ["garden", "work/plans"], "metadata": {"kind": "note"}})
    data = codec.encode(event)
    assert codec.identify(data).version == DocumentExtracted.SCHEMA_VERSION == 4
    assert codec.decode(data, DocumentExtracted) == event
