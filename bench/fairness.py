"""Fair under a flood: how soon another person's note is searchable while one person's big import waits.

    .venv/bin/python bench/fairness.py [--items 20000] [--notes 30] [--max-pending 1000] [--via upload|cli]

Starts ``secondbrain up`` in a fresh data directory and makes two people.  Alice imports a Google Keep export of
``--items`` notes: ``--via upload`` (default) as the web page does, one ``POST /v1/imports`` of the zip, which
submits until her backlog is full (``SB_MAX_PENDING_JOBS``, ``--max-pending``) and pauses, then again from where
it paused each time the answer's Retry-After has passed; ``--via cli`` with ``secondbrain import`` (batches,
the server taking what fits).  Once her backlog has filled, Bob sends ``--notes`` one-line notes, one at a time,
each timed from ``POST /v1/notes`` until ``GET /v1/search`` finds it.  Prints Bob's latencies (median, p95,
max), Alice's backlog meanwhile and how far her import got; the target is p95 under 2 s.  Alice's import is
stopped afterwards (embedding 20,000 notes takes most of an hour on a small machine; what matters is Bob's wait
while it runs).  The numbers belong to the machine they ran on, and its load (printed).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import free_port, key_headers, pct, start, stop  # noqa: E402
from devtools import gen_exports as gen  # noqa: E402


def people(base: str, admin: dict[str, str]) -> dict[str, str]:
    keys = {}
    for user in ("alice", "bob"):
        r = httpx.post(f"{base}/v1/admin/users", json={"user_id": user}, headers=admin, timeout=60)
        r.raise_for_status()
        keys[user] = r.json()["key"]["api_key"]
    return keys


def searchable_after(client: httpx.Client, timeout: float = 120.0) -> float:
    """Seconds from sending one note until a search finds it."""
    word = f"quokka{uuid.uuid4().hex[:10]}"
    t0 = time.perf_counter()
    r = client.post("/v1/notes", json={"text": f"Bob's note about the {word} at the harbour."})
    r.raise_for_status()
    while time.perf_counter() - t0 < timeout:
        hits = client.get("/v1/search", params={"q": word, "mode": "sparse", "k": 3}).json().get("hits", [])
        if any(word in h["text"] for h in hits):
            return time.perf_counter() - t0
        time.sleep(0.02)
    return float("inf")


def upload_until_done(base: str, key: str, path: Path, stop_at: threading.Event) -> list[str]:
    """Alice's import as the web page runs it: the zip again from where the last answer paused, until it is all
    in or ``stop_at`` is set; a line per request."""
    said: list[str] = []
    resume = 0
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=600) as client:
        while not stop_at.is_set():
            try:
                with path.open("rb") as fh:
                    r = client.post("/v1/imports", files={"file": (path.name, fh, "application/zip")},
                                    data={"resume_from": str(resume)} if resume else {})
            except httpx.HTTPError:
                break  # the server is stopping
            if r.status_code == 429:
                stop_at.wait(float(r.headers.get("retry-after", "5")))
                continue
            if not r.headers.get("content-type", "").startswith("application/json"):
                break  # the server is stopping
            body = r.json()
            said.append(f"{r.status_code}: {body.get('imported')} imported, paused: {bool(body.get('paused'))}")
            if r.status_code != 202 or not body.get("paused"):
                break
            resume = body["paused"]["resume_from"]
            stop_at.wait(body["paused"]["retry_after_s"])
    return said


def zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(folder.parent).as_posix())
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--notes", type=int, default=30)
    ap.add_argument("--max-pending", type=int, default=1000)
    ap.add_argument("--gap", type=float, default=1.0, help="seconds between Bob's notes")
    ap.add_argument("--via", choices=("upload", "cli"), default="upload")
    ap.add_argument("--settle", type=float, default=60.0, help="seconds to wait for Alice's backlog to fill at most")
    charts.docs_option(ap)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sb-fair-"))
    data, port = root / "data", free_port()
    base = f"http://127.0.0.1:{port}"
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    t0 = time.perf_counter()
    export = gen.write_many_keep_notes(root / "export", args.items)
    print(f"wrote {args.items} Keep notes in {time.perf_counter() - t0:.0f} s")
    proc, _ = start(data, port, extra_env={"SB_MAX_PENDING_JOBS": str(args.max_pending)})
    importer: subprocess.Popen[bytes] | None = None
    try:
        keys = people(base, key_headers(data))
        alice = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {keys['alice']}"}, timeout=60)
        bob = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {keys['bob']}"}, timeout=60)
        alone = []
        for _ in range(args.notes):  # the same notes with nobody else's work: the machine's own figure
            alone.append(searchable_after(bob))
            time.sleep(args.gap)
        print(f"bob alone first, {len(alone)} notes (s): median {statistics.median(alone):.2f}, "
              f"p95 {pct(alone, 0.95):.2f}, max {max(alone):.2f}; load {os.getloadavg()}")
        stop_at = threading.Event()
        uploads: list[str] = []
        if args.via == "cli":
            env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")} | {
                "SB_URL": base, "SB_API_KEY": keys["alice"]}
            importer = subprocess.Popen([sys.executable, "-m", "app.cli", "import", str(export), "--no-wait",
                                         "--json"], env=env, cwd=REPO, stdout=(root / "import.out").open("wb"),
                                        stderr=(root / "import.err").open("wb"), start_new_session=True,
                                        # started from a background shell, a child ignores SIGINT: restore it
                                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        else:
            archive = zipped(export, root / "takeout.zip")
            threading.Thread(target=lambda: uploads.extend(upload_until_done(base, keys["alice"], archive, stop_at)),
                             daemon=True).start()
        began = time.perf_counter()
        # Bob starts once Alice's backlog is at the limit, or after --settle seconds if the pipeline keeps up with
        # her import (then her backlog stays below it: the figure is the same flood, only gentler).
        while alice.get("/v1/me").json()["pending_jobs"] < args.max_pending * 0.9 and \
                time.perf_counter() - began < args.settle:
            time.sleep(0.2)
        print(f"after {time.perf_counter() - began:.0f} s alice has {alice.get('/v1/me').json()['pending_jobs']} "
              "captures in the pipeline; bob starts")
        waits, backlog = [], []
        for _ in range(args.notes):
            waits.append(searchable_after(bob))
            backlog.append(alice.get("/v1/me").json()["pending_jobs"])
            time.sleep(args.gap)
        stop_at.set()
        sources = alice.get("/v1/sources", params={"limit": 1}).json()
        print(f"load after: {os.getloadavg()}")
        if uploads:
            print(f"alice's upload requests: {len(uploads)}; the first: {uploads[0]}")
        print(f"bob during alice's import, {len(waits)} notes, searchable after (s): "
              f"median {statistics.median(waits):.2f}, "
              f"p95 {pct(waits, 0.95):.2f}, max {max(waits):.2f} (target: p95 < 2 s)")
        print("bob's notes in order, searchable after (s) / alice's backlog after it: "
              + ", ".join(f"{w:.2f}/{b}" for w, b in zip(waits, backlog, strict=True)))
        print(f"alice's backlog meanwhile: min {min(backlog)}, max {max(backlog)} (limit {args.max_pending}); "
              f"her newest source: {sources['sources'][0]['title'] if sources['sources'] else '-'}")
        if args.publish:
            def figures(xs: list[float]) -> str:
                return f"median {statistics.median(xs):.2f} s, p95 {pct(xs, 0.95):.2f} s, max {max(xs):.2f} s"

            charts.publish("fairness", "Fair under a flood", [charts.table(["Bob's note to searchable", "figure"], [
                [f"alone ({len(alone)} notes)", figures(alone)],
                [f"while Alice's {args.items:,}-note Keep import ({args.via}) waits at the limit", figures(waits)]])],
                notes=[f"Alice's backlog meanwhile: {min(backlog)} to {max(backlog)} captures (limit "
                       f"{args.max_pending}); the target is a p95 under 2 s. Compare the two figures of one run."],
                headline={f"another person's note searchable during a {args.items:,}-note import, p95":
                          f"{pct(waits, 0.95):.2f} s"})
    finally:
        try:
            if importer is not None and importer.poll() is None:
                os.killpg(importer.pid, signal.SIGINT)
                try:
                    importer.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(importer.pid, signal.SIGKILL)
        finally:
            stop(proc)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
