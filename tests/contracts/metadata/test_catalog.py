"""Contract of the Catalog role: documents and their versions, the source list, time listings,
export listings and raw-file retention."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from secondbrain import ids
from secondbrain.ports import ArtifactGone, DocumentRecord
from tests.contracts.metadata.helpers import (
    REFUSED,
    Stores,
    artifact,
    document,
    in_threads,
    ingest,
    run_all_stages,
    submission,
    submit,
    version_of,
)


def test_documents(stores: Stores) -> None:
    catalog = stores.catalog
    _, art = submit(stores)
    doc = document(art)
    assert catalog.save_document(doc) == 1
    assert catalog.save_document(doc) == 1  # idempotent
    assert catalog.get_document("alice", doc.document_id) == doc
    catalog.set_chunk_count("alice", doc.document_id, 3)
    got = catalog.get_document("alice", doc.document_id)
    assert got is not None and got.chunk_count == 3
    catalog.save_document(document(art, title="Renamed"))  # replay keeps the count
    got = catalog.get_document("alice", doc.document_id)
    assert got is not None
    assert (got.title, got.chunk_count, dict(got.metadata)) == ("Renamed", 3, {"lang": "en"})
    catalog.save_document(document(art, chunk_count=7))  # a known count replaces it
    assert catalog.get_document("alice", doc.document_id).chunk_count == 7  # type: ignore[union-attr]
    catalog.set_chunk_count("alice", "missing", 1)
    assert catalog.get_document("alice", "missing") is None


def test_a_document_is_stored_as_json_in_utc(stores: Stores) -> None:
    _, art = submit(stores)
    local = datetime(2024, 5, 1, 16, tzinfo=timezone(timedelta(hours=2)))
    doc = replace(document(art), captured_at=local, metadata={"pages": (1, 2), "lang": "en"})
    stores.catalog.save_document(doc)
    got = stores.catalog.get_document("alice", doc.document_id)
    assert got is not None
    assert got.captured_at == local and got.captured_at.utcoffset() == timedelta(0)
    assert dict(got.metadata) == {"pages": [1, 2], "lang": "en"}


def test_a_document_the_schema_refuses(stores: Stores) -> None:
    _, art = submit(stores)
    with pytest.raises(REFUSED):
        stores.catalog.save_document(replace(document(art), char_count=-1))
    with pytest.raises(ArtifactGone):  # a document needs its artifact (deleted with its source meanwhile)
        stores.catalog.save_document(replace(document(art), artifact_id="no-such-artifact",
                                             document_id=ids.document_id("no-such-artifact")))
    with pytest.raises(ArtifactGone):  # and its user
        stores.catalog.save_document(replace(document(artifact("carol")), artifact_id=art.artifact_id))
    assert stores.catalog.list_documents("alice") == []
    assert stores.catalog.list_documents("carol") == []


def test_list_sources(stores: Stores) -> None:
    catalog = stores.catalog
    captured = datetime(2023, 1, 2, tzinfo=UTC)
    j0, a0 = submit(stores, n=0, title="zero", captured_at=captured)
    j1, a1 = submit(stores, n=1)
    j2, _ = submit(stores, n=2, title="two")
    doc = document(a1, chunk_count=5, title="one (extracted)")
    catalog.save_document(doc)
    run_all_stages(stores, j1)
    stores.jobs.job_failed("alice", j2, "extract", "bad")

    sources = catalog.list_sources("alice")
    assert [s.job_id for s in sources] == [j2, j1, j0]
    s2, s1, s0 = sources
    assert (s2.status, s2.title, s2.document_id, s2.modality, s2.chunk_count, s2.error, s2.version) == (
        "failed", "two", None, None, None, "bad", None)
    assert (s1.status, s1.document_id, s1.modality, s1.chunk_count, s1.title, s1.version, s1.superseded) == (
        "succeeded", doc.document_id, "text", 5, "one (extracted)", 1, False)
    assert s1.captured_at == doc.captured_at
    assert s1.ingested_at == doc.ingested_at
    assert (s0.status, s0.captured_at, s0.title, s0.error, s0.raw_purged_at) == (
        "queued", captured, "zero", None, None)
    assert (s0.artifact_id, s0.source_id, s0.source_uri, s0.content_type, s0.size_bytes) == (
        a0.artifact_id, a0.source_id, a0.source_uri, a0.content_type, a0.size_bytes)
    job0 = stores.jobs.get_job("alice", j0)
    assert job0 is not None and s0.ingested_at == job0.created_at  # not extracted: when it was submitted

    assert [s.job_id for s in catalog.list_sources("alice", limit=2)] == [j2, j1]
    assert [s.job_id for s in catalog.list_sources("alice", limit=2, offset=2)] == [j0]
    assert catalog.list_sources("alice", offset=3) == []
    assert catalog.list_sources("alice", limit=0) == []


def test_per_user_isolation(stores: Stores) -> None:
    catalog = stores.catalog
    job, art = submit(stores, "alice")
    stores.jobs.stage_started("alice", job, "extract", 1)
    doc = document(art)
    catalog.save_document(doc)
    bob_job, _ = submit(stores, "bob", n=7)

    assert stores.jobs.get_job("bob", job) is None
    assert stores.jobs.job_events("bob", job) == []
    assert catalog.get_document("bob", doc.document_id) is None
    assert catalog.get_artifact("bob", art.artifact_id) is None
    assert [s.job_id for s in catalog.list_sources("bob")] == [bob_job]
    assert catalog.list_sources("carol") == []
    assert stores.jobs.get_job("alice", bob_job) is None

    # Bob cannot overwrite Alice's document by reusing its id.
    assert catalog.save_document(DocumentRecord(
        document_id=doc.document_id, user_id="bob", artifact_id=art.artifact_id, source_id="x",
        title="stolen",
        modality="text", content_type="text/plain", captured_at=doc.captured_at, captured_at_source="x",
        ingested_at=doc.ingested_at + timedelta(seconds=1), char_count=1,
    )) == 0
    got = catalog.get_document("alice", doc.document_id)
    assert got is not None and got.title == doc.title
    assert catalog.list_documents("bob") == []


def test_versions_of_a_source(stores: Stores) -> None:
    """New content for one source becomes the next version; older ones are superseded once asked."""
    catalog = stores.catalog
    _, a1 = submit(stores, "alice", n=21)
    a2 = replace(artifact("alice", 22), source_id=a1.source_id, source_uri=a1.source_uri)
    stores.intake.submit(a2, ids.job_id("alice", "v2"), [])
    d1, d2 = document(a1), document(a2)
    assert catalog.save_document(d1) == 1
    assert catalog.save_document(d1) == 1  # a replay keeps its version
    assert catalog.save_document(d2) == 2
    assert catalog.is_superseded("alice", d1.document_id)
    assert not catalog.is_superseded("alice", d2.document_id)
    assert catalog.supersede_older("alice", a1.source_id, d2.document_id) == [d1.document_id]
    assert catalog.supersede_older("alice", a1.source_id, d2.document_id) == [d1.document_id]  # idempotent
    got = catalog.get_document("alice", d1.document_id)
    assert got is not None and got.superseded_at is not None and got.version == 1
    superseded_at = got.superseded_at
    catalog.supersede_older("alice", a1.source_id, d2.document_id)
    assert catalog.get_document("alice", d1.document_id).superseded_at == superseded_at  # type: ignore[union-attr]
    [listed] = [s for s in catalog.list_sources("alice") if s.document_id == d1.document_id]
    assert (listed.version, listed.superseded) == (1, True)
    # The old content uploaded again becomes the newest version, current again.
    assert catalog.save_document(d1) == 3
    got = catalog.get_document("alice", d1.document_id)
    assert got is not None and (got.version, got.superseded_at) == (3, None)
    assert not catalog.is_superseded("alice", d1.document_id)
    assert catalog.is_superseded("alice", d2.document_id)
    # Bob sees and changes nothing of this.
    assert catalog.supersede_older("bob", a1.source_id, d1.document_id) == []
    assert catalog.is_superseded("bob", d1.document_id)  # unknown to Bob: treated as gone
    assert catalog.supersede_older("alice", a1.source_id, "no-such-document") == []


def test_superseded_asks_for_many_documents_at_once(stores: Stores) -> None:
    """The batch question gives what the one-by-one question gives: gone, older or another person's count as
    superseded; the current version does not."""
    catalog = stores.catalog
    _, a1 = submit(stores, "alice", n=31)
    a2 = replace(artifact("alice", 32), source_id=a1.source_id, source_uri=a1.source_uri)
    stores.intake.submit(a2, ids.job_id("alice", "v2"), [])
    _, other = submit(stores, "alice", n=33)
    d1, d2, d3 = document(a1), document(a2), document(other)
    for d in (d1, d2, d3):
        catalog.save_document(d)
    asked = [d1.document_id, d2.document_id, d3.document_id, "no-such-document", d1.document_id]
    assert catalog.superseded("alice", asked) == {d1.document_id, "no-such-document"}
    assert catalog.superseded("alice", asked) == {d for d in asked if catalog.is_superseded("alice", d)}
    assert catalog.superseded("bob", asked) == set(asked)  # none of them Bob's
    assert catalog.superseded("alice", []) == set()


def test_a_document_indexed_records_its_chunks_and_supersedes_older_versions(stores: Stores) -> None:
    catalog = stores.catalog
    _, a1 = submit(stores, "alice", n=31)
    a2 = replace(artifact("alice", 32), source_id=a1.source_id, source_uri=a1.source_uri)
    stores.intake.submit(a2, ids.job_id("alice", "v2"), [])
    d1, d2 = document(a1), document(a2)
    catalog.save_document(d1)
    catalog.save_document(d2)
    assert catalog.document_indexed("alice", d1.document_id, a1.source_id, 4) == []  # nothing older than v1
    assert catalog.get_document("alice", d1.document_id).superseded_at is None  # type: ignore[union-attr]
    assert catalog.document_indexed("alice", d2.document_id, a1.source_id, 5) == [d1.document_id]
    got1, got2 = catalog.get_document("alice", d1.document_id), catalog.get_document("alice", d2.document_id)
    assert got1 is not None and got2 is not None
    assert (got1.chunk_count, got1.superseded_at is not None) == (4, True)
    assert (got2.chunk_count, got2.superseded_at) == (5, None)
    assert catalog.document_indexed("alice", d2.document_id, a1.source_id, 5) == [d1.document_id]  # a replay
    # Bob's call changes nothing of Alice's
    assert catalog.document_indexed("bob", d2.document_id, a1.source_id, 9) == []
    assert catalog.get_document("alice", d2.document_id).chunk_count == 5  # type: ignore[union-attr]


def test_concurrent_versions_get_distinct_numbers(stores: Stores) -> None:
    _, first = submit(stores, "alice", n=30)
    arts = [replace(artifact("alice", 31 + i), source_id=first.source_id) for i in range(6)]
    for i, a in enumerate(arts):
        stores.intake.submit(a, ids.job_id("alice", f"cv{i}"), [])
    versions = in_threads(len(arts), lambda i: stores.catalog.save_document(document(arts[i])))
    assert sorted(versions) == list(range(1, len(arts) + 1))


def test_documents_between_lists_current_documents_newest_first(stores: Stores) -> None:
    catalog = stores.catalog
    docs = []
    for n, day in enumerate([1, 5, 9, 12]):
        _, art = submit(stores, "alice", n=50 + n)
        doc = replace(document(art, title=f"day {day}"), captured_at=datetime(2026, 3, day, 9, tzinfo=UTC),
                      modality="pdf" if day == 5 else "note")
        catalog.save_document(doc)
        docs.append(doc)
    _, bob_art = submit(stores, "bob", n=60)
    catalog.save_document(replace(document(bob_art), captured_at=datetime(2026, 3, 6, tzinfo=UTC)))
    got = catalog.documents_between("alice", datetime(2026, 3, 5, 9, tzinfo=UTC), datetime(2026, 3, 12, 9, tzinfo=UTC))
    assert [d.title for d in got] == ["day 9", "day 5"]  # [start, end), newest first, Bob's not there
    assert got[0] == replace(docs[2], version=1)
    assert [d.title for d in catalog.documents_between("alice", None, None, limit=2)] == ["day 12", "day 9"]
    assert catalog.documents_between("alice", None, None, limit=0) == []
    assert [d.title for d in catalog.documents_between("alice", None, None, modalities=["pdf"])] == ["day 5"]
    assert catalog.documents_between("alice", None, None, modalities=[]) == []
    recent = catalog.documents_between("alice", datetime.now(UTC) - timedelta(minutes=5), None, field="ingested_at")
    assert len(recent) == 4
    assert [d.ingested_at for d in recent] == sorted((d.ingested_at for d in recent), reverse=True)
    # A superseded version is history, not a current document.
    newer = replace(artifact("alice", 70), source_id=docs[0].source_id)
    stores.intake.submit(newer, ids.job_id("alice", "v-new"), [])
    catalog.save_document(replace(document(newer, title="day 1 v2"), captured_at=datetime(2026, 3, 1, 10, tzinfo=UTC)))
    catalog.supersede_older("alice", docs[0].source_id, ids.document_id(newer.artifact_id))
    titles = [d.title for d in catalog.documents_between("alice", None, datetime(2026, 3, 2, tzinfo=UTC))]
    assert titles == ["day 1 v2"]
    with pytest.raises(ValueError):
        catalog.documents_between("alice", None, None, field="title")  # type: ignore[arg-type]


def test_documents_at_the_same_time_are_listed_by_id(stores: Stores) -> None:
    same = datetime(2026, 1, 1, tzinfo=UTC)
    made = []
    for n in range(3):
        _, art = submit(stores, "alice", n=80 + n)
        doc = replace(document(art), captured_at=same)
        stores.catalog.save_document(doc)
        made.append(doc.document_id)
    assert [d.document_id for d in stores.catalog.documents_between("alice", None, None)] == sorted(made)


def test_raw_files_expire_only_when_their_work_is_done(stores: Stores) -> None:
    catalog = stores.catalog
    old = version_of("alice", "file:old.md", "old", submitted_at=datetime.now(UTC) - timedelta(days=10))
    old_job = ingest(stores, old)
    busy = version_of("alice", "file:busy.md", "busy", submitted_at=datetime.now(UTC) - timedelta(days=10))
    ingest(stores, busy, extract=False)  # still queued
    cutoff = datetime.now(UTC)  # after the old job finished
    recent_old_bytes = version_of("alice", "file:recent.md", "recent", submitted_at=cutoff - timedelta(days=1))
    ingest(stores, recent_old_bytes)  # finished after the cut-off
    ingest(stores, version_of("alice", "file:new.md", "new"))  # submitted after the cut-off

    old_view = stores.jobs.get_job("alice", old_job)
    assert old_view is not None and old_view.finished_at is not None and old_view.finished_at < cutoff
    assert [a.artifact_id for a in catalog.raw_expired(cutoff)] == [old.artifact_id]
    assert catalog.raw_expired(cutoff, limit=0) == []
    assert catalog.mark_raw_purged("bob", [old.artifact_id]) == 0  # scoped by user
    assert catalog.mark_raw_purged("alice", []) == 0
    assert catalog.mark_raw_purged("alice", [old.artifact_id, old.artifact_id]) == 1
    assert catalog.mark_raw_purged("alice", [old.artifact_id]) == 0  # already recorded
    assert catalog.raw_expired(cutoff) == []
    got = catalog.get_artifact("alice", old.artifact_id)
    assert got is not None and got.raw_purged_at is not None
    assert catalog.get_artifact("bob", old.artifact_id) is None
    (row,) = catalog.list_sources("alice", source_id=old.source_id)
    assert row.raw_purged_at == got.raw_purged_at
    ingest(stores, old, extract=False)  # the same bytes submitted again are stored again
    got = catalog.get_artifact("alice", old.artifact_id)
    assert got is not None and got.raw_purged_at is None


def test_raw_files_expire_oldest_first_across_users(stores: Stores) -> None:
    base = datetime.now(UTC) - timedelta(days=3)
    arts = [version_of(user, f"file:{n}.md", f"{user} {n}", submitted_at=base + timedelta(hours=n))
            for n, user in ((2, "alice"), (0, "bob"), (1, "alice"))]
    for art in arts:
        ingest(stores, art)
    expired = stores.catalog.raw_expired(datetime.now(UTC))
    assert [(a.user_id, a.submitted_at) for a in expired] == [
        ("bob", base), ("alice", base + timedelta(hours=1)), ("alice", base + timedelta(hours=2))]
    assert [a.artifact_id for a in stores.catalog.raw_expired(datetime.now(UTC), limit=1)] == [arts[1].artifact_id]


def test_source_filters_and_export_listings(stores: Stores) -> None:
    catalog = stores.catalog
    v1, v2 = version_of("alice", "file:p.md", "p one"), version_of("alice", "file:p.md", "p two")
    j1, j2 = ingest(stores, v1), ingest(stores, v2)
    catalog.supersede_older("alice", v2.source_id, ids.document_id(v2.artifact_id))
    failed = ingest(stores, version_of("alice", "file:bad.md", "bad"), extract=False)
    stores.jobs.job_failed("alice", failed, "extract", "no text")
    assert [s.job_id for s in catalog.list_sources("alice", status="failed")] == [failed]
    assert [s.job_id for s in catalog.list_sources("alice", modality="text")] == [j2, j1]
    assert catalog.list_sources("alice", modality="pdf") == []
    assert [s.job_id for s in catalog.list_sources("alice", source_id=v1.source_id)] == [j2, j1]
    assert [(s.version, s.superseded) for s in catalog.list_sources("alice", source_id=v1.source_id)] == [
        (2, False), (1, True)]
    assert catalog.list_sources("bob", source_id=v1.source_id) == []
    arts = catalog.list_artifacts("alice", limit=2)
    assert len(arts) == 2 and arts == sorted(arts, key=lambda a: a.artifact_id)
    rest = catalog.list_artifacts("alice", after=arts[-1].artifact_id)
    assert len(arts + rest) == 3 and all(a.artifact_id > arts[-1].artifact_id for a in rest)
    assert catalog.list_artifacts("alice", limit=0) == []
    docs = catalog.list_documents("alice")
    assert sorted(d.version for d in docs) == [1, 2] and sum(d.superseded_at is not None for d in docs) == 1
    assert docs == sorted(docs, key=lambda d: d.document_id)
    assert catalog.list_documents("alice", after=docs[0].document_id) == docs[1:]
    assert catalog.list_documents("alice", limit=1) == docs[:1]
    assert catalog.list_documents("bob") == []
    stores.conversations.add_turn("alice", "c1", "user", "q")
    stores.conversations.add_turn("alice", "c1", "assistant", "a")
    (conv,) = stores.conversations.list_conversations("alice")
    assert (conv.conversation_id, conv.turns) == ("c1", 2) and stores.conversations.list_conversations("bob") == []


def test_sources_filtered_by_captured_time(stores: Stores) -> None:
    extracted = ingest(stores, version_of("alice", "file:may.md", "may"))  # the document says 2024-05-01 12:00
    declared = ingest(stores, replace(version_of("alice", "file:jan.md", "jan"),
                                      captured_at=datetime(2025, 1, 10, tzinfo=UTC)), extract=False)
    pending = ingest(stores, version_of("alice", "file:new.md", "new"), extract=False)  # no time known yet
    ingest(stores, version_of("bob", "file:may.md", "may"))

    def between(start: datetime | None, end: datetime | None, user: str = "alice") -> list[str | None]:
        return [s.job_id for s in stores.catalog.list_sources(user, start=start, end=end)]

    may = datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert between(datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)) == [extracted]
    assert between(may, may + timedelta(seconds=1)) == [extracted]  # the start is included...
    assert between(may - timedelta(days=1), may) == []  # ...the end is not
    assert between(datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC)) == [declared]
    # until extraction says when it happened, a capture counts as captured when it was submitted
    assert between(datetime.now(UTC) - timedelta(hours=1), None) == [pending]
    assert between(None, datetime(2025, 6, 1, tzinfo=UTC)) == [declared, extracted]
    assert len(between(None, None)) == 3
    assert len(between(datetime(2024, 1, 1, tzinfo=UTC), None, user="bob")) == 1


def test_sources_under_an_address_prefix(stores: Stores) -> None:
    """The records a calendar import once made per occurrence of a series share its address and a ``/``."""
    uris = ("import:ics:yoga@x/2024-01-02T18:00:00+00:00", "import:ics:yoga@x/2024-01-09T18:00:00+00:00",
            "import:ics:yoga@x", "import:ics:yoga@xyz/1")
    for n, uri in enumerate(uris):
        art = replace(artifact("alice", n), source_uri=uri, source_id=ids.source_id("alice", uri))
        job = ids.job_id("alice", f"u{n}")
        stores.intake.submit(art, job, [submission(art, job)])
    found = stores.catalog.sources_under("alice", "import:ics:yoga@x/")
    assert found == sorted(ids.source_id("alice", uri) for uri in uris[:2])
    assert stores.catalog.sources_under("bob", "import:ics:yoga@x/") == []
    assert stores.catalog.sources_under("alice", "import:ics:%") == []  # a prefix, not a pattern
