"""``secondbrain calendar``: keep calendars you subscribe to (iCal addresses) in step (see
:mod:`connectors.calendars`)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say, settings_for
from app.cli.periodic import state_file
from connectors.calendars import FeedError, default_state_path, feed_line, refresh_all, split_urls
from connectors.periodic import repeat, stop_on_signals
from connectors.sender import FINAL, Progress, Sender, Tally, print_reasons


def urls_from(args: argparse.Namespace, settings: Any) -> list[str]:
    """The feeds to refresh, normalized; ValueError says which one is not a calendar address."""
    from connectors.calendars import normalize

    urls = list(args.urls or [])
    if args.urls_file:
        try:
            urls += split_urls(Path(args.urls_file).expanduser().read_text())
        except OSError as exc:
            raise ValueError(f"the file of calendar addresses cannot be read: {exc}") from None
    if not urls and settings.calendar_urls is not None:
        urls = split_urls(settings.calendar_urls.get_secret_value())
    if not urls:
        raise ValueError("give a calendar's secret iCal address (https://... or webcal://...), in "
                         "SB_CALENDAR_URLS or a file with --urls-file")
    return list(dict.fromkeys(normalize(u, settings.calendar_hosts()) for u in urls))


def _local_zone() -> Any:
    from zoneinfo import ZoneInfo

    from app.cli.asking import _local_tz

    try:
        return ZoneInfo(_local_tz() or "UTC")
    except (KeyError, ValueError):
        return ZoneInfo("UTC")


def cmd_calendar(args: argparse.Namespace) -> int:
    """Refresh the feeds once (or every ``--every`` seconds), wait until searchable, sum up."""
    import httpx

    settings = settings_for(args)
    try:
        urls = urls_from(args, settings)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    tally = Tally(0)
    progress = Progress(tally, quiet=args.json)
    rows: list[dict[str, Any]] = []
    sender: Sender | None = None
    try:
        with http_client(args) as client:
            me = client.get("/v1/me")
            if me.status_code != 200:
                return http_error(me)
            state = state_file(args, default_state_path)
            stop_on_signals()

            def run_pass() -> None:
                nonlocal rows, sender
                rows, sender = refresh_all(client, state, urls, tally=tally, progress=progress, tz=_local_zone(),
                                           allowed_hosts=settings.calendar_hosts())
                if args.every:
                    progress.done()
                    for row in rows:
                        say(feed_line(row))

            try:
                if args.every:  # until Ctrl-C or SIGTERM; a feed that fails is in its row, the others go on
                    repeat(run_pass, args.every, threading.Event())
                else:
                    run_pass()
            except FeedError as exc:  # the state file
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_USAGE
            finished = True if args.no_wait or sender is None else sender.wait(args.timeout)
            progress.show(force=True)
    except httpx.TransportError as exc:
        progress.done()
        return unreachable(args, exc)
    except KeyboardInterrupt:
        progress.done()
        say("stopped; the next refresh goes on from there (nothing is added twice)")
        return 130
    progress.done()
    return _summary(tally, rows, args, finished=finished)


def _summary(tally: Tally, rows: list[dict[str, Any]], args: argparse.Namespace, *, finished: bool) -> int:
    failed = [(i.label, i.reason or "no reason given") for i in tally.items if i.status in ("failed", "refused")]
    pending = [i for i in tally.items if i.status not in (*FINAL, "refused")]
    bad = any("error" in r for r in rows) or failed
    if args.json:
        print(json.dumps({"feeds": rows, "pending": len(pending),
                          "failed": [{"label": lb, "reason": r} for lb, r in failed]}))
        return EXIT_FAILED if bad else EXIT_OK
    for row in rows:
        print(feed_line(row))
        print_reasons(f"{len(row.get('skipped') or [])} skipped",
                       [(s["label"], s["reason"]) for s in row.get("skipped") or []])
    if pending:
        state = "still being processed" if args.no_wait or not finished else "not finished"
        print(f"  {len(pending)} {state} (they go on; `secondbrain sources` shows them)")
    print_reasons(f"{len(failed)} failed", failed)
    return EXIT_FAILED if bad else EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """The ``calendar`` command's arguments."""
    ca = sub.add_parser("calendar", help="keep calendars you subscribe to (their secret iCal address) in step",
                        description="Fetch calendars by their iCal address (https:// or webcal://) and bring "
                                    "secondbrain in step: new and changed events added, events deleted or "
                                    "cancelled in the calendar removed.  Without an address, SB_CALENDAR_URLS.  "
                                    "`secondbrain up` refreshes SB_CALENDAR_URLS itself every "
                                    "SB_CALENDAR_INTERVAL_S.  The address is a secret: prefer SB_CALENDAR_URLS or "
                                    "--urls-file to the command line, which other users of this machine can see.")
    ca.add_argument("urls", nargs="*", metavar="URL", help="a calendar's iCal address")
    ca.add_argument("--urls-file", metavar="FILE", help="a file of iCal addresses, one a line")
    ca.add_argument("--state", metavar="FILE", help="where to keep what each calendar had (default: under "
                                                    "~/.local/state/secondbrain)")
    ca.add_argument("--every", type=float, default=None, metavar="SECONDS",
                    help="keep going: refresh every SECONDS until Ctrl-C")
    ca.add_argument("--no-wait", action="store_true", help="return once everything is sent")
    ca.add_argument("--timeout", type=float, default=None, help="stop waiting after this many seconds")
    client_opts(ca)
    ca.set_defaults(func=cmd_calendar)


