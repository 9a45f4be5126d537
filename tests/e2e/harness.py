"""Start real secondbrain processes for end-to-end tests and talk to them.

The process launcher itself is :mod:`devtools.processes` and the loopback web site :mod:`devtools.loopback`
(the benchmarks use them too); they are re-exported here for the tests.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools import gen_web
from devtools.loopback import LoopbackSite, QuietHandler
from devtools.processes import REPO, Service, run_cli

__all__ = ["REPO", "LoopbackSite", "QuietHandler", "Service", "Site", "readable_tmp", "run_cli", "running_up",
           "wait_jobs"]


def wait_jobs(client: httpx.Client, job_ids: list[str], *, timeout: float = 120.0,
              done: tuple[str, ...] = ("succeeded", "failed", "duplicate", "superseded")) -> dict[str, dict[str, Any]]:
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


class Site(LoopbackSite):
    """A local web site: an article, a page that never answers in time, robots.txt."""

    def __init__(self) -> None:
        pages = {"/article": gen_web.page_meta_published(), "/robots.txt": b"User-agent: *\nDisallow: /private\n",
                 "/private/diary": gen_web.page_no_date()}

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path == "/slow":
                    time.sleep(6)
                body = pages.get(self.path)
                ctype = "text/plain" if self.path == "/robots.txt" else "text/html; charset=utf-8"
                self.reply(200 if body is not None else 404, ctype, body or b"")

        super().__init__(Handler)


@contextlib.contextmanager
def running_up(tmp_path_factory: pytest.TempPathFactory, prefix: str, env: dict[str, str],
               *options: str) -> Iterator[Service]:
    """``secondbrain up`` on a fresh data directory (with ``options``, ``env`` added to its environment),
    ready to serve; stopped and its data removed afterwards."""
    with readable_tmp(prefix) as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), *options], env, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            yield svc
        finally:
            svc.stop()
