"""When the edge store's writes reach the disk, on the real engine: every write is in the engine's write-ahead
log when ``upsert`` returns (a process killed next loses nothing), and the sync to the disk itself, which
stops the whole process while it runs, is shared by the writes of ``sync_s`` seconds."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from secondbrain.ports import SparseVector, VectorPoint
from secondbrain.stores import vectors_edge
from secondbrain.stores.vectors_edge import EdgeVectorStore

DIM = 8
USER = "alice"
REPO = Path(__file__).resolve().parents[3]


def point(i: int) -> VectorPoint:
    dense = [1.0 if j == i % DIM else 0.1 for j in range(DIM)]
    return VectorPoint(str(uuid.UUID(int=i + 1)), dense, SparseVector([i % 50 + 1], [1.0]),
                       {"document_id": f"d{i}", "chunk_index": 0, "text": f"passage {i}"})


def test_writes_survive_the_process_killed_before_any_sync(tmp_path: Path) -> None:
    root = tmp_path / "vectors"
    # A process that writes 300 points in 30 upserts, never syncing (an hour's wait), and is then killed.
    child = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.secondbrain.stores.test_vector_sync import point, USER, DIM
        from secondbrain.stores.vectors_edge import EdgeVectorStore
        store = EdgeVectorStore(Path({str(root)!r}), sync_s=3600)
        store.ensure_collection(USER, DIM)
        for start in range(0, 300, 10):
            store.upsert(USER, [point(i) for i in range(start, start + 10)])
        print("written", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "written", done.stderr
    assert done.returncode == -9

    store = EdgeVectorStore(root)
    try:
        assert store.count(USER) == 300
        hits = store.search(USER, dense=point(299).dense, sparse=None, limit=1, mode="dense")
        assert hits and hits[0].payload["text"].startswith("passage")
    finally:
        store.close()


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each sync to disk happened (the store's real sync, counted)."""
    times: list[float] = []
    real = vectors_edge._sync

    def counting(slot: object, shard: object) -> None:
        times.append(time.monotonic())
        real(slot, shard)  # type: ignore[arg-type]

    monkeypatch.setattr(vectors_edge, "_sync", counting)
    return times


def test_a_burst_of_writes_shares_one_sync(tmp_path: Path, synced: list[float]) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", sync_s=0.3)
    try:
        store.ensure_collection(USER, DIM)
        synced.clear()
        started = time.monotonic()
        for i in range(40):
            store.upsert(USER, [point(i)])
        assert len(synced) == 0  # none of the 40 writes waited for the disk
        deadline = time.monotonic() + 10
        while not synced and time.monotonic() < deadline:
            time.sleep(0.05)
        assert synced, "the writes were never synced"
        assert synced[0] - started < 5  # within the wait asked for (0.3 s), with room for a slow machine
        time.sleep(0.8)
        assert len(synced) == 1  # nothing written since: no second sync
    finally:
        store.close()


def test_sync_s_zero_syncs_every_write(tmp_path: Path, synced: list[float]) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", sync_s=0)
    try:
        store.ensure_collection(USER, DIM)
        synced.clear()
        for i in range(5):
            store.upsert(USER, [point(i)])
        assert len(synced) == 5
    finally:
        store.close()
