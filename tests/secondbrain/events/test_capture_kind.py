"""``ArtifactSubmitted.capture`` says what kind of capture an artifact is (v2); version 1 events, which
could only mark a note by its address or an attribute, still decode, with the kind those mark."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from secondbrain.events import CAPTURE_KINDS, ArtifactSubmitted, EventCodec

pytestmark = pytest.mark.fast  # no services: in the fast lane

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def codec() -> EventCodec:
    return EventCodec()


def _v1(source_uri: str, attributes: dict[str, str]) -> dict[str, Any]:
    body = b"Buy seeds for the tomato beds."
    return {"event_id": "e1", "job_id": None, "user_id": "alice", "source_uri": source_uri, "source_id": None,
            "artifact_id": None, "content_type": "text/plain", "filename": None, "title": None, "object_key": None,
            "content": body, "size_bytes": len(body), "sha256": None, "captured_at": None, "submitted_at": T0,
            "producer": "app:notes", "attributes": attributes}


@pytest.mark.parametrize(("source_uri", "attributes", "kind"), [
    ("note:5f0c", {}, "note"),
    ("app:notes/42", {"kind": "note"}, "note"),
    ("https://example.org/post", {"kind": "page"}, "page"),
    ("file:report.md", {}, ""),  # nothing said, nothing guessed
    ("calendar:evt-42", {"calendar": "work"}, ""),
])
def test_version_1_events_decode_with_the_kind_they_mark(codec: EventCodec, source_uri: str,
                                                         attributes: dict[str, str], kind: str) -> None:
    data = codec.encode_record("artifact_submitted", _v1(source_uri, attributes), version=1)
    assert codec.identify(data).version == 1
    assert codec.decode(data, ArtifactSubmitted).capture == kind


@pytest.mark.parametrize("kind", sorted(CAPTURE_KINDS))
def test_version_2_carries_the_kind(codec: EventCodec, kind: str) -> None:
    # Said outright, the kind wins over the address: an imported item at a note: address stays an import.
    record = {**_v1("note:5f0c", {}), "capture": kind}
    event = ArtifactSubmitted(**record)
    data = codec.encode(event)
    assert codec.identify(data).version == ArtifactSubmitted.SCHEMA_VERSION == 2
    assert codec.decode(data, ArtifactSubmitted) == event
