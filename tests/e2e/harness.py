"""Start real secondbrain processes for end-to-end tests and talk to them."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from secondbrain.infra.ports import free_port
from tests.extractors import gen_web

REPO = Path(__file__).resolve().parents[2]


def cli_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment for a child process: this one, minus SB_* leaks, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")}
    env.update({"PYTHONUNBUFFERED": "1", "SB_LOG_LEVEL": "INFO", **extra})
    return env


def run_cli(args: list[str], env: dict[str, str], *, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run ``secondbrain ARGS`` to completion (the client commands)."""
    return subprocess.run([sys.executable, "-m", "secondbrain.cli", *args], env=cli_env(env), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Service:
    """One long-running ``secondbrain`` process."""

    name: str
    args: list[str]
    env: dict[str, str]
    log_dir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL of its HTTP server."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """Where its stdout/stderr go."""
        return self.log_dir / f"{self.name}.log"

    def start(self) -> Service:
        """Launch the process (not waiting for readiness)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        env = cli_env({**self.env, "SB_PORT": str(self.port)})
        self.proc = subprocess.Popen([sys.executable, "-m", "secondbrain.cli", *self.args], env=env, cwd=REPO,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        return self

    def wait_ready(self, timeout: float = 90.0, path: str = "/readyz") -> Service:
        """Block until ``path`` answers 200; fail with the log tail if the process dies or times out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                if httpx.get(self.url + path, timeout=2.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"{self.name} not ready after {timeout}s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        """The last lines of its log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except FileNotFoundError:
            return "(no log)"

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the whole process group (the process and any broker it started)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)

    def stop(self, timeout: float = 30.0) -> int | None:
        """Ctrl-C, then SIGKILL if it does not exit in time; return the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: the process dies mid-work with no chance to clean up."""
        self.signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)


def wait_jobs(client: httpx.Client, job_ids: list[str], *, timeout: float = 120.0,
              done: tuple[str, ...] = ("succeeded", "failed", "duplicate")) -> dict[str, dict[str, Any]]:
    """Poll ``GET /v1/jobs/{id}`` until every job is finished; return the final views."""
    deadline = time.monotonic() + timeout
    final: dict[str, dict[str, Any]] = {}
    while time.monotonic() < deadline and len(final) < len(job_ids):
        for jid in job_ids:
            if jid in final:
                continue
            r = client.get(f"/v1/jobs/{jid}")
            if r.status_code == 200 and r.json()["status"] in done:
                final[jid] = r.json()
        time.sleep(0.25)
    missing = [j for j in job_ids if j not in final]
    assert not missing, f"jobs not finished after {timeout}s: {missing[:5]} (of {len(missing)})"
    return final


@contextlib.contextmanager
def readable_tmp(prefix: str) -> Iterator[Path]:
    """A new directory outside pytest's temp tree, removed afterwards.  The embedded Postgres runs
    as its own OS user when started as root and needs the parents of its data directory readable,
    which pytest's 0700 temp root is not guaranteed to be."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Site:
    """A local web site: an article, a page that never answers in time, robots.txt."""

    def __init__(self) -> None:
        pages = {"/article": gen_web.page_meta_published(), "/robots.txt": b"User-agent: *\nDisallow: /private\n",
                 "/private/diary": gen_web.page_no_date()}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/slow":
                    time.sleep(6)
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                ctype = "text/plain" if self.path == "/robots.txt" else "text/html; charset=utf-8"
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(body or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        """Stop serving and release the port."""
        self.server.shutdown()
        self.server.server_close()
