"""``secondbrain deadletters``: the events the pipeline refused or could not process, and why."""

from __future__ import annotations

import argparse
import json
from typing import Any

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_OK


def cmd_deadletters(args: argparse.Namespace) -> int:
    """List dead letters, newest first (yours, or everyone's with an admin key)."""
    import httpx

    try:
        with http_client(args) as client:
            resp = client.get("/v1/deadletters", params={"limit": args.limit})
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 200:
        return http_error(resp)
    letters = resp.json()["deadletters"]
    if args.json:
        print(json.dumps(letters))
        return EXIT_OK
    if not letters:
        print("no refused or failed events")
    for d in letters:
        who = " ".join(f"{k}={d[k]}" for k in ("producer", "user_id", "key_id", "event_id") if d.get(k))
        print(f"{(d['failed_at'] or '')[:19]}  {d['topic']}  {d['error_kind']}  {who}")
        print(f"    {d['error']}")
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``deadletters``."""
    dl = sub.add_parser("deadletters", help="events the pipeline refused or could not process, and why")
    dl.add_argument("--limit", type=int, default=50, help="at most this many, newest first (default 50)")
    client_opts(dl)
    dl.set_defaults(func=cmd_deadletters)
