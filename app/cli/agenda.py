"""``agenda`` (what is coming up, or what happened) and ``digest`` (the week: saved, by kind, and coming up)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from app.cli.asking import _time_context
from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, say


def cmd_agenda(args: argparse.Namespace) -> int:
    """The agenda: each day's events with their time, the sentence that says it and where it is said."""
    import httpx

    params: dict[str, Any] = {**_time_context(args)}
    params.pop("locale", None)
    if args.as_of:
        params["now"] = args.as_of
    for name, value in (("from", args.start), ("to", args.end)):
        if value:
            params[name] = value
    if args.days and not args.end:
        params["days"] = args.days
    if args.habits:
        params["habits"] = "true"
    try:
        with http_client(args) as client:
            resp = client.get("/v1/agenda", params=params)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 200:
        return http_error(resp)
    body = resp.json()
    if args.json:
        print(json.dumps(body))
        return EXIT_OK if body["total"] else EXIT_FAILED
    if not body["total"]:
        say("nothing on the agenda then" if body["view"] == "upcoming" else "nothing dated then in your sources")
        return EXIT_FAILED
    for day in body["days"]:
        print(day["label"])
        for e in day["events"]:
            print("  " + line(e))
    return EXIT_OK


def line(e: dict[str, Any]) -> str:
    """One event: its time, its name and the quoted sentence, what changed or how it repeats, and where it is
    said."""
    when = e["time"] or e.get("part") or ("all day" if e["precision"] in ("day", "days") else e["when"])
    if e["time"] and e.get("end_time"):
        when += f"\u2013{e['end_time']}"
    if e.get("stated"):
        when += f" ({e['stated']})"
    status = " [cancelled]" if e["status"] == "cancelled" else ""
    moved = f" (moved from {e['moved_from']['when']})" if e.get("moved_from") else ""
    repeats = f" ({e['recurs']})" if e.get("recurs") not in (None, "yearly", "habit") else ""
    name = f"{e['title']}: " if e.get("title") else ""
    return f"{when}  {name}\u201c{e['quote']}\u201d{moved}{repeats}{status}\n      \u2014 {where(e['source'])}"


def where(s: dict[str, Any]) -> str:
    parts = [s.get("title") or "untitled"]
    if s.get("page") is not None:
        parts.append(f"page {s['page']}")
    if s.get("position"):
        parts.append(f"at {s['position']}")
    if s.get("section"):
        parts.append(s["section"])
    return ", ".join(parts)


def cmd_digest(args: argparse.Namespace) -> int:
    """The week: what was saved, by kind, and what is coming up."""
    import httpx

    params: dict[str, Any] = {"days": args.days, **_time_context(args)}
    params.pop("locale", None)
    if args.as_of:
        params["now"] = args.as_of
    try:
        with http_client(args) as client:
            resp = client.get("/v1/digest", params=params)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 200:
        return http_error(resp)
    body = resp.json()
    if args.json:
        print(json.dumps(body))
        return EXIT_OK
    saved = body["saved"]
    print(f"Saved in the last {args.days} days: {saved['total']}")
    for kind in saved["kinds"]:
        titles = ", ".join(i["title"] or "untitled" for i in kind["items"][:5])
        more = f" and {kind['count'] - 5} more" if kind["count"] > 5 else ""
        print(f"  {kind['modality']} ({kind['count']}): {titles}{more}")
    coming = body["coming"]
    print(f"Coming up in the next {args.days} days: {coming['total']}")
    for day in coming["days"]:
        print(f"  {day['label']}")
        for e in day["events"]:
            print("    " + line(e).replace("\n", "\n  "))
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``agenda`` and ``digest``."""
    ag = sub.add_parser("agenda", help="what your sources say is coming up (or, for a past range, what happened)")
    ag.add_argument("--days", type=int, default=14, help="how many days from the start (default 14)")
    ag.add_argument("--from", dest="start", metavar="TIME", help="start (ISO 8601; default: today)")
    ag.add_argument("--to", dest="end", metavar="TIME", help="end, exclusive (ISO 8601)")
    ag.add_argument("--habits", action="store_true", help="also habits ('yoga every Tuesday'), each day they fall on")
    ag.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    ag.add_argument("--as-of", metavar="TIME", help="read the agenda as of this time (ISO 8601)")
    client_opts(ag)
    ag.set_defaults(func=cmd_agenda, locale=None)
    dg = sub.add_parser("digest", help="the week: what you saved, by kind, and what is coming up")
    dg.add_argument("--days", type=int, default=7, help="how many days back and ahead (default 7)")
    dg.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    dg.add_argument("--as-of", metavar="TIME", help="as of this time (ISO 8601)")
    client_opts(dg)
    dg.set_defaults(func=cmd_digest, locale=None)
