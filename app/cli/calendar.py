"""``secondbrain calendar``: keep calendars you subscribe to (iCal addresses) in step (see :mod:`app.calendars`)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from tenacity import stop_after_attempt

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say, settings_for
from app.cli.importing import FINAL, Progress, Sender, Tally, _n, _print_reasons
from app.cli.periodic import repeat, state_file, stop_on_signals
from secondbrain.pipeline import retry


def split_urls(text: str) -> list[str]:
    """Addresses separated by commas, spaces or lines (SB_CALENDAR_URLS, --urls-file)."""
    return [u for u in text.replace(",", " ").split() if u]


def urls_from(args: argparse.Namespace, settings: Any) -> list[str]:
    """The feeds to refresh, normalized; ValueError says which one is not a calendar address."""
    from app.calendars import normalize

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


def default_state_path(url: str, user_hint: str) -> Path:
    """Where ``secondbrain calendar`` keeps its record: one file per server and key."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    tag = hashlib.sha256(f"{url}\n{user_hint}".encode()).hexdigest()[:16]
    return base / "secondbrain" / f"calendars-{tag}.json"


def _local_zone() -> Any:
    from zoneinfo import ZoneInfo

    from app.cli.asking import _local_tz

    try:
        return ZoneInfo(_local_tz() or "UTC")
    except (KeyError, ValueError):
        return ZoneInfo("UTC")


def refresh_all(client: Any, state_path: Path, urls: list[str], *, tally: Tally, progress: Progress,
                tz: Any, allowed_hosts: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], Sender]:
    """One refresh of each feed: a row per feed (its error, when it failed) and the sender.  A feed that fails
    changes nothing and the others go on."""
    from app.calendars import FeedError, State, refresh, shown

    me = client.get("/v1/me")
    me.raise_for_status()
    user_id = str(me.json()["user_id"])
    state = State(state_path)
    sender = Sender(client, tally, progress, "ics", batch_items=100)

    def send(captures: list[Any]) -> list[str]:
        before = len(tally.items)
        for capture in captures:
            sender.add(capture)
        sender.flush()  # the state moves on only once the gateway answered for these
        return [item.status for item in tally.items[before:]]

    # A calendar cleared at once is many deletions: the per-minute limit may answer 429, tried 5 times in all.
    patience = retry.server_patience(statuses=(429,), asked_default_s=5.0, asked_max_s=30.0,
                                     stop=stop_after_attempt(5))

    def delete(source_id: str) -> bool:
        resp = patience(client.delete, f"/v1/sources/{source_id}")
        return resp.status_code in (204, 404)  # 404: already gone (deleted by hand, say)

    rows: list[dict[str, Any]] = []
    for url in urls:
        before = len(tally.items)
        try:
            got = refresh(url, state, user_id, send, delete, tz=tz, allowed_hosts=allowed_hosts)
        except (FeedError, ValueError) as exc:  # ValueError: not a calendar address (SB_CALENDAR_URLS)
            rows.append({"feed": shown(url), "error": str(exc)})
            continue
        new = [i for i in tally.items[before:] if not i.earlier and i.status != "refused"]
        rows.append({"feed": got.feed, "unchanged": got.unchanged, "events": got.events, "added": len(new),
                     "removed": got.removed, "refused": got.refused, "delete_failed": len(got.failed),
                     "skipped": [{"label": lb, "reason": r} for lb, r in got.skipped]})
    return rows, sender


def _line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['error']}; nothing was changed"  # each error names the feed (as shown) already
    if row["unchanged"]:
        return f"{row['feed']}: not changed since the last refresh"
    text = f"{row['feed']}: {_n(row['events'], 'event')}, {row['added']} new or changed, {row['removed']} removed"
    if row["refused"]:
        text += f", {row['refused']} refused (sent again next time)"
    if row["delete_failed"]:
        text += f", {row['delete_failed']} could not be removed (tried again next time)"
    return text


def cmd_calendar(args: argparse.Namespace) -> int:
    """Refresh the feeds once (or every ``--every`` seconds), wait until searchable, sum up."""
    import httpx

    from app.calendars import FeedError

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
                        say(_line(row))

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
        print(_line(row))
        _print_reasons(f"{len(row.get('skipped') or [])} skipped",
                       [(s["label"], s["reason"]) for s in row.get("skipped") or []])
    if pending:
        state = "still being processed" if args.no_wait or not finished else "not finished"
        print(f"  {len(pending)} {state} (they go on; `secondbrain sources` shows them)")
    _print_reasons(f"{len(failed)} failed", failed)
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


def background_pass(url: str, key_file: Path, settings: Any, state: Path) -> tuple[list[str], list[str]]:
    """One refresh for ``up`` (SB_CALENDAR_*): (a line per feed that changed, a line per feed that failed).
    Raises FeedError (the state file) or OSError."""
    from zoneinfo import ZoneInfo

    import httpx

    urls = split_urls(settings.calendar_urls.get_secret_value()) if settings.calendar_urls else []
    headers = {"Authorization": f"Bearer {key_file.read_text().strip()}"}
    tally = Tally(0)
    with httpx.Client(base_url=url, headers=headers, timeout=httpx.Timeout(60.0, connect=5.0)) as client:
        rows, _sender = refresh_all(client, state, urls, tally=tally, progress=Progress(tally, quiet=True),
                                    tz=ZoneInfo(settings.timezone), allowed_hosts=settings.calendar_hosts())
    return ([_line(r) for r in rows if "error" not in r and not r["unchanged"] and (r["added"] or r["removed"])],
            [_line(r) for r in rows if "error" in r])
