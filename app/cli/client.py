"""What every client command shares: finding the server and its key, errors, waiting for jobs."""

from __future__ import annotations

import argparse
import contextlib
import mimetypes
import os
import sys
import time
from pathlib import Path
from typing import Any

from app.cli.common import (
    DEFAULT_URL,
    EXIT_FAILED,
    EXIT_USAGE,
    KEY_FILE,
    default_data_dir,
    named_data_dir,
    noted_data_dir,
    running_servers,
    say,
    server_pointer,
)
from connectors.patience import server_patience
from connectors.sender import detail_of


def http_client(args: argparse.Namespace) -> Any:
    import httpx

    key = _find_key(args)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=args.url, timeout=httpx.Timeout(30.0, connect=5.0), headers=headers)


def _find_key(args: argparse.Namespace) -> str | None:
    """The key a client sends: ``--api-key``, ``SB_API_KEY``, else the key ``secondbrain up`` saved in its
    data directory: the one named (``--data-dir``/``SB_DATA_DIR``), else the one the ``up`` at the address
    talked to noted, else the default place."""
    from urllib.parse import urlsplit

    key = getattr(args, "api_key", None) or os.environ.get("SB_API_KEY")
    if key:
        return str(key).strip()
    dirs: list[Path] = []
    named = named_data_dir(args)
    if named is not None:
        dirs.append(named)
    try:
        url = urlsplit(args.url)
        from secondbrain.infra.ports import is_loopback

        if url.hostname and is_loopback(url.hostname):
            noted = noted_data_dir(server_pointer(url.port or 80))
            if noted is not None:
                dirs.append(noted)
    except (OSError, ValueError):
        pass
    if named is None:
        with contextlib.suppress(Exception):  # a broken .env is reported by the commands that need it
            dirs.append(default_data_dir(args))
    for d in dirs:
        with contextlib.suppress(OSError):
            found = (d / KEY_FILE).read_text().strip()
            if found:
                return found
    return None


def unreachable(args: argparse.Namespace, exc: Exception) -> int:
    """Say that nothing answers at the address, and which servers do run here (or how to start one)."""
    running = running_servers()
    named = named_data_dir(args)
    print(f"error: cannot reach secondbrain at {args.url} ({exc}).", file=sys.stderr)
    if running:
        what = f"none of them keeps {named}" if named is not None and not any(
            s.data_dir == named for s in running) else "none of them answers there"
        print(f"  secondbrain runs here at another address ({what}):", file=sys.stderr)
        for server in running:
            print(f"    {server.line()}", file=sys.stderr)
        print("  choose one with --url URL, --data-dir DIR or SB_URL=URL", file=sys.stderr)
    else:
        print("  No `secondbrain up` is running on this machine: start it with `secondbrain up` (or keep it "
              "running with `secondbrain service install`), or name another server with --url / SB_URL.",
              file=sys.stderr)
    return EXIT_USAGE


def http_error(resp: Any, what: str | None = None) -> int:
    """Say what the server answered (about ``what``, when given); the exit status it calls for."""
    print(f"error: {f'{what}: ' if what else ''}HTTP {resp.status_code}: {detail_of(resp)}", file=sys.stderr)
    if resp.status_code == 401:
        print("  (the CLI sends --api-key, SB_API_KEY, or the key `secondbrain up` saved in its data directory: "
              "run it where `up` runs, or pass --data-dir)", file=sys.stderr)
    return EXIT_USAGE if resp.status_code < 500 else EXIT_FAILED


def guess_type(path: Path) -> str:
    if path.suffix.lower() in (".md", ".markdown", ".mdown", ".mkd"):
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def expand_paths(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file()
                              and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        else:
            out.append(p)
    return out


_MARK = {"pending": "·", "running": "…", "retrying": "↻", "succeeded": "✓", "failed": "✗", "skipped": "-"}


def progress_line(label: str, job: dict[str, Any]) -> str:
    stages = "  ".join(f"{s['stage']} {_MARK.get(s['status'], '?')}" for s in job.get("stages", []))
    return f"{label[:40]:<40}  {job['status']:<9}  {stages}"


MANY_JOBS = 20  # past this many, one summary line instead of a line per job


def wait_for_jobs(client: Any, jobs: list[tuple[str, str]], *, timeout_s: float) -> dict[str, dict[str, Any]]:
    """Poll jobs until they finish, drawing progress on stderr: a line per job, or for many jobs one
    summary line (one user's captures go through the pipeline in order, so only the first few
    unfinished ones are asked about in a round, not every job every time)."""
    tty = sys.stderr.isatty()
    final: dict[str, dict[str, Any]] = {}
    last: dict[str, str] = {}
    deadline = time.monotonic() + timeout_s
    drawn = 0
    many = len(jobs) > MANY_JOBS
    shown_at = 0.0
    # Over the read limit (429): the same question again after the wait the server asks for (at most 10 s),
    # until the time to wait for the jobs is up.
    patience = server_patience(statuses=(429,), asked_default_s=1.0, asked_max_s=10.0,
                               stop=lambda _state: time.monotonic() >= deadline)
    while len(final) < len(jobs) and time.monotonic() < deadline:
        lines = []
        running = 0
        for label, job_id in jobs:
            if job_id in final:
                if not many:
                    lines.append(progress_line(label, final[job_id]))
                continue
            if many and running >= 2:
                break  # later captures wait behind these two
            resp = patience(client.get, f"/v1/jobs/{job_id}")
            if resp.status_code == 429:  # over the read limit: waited as told, the job is not lost
                lines.append(progress_line(label, final.get(job_id) or {"status": "waiting", "stages": []}))
                continue
            if resp.status_code != 200:
                final[job_id] = {"job_id": job_id, "status": "failed", "error": f"HTTP {resp.status_code}",
                                 "stages": []}
                lines.append(f"{label[:40]:<40}  lost ({resp.status_code})")
                continue
            job = resp.json()
            if job["status"] in ("succeeded", "failed", "duplicate", "superseded"):
                final[job_id] = job
                if many and job["status"] == "failed":
                    say(f"{label}: failed: {job.get('error') or 'no reason given'}")
            else:
                running += 1
            line = progress_line(label, job)
            if not many:
                lines.append(line)
                if not tty and last.get(job_id) != line:
                    say(line)
                    last[job_id] = line
        if many:
            failed = sum(1 for j in final.values() if j["status"] == "failed")
            summary = f"{len(final)}/{len(jobs)} captures done" + (f", {failed} failed" if failed else "")
            if tty:
                sys.stderr.write(f"\r\x1b[K{summary}")
                sys.stderr.flush()
            elif time.monotonic() - shown_at > 5 or len(final) == len(jobs):
                say(summary)
                shown_at = time.monotonic()
        elif tty:
            sys.stderr.write("\x1b[F" * drawn + "".join(f"\x1b[K{ln}\n" for ln in lines))
            sys.stderr.flush()
            drawn = len(lines)
        if len(final) < len(jobs):
            # About 4 polls a second in all, however many jobs: well inside the per-user read limit.
            time.sleep(0.5 if many else max(0.25, 0.25 * (len(jobs) - len(final)) / 4))
    if many and tty:
        sys.stderr.write("\n")
    for _label, job_id in jobs:
        final.setdefault(job_id, {"job_id": job_id, "status": "timeout", "stages": []})
    return final


def client_opts(sp: argparse.ArgumentParser) -> None:
    """A client command's options: the server it talks to, its key, and JSON for scripts."""
    sp.add_argument("--url", default=None, help="secondbrain's address (default: SB_URL, else the newest "
                                                f"`secondbrain up` running on this machine, else {DEFAULT_URL})")
    sp.add_argument("--api-key", default=None, help="API key (default: SB_API_KEY, else the key `secondbrain "
                                                    "up` saved in its data directory)")
    sp.add_argument("--data-dir", default=None, help="where `secondbrain up` keeps its data (and key): talk to "
                                                     "the `up` keeping it (default: SB_DATA_DIR, else the "
                                                     "platform's place)")
    sp.add_argument("--json", action="store_true", help="print JSON for scripts")
