"""secondbrain's own export read back: each source's versions in order (one wave per version), and the
conversations with what their answers cite pointed at the copies the importing person gets."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from secondbrain import ids
from secondbrain.events.codec import EventCodec
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.stores.memory.store import MemoryMetadataStore
from secondbrain.stores.objects_fs import FileObjectStore
from secondbrain.topic_names import TopicNames
from services.importers import secondbrain_export
from services.importers.archive import Export
from services.importers.model import Capture, Conversation, Options, Skipped
from services.importers.submit import CaptureSubmitter, conversation_from_json

pytestmark = pytest.mark.fast

THERE = "alice"  # the user the export came from
V1, V2, NOTE = b"# Plan\n\nNight train.\n", b"# Plan\n\nMorning train, three nights.\n", b"# Shed\n\nTrimmer.\n"
PLAN, SHED = ids.source_id(THERE, "file:plan.md"), ids.source_id(THERE, "note:1")
ART1, ART2, ART_NOTE = (ids.artifact_id(THERE, hashlib.sha256(b).hexdigest()) for b in (V1, V2, NOTE))


def row(source: str, uri: str, version: int, artifact: str, when: str, **extra: Any) -> dict[str, Any]:
    return {"source_id": source, "source_uri": uri, "title": uri, "version": version, "status": "succeeded",
            "artifact_id": artifact, "document_id": ids.document_id(artifact), "content_type": "text/markdown",
            "captured_at": when, "raw": "kept", **extra}


def cited_source(source: str, uri: str, artifact: str) -> dict[str, Any]:
    document = ids.document_id(artifact)
    return {"n": 1, "source_id": source, "source_uri": uri, "artifact_id": artifact, "document_id": document,
            "chunk_id": ids.chunk_id(document, 0), "chunk_index": 0, "link": f"/v1/artifacts/{artifact}/raw"}


def write_export(path: Path) -> Path:
    rows = [row(PLAN, "file:plan.md", 2, ART2, "2024-02-01T10:00:00+00:00"),
            row(PLAN, "file:plan.md", 1, ART1, "2024-01-01T10:00:00+00:00"),
            row(SHED, "note:1", 1, ART_NOTE, "2023-05-14T07:30:00+00:00", modality="note", tags=["shed", "tools"]),
            row(ids.source_id(THERE, "file:broken.pdf"), "file:broken.pdf", 0, "x", "2024-01-01T00:00:00Z",
                status="failed")]
    conversation = {"conversation_id": "73c2af6d-b97c-4380-8229-0e9871799b77", "title": None,
                    "created_at": "2024-03-01T09:00:00+00:00", "turns": [
                        {"role": "user", "content": "Where is the trimmer?", "created_at": "2024-03-01T09:00:00+00:00"},
                        {"role": "assistant", "content": "In the shed. [1]", "created_at": "2024-03-01T09:00:01+00:00",
                         "meta": {"citations": [1], "sources": [cited_source(SHED, "note:1", ART_NOTE)],
                                  "meta": {"conversation_id": "73c2af6d-b97c-4380-8229-0e9871799b77"}}}]}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "secondbrain-export", "user_id": THERE,
                                                "counts": {"sources": 4, "conversations": 1}}))
        z.writestr("sources.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        for artifact, name, data in ((ART1, "plan.md", V1), (ART2, "plan.md", V2), (ART_NOTE, "note.md", NOTE)):
            z.writestr(f"raw/{artifact}/{name}", data)
        z.writestr("conversations.jsonl", json.dumps(conversation) + "\n")
    return path


@pytest.fixture()
def results(tmp_path: Path) -> Iterator[list[Any]]:
    with Export.open(write_export(tmp_path / "memory.zip")) as export:
        yield list(secondbrain_export.read(export, Options()))


def test_each_version_comes_back_from_its_own_file_in_order(results: list[Any]) -> None:
    captures = [r for r in results if isinstance(r, Capture)]
    # The first versions go first, together; the second version waits for them (a wave of its own).
    assert [c.wave for c in captures] == [0, 0, 1]
    assert {(c.wave, c.source_uri, c.data(), c.captured_at, c.kind) for c in captures} == {
        (0, "import:secondbrain:file:plan.md", V1, datetime(2024, 1, 1, 10, tzinfo=UTC), "file"),
        (0, "import:secondbrain:note:1", NOTE, datetime(2023, 5, 14, 7, 30, tzinfo=UTC), "note"),
        (1, "import:secondbrain:file:plan.md", V2, datetime(2024, 2, 1, 10, tzinfo=UTC), "file")}
    [skipped] = [r for r in results if isinstance(r, Skipped)]
    assert "did not succeed" in skipped.reason
    # A source's tags come with it (the extractor makes them its tags with its first version).
    assert {c.source_uri: c.attributes.get("import.tags") for c in captures} == {
        "import:secondbrain:file:plan.md": None, "import:secondbrain:note:1": "shed tools"}


def test_a_conversation_carries_only_what_it_cites(results: list[Any]) -> None:
    [conversation] = [r for r in results if isinstance(r, Conversation)]
    assert conversation.sources == {SHED: "import:secondbrain:note:1"}
    assert conversation.artifacts == {ART_NOTE: hashlib.sha256(NOTE).hexdigest()}
    assert conversation_from_json(json.loads(json.dumps(conversation.json()))) == conversation


def test_citations_point_at_the_importing_persons_copies(results: list[Any], tmp_path: Path) -> None:
    [conversation] = [r for r in results if isinstance(r, Conversation)]
    metadata = MemoryMetadataStore()
    rt = Runtime(settings=Settings(data_dir=tmp_path), metadata=metadata,  # type: ignore[call-arg]
                 objects=FileObjectStore(tmp_path / "objects"), codec=EventCodec(), names=TopicNames("t."))
    metadata.users.ensure_user("bob")
    submitter = CaptureSubmitter(rt, None)
    assert submitter.keep_conversation("bob", conversation).status == "imported"
    assert submitter.keep_conversation("bob", conversation).status == "unchanged"
    [listed] = metadata.conversations.recent_conversations("bob", 10)
    turns = metadata.conversations.get_turns("bob", listed.conversation_id, 10)
    assert [t.created_at for t in turns] == [datetime(2024, 3, 1, 9, tzinfo=UTC),
                                             datetime(2024, 3, 1, 9, 0, 1, tzinfo=UTC)]
    [source] = turns[1].meta["sources"]
    artifact = ids.artifact_id("bob", hashlib.sha256(NOTE).hexdigest())  # what bob's import of the note is
    document = ids.document_id(artifact)
    assert source == {"n": 1, "source_id": ids.source_id("bob", "import:secondbrain:note:1"),
                      "source_uri": "import:secondbrain:note:1", "artifact_id": artifact, "document_id": document,
                      "chunk_id": ids.chunk_id(document, 0), "chunk_index": 0,
                      "link": f"/v1/artifacts/{artifact}/raw"}
    assert turns[1].meta["meta"]["conversation_id"] == listed.conversation_id
    assert turns[1].meta["citations"] == [1]


def test_a_version_whose_predecessor_did_not_come_still_waits_for_it(tmp_path: Path) -> None:
    """C's first version failed where it came from; its second and third must still go one after the other,
    also when D's versions set the pace."""
    # D's versions come first where the export lists a version number's rows (by source id).
    (d, d_uri), (c, c_uri) = sorted((ids.source_id(THERE, uri), uri) for uri in ("file:a.md", "file:b.md"))
    bodies = {name: f"# {name}\n".encode() for name in ("c2", "c3", "d1", "d2")}
    art = {name: ids.artifact_id(THERE, hashlib.sha256(b).hexdigest()) for name, b in bodies.items()}
    rows = [row(c, c_uri, 1, "gone", "2024-01-01T00:00:00Z", status="failed"),
            row(c, c_uri, 2, art["c2"], "2024-01-02T00:00:00Z"),
            row(c, c_uri, 3, art["c3"], "2024-01-03T00:00:00Z"),
            row(d, d_uri, 1, art["d1"], "2024-01-01T00:00:00Z"),
            row(d, d_uri, 2, art["d2"], "2024-01-02T00:00:00Z")]
    path = tmp_path / "memory.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "secondbrain-export", "user_id": THERE}))
        z.writestr("sources.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        for name, data in bodies.items():
            z.writestr(f"raw/{art[name]}/{name[0]}.md", data)
    with Export.open(path) as export:
        captures = [r for r in secondbrain_export.read(export, Options()) if isinstance(r, Capture)]
        wave_of = {c.data(): c.wave for c in captures}
    waves = [c.wave for c in captures]
    assert waves == sorted(waves)  # sent in order: a later wave only once the earlier ones are indexed
    assert wave_of[bodies["c2"]] < wave_of[bodies["c3"]] and wave_of[bodies["d1"]] < wave_of[bodies["d2"]]
