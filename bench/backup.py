"""Backup and restore of an instance of 10,000 passages: time, archive size, and the data directory's size.

The instance is built straight into the stores an embedded ``secondbrain up`` uses (the embedded
PostgreSQL with every migration, the object files, the in-process vector engine), without the models:
``--documents`` Markdown notes of ``--passages-per-doc`` passages each, every passage with a 384-d dense vector
(hash-seeded, as the real model's are unit vectors) and a BM25 sparse vector of its words, so the backup reads
what a real instance of that size holds.  Then it times ``secondbrain backup`` (plain, and sealed with a
passphrase) and ``secondbrain restore`` into a new data directory, and checks the restored instance holds every
passage.

    python -m bench.backup                     # 1,000 notes x 10 passages
    python -m bench.backup --documents 200 --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import charts

WORDS = ("harbour", "lantern", "violin", "orchard", "glacier", "saddle", "compass", "meadow", "quarry", "falcon",
         "ember", "velvet", "canyon", "pepper", "marble", "thistle", "beacon", "walnut", "ferry", "cobalt", "spruce",
         "tundra", "jasmine", "anvil", "kettle", "sparrow", "granite", "willow", "mosaic", "lagoon", "parsnip",
         "hammock", "tulip", "bramble", "cedar", "ripple", "oyster", "plank", "saffron", "trolley", "umber",
         "vortex")
DIM = 384


def _vector(seed: str) -> list[float]:
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    v = [rng.gauss(0, 1) for _ in range(DIM)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def build(data_dir: Path, documents: int, per_doc: int) -> int:
    """An instance of ``documents`` notes x ``per_doc`` passages in ``data_dir``; the passages written."""
    import psycopg
    from psycopg.types.json import Jsonb

    from secondbrain import ids, keys
    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.ports import SparseVector, VectorPoint
    from secondbrain.sparse import Bm25Encoder
    from secondbrain.stores.objects_fs import FileObjectStore
    from secondbrain.stores.postgres.base import PostgresDatabase
    from secondbrain.stores.vectors_edge import EdgeVectorStore

    user = "local"
    sparse = Bm25Encoder()
    objects = FileObjectStore(data_dir / "objects")
    vectors = EdgeVectorStore(data_dir / "vectors", index_after=0)
    vectors.ensure_collection(user, DIM)
    (data_dir / "api-key").write_text("sb_bench\n")
    written = 0
    with EmbeddedPostgres(data_dir / "postgres") as pg:
        db = PostgresDatabase(pg.dsn, min_size=0, max_size=2)
        db.migrate()
        db.close()
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("INSERT INTO users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user,))
            conn.execute("INSERT INTO vector_indexes (user_id, version, model, model_id, dense_size, status) "
                         "VALUES (%s, 1, 'minilm-int8', 'all-MiniLM-L6-v2-int8', 384, 'active')", (user,))
            now = datetime.now(UTC)
            for d in range(documents):
                rng = random.Random(d)
                texts = [" ".join(rng.choices(WORDS, k=220)) for _ in range(per_doc)]
                body = (f"# Note {d}\n\n" + "\n\n".join(texts)).encode()
                sha = hashlib.sha256(body).hexdigest()
                artifact = ids.artifact_id(user, sha)
                key = keys.artifact_key(user, artifact)
                objects.put(key, body, content_type="text/markdown")
                source_uri = f"note:{uuid.UUID(int=d)}"
                source = ids.source_id(user, source_uri)
                job = ids.job_id(user, f"bench-{d}")
                document = ids.document_id(artifact)
                when = now - timedelta(days=d)
                with conn.transaction():
                    conn.execute("INSERT INTO artifacts (artifact_id, user_id, source_id, source_uri, object_key, "
                                 "content_type, size_bytes, sha256, title, captured_at, submitted_at, producer, "
                                 "attributes) VALUES (%s,%s,%s,%s,%s,'text/markdown',%s,%s,%s,%s,%s,'gateway',%s)",
                                 (artifact, user, source, source_uri, key, len(body), sha, f"Note {d}", when, when,
                                  Jsonb({"kind": "note"})))
                    conn.execute("INSERT INTO jobs (job_id, user_id, artifact_id, status, source_id, finished_at) "
                                 "VALUES (%s,%s,%s,'succeeded',%s,now())", (job, user, artifact, source))
                    conn.execute("INSERT INTO documents (document_id, user_id, artifact_id, source_id, title, "
                                 "modality, content_type, captured_at, captured_at_source, ingested_at, char_count, "
                                 "chunk_count) "
                                 "VALUES (%s,%s,%s,%s,%s,'note','text/markdown',%s,'given',%s,%s,%s)",
                                 (document, user, artifact, source, f"Note {d}", when, when, len(body), per_doc))
                points = []
                for i, text in enumerate(texts):
                    sv = sparse.encode_documents([text])[0]
                    points.append(VectorPoint(id=ids.chunk_id(document, i), dense=_vector(f"{d}/{i}"),
                                              sparse=SparseVector(list(sv.indices), list(sv.values)),
                                              payload={"document_id": document, "source_id": source, "job_id": job,
                                                       "chunk_index": i, "text": text, "title": f"Note {d}",
                                                       "captured_at": when.isoformat(), "modality": "note"}))
                vectors.upsert(user, points)
                written += len(points)
    vectors.close()
    return written


def du(path: Path) -> tuple[int, int]:
    """(bytes on disk, apparent bytes) of everything under ``path``."""
    on_disk = apparent = 0
    for entry in path.rglob("*"):
        if entry.is_file() and not entry.is_symlink():
            st = entry.stat()
            on_disk += st.st_blocks * 512
            apparent += st.st_size
    return on_disk, apparent


def cli(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app.cli", *args], env={**os.environ, **env}, capture_output=True,
                          text=True, check=False, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--documents", type=int, default=1000)
    p.add_argument("--passages-per-doc", type=int, default=10)
    p.add_argument("--json", action="store_true")
    charts.docs_option(p)
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sb-bench-backup-"))
    root.chmod(0o755)
    try:
        data = root / "data"
        data.mkdir()
        t0 = time.perf_counter()
        passages = build(data, a.documents, a.passages_per_doc)
        built = time.perf_counter() - t0
        size = du(data)
        env = {"SB_DATA_DIR": str(data)}
        backup_s = cli(["backup", str(root / "plain.sbk")], env)
        sealed_s = cli(["backup", str(root / "sealed.sbk"), "--passphrase"],
                       {**env, "SB_BACKUP_PASSPHRASE": "a bench passphrase of some length"})
        restore_s = cli(["restore", str(root / "plain.sbk"), "--data-dir", str(root / "restored")], {})
        check = json.loads(subprocess.run([sys.executable, "-m", "app.cli", "restore", str(root / "plain.sbk"),
                                           "--check", "--json"], capture_output=True, text=True, check=True,
                                          cwd=Path(__file__).resolve().parents[1]).stdout)
        assert check["users"]["local"]["passages"] == passages, check
        restored = du(root / "restored")
        out: dict[str, Any] = {
            "passages": passages, "documents": a.documents, "build_s": round(built, 1),
            "data_dir_bytes_on_disk": size[0], "data_dir_bytes_apparent": size[1],
            "archive_bytes": (root / "plain.sbk").stat().st_size,
            "sealed_archive_bytes": (root / "sealed.sbk").stat().st_size,
            "backup_s": round(backup_s, 1), "sealed_backup_s": round(sealed_s, 1), "restore_s": round(restore_s, 1),
            "restored_dir_bytes_on_disk": restored[0], "load": os.getloadavg(), "cpus": os.cpu_count()}
        mb = 1e6
        if a.publish:
            charts.publish("backup", "Backup and restore", [charts.table(["", "time", "size"], [
                ["the data directory", "", f"{size[0] / mb:.1f} MB on disk ({size[1] / mb:.1f} MB apparent)"],
                ["`secondbrain backup`", f"{backup_s:.1f} s", f"archive {out['archive_bytes'] / mb:.1f} MB "
                 f"({out['archive_bytes'] / size[0]:.2f} x the data directory on disk)"],
                ["`secondbrain backup --passphrase`", f"{sealed_s:.1f} s",
                 f"{out['sealed_archive_bytes'] / mb:.1f} MB"],
                ["`secondbrain restore`", f"{restore_s:.1f} s", f"data directory {restored[0] / mb:.1f} MB on disk"]],
                title=f"An instance of {passages:,} passages in {a.documents:,} notes")])
        if a.json:
            print(json.dumps(out))
            return
        print(f"instance: {passages} passages in {a.documents} notes (built in {built:.0f} s)")
        print(f"data directory: {size[0] / mb:.1f} MB on disk ({size[1] / mb:.1f} MB apparent: the vector engine's "
              "files are sparse)")
        print(f"backup:  {backup_s:.1f} s -> archive {out['archive_bytes'] / mb:.1f} MB "
              f"({out['archive_bytes'] / size[0]:.2f} x the data directory on disk)")
        print(f"sealed:  {sealed_s:.1f} s -> archive {out['sealed_archive_bytes'] / mb:.1f} MB")
        print(f"restore: {restore_s:.1f} s -> data directory {restored[0] / mb:.1f} MB on disk")
        print(f"load average {out['load'][0]:.1f} on {out['cpus']} CPUs")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
