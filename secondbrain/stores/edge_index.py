"""Child process that builds the HNSW index of a copy of an edge shard (run by path, not imported).

``EdgeShard.optimize()`` holds the GIL for its whole run (tens of seconds at scale), so
:class:`~secondbrain.stores.vectors_edge.EdgeVectorStore` runs it here, on a copy of the shard
directory, while it keeps serving from the original.  This file imports nothing from secondbrain
(it is started by path, whatever package the parent imported).

    python edge_index.py SHARD_DIR PARENT_PID INDEXING_THRESHOLD_KB SPARSE_VECTOR_NAME [SEGMENT_KB]

The engine indexes each segment as a whole and never splits one, and every point written
between two builds lands in a single appendable segment: optimizing a bulk load of a million
points would build one graph of a million points, whose cost grows faster than the point count.
With ``SEGMENT_KB`` (dense vector bytes per segment, in KB; 0: no limit), a copy holding more
unindexed points than one segment takes is re-segmented instead: its points are streamed into a
fresh shard with the same config, and each segment's worth is indexed on its own before the next
is written, so the build grows linearly with the collection and its memory stays that of one
segment.  Fewer unindexed points (writes after a build) are indexed in place, as a segment of
their own: the segments built before are left as they are.

Exit status 0 once the copy is optimized, flushed and closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

PAGE = 1000  # points per scroll page while re-segmenting


def _die_with_parent(parent: int) -> None:
    # A build the parent no longer waits for is wasted CPU: on Linux the kernel kills us with it.
    # (While optimize() runs this process cannot run Python code, so polling would not work.)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl took effect
        sys.exit(3)


def segment_points(path: Path, segment_kb: int) -> int:
    """How many points one segment of the shard at ``path`` takes (0: no limit)."""
    if segment_kb <= 0:
        return 0
    vectors = json.loads((path / "edge_config.json").read_text()).get("vectors") or {}
    dims = sum(int(v["size"]) for v in vectors.values())
    return max(1, segment_kb * 1024 // (4 * dims)) if dims else 0


def resegment(qe: Any, shard: Any, path: Path, per_segment: int) -> Path:
    """Stream the points of ``shard`` (open at ``path``) into a fresh shard next to it, indexing
    every ``per_segment`` points on their own; returns the fresh shard's directory (closed)."""
    fresh = path.with_name(path.name + ".segments")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    # The engine creates an empty shard from a directory holding only its config: the same
    # vectors, quantization and limits as the collection.
    shutil.copy2(path / "edge_config.json", fresh / "edge_config.json")
    out = qe.EdgeShard.load(str(fresh), None)
    try:
        for field, info in shard.info().payload_schema.items():
            # Indexes created from a bare type report no params: the type stands for the defaults.
            params = info.params if info.params is not None else info.data_type
            out.update(qe.UpdateOperation.create_field_index(field, params))
        offset, filled = None, 0
        while True:
            records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=min(PAGE, per_segment - filled),
                                                            with_payload=True, with_vector=True))
            if records:
                out.update(qe.UpdateOperation.upsert_points(
                    [qe.Point(r.id, r.vector, r.payload) for r in records]))
                filled += len(records)
            if filled >= per_segment or (offset is None and filled):
                out.optimize()  # indexes what was written since the last call as a segment of its own
                filled = 0
            if offset is None:
                break
        out.flush()
    finally:
        out.close()
    return fresh


def main(argv: list[str]) -> int:
    path, parent, threshold_kb, sparse_name = Path(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    segment_kb = int(argv[4]) if len(argv) > 4 else 0
    _die_with_parent(parent)
    with contextlib.suppress(OSError):
        os.nice(10)  # searches and ingestion in the parent come first on a small machine
    import qdrant_edge as qe

    # Dense vectors left out are inherited from the shard, quantization included; the engine
    # insists on some vector in a config, hence the sparse one (as the store creates it).
    optimizers = qe.EdgeOptimizersConfig(indexing_threshold=threshold_kb,
                                         max_segment_size=segment_kb if segment_kb > 0 else None)
    config = qe.EdgeConfig(sparse_vectors={sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                           optimizers=optimizers)
    shard = qe.EdgeShard.load(str(path), config)
    fresh: Path | None = None
    try:
        per_segment = segment_points(path, segment_kb)
        info = shard.info()
        # The engine counts sparse vectors as indexed always, dense ones once in an HNSW segment.
        unindexed = 2 * info.points_count - info.indexed_vectors_count
        if per_segment and unindexed > per_segment:
            fresh = resegment(qe, shard, path, per_segment)
        else:
            shard.optimize()
            shard.flush()
    finally:
        shard.close()
    if fresh is not None:  # the copy is the parent's to swap in: the fresh shard takes its place
        shutil.rmtree(path)
        os.rename(fresh, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
