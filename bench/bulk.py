"""Bulk import: a folder of Markdown notes through `secondbrain ingest folder/`, next to the embedder alone.

    .venv/bin/python bench/bulk.py [--notes 1000]

Writes ``--notes`` distinct one-page Markdown notes to a folder, starts embedded secondbrain in a
fresh data directory and runs the CLI on the folder the way a person would (``secondbrain ingest
folder/``, which sends every file and waits until every job is searchable).  Then the passages the
embedder stage embedded are read back (``GET /v1/export``), the server is stopped, and the same
texts are embedded again in this process with the same model and batch size: the embedder alone.

Prints chunks per second both ways and their ratio (the pipeline's share of the embedder's speed), and
where the CPU went while the folder went in (Linux: read from /proc): the ``up`` process (every stage,
the HTTP server and the model), its Kafka-protocol broker, the embedded PostgreSQL and the CLI, next
to the CPU the embedder alone used for the same passages.  On a machine with few cores the pipeline
is bound by that sum, not by any one stage.  Numbers belong to the machine they ran on; the script
prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import AWAY_FROM_HOME, free_port, key_headers, start, stop  # noqa: E402
from bench.modalities import Batch, embedder_alone, embedding_inputs  # noqa: E402

TOPICS = ["budget", "garden", "boiler", "holiday", "reading", "training", "recipes", "meeting", "car", "taxes"]
WORDS = ["the", "plan", "was", "reviewed", "again", "and", "the", "next", "steps", "were", "agreed", "with",
         "everyone", "who", "joined", "the", "call", "while", "the", "open", "questions", "went", "to", "the",
         "list", "for", "the", "following", "week"]


def note(i: int, rng: random.Random) -> str:
    """About one page (~350 words) in a few sections; every note differs (no duplicates)."""
    topic = TOPICS[i % len(TOPICS)]
    parts = [f"# {topic.title()} note {i}", ""]
    for s in range(3):
        parts += [f"## Part {s + 1}", ""]
        for _p in range(2):
            parts.append(" ".join(rng.choice(WORDS) for _ in range(55)) + f" (note {i}, {topic}).")
            parts.append("")
    return "\n".join(parts)


def _proc_table() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent pid, CPU seconds incl. reaped children, command line) for every readable process."""
    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        table[int(entry.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]) / tick, cmd)
    return table


def cpu_by_part(up_pid: int, data: Path, cli_pid: int | None) -> dict[str, float]:
    """CPU seconds so far of the pipeline's processes, by part: `up` itself, its broker, the embedded
    PostgreSQL (a daemon of its own, found by its data directory) and the CLI."""
    table = _proc_table()
    parts: dict[str, float] = {}

    def tree(root: int) -> list[int]:
        out, todo = [], [root]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += [p for p, (parent, _, _) in table.items() if parent == pid]
        return out

    roots = {"up": up_pid}
    for pid, (_, _, cmd) in table.items():
        if "postgres" in cmd and f"-D {data}" in cmd:  # the postmaster; its workers are its children
            roots["postgres"] = pid
    if cli_pid:
        roots["cli"] = cli_pid
    for part, root in roots.items():
        for pid in tree(root) if root in table else []:
            name = "broker" if "tansu" in table[pid][2] else part
            parts[name] = parts.get(name, 0.0) + table[pid][1]
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--alone-sample", type=int, default=0, metavar="N",
                    help="time the embedder alone on N passages drawn at random from the import (its rate per "
                         "passage; all notes are alike), not on all of them: a 10,000-note run then takes "
                         "minutes less, not half an hour more (default: all)")
    charts.docs_option(ap)
    args = ap.parse_args()
    at_start = charts.machine()
    root = Path(tempfile.mkdtemp(prefix="sb-bulk-"))
    root.chmod(0o755)
    rng = random.Random(args.seed)
    folder = root / "notes"
    folder.mkdir()
    for i in range(args.notes):
        (folder / f"note-{i:05d}.md").write_text(note(i, rng))
    port = free_port()
    data = root / "data"
    try:
        print("starting secondbrain up...", file=sys.stderr)
        proc, _ = start(data, port)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")} | AWAY_FROM_HOME
            cli = [sys.executable, "-m", "app.cli", "ingest", str(folder), "--url", f"http://127.0.0.1:{port}",
                   "--data-dir", str(data), "--timeout", "3600"]
            print(f"secondbrain ingest {folder.name}/ ({args.notes} notes)...", file=sys.stderr)
            before = cpu_by_part(proc.pid, data, None)
            t0 = time.perf_counter()
            with subprocess.Popen(cli, cwd=REPO, env=env, stdout=subprocess.DEVNULL) as ingest:
                during = before
                while ingest.poll() is None:  # the CLI's own CPU is read while it still runs
                    during = cpu_by_part(proc.pid, data, ingest.pid)
                    time.sleep(0.5)
            wall = time.perf_counter() - t0
            used = {k: v - before.get(k, 0.0) for k, v in (during | cpu_by_part(proc.pid, data, None)).items()}
            if "cli" in during:
                used["cli"] = during["cli"]
            if ingest.returncode != 0:
                raise SystemExit(f"secondbrain ingest exited with {ingest.returncode}")
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600, headers=key_headers(data)) as c:
                batch = Batch("markdown", [(p.name, b"", "text/markdown") for p in sorted(folder.iterdir())])
                texts = embedding_inputs(c, [batch])
        finally:
            stop(proc)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    chunks = len(texts["markdown"])
    timed = texts["markdown"]
    if 0 < args.alone_sample < chunks:
        timed = random.Random(args.seed).sample(timed, args.alone_sample)
    print(f"embedding {'a sample of ' if len(timed) < chunks else ''}the same passages with the embedder alone "
          f"({len(timed)})...", file=sys.stderr)
    cpu0 = time.process_time()
    alone_s = embedder_alone({"markdown": timed})["markdown"]
    # its CPU scaled to the whole import (the model's few seconds of loading are scaled with it)
    alone_cpu = (time.process_time() - cpu0) * chunks / len(timed)
    pipeline_rate, alone_rate = chunks / wall, len(timed) / alone_s
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          "one embedded process, every stage in it")
    print(f"{'notes':>6}{'chunks':>8}{'wall s':>9}{'pipeline ch/s':>15}{'embedder alone ch/s':>21}{'ratio':>8}")
    print(f"{args.notes:>6}{chunks:>8}{wall:>9.1f}{pipeline_rate:>15.1f}{alone_rate:>21.1f}"
          f"{100 * pipeline_rate / alone_rate:>7.0f}%")
    shown = ", ".join(f"{k} {used.get(k, 0.0):.0f}" for k in ("up", "broker", "postgres", "cli"))
    if len(timed) < chunks:
        print(f"the embedder alone was timed on {len(timed)} of the {chunks} passages, drawn at random; its CPU "
              "below is scaled to all of them, its loading with it")
    print(f"CPU s while importing: {sum(used.values()):.0f} ({shown}); the embedder alone: {alone_cpu:.0f} "
          f"(its loading included), so about {sum(used.values()) - alone_cpu:.0f} outside the model")
    print(f"machine at start: {at_start}")
    print(f"machine at end:   {charts.machine()}")
    if args.publish:
        ratio = f"{100 * pipeline_rate / alone_rate:.0f} %"
        charts.publish("bulk", "Bulk import: the pipeline next to the embedder alone", [charts.table(
            ["notes", "passages", "wall", "pipeline", "embedder alone", "pipeline / embedder alone"],
            [[args.notes, chunks, f"{wall:.0f} s", f"{pipeline_rate:.1f} chunks/s", f"{alone_rate:.1f} chunks/s",
              ratio]])],
            notes=[f"CPU seconds while importing: {sum(used.values()):.0f} ({shown}); the embedder alone "
                   f"{alone_cpu:.0f}: about {sum(used.values()) - alone_cpu:.0f} outside the model.",
                   f"Machine at the start: {at_start}."],
            headline={f"bulk import of {args.notes:,} one-page notes, share of the embedder alone's speed": ratio})


if __name__ == "__main__":
    main()
