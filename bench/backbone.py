"""Backbone numbers for embedded mode: start-up time and note-to-searchable latency.

    .venv/bin/python bench/backbone.py [--notes 20]

Starts ``secondbrain up`` in a fresh data directory (cold start: creates the Postgres
cluster), stops it, starts it again (warm start), then submits one-page notes one at a
time and measures the time from ``POST /v1/notes`` until ``GET /v1/search`` returns the
note (polling every 20 ms).  Prints a table; the numbers belong to the machine they ran on.
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
import time
import uuid
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# A benchmark's servers note themselves, and keep any default data, in the run's own directories: the
# person's CLI never takes one for their own secondbrain, and their data is never touched.
from bench import charts  # noqa: E402
from devtools.processes import AWAY_FROM_HOME  # noqa: E402

PAGE = (
    "Quarterly planning notes. The team reviewed the roadmap, the hiring plan and the budget for the "
    "next quarter. Marketing asked for a larger share of the events budget; engineering asked for two "
    "more people on the data platform. We agreed to revisit the vendor contracts in April and to move "
    "the customer summit to the autumn. "
) * 6  # about 400 words: one printed page


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data_dir: Path, port: int, otel: str | None = None,
          extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], float]:
    # No daily backup a minute in: it would be counted in what is measured.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")} | AWAY_FROM_HOME | \
        {"SB_BACKUP_INTERVAL": "off"} | (extra_env or {})
    if otel:  # telemetry on: traces and metrics exported to this OTLP/HTTP endpoint
        env["SB_OTEL_ENDPOINT"] = otel
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--data-dir", str(data_dir),
                             "--port", str(port)], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=(data_dir.parent / "up.log").open("ab"), start_new_session=True)
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"secondbrain up exited; see {data_dir.parent / 'up.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.TransportError:
            pass
        time.sleep(0.05)


def key_headers(data_dir: Path) -> dict[str, str]:
    """Authorization with the admin key `secondbrain up` saved in ``data_dir`` (loopback needs a key too)."""
    return {"Authorization": f"Bearer {(data_dir / 'api-key').read_text().strip()}"}


def stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(60)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=20)
    ap.add_argument("--otel-endpoint", help="export telemetry to this OTLP/HTTP collector (overhead check)")
    charts.docs_option(ap)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sb-bench-"))
    root.chmod(0o755)
    data = root / "data"
    port = free_port()
    try:
        # Polling search every 20 ms is more than the per-user limit allows: a slow note would end in a 429.
        unlimited = {"SB_RATE_LIMIT_PER_MINUTE": "0"}
        proc, cold = start(data, port, args.otel_endpoint, unlimited)
        stop(proc)
        proc, warm = start(data, port, args.otel_endpoint, unlimited)
        latencies: list[float] = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30, headers=key_headers(data)) as c:
            for i in range(args.notes):
                marker = f"zq{uuid.uuid4().hex[:10]}"
                t0 = time.perf_counter()
                r = c.post("/v1/notes", json={"text": f"{PAGE}\n\nReference {marker}.", "title": f"Note {i}"})
                r.raise_for_status()
                while True:
                    hits = c.get("/v1/search", params={"q": marker, "k": 1, "mode": "sparse"}).json()["hits"]
                    if hits and marker in hits[0]["text"]:
                        break
                    if time.perf_counter() - t0 > 120:
                        raise SystemExit("a note did not become searchable within 120 s")
                    time.sleep(0.02)
                latencies.append(time.perf_counter() - t0)
                print(f"  note {i + 1}/{args.notes}: {latencies[-1] * 1000:.0f} ms", file=sys.stderr)
        stop(proc)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
          + (f", telemetry to {args.otel_endpoint}" if args.otel_endpoint else ""))
    print(f"{'measure':<44}{'value':>10}")
    print(f"{'cold start of secondbrain up (new data dir)':<44}{cold:>9.1f}s")
    print(f"{'warm start of secondbrain up':<44}{warm:>9.1f}s")
    print(f"{'one-page note to searchable, p50':<44}{statistics.median(latencies) * 1000:>8.0f}ms")
    print(f"{'one-page note to searchable, p95':<44}{pct(latencies, 0.95) * 1000:>8.0f}ms")
    print(f"{'one-page note to searchable, max':<44}{max(latencies) * 1000:>8.0f}ms")
    if args.publish:
        p50, p95, top = (statistics.median(latencies) * 1000, pct(latencies, 0.95) * 1000, max(latencies) * 1000)
        otel = bool(args.otel_endpoint)
        title = "Start-up and note-to-searchable" + (" with telemetry exported" if otel else "")
        charts.publish("backbone-otel" if otel else "backbone", title, [charts.table(["measure", "value"], [
            ["cold start of `secondbrain up` (new data directory)", f"{cold:.1f} s"],
            ["warm start of `secondbrain up`", f"{warm:.1f} s"],
            [f"one-page note to searchable, p50 / p95 / max ({args.notes} notes)",
             f"{p50:.0f} / {p95:.0f} / {top:.0f} ms"]])],
            notes=[f"Telemetry exported to {args.otel_endpoint}."] if args.otel_endpoint else [],
            headline=None if otel else {"a one-page note searchable after, p50": f"{p50:.0f} ms"}, bench="backbone")


if __name__ == "__main__":
    main()
