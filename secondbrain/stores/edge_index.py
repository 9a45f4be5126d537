"""Child process that builds the HNSW index of a copy of an edge shard (run by path, not imported).

``EdgeShard.optimize()`` holds the GIL for its whole run (tens of seconds at scale), so
:class:`~secondbrain.stores.vectors_edge.EdgeVectorStore` runs it here, on a copy of the shard
directory, while it keeps serving from the original.  This file imports nothing from secondbrain
(it is started by path, whatever package the parent imported).

    python edge_index.py SHARD_DIR PARENT_PID INDEXING_THRESHOLD_KB SPARSE_VECTOR_NAME

Exit status 0 once the copy is optimized, flushed and closed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


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


def main(argv: list[str]) -> int:
    path, parent, threshold_kb, sparse_name = argv[0], int(argv[1]), int(argv[2]), argv[3]
    _die_with_parent(parent)
    with contextlib.suppress(OSError):
        os.nice(10)  # searches and ingestion in the parent come first on a small machine
    import qdrant_edge as qe

    # Dense vectors left out are inherited from the shard, quantization included; the engine
    # insists on some vector in a config, hence the sparse one (as the store creates it).
    config = qe.EdgeConfig(sparse_vectors={sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                           optimizers=qe.EdgeOptimizersConfig(indexing_threshold=threshold_kb))
    shard = qe.EdgeShard.load(path, config)
    try:
        shard.optimize()
        shard.flush()
    finally:
        shard.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
