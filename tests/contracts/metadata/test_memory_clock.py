"""The in-memory twin's clock can be moved by a test (Postgres reads the server's): leases, sessions,
request windows and retention then follow the moved time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from secondbrain.stores.memory import MemoryMetadataStore
from tests.contracts.metadata.helpers import ingest, submit, version_of


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def test_leases_and_sessions_run_out_when_time_moves() -> None:
    clock = Clock()
    store = MemoryMetadataStore(clock=clock)
    submit(store)
    [row] = store.outbox.claim_outbox(1, lease_seconds=30)
    clock.advance(seconds=29)
    assert store.outbox.claim_outbox(1) == []
    clock.advance(seconds=2)
    assert [r.id for r in store.outbox.claim_outbox(1)] == [row.id]

    store.users.ensure_user("alice")
    info, key = store.api_keys.create_api_key("alice", "laptop")
    assert info.created_at == clock.now
    opened = store.sessions.open_session(key_secret=key, ttl_s=60)
    assert opened is not None
    clock.advance(seconds=59)
    assert store.sessions.authenticate_session(opened[0]) is not None
    clock.advance(seconds=2)
    assert store.sessions.authenticate_session(opened[0]) is None


def test_request_windows_roll_over_with_the_clock() -> None:
    clock = Clock()
    store = MemoryMetadataStore(clock=clock)
    assert [store.rate_counts.count_request("alice", "act", 60) for _ in range(3)] == [1, 2, 3]
    clock.advance(seconds=60)
    assert store.rate_counts.count_request("alice", "act", 60) == 1


def test_retention_reads_the_moved_clock() -> None:
    clock = Clock()
    store = MemoryMetadataStore(clock=clock)
    old = version_of("alice", "file:old.md", "old", submitted_at=clock.now)
    ingest(store, old)
    clock.advance(days=10)
    ingest(store, version_of("alice", "file:new.md", "new", submitted_at=clock.now))
    cutoff = clock.now - timedelta(days=7)
    assert [a.artifact_id for a in store.catalog.raw_expired(cutoff)] == [old.artifact_id]
    store.catalog.mark_raw_purged("alice", [old.artifact_id])
    assert store.catalog.get_artifact("alice", old.artifact_id).raw_purged_at == clock.now  # type: ignore[union-attr]
