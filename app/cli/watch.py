"""``secondbrain watch``: keep folders in sync (see :mod:`connectors.folders`)."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import signal
import sys
from pathlib import Path
from typing import Any

from tenacity import RetryCallState

from app.cli.client import _find_key, http_client, http_error, unreachable
from app.cli.common import EXIT_OK, EXIT_USAGE, say
from connectors.patience import server_patience


def cmd_watch(args: argparse.Namespace) -> int:
    """Sync the folders once, then keep them in sync until Ctrl-C (or only once with ``--once``)."""
    import httpx

    from connectors.folders import FolderSync, default_state_path

    roots = [Path(d).expanduser().absolute() for d in args.dirs]
    for root in roots:
        if not root.is_dir():
            print(f"error: {root} is not a folder", file=sys.stderr)
            return EXIT_USAGE
    try:
        with http_client(args) as client:
            key = _find_key(args) or ""
            # The record is per server and key (a hash of the key, never the key itself).
            state = Path(args.state) if args.state else default_state_path(
                args.url, hashlib.sha256(key.encode()).hexdigest()[:16], roots)
            resp = _server_answers(client, args.url)
            if resp is None:
                return EXIT_USAGE
            if resp.status_code != 200:
                return http_error(resp)
            syncer = FolderSync(client, roots, state, say=say)
            if args.once:
                syncer.adopt_server_sources()
                report = syncer.sync(final=True)
                say(f"in sync: {report.line()}")
                return EXIT_OK if not report.failed else 1
            # Ctrl-C and SIGTERM (a service manager's stop) end the watch the same way, with the record
            # saved, also when the shell that started it in the background left SIGINT ignored.
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.default_int_handler)
            with contextlib.suppress(KeyboardInterrupt):
                syncer.watch()
            syncer.save()
            say("stopped watching; the next start picks up what changed meanwhile")
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    return EXIT_OK


def _server_answers(client: Any, url: str) -> Any:
    """``GET /v1/me``, waiting while secondbrain is down or restarting (as the sync waits at run time);
    ``None`` when the person stops the wait (Ctrl-C)."""
    import httpx

    told = False

    def before_retry(state: RetryCallState) -> None:
        nonlocal told
        assert state.outcome is not None
        if state.outcome.failed and not told:
            say(f"secondbrain is not reachable at {url} ({state.outcome.exception()}); waiting for it (start it "
                "with `secondbrain up`; Ctrl-C stops)")
            told = True

    patience = server_patience(statuses=(429, 502, 503, 504), asked_default_s=2.0, asked_max_s=30.0,
                               unreachable=httpx.TransportError, unreachable_wait_s=2.0,
                               before_sleep=before_retry)
    try:
        resp = patience(client.get, "/v1/me")
    except KeyboardInterrupt:
        say("stopped waiting; nothing was synced")
        return None
    if told:
        say(f"secondbrain answers at {url}")
    return resp


def add_parser(sub: Any, client_opts: Any) -> None:
    """``watch``."""
    wa = sub.add_parser("watch", help="keep folders in sync: new, changed, moved and deleted files follow")
    wa.add_argument("dirs", nargs="+", metavar="DIR", help="folders to keep in sync (an Obsidian vault, Documents...)")
    wa.add_argument("--once", action="store_true", help="sync once (deletions included) and exit")
    wa.add_argument("--state", metavar="FILE", help="where to keep what was synced (default: under "
                                                    "~/.local/state/secondbrain)")
    client_opts(wa)
    wa.set_defaults(func=cmd_watch)
