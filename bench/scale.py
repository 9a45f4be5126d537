"""Ingestion throughput with several worker processes per stage (distributed mode).

    .venv/bin/python bench/scale.py [--workers 1,2,3] [--users 12] [--docs 6] [--partitions 6]

Starts the pieces of a distributed deployment on this machine: a Tansu broker (Kafka wire
protocol), an embedded PostgreSQL (or ``SB_POSTGRES_DSN``), the Qdrant REST server over the
in-process engine (``devtools.qdrant_edge_server``) and a shared object-store
directory.  For each worker count N it creates fresh topics with ``--partitions`` partitions,
starts one gateway and N ``secondbrain worker`` processes for each of extract, chunk and embed,
uploads the same kind of corpus (``--users`` users, each with ``--docs`` Markdown documents of
about 1,000 words, unique text per run) and times it from the first upload until every job is
indexed.  Users are chosen so their keys spread evenly over the partitions (each user's events
stay in order on one partition, so partitions are the unit of parallelism).

Reported per N: wall time, chunks/s, MB/min, the speed-up over N = 1 and how busy the
machine's CPUs were meanwhile (all processes, from /proc/stat); next to it the
embedder alone (MiniLM on the same chunk texts in this process), the ceiling for one process.
The machine's CPU count bounds what more processes can give: on 2 CPUs, embedding already
keeps both busy with one process, so more workers mostly add contention.  Numbers belong to
the machine they ran on; the script prints it and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.query import Postgres, make_pool, start_postgres  # noqa: E402
from devtools.processes import Service, run_cli  # noqa: E402
from secondbrain.infra.ports import free_port  # noqa: E402
from secondbrain.infra.tansu import TansuBroker  # noqa: E402

STAGES = ("extract", "chunk", "embed")


def balanced_users(n: int, partitions: int, run: str) -> list[str]:
    """``n`` user ids whose keys fall evenly on ``partitions`` partitions (Kafka's default partitioner)."""
    from aiokafka.partitioner import DefaultPartitioner

    part = DefaultPartitioner()
    per: dict[int, list[str]] = {p: [] for p in range(partitions)}
    i = 0
    while sum(len(v) for v in per.values()) < n:
        name = f"scale-{run}-{i}"
        p = part(name.encode(), list(range(partitions)), list(range(partitions)))
        if len(per[p]) < -(-n // partitions):
            per[p].append(name)
        i += 1
    return [u for p in range(partitions) for u in per[p]][:n]


def documents(users: list[str], docs: int, seed: int) -> dict[str, list[tuple[str, bytes]]]:
    """Per user, ``docs`` Markdown files of about 1,000 words (four passages of the query bench's corpus)."""
    pool = make_pool(len(users) * docs * 4, seed)
    out: dict[str, list[tuple[str, bytes]]] = {}
    k = 0
    for u in users:
        files = []
        for d in range(docs):
            parts = pool[k:k + 4]
            k += 4
            body = f"# Notes {u} {d}\n\n" + "\n\n".join(f"## Part {j + 1}\n\n{p.text}" for j, p in enumerate(parts))
            files.append((f"notes-{d}.md", body.encode()))
        out[u] = files
    return out


@dataclass
class Run:
    """One worker count's result."""

    workers: int
    wall: float
    chunks: int
    mb: float
    start_s: float
    cpu_busy: float  # share of the machine's CPU time busy during the run (every process, this one's too)


class Infra:
    """Broker, Postgres, Qdrant REST server and the shared data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True)
        self.pg: Postgres = start_postgres(root)
        self.broker = TansuBroker().start()
        self.qport = free_port()
        self.qdrant = subprocess.Popen(
            [sys.executable, "-m", "devtools.qdrant_edge_server", "--host", "127.0.0.1", "--port",
             str(self.qport), "--data", str(root / "qdrant")],
            # From the root: devtools is not installed.
            stdout=(self.logs / "qdrant.log").open("wb"), stderr=subprocess.STDOUT, cwd=REPO)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{self.qport}/", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.qdrant.poll() is not None:
                raise SystemExit(f"the Qdrant REST server did not start; see {self.logs / 'qdrant.log'}")
            time.sleep(0.2)

    def env(self, prefix: str, partitions: int) -> dict[str, str]:
        """Settings every process of one run shares."""
        return {"SB_MODE": "distributed", "SB_KAFKA_BOOTSTRAP": self.broker.bootstrap,
                "SB_POSTGRES_DSN": self.pg.dsn, "SB_OBJECT_STORE": "files", "SB_DATA_DIR": str(self.root / "data"),
                "SB_VECTOR_STORE": "qdrant", "SB_QDRANT_URL": f"http://127.0.0.1:{self.qport}",
                "SB_TOPIC_PREFIX": prefix, "SB_PARTITIONS": str(partitions),
                "SB_RATE_LIMIT_PER_MINUTE": "0", "SB_READ_RATE_LIMIT_PER_MINUTE": "0", "SB_LOG_LEVEL": "WARNING",
                "SB_KAFKA_SESSION_TIMEOUT_MS": "6000", "SB_KAFKA_HEARTBEAT_INTERVAL_MS": "1500"}

    def close(self) -> None:
        """Stop everything this benchmark started."""
        self.qdrant.terminate()
        self.qdrant.wait(10)
        self.broker.stop()
        if self.pg.server is not None:
            self.pg.server.stop()


def cpu_times() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as fh:
        fields = [float(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
    return sum(fields) - idle, sum(fields)


def cli(args: list[str], env: dict[str, str]) -> str:
    """Run a one-off ``secondbrain`` command (migrate, topics, users, keys); return what it printed."""
    done = run_cli(args, env, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"secondbrain {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def run_once(infra: Infra, workers: int, args: argparse.Namespace, admin_key: str) -> Run:
    """Start a gateway and ``workers`` processes per stage on fresh topics; ingest; time it."""
    run = uuid.uuid4().hex[:6]
    env = infra.env(f"scale{workers}-{run}.", args.partitions)
    cli(["topics"], env)
    users = balanced_users(args.users, args.partitions, run)
    corpus = documents(users, args.docs, args.seed + workers)
    log_dir = infra.logs / f"n{workers}"
    gateway = Service("gateway", ["gateway"], env, log_dir)
    procs = [gateway] + [Service(f"{stage}-{i}", ["worker", stage], env, log_dir)
                         for stage in STAGES for i in range(workers)]
    t0 = time.perf_counter()
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_ready(300)
        start_s = time.perf_counter() - t0
        print(f"  N={workers}: {len(procs)} processes ready in {start_s:.0f}s; uploading", file=sys.stderr)
        time.sleep(args.settle)  # consumer groups settle their partition assignment
        jobs: list[tuple[str, str]] = []
        t1 = time.perf_counter()
        cpu0 = cpu_times()
        with httpx.Client(base_url=gateway.url, timeout=60) as c:
            auth = {}
            for u in users:
                r = c.post("/v1/admin/users", json={"user_id": u}, headers={"Authorization": f"Bearer {admin_key}"})
                r.raise_for_status()
                auth[u] = {"Authorization": f"Bearer {r.json()['key']['api_key']}"}
            for u, files in corpus.items():
                for name, body in files:
                    r = c.post("/v1/artifacts", files={"file": (name, body, "text/markdown")}, headers=auth[u])
                    r.raise_for_status()
                    jobs.append((u, r.json()["job_id"]))
        done: dict[str, Any] = {}
        with httpx.Client(base_url=gateway.url, timeout=60) as c:
            while len(done) < len(jobs):
                for u, j in jobs:
                    if j in done:
                        continue
                    view = c.get(f"/v1/jobs/{j}", headers=auth[u]).json()
                    if view.get("status") in ("failed", "dead_lettered"):
                        raise SystemExit(f"job {j} failed: {view.get('error')}")
                    if view.get("status") == "succeeded":
                        done[j] = view
                if time.perf_counter() - t1 > 1800:
                    raise SystemExit("jobs not done after 30 minutes")
                print(f"\r  N={workers}: {len(done)}/{len(jobs)} jobs indexed", end="", file=sys.stderr, flush=True)
                time.sleep(0.3)
        wall = time.perf_counter() - t1
        cpu1 = cpu_times()
        busy = (cpu1[0] - cpu0[0]) / max(1.0, cpu1[1] - cpu0[1])
        print(file=sys.stderr)
        chunks = 0
        with httpx.Client(base_url=gateway.url, timeout=60) as c:
            for u in users:
                sources = c.get("/v1/sources", params={"limit": 500}, headers=auth[u]).json()["sources"]
                chunks += sum(int(s.get("chunk_count") or 0) for s in sources)
        mb = sum(len(b) for files in corpus.values() for _, b in files) / 1e6
        return Run(workers, wall, chunks, mb, start_s, busy)
    finally:
        for p in procs:
            p.stop()


def embedder_alone(args: argparse.Namespace) -> tuple[float, int]:
    """Chunks/s of MiniLM alone on chunk-sized texts like the corpus's (one process, this machine)."""
    from secondbrain.embedding import load_embedder
    from services.chunker.logic import ChunkingConfig, SegmentIn, chunk_segments
    from services.extractors.text import extract_text

    texts: list[str] = []
    for files in documents(balanced_users(4, args.partitions, "alone"), args.docs, args.seed).values():
        for name, body in files:
            doc = extract_text(body, content_type="text/markdown", filename=name, is_note=False)
            segs = [SegmentIn(s.index, s.kind, s.text, s.char_start, s.char_end, s.heading_path, s.page, s.t_start,
                              s.t_end, s.attributes) for s in doc.segments]
            texts.extend(c.text for c in chunk_segments(segs, doc.full_text, ChunkingConfig()))
    embedder = load_embedder()
    embedder.embed_documents(texts[:4])  # warm-up
    t0 = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / (time.perf_counter() - t0), len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,3", help="worker processes per stage, comma-separated")
    ap.add_argument("--users", type=int, default=12)
    ap.add_argument("--docs", type=int, default=12, help="documents per user")
    ap.add_argument("--partitions", type=int, default=6, help="partitions per topic (a multiple of every N)")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds to wait after the workers are ready")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default=None, help="results directory (default bench/results/)")
    charts.docs_option(ap)
    args = ap.parse_args()
    counts = [int(x) for x in args.workers.split(",") if x.strip()]
    out = charts.out_dir(args.out)
    started = time.perf_counter()
    at_start = charts.machine()
    root = Path(tempfile.mkdtemp(prefix="sb-bench-scale-"))
    root.chmod(0o755)  # the embedded Postgres may run as another system user
    runs: list[Run] = []
    infra = None
    try:
        infra = Infra(root)
        setup = infra.env("scale-setup.", args.partitions)
        cli(["migrate"], setup)
        # Every request needs a key, on loopback too: an admin key makes each run's users and their keys.
        cli(["users", "add", "scale-admin"], setup)
        admin_key = json.loads(cli(["keys", "create", "--user", "scale-admin", "--scope", "admin", "--name", "bench",
                                    "--json"], setup))["api_key"]
        for n in counts:
            runs.append(run_once(infra, n, args, admin_key))
            r = runs[-1]
            print(f"  N={n}: {r.chunks} chunks in {r.wall:.1f}s = {r.chunks / r.wall:.1f} chunks/s", file=sys.stderr)
    finally:
        if infra is not None:
            infra.close()
        shutil.rmtree(root, ignore_errors=True)
    alone, n_texts = embedder_alone(args)
    base = runs[0].chunks / runs[0].wall if runs else 1.0
    print(f"ingestion with N worker processes per stage (extract, chunk, embed), {args.partitions} partitions, "
          f"{args.users} users x {args.docs} Markdown documents (~1,000 words each)")
    print(f"{'N':>3}{'processes':>11}{'docs':>6}{'MB':>7}{'chunks':>8}{'wall s':>8}{'chunks/s':>10}{'MB/min':>8}"
          f"{'speed-up':>10}{'CPU busy':>10}{'start s':>9}")
    for r in runs:
        rate = r.chunks / r.wall
        print(f"{r.workers:>3}{1 + 3 * r.workers:>11}{args.users * args.docs:>6}{r.mb:>7.2f}{r.chunks:>8}"
              f"{r.wall:>8.1f}{rate:>10.1f}{r.mb / r.wall * 60:>8.2f}{rate / base:>9.2f}x{r.cpu_busy:>9.0%}"
              f"{r.start_s:>9.0f}")
    print(f"embedder alone (MiniLM int8, one process, {n_texts} chunk texts of the same corpus): {alone:.1f} chunks/s")
    print(f"CPUs: {os.cpu_count()}; every process shares them (embedding uses all cores from one process)")
    print(f"machine at start: {at_start}")
    print(f"machine at end:   {charts.machine()}")
    print(f"total run time: {time.perf_counter() - started:.0f}s")
    charts.save_json(out / "scale.json", {
        "partitions": args.partitions, "users": args.users, "docs_per_user": args.docs,
        "runs": [{"workers": r.workers, "chunks": r.chunks, "wall_s": r.wall, "chunks_per_s": r.chunks / r.wall,
                  "mb": r.mb, "start_s": r.start_s, "cpu_busy": r.cpu_busy} for r in runs],
        "embedder_alone_chunks_per_s": alone})
    charts.lines(out / "scale.png", "Ingestion throughput vs worker processes per stage",
                 [r.workers for r in runs],
                 {"pipeline (chunks/s)": [r.chunks / r.wall for r in runs],
                  "embedder alone, 1 process (chunks/s)": [alone for _ in runs]},
                 xlabel="worker processes per stage (extract, chunk, embed)", ylabel="chunks per second")
    print(f"wrote {out / 'scale.json'} and {out / 'scale.png'}")
    if args.publish:
        charts.publish("scale", "Scale: worker processes per stage", [charts.table(
            ["worker processes per stage", "processes", "chunks", "wall", "chunks/s", "speed-up", "CPU busy"],
            [[r.workers, 1 + 3 * r.workers, r.chunks, f"{r.wall:.1f} s", f"{r.chunks / r.wall:.1f}",
              f"{r.chunks / r.wall / base:.2f}x", f"{r.cpu_busy:.0%}"] for r in runs],
            title=f"{args.users} users x {args.docs} Markdown documents of about 1,000 words, {args.partitions} "
                  "partitions")],
            notes=[f"The embedder alone: {alone:.1f} chunks/s on the same texts in one process.",
                   f"Machine at the start: {at_start}."], charts=[out / "scale.png"])


if __name__ == "__main__":
    main()
