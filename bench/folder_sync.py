"""Folder sync: the first sync of a vault of Markdown notes, and how soon a saved edit is searchable.

    .venv/bin/python bench/folder_sync.py [--notes 500] [--edits 5]

Writes ``--notes`` one-page Markdown notes (front matter, headings, [[wikilinks]]) to a folder, starts
embedded secondbrain with a fresh data directory, runs ``secondbrain watch`` on the folder the way a
person would, and times (1) until every note is captured and searchable: files per second of the
first sync; (2) for each of ``--edits`` saves of an existing note, the seconds from the save until
search finds the new words.  Numbers belong to the machine they ran on; the script prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from devtools.processes import Service, cli_env  # noqa: E402

TOPICS = ["budget", "garden", "boiler", "holiday", "reading", "training", "recipes", "meeting", "car", "taxes"]


def note(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return (f"---\ntitle: {topic.title()} log {i}\ntags: [{topic}, log]\ndate: 2026-0{1 + i % 9}-1{i % 10}\n---\n"
            f"# {topic.title()} log {i}\n\nEntry {i} about the {topic}: see [[{TOPICS[(i + 1) % 10]} log {i + 1}]].\n\n"
            + " ".join(f"Observation {j} on the {topic} was noted as item {i}-{j}." for j in range(40)) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--edits", type=int, default=5)
    charts.docs_option(ap)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sb-bench-sync-"))
    root.chmod(0o755)
    vault = root / "vault"
    vault.mkdir()
    for i in range(args.notes):
        (vault / f"note-{i:04d}.md").write_text(note(i))
    svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {}, root / "logs")
    svc.start().wait_ready(timeout=180)
    watch = None
    try:
        c = svc.client()
        t0 = time.monotonic()
        log = (root / "watch.log").open("wb")
        watch = subprocess.Popen([sys.executable, "-m", "app.cli", "watch", str(vault), "--state",
                                  str(root / "state.json")], env=cli_env({"SB_URL": svc.url, "SB_API_KEY": svc.key}),
                                 cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        sent_at = None
        while True:
            if sent_at is None and "watching" in (root / "watch.log").read_text():
                sent_at = time.monotonic() - t0
            rows = c.get("/v1/sources", params={"limit": 500, "status": "succeeded"}).json()["sources"]
            total = len(rows) if args.notes <= 500 else None
            if total is None:
                raise SystemExit("--notes above 500 needs paging the source list")
            if total >= args.notes:
                break
            time.sleep(0.5)
        took = time.monotonic() - t0
        print(f"first sync of {args.notes} notes: all sent in {sent_at:.1f}s, all searchable in {took:.1f}s "
              f"= {args.notes / took:.1f} files/s")
        lags = []
        for n in range(args.edits):
            word = f"Zephyrine{n}x{int(time.time())}"
            target = vault / f"note-{n * 7:04d}.md"
            target.write_text(target.read_text() + f"\nAdded later: the code word is {word}.\n")
            saved = time.monotonic()
            while True:
                hits = c.get("/v1/search", params={"q": word, "k": 3, "mode": "sparse"}).json()["hits"]
                if any(word in h["text"] for h in hits):
                    break
                time.sleep(0.1)
            lags.append(time.monotonic() - saved)
            time.sleep(1)
        print(f"save to searchable over {args.edits} edits: median {statistics.median(lags):.1f}s, "
              f"max {max(lags):.1f}s ({', '.join(f'{x:.1f}' for x in lags)})")
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
              f"Python {platform.python_version()}")
        if args.publish:
            charts.publish("folder_sync", "Folder sync", [charts.table(["measure", "value"], [
                [f"first sync of {args.notes} notes: all sent by `watch`", f"{sent_at:.1f} s"],
                [f"first sync of {args.notes} notes: all searchable",
                 f"{took:.1f} s = {args.notes / took:.1f} files/s"],
                [f"a saved edit until search finds it, median ({args.edits} edits)",
                 f"{statistics.median(lags):.1f} s"],
                ["the same, max", f"{max(lags):.1f} s"]])])
    finally:
        if watch is not None:
            watch.send_signal(signal.SIGINT)
            watch.wait(20)
        svc.stop()
        httpx.Client().close()


if __name__ == "__main__":
    main()
