"""Background HNSW builds and int8 quantization of the edge store, on the real engine.

Collections here are small (a few thousand 128-d points) with an indexing threshold low enough
that the engine indexes them.  A wrapper around the build script waits before building, so the
tests can act while a build is under way however fast the machine is.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from secondbrain.ports import SparseVector, VectorFilter, VectorPoint
from secondbrain.stores import vectors_edge
from secondbrain.stores.vectors_edge import BUILD_DIR, EdgeVectorStore, IndexStatus

DIM = 128
USER = "alice"


def pid(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def points(rng: np.random.Generator, start: int, n: int) -> list[VectorPoint]:
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [VectorPoint(pid(start + i), vecs[i].tolist(), SparseVector([(start + i) % 97 + 1], [1.0]),
                        {"document_id": f"d{(start + i) // 10}", "chunk_index": (start + i) % 10})
            for i in range(n)]


def fill(store: EdgeVectorStore, pts: list[VectorPoint]) -> None:
    store.ensure_collection(USER, DIM)
    for i in range(0, len(pts), 500):
        store.upsert(USER, pts[i:i + 500])


def wait_for(what: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def status(store: EdgeVectorStore) -> IndexStatus:
    st = store.index_status(USER)
    assert st is not None
    return st


@pytest.fixture
def slow_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Make the build child wait ``delay`` seconds before it runs the real build script."""

    def use(delay: float) -> None:
        wrapper = tmp_path / "slow_index.py"
        wrapper.write_text(
            "import runpy, sys, time\n"
            f"time.sleep({delay})\n"
            f"sys.argv[0] = {str(vectors_edge._INDEX_SCRIPT)!r}\n"
            f"runpy.run_path({str(vectors_edge._INDEX_SCRIPT)!r}, run_name='__main__')\n")
        monkeypatch.setattr(vectors_edge, "_INDEX_SCRIPT", wrapper)

    return use


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeVectorStore]:
    s = make(tmp_path / "vectors")
    yield s
    s.close()


def make(root: Path, **kwargs: object) -> EdgeVectorStore:
    s = EdgeVectorStore(root, index_after=2000, index_quiet_s=0.2, indexing_threshold_kb=200,
                        **kwargs)  # type: ignore[arg-type]
    s.poll_s = 0.05
    return s


def top_id(store: EdgeVectorStore, vec: list[float], mode: str = "dense") -> str:
    hits = store.search(USER, dense=vec, sparse=None, limit=1, mode=mode)  # type: ignore[arg-type]
    return hits[0].id


def test_background_build_indexes_without_blocking_and_replays_writes(
        store: EdgeVectorStore, slow_build: Callable[[float], None]) -> None:
    slow_build(1.5)
    rng = np.random.default_rng(1)
    base = points(rng, 0, 4000)
    fill(store, base)
    assert status(store).indexed_vectors <= status(store).points  # only sparse vectors are indexed
    wait_for(lambda: status(store).building)

    # Writes, deletes and searches while the child builds: none waits for the build.
    late = points(rng, 10_000, 300)
    slowest = 0.0
    for i in range(0, 300, 100):
        t0 = time.perf_counter()
        store.upsert(USER, late[i:i + 100])
        assert top_id(store, late[i].dense) == late[i].id
        slowest = max(slowest, time.perf_counter() - t0)
    store.delete_where(USER, VectorFilter(document_ids=["d0", "d1"]))  # points 0-19
    store.upsert(USER, [VectorPoint(pid(25), base[30].dense, base[25].sparse, base[25].payload)])  # replaced
    assert status(store).building, "the build ended before the writes: the test proves nothing"
    assert slowest < 1.0

    wait_for(lambda: status(store).builds == 1 and not status(store).building)
    st = status(store)
    assert st.failures == 0
    assert st.indexed_vectors > st.points  # dense vectors are in HNSW segments now
    assert st.points == 4000 + 300 - 20
    assert store.count(USER, VectorFilter(document_ids=["d0", "d1"])) == 0
    for p in late[::37]:
        assert top_id(store, p.dense) == p.id
    hits = store.search(USER, dense=base[30].dense, sparse=None, limit=2, mode="dense")
    assert {h.id for h in hits} == {pid(25), pid(30)}
    assert not (store.root / BUILD_DIR / store._slot(USER)[0]).exists()

    # The optimized collection is what is on disk: a new store finds everything.
    store.close()
    again = make(store.root)
    try:
        assert again.count(USER) == 4000 + 300 - 20
        assert top_id(again, late[0].dense) == late[0].id
    finally:
        again.close()


def test_a_killed_build_leaves_the_collection_working_and_is_retried(
        store: EdgeVectorStore, slow_build: Callable[[float], None]) -> None:
    slow_build(30)
    rng = np.random.default_rng(2)
    base = points(rng, 0, 3000)
    fill(store, base)
    wait_for(lambda: status(store).building)
    child = store._child
    assert child is not None
    os.kill(child[1].pid, signal.SIGKILL)
    wait_for(lambda: status(store).failures == 1 and not status(store).building)

    assert store.count(USER) == 3000
    assert top_id(store, base[7].dense) == base[7].id
    extra = points(rng, 5000, 10)
    store.upsert(USER, extra)
    assert top_id(store, extra[3].dense) == extra[3].id
    wait_for(lambda: not (store.root / BUILD_DIR / store._slot(USER)[0]).exists())
    slot = store._slot(USER)[1]
    assert slot.retry_at > time.monotonic()  # backing off, then due again
    assert slot.pending >= 3000

    store.close()
    again = make(store.root)
    try:
        assert again.count(USER) == 3010
    finally:
        again.close()


def test_close_and_drop_during_a_build_are_safe(tmp_path: Path, slow_build: Callable[[float], None]) -> None:
    slow_build(30)
    rng = np.random.default_rng(3)
    pts = points(rng, 0, 2500)
    s = make(tmp_path / "v")
    fill(s, pts)
    wait_for(lambda: status(s).building)
    proc = s._child[1] if s._child else None
    assert proc is not None
    t0 = time.perf_counter()
    s.close()
    assert time.perf_counter() - t0 < 20
    assert proc.poll() is not None  # the child is gone with the build
    s2 = make(tmp_path / "v")
    try:
        assert s2.count(USER) == 2500
        wait_for(lambda: status(s2).building)  # the unindexed collection is built after a restart
        s2.drop_index(USER, "v1")
        assert s2.list_indexes(USER) == []
        assert s2.index_status(USER) is None
        wait_for(lambda: not (tmp_path / "v" / BUILD_DIR / s2._slot(USER)[0]).exists())  # removed after
    finally:
        s2.close()


def test_an_interrupted_swap_is_undone_on_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "v"
    s = make(root, )
    s.index_after = 0
    fill(s, points(np.random.default_rng(4), 0, 50))
    name = s._slot(USER)[0]
    s.close()
    (root / BUILD_DIR).mkdir()
    os.rename(root / name, root / BUILD_DIR / f"{name}.old")  # died between the swap's two renames
    again = make(root)
    try:
        assert again.count(USER) == 50
        assert not (root / BUILD_DIR).exists()
    finally:
        again.close()


def test_int8_collections_rank_like_float_ones(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    pts = points(rng, 0, 3000)
    queries = [(p.id, (np.array(p.dense) + rng.normal(0, 0.01, DIM)).tolist()) for p in pts[::97]]
    results = {}
    for quant in ("none", "int8"):
        s = make(tmp_path / quant, quantization=quant)
        try:
            fill(s, pts)
            wait_for(lambda s=s: status(s).builds == 1)  # type: ignore[misc]
            st = status(s)
            assert st.indexed_vectors > st.points
            results[quant] = [top_id(s, q) for _, q in queries] + [top_id(s, q, "hybrid") for _, q in queries]
        finally:
            s.close()
    assert results["int8"] == results["none"]
    assert results["int8"][:len(queries)] == [i for i, _ in queries]
    # Existing collections keep the quantization they were created with.
    assert vectors_edge._persisted_quantization(tmp_path / "int8" / "u_alice_v1", "dense") is not None
    plain = EdgeVectorStore(tmp_path / "int8", quantization="none", index_after=0)
    try:
        plain.ensure_collection(USER, DIM)
    finally:
        plain.close()
    assert vectors_edge._persisted_quantization(tmp_path / "int8" / "u_alice_v1", "dense") is not None
    assert vectors_edge._persisted_quantization(tmp_path / "none" / "u_alice_v1", "dense") is None


def test_the_build_script_dies_with_its_parent(tmp_path: Path) -> None:
    # A parent pid that is not ours: the script refuses to run for a parent it cannot follow.
    import subprocess

    proc = subprocess.run([sys.executable, str(vectors_edge._INDEX_SCRIPT), str(tmp_path), "1", "100", "bm25"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 3


def segment_dirs(store: EdgeVectorStore) -> set[str]:
    return {p.name for p in (store.root / store._slot(USER)[0] / "segments").iterdir() if p.is_dir()}


def test_a_bulk_load_is_indexed_in_capped_segments_and_later_writes_in_one_of_their_own(tmp_path: Path) -> None:
    # 400 KB of 128-d float vectors per segment: 800 points each.
    s = make(tmp_path / "v", segment_kb=400)
    s.index_quiet_s = 2.0  # one build after the whole load, however slow the machine writes it
    try:
        rng = np.random.default_rng(6)
        bulk = points(rng, 0, 3300)
        fill(s, bulk)
        wait_for(lambda: status(s).builds == 1 and not status(s).building)
        st = status(s)
        assert st.points == 3300
        # Every dense vector is in a graph but the last 100, too few for one (they are scanned).
        assert st.indexed_vectors == 2 * st.points - 100
        assert st.segments >= 3300 // 800  # not one graph over the whole load
        for p in bulk[::41]:
            assert top_id(s, p.dense) == p.id
        # Filtered search finds the nearest point among the matching ones (an exact scan of a
        # selective filter's points, no per-payload-value links needed).
        hits = s.search(USER, dense=bulk[1234].dense, sparse=None, limit=3, mode="dense",
                        flt=VectorFilter(document_ids=["d123"]))
        assert hits[0].id == bulk[1234].id
        assert {h.payload["document_id"] for h in hits} == {"d123"}

        built = segment_dirs(s)
        s.index_after = 500
        late = points(rng, 5000, 600)  # under a segment's worth: indexed in place
        s.upsert(USER, late)
        wait_for(lambda: status(s).builds == 2 and not status(s).building)
        st = status(s)
        assert st.points == 3900
        assert st.indexed_vectors == 2 * st.points  # the new points are indexed too...
        assert len(built & segment_dirs(s)) >= len(built) - 2  # ...and the earlier segments were kept
        for p in late[::29]:
            assert top_id(s, p.dense) == p.id
    finally:
        s.close()
