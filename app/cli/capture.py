"""Capturing: ``ingest`` (files, folders, URLs, notes) and ``open`` (sign the web page in)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from tenacity import RetryCallState

from app.cli.client import (
    MANY_JOBS,
    detail_of,
    expand_paths,
    guess_type,
    http_client,
    http_error,
    unreachable,
    wait_for_jobs,
)
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say
from connectors.patience import server_asked_wait, server_patience

# Past this many files, they go in batches through the import batch route (as ``import`` and folder sync send):
# one request and one filing per hundred, a server that restarts meanwhile waited for, and the progress line
# with items per second and the time left.  Fewer go one upload each, every answer said as it comes.
BATCHED_FILES = MANY_JOBS


class _Submissions:
    """What ``ingest`` sent (each job, with a label) and what the server refused (said, the others sent)."""

    def __init__(self, client: Any, args: argparse.Namespace) -> None:
        self.client = client
        self.args = args
        self.submitted: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.exit = EXIT_OK  # the worst refusal's exit status
        self.sender: Any = None  # many files: the batches' sender, which follows their jobs
        self.batched: list[Any] = []  # what it sent that the server took (each with its job)

    def _given(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with the title and capture time the options give."""
        if self.args.title:
            body["title"] = self.args.title
        if self.args.captured_at:
            body["captured_at"] = self.args.captured_at
        return body

    def _refuse(self, resp: Any, item: str) -> None:
        self.exit = max(self.exit, http_error(resp, item))
        self.refused.append({"item": item, "status": resp.status_code, "reason": detail_of(resp)})

    def note(self, text: str) -> int | None:
        """Send the note; an exit status when the server refused it."""
        resp = self.client.post("/v1/notes", json=self._given({"text": text}))
        if resp.status_code != 202:
            return http_error(resp)
        self.submitted.append({"label": self.args.title or text[:40], **resp.json()})
        return None

    def urls(self, urls: list[str]) -> int | None:
        """Send each web address; an exit status when a refusal stops them all."""
        for url in urls:
            resp = self.client.post("/v1/urls", json=self._given({"url": url}))
            if _stops_all(resp.status_code):
                return http_error(resp)
            if resp.status_code != 202:
                self._refuse(resp, url)  # one address it will not fetch stops no other
                continue
            self.submitted.append({"label": url if len(url) <= 40 else url[:39] + "…", **resp.json()})
        return None

    def files(self, files: list[Path]) -> int | None:
        """Upload each file (a progress line for many, on a terminal); an exit status when a refusal stops
        them all."""
        if len(files) > BATCHED_FILES:
            return self.many_files(files)
        shown = len(files) > MANY_JOBS and sys.stderr.isatty()
        for path in files:
            resp = _send_file(self.client, path, self._given({}))
            if _stops_all(resp.status_code):
                return http_error(resp)
            if resp.status_code != 202:
                # one file the server will not take (empty, too big, not what it claims) stops no other
                if shown:
                    sys.stderr.write("\n")
                self._refuse(resp, str(path))
                continue
            self.submitted.append({"label": path.name, **resp.json()})
            if shown:
                sys.stderr.write(f"\r\x1b[Ksending {len(self.submitted)}/{len(files)}: {path.name[:50]}")
                sys.stderr.flush()
        if shown:
            sys.stderr.write("\n")
        return None


    def many_files(self, files: list[Path]) -> int | None:
        """Send the files in batches, each named as one upload names it (``file:<name>``) and keyed by its name
        and content: sent again (the server restarted mid-batch, or the same folder tomorrow), a file already
        taken adds nothing.  An exit status when the options are wrong."""
        from connectors.sender import BATCH_ITEMS, Progress, Sender, Tally
        from secondbrain.validation import capture_time
        from services.importers.model import Capture

        try:  # read as the upload route reads it
            when = capture_time(self.args.captured_at)
        except ValueError as exc:
            say(f"error: {exc}")
            return EXIT_USAGE
        tally = Tally(len(files))
        self.sender = Sender(self.client, tally, Progress(tally, quiet=self.args.json), "files",
                             batch_items=BATCH_ITEMS)
        captures = [Capture(source_uri=f"file:{path.name}", kind="file", label=path.name, title=self.args.title,
                            captured_at=when, path=path, content_type=guess_type(path), filename=path.name)
                    for path in files]
        for item in self.sender.send(captures):
            if item.status != "refused":
                self.batched.append(item)
                continue
            status = item.http_status or 422  # the batch's answer, or one item refused within it
            self.exit = max(self.exit, EXIT_USAGE if status < 500 else EXIT_FAILED)
            where = str(item.capture.path)  # by its path, as a refused upload is named
            self.refused.append({"item": where, "status": status, "reason": item.reason})
            self.sender.progress.done()
            say(f"error: {where}: {item.reason}")
        return None

    def follow_batched(self, timeout_s: float) -> dict[str, dict[str, Any]]:
        """Until the batched files' jobs have finished (or ``timeout_s``), the progress line redrawn; then each
        job as ``GET /v1/jobs/{id}`` shows it, two hundred a request."""
        from connectors.sender import POLL_WINDOW

        if self.sender is None or not self.batched:
            return {}
        self.sender.wait(timeout_s)
        self.sender.progress.done()
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(self.batched), POLL_WINDOW):
            window = self.batched[start:start + POLL_WINDOW]
            resp = self.client.get("/v1/jobs", params=[("id", item.job_id) for item in window])
            jobs = {j["job_id"]: j for j in resp.json()["jobs"]} if resp.status_code == 200 else {}
            for item in window:
                out[item.job_id] = jobs.get(item.job_id) or {"job_id": item.job_id, "status": item.status,
                                                             "error": item.reason, "stages": []}
        return out


def cmd_ingest(args: argparse.Namespace) -> int:
    """Send notes and files to the gateway, then wait for their jobs."""
    import httpx

    if not args.paths and args.note is None:
        print("error: give file paths or --note TEXT", file=sys.stderr)
        return EXIT_USAGE
    urls = [p for p in args.paths if p.lower().startswith(("http://", "https://"))]
    files = expand_paths([p for p in args.paths if p not in urls])
    missing = [str(f) for f in files if not f.is_file()]
    if missing:  # said before anything is sent
        print(f"error: not found: {', '.join(missing)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with http_client(args) as client:
            sent = _Submissions(client, args)
            stopped = (sent.note(args.note) if args.note is not None else None) or sent.urls(urls) \
                or sent.files(files)
            if stopped is not None:
                return stopped
            submitted, refused = sent.submitted, sent.refused
            batched = [{"label": i.label, "job_id": i.job_id, "status": i.status, "unchanged": i.earlier}
                       for i in sent.batched]
            if not args.json:
                for s in submitted + batched:
                    print(s["job_id"])
                    if s.get("already"):  # the same bytes are kept already: said now, not kept twice
                        say(f"{s['label']}: {s['already']['message']}")
                if any(s["unchanged"] for s in batched):
                    say(f"{sum(s['unchanged'] for s in batched)} of the files were sent before as they are now: "
                        "nothing added for them")
            if args.no_wait or not (submitted or batched):
                if args.json:
                    print(json.dumps({"jobs": submitted + batched, "refused": refused}))
                return sent.exit
            results = wait_for_jobs(client, [(s["label"], s["job_id"]) for s in submitted], timeout_s=args.timeout) \
                if submitted else {}
            results |= sent.follow_batched(args.timeout)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    # a job replaced by a newer upload of the same file is not a failure: the newer one is what counts
    failed = [r for r in results.values() if r["status"] not in ("succeeded", "duplicate", "superseded")]
    if args.json:
        print(json.dumps({"jobs": list(results.values()), "refused": refused}, default=str))
    for r in failed:
        say(f"job {r['job_id']} {r['status']}: {r.get('error') or 'no reason given'}")
    if refused:
        say(f"{len(refused)} of {len(refused) + len(submitted) + len(batched)} refused (said above); the others "
            "went in")
    return max(sent.exit, EXIT_FAILED if failed else EXIT_OK)


def _stops_all(status: int) -> bool:
    """A refusal that is not about the one item sent: the key (401, 403) or the server itself (5xx); every other
    item would meet it too."""
    return status in (401, 403) or status >= 500


def _send_file(client: Any, path: Path, data: dict[str, str]) -> Any:
    """Upload one file; a 429 (too many captures a minute, or too many still in the pipeline) is waited
    out as the server says, so a big folder goes in whole instead of stopping half way."""
    told = False

    def slow_down(state: RetryCallState) -> None:
        nonlocal told
        assert state.outcome is not None
        if not told:
            resp = state.outcome.result()
            say(f"the server asks to slow down ({resp.json().get('detail', 'too many requests')}); "
                f"waiting {server_asked_wait(resp, 5.0, 60.0):.0f}s and going on")
            told = True

    def send() -> Any:
        with path.open("rb") as fh:
            return client.post("/v1/artifacts", data=data, files={"file": (path.name, fh, guess_type(path))})

    patience = server_patience(statuses=(429,), asked_default_s=5.0, asked_max_s=60.0, before_sleep=slow_down)
    return patience(send)


def cmd_open(args: argparse.Namespace) -> int:
    """A one-time sign-in link for the web page, opened in this machine's browser (or printed)."""
    import httpx

    try:
        with http_client(args) as client:
            resp = client.post("/v1/login-links")
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 201:
        return http_error(resp)
    link = args.url.rstrip("/") + resp.json()["path"]
    if getattr(args, "phone", False):
        public = resp.json().get("public_url")
        if not public:
            say("error: this secondbrain has no public address for a phone: set SB_PUBLIC_URL to the https "
                "address a reverse proxy or Tailscale Serve gives it, restart it, and try again (see the phone "
                "in docs/at-home.md); or run `secondbrain up --lan`")
            return EXIT_USAGE
        link = public
    if args.json:
        print(json.dumps({"url": link, "expires_in_s": resp.json()["expires_in_s"]}))
        return EXIT_OK
    if getattr(args, "phone", False):
        from app.cli.servers import say_public

        print(link)
        say_public(link)
        return EXIT_OK
    print(link)
    say("  this link signs one browser in, once, within a day")
    if not args.print_only:
        import webbrowser

        with contextlib.suppress(Exception):  # no browser here (a server, ssh): the printed link is enough
            webbrowser.open(link)
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``ingest`` and ``open``."""
    ing = sub.add_parser("ingest", help="add files, web pages (URLs) or a note")
    ing.add_argument("paths", nargs="*", metavar="PATH", help="files, folders or http(s) URLs to ingest")
    ing.add_argument("--note", help="ingest this text as a note")
    ing.add_argument("--title")
    ing.add_argument("--captured-at", help="when it happened (ISO 8601, e.g. 2026-03-01T09:30:00+01:00)")
    ing.add_argument("--no-wait", action="store_true", help="print job ids and return at once")
    ing.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the jobs")
    client_opts(ing)
    ing.set_defaults(func=cmd_ingest)

    op = sub.add_parser("open", help="sign the web page in: a one-time link, opened in the browser")
    op.add_argument("--print", dest="print_only", action="store_true", help="only print the link")
    op.add_argument("--phone", action="store_true", help="a link at the public address (SB_PUBLIC_URL) with a "
                                                         "QR code to scan with the phone")
    client_opts(op)
    op.set_defaults(func=cmd_open)
