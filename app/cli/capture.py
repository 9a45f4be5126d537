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
from secondbrain.pipeline import retry


def cmd_ingest(args: argparse.Namespace) -> int:
    """Send notes and files to the gateway, then wait for their jobs."""
    import httpx

    if not args.paths and args.note is None:
        print("error: give file paths or --note TEXT", file=sys.stderr)
        return EXIT_USAGE
    submitted: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []  # files and addresses the server would not take: said, the others sent
    refused_exit = EXIT_OK
    urls = [p for p in args.paths if p.lower().startswith(("http://", "https://"))]
    files = expand_paths([p for p in args.paths if p not in urls])
    missing = [str(f) for f in files if not f.is_file()]
    if missing:  # said before anything is sent
        print(f"error: not found: {', '.join(missing)}", file=sys.stderr)
        return EXIT_USAGE

    def refuse(resp: Any, item: str) -> None:
        nonlocal refused_exit
        refused_exit = max(refused_exit, http_error(resp, item))
        refused.append({"item": item, "status": resp.status_code, "reason": detail_of(resp)})

    try:
        with http_client(args) as client:
            if args.note is not None:
                body: dict[str, Any] = {"text": args.note}
                if args.title:
                    body["title"] = args.title
                if args.captured_at:
                    body["captured_at"] = args.captured_at
                resp = client.post("/v1/notes", json=body)
                if resp.status_code != 202:
                    return http_error(resp)
                submitted.append({"label": args.title or args.note[:40], **resp.json()})
            for url in urls:
                page: dict[str, Any] = {"url": url}
                if args.title:
                    page["title"] = args.title
                if args.captured_at:
                    page["captured_at"] = args.captured_at
                resp = client.post("/v1/urls", json=page)
                if _stops_all(resp.status_code):
                    return http_error(resp)
                if resp.status_code != 202:
                    refuse(resp, url)  # one address it will not fetch stops no other
                    continue
                submitted.append({"label": url if len(url) <= 40 else url[:39] + "…", **resp.json()})
            for path in files:
                data: dict[str, str] = {}
                if args.title:
                    data["title"] = args.title
                if args.captured_at:
                    data["captured_at"] = args.captured_at
                resp = _send_file(client, path, data)
                if _stops_all(resp.status_code):
                    return http_error(resp)
                if resp.status_code != 202:
                    # one file the server will not take (empty, too big, not what it claims) stops no other
                    if len(files) > MANY_JOBS and sys.stderr.isatty():
                        sys.stderr.write("\n")
                    refuse(resp, str(path))
                    continue
                submitted.append({"label": path.name, **resp.json()})
                if len(files) > MANY_JOBS and sys.stderr.isatty():
                    sys.stderr.write(f"\r\x1b[Ksending {len(submitted)}/{len(files)}: {path.name[:50]}")
                    sys.stderr.flush()
            if len(files) > MANY_JOBS and sys.stderr.isatty():
                sys.stderr.write("\n")
            if not args.json:
                for s in submitted:
                    print(s["job_id"])
                    if s.get("already"):  # the same bytes are kept already: said now, not kept twice
                        say(f"{s['label']}: {s['already']['message']}")
            if args.no_wait or not submitted:
                if args.json:
                    print(json.dumps({"jobs": submitted, "refused": refused}))
                return refused_exit
            results = wait_for_jobs(client, [(s["label"], s["job_id"]) for s in submitted], timeout_s=args.timeout)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    # a job replaced by a newer upload of the same file is not a failure: the newer one is what counts
    failed = [r for r in results.values() if r["status"] not in ("succeeded", "duplicate", "superseded")]
    if args.json:
        print(json.dumps({"jobs": list(results.values()), "refused": refused}, default=str))
    for r in failed:
        say(f"job {r['job_id']} {r['status']}: {r.get('error') or 'no reason given'}")
    if refused:
        say(f"{len(refused)} of {len(refused) + len(submitted)} refused (said above); the others went in")
    return max(refused_exit, EXIT_FAILED if failed else EXIT_OK)


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
                f"waiting {retry.server_asked_wait(resp, 5.0, 60.0):.0f}s and going on")
            told = True

    def send() -> Any:
        with path.open("rb") as fh:
            return client.post("/v1/artifacts", data=data, files={"file": (path.name, fh, guess_type(path))})

    patience = retry.server_patience(statuses=(429,), asked_default_s=5.0, asked_max_s=60.0, before_sleep=slow_down)
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
