"""Asking: ``search``, ``ask`` (a streamed, cited answer) and ``jobs``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from app.cli.client import http_client, http_error, progress_line, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, say


def cmd_search(args: argparse.Namespace) -> int:
    """Hybrid search from the terminal."""
    import httpx

    try:
        with http_client(args) as client:
            params: dict[str, Any] = {"q": args.query, "k": args.k, "mode": args.mode, **_time_context(args)}
            resp = client.get("/v1/search", params=params)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 200:
        return http_error(resp)
    out = resp.json()
    closest = out.get("closest") or []
    if args.json:
        print(json.dumps(out))
    else:
        if not out["hits"]:
            say(f"Nothing matches “{args.query}”." + (" The closest:" if closest else ""))
        for i, h in enumerate(out["hits"] or closest, 1):
            where = " > ".join(h["heading_path"]) if h["heading_path"] else ""
            print(f"{i}. {h['title']}  ({h['captured_at'][:10]}, {h['modality']}{', ' + where if where else ''})"
                  f"  score {h['score']:.3f}")
            snippet = " ".join(h["text"].split())
            print(f"   {snippet[:240]}{'…' if len(snippet) > 240 else ''}")
    return EXIT_OK if out["hits"] else EXIT_FAILED


def _time_context(args: argparse.Namespace) -> dict[str, str]:
    """How to read time words: the zone and locale (the option, else this machine's) and "as of"."""
    out = {"tz": args.tz or _local_tz(), "now": args.as_of, "locale": args.locale or _local_locale()}
    return {k: v for k, v in out.items() if v}


def _local_tz() -> str | None:
    """This machine's IANA time zone name, so "yesterday" means the user's yesterday."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name and "/" in name:
        return name
    try:
        link = os.readlink("/etc/localtime")
        if "zoneinfo/" in link:
            return link.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    try:
        return Path("/etc/timezone").read_text().strip() or None
    except OSError:
        return None


def _local_locale() -> str | None:
    """This machine's locale for dates (LC_ALL, LC_TIME, LANG), so "3/12" reads as the user writes it;
    none for the C/POSIX locale, which says nothing about the user."""
    for var in ("LC_ALL", "LC_TIME", "LANG"):
        value = os.environ.get(var, "").strip()
        if value:
            name = value.split(".", 1)[0].split("@", 1)[0]
            return None if name in ("C", "POSIX") else name
    return None


def _cited_line(s: dict[str, Any]) -> str:
    where = [s["captured_at_local"][:16].replace("T", " ")] if s.get("captured_at_local") else []
    if s.get("page") is not None:
        where.append(f"page {s['page']}")
    if s.get("position"):
        where.append(s["position"])
    if s.get("heading_path"):
        where.append(" > ".join(s["heading_path"]))
    origin = s.get("source_uri") or ""
    tail = f"  {origin}" if origin.startswith(("http://", "https://")) else ""
    return f"[{s['n']}] {s['title']} ({', '.join(where)}){tail}"


def _carried(c: dict[str, Any]) -> str:
    """What a follow-up took over, in words: 'the garden' and 'last week'."""
    return " and ".join(f"'{x}'" for x in (c.get("subject"), c.get("time")) if x) or "the subject"


def _warn_unsupported(done: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    """The model's answer cites none of the sources: say so plainly, and quote what the sources do say."""
    print("warning: this answer is not supported by your data (it cites none of your sources); "
          "do not rely on it.")
    quoted = done.get("extractive")
    if not quoted:
        print("None of your passages answers it.")
        return
    print("What your data says:")
    print(quoted["answer"])
    for s in sources:
        if s["n"] in quoted.get("citations", []):
            print(_cited_line(s))


def cmd_ask(args: argparse.Namespace) -> int:
    """Ask a question and show the streamed answer, then the sources it cites."""
    import httpx
    from httpx_sse import connect_sse

    sources: list[dict[str, Any]] = []
    done: dict[str, Any] = {}
    # A one-shot question is answered and kept nowhere; -c continues a conversation and --keep starts one
    # (listed on the web page beside the person's own).
    keep = bool(args.conversation or getattr(args, "keep", False))
    body: dict[str, Any] = {"question": args.question, "k": args.k, "keep": keep}
    if args.conversation:
        body["conversation_id"] = args.conversation
    if getattr(args, "fresh", False):
        body["fresh"] = True
    body.update(_time_context(args))
    try:
        with http_client(args) as client, connect_sse(client, "POST", "/v1/ask", json=body,
                                                      timeout=httpx.Timeout(180.0, connect=5.0)) as stream:
            resp = stream.response
            if resp.status_code != 200:
                resp.read()
                return http_error(resp)
            for sse in stream.iter_sse():
                event, data = sse.event, sse.json()
                if event == "meta" and not args.json:
                    if data.get("understood"):
                        say(f"time: {data['understood']['description']}"
                             + (" (a hint, not a filter)" if data["understood"].get("vague") else ""))
                    if data.get("standalone_question"):
                        say(f"understood as: {data['standalone_question']}")
                    if data.get("carried_over"):
                        say(f"took {_carried(data['carried_over'])} from your earlier question "
                            "(add --fresh to ask without it)")
                    if data.get("note"):
                        say(data["note"])
                elif event == "sources":
                    sources = data
                elif event == "token" and not args.json:
                    print(data["text"], end="", flush=True)
                elif event == "done":
                    done = data
                elif event == "error":
                    print(f"\nerror: {data['message']}", file=sys.stderr)
                    return EXIT_FAILED
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if not keep:  # nothing was kept: no id to follow up with
        done.pop("conversation_id", None)
    if args.json:
        print(json.dumps({**done, "sources": sources}))
    else:
        print()
        for s in sources:
            if s["n"] in done.get("citations", []):
                print(_cited_line(s))
        if done.get("unsupported"):
            _warn_unsupported(done, sources)
        if keep and done.get("conversation_id"):
            say(f"follow up with: secondbrain ask -c {done['conversation_id']} \"...\"")
    return EXIT_OK if done.get("grounded") else EXIT_FAILED


def cmd_jobs(args: argparse.Namespace) -> int:
    """Show one job with its stages and events."""
    import httpx

    try:
        with http_client(args) as client:
            path = f"/v1/jobs/{args.job_id}"
            resp = client.post(f"{path}/retry") if args.retry else client.get(path)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if args.retry:
        if resp.status_code != 202:
            return http_error(resp)
        again = resp.json()
        if args.json:
            print(json.dumps(again))
        else:
            say(f"tried again as job {again['job_id']}: follow it with `secondbrain jobs {again['job_id']}`")
        return EXIT_OK
    if resp.status_code != 200:
        return http_error(resp)
    job = resp.json()
    if args.json:
        print(json.dumps(job))
    else:
        print(progress_line(job.get("title") or job["job_id"], job))
        if job.get("error"):
            print(f"error: {job.get('reason') or job['error']}")
            if job["status"] == "failed":
                print(f"trying again may help: `secondbrain jobs {job['job_id']} --retry` (or Retry on the web page)"
                      if job.get("retryable") else "trying again would fail the same way: fix the file and add it "
                      "again")
    return EXIT_OK if job["status"] in ("succeeded", "duplicate", "superseded", "queued", "running") else EXIT_FAILED


def add_parser(sub: Any, client_opts: Any) -> None:
    """``search``, ``ask`` and ``jobs``."""
    se = sub.add_parser("search", help="search your data")
    se.add_argument("query")
    se.add_argument("-k", type=int, default=5)
    se.add_argument("--mode", choices=("hybrid", "dense", "sparse"), default="hybrid")
    _time_opts(se)
    client_opts(se)
    se.set_defaults(func=cmd_search)

    ak = sub.add_parser("ask", help="ask a question about your data")
    ak.add_argument("question")
    ak.add_argument("-k", type=int, default=6, help="how many sources to ground the answer in")
    ak.add_argument("-c", "--conversation", help="continue this conversation (follow-up questions)")
    ak.add_argument("--keep", action="store_true", help="keep the question and its answer as a conversation "
                    "(listed on the web page; follow up with -c); without it a one-shot answer is kept nowhere")
    ak.add_argument("--fresh", action="store_true",
                    help="with -c: take nothing from the earlier questions (ask it as a new one)")
    _time_opts(ak)
    client_opts(ak)
    ak.set_defaults(func=cmd_ask)

    jb = sub.add_parser("jobs", help="show a job's progress")
    jb.add_argument("job_id")
    jb.add_argument("--retry", action="store_true", help="try a failed capture again (as a new job)")
    client_opts(jb)
    jb.set_defaults(func=cmd_jobs)


def _time_opts(sp: Any) -> None:
    """How a question's time words read: the person's zone, the moment they are read from, the calendar."""
    sp.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    sp.add_argument("--as-of", metavar="TIME", help="read 'yesterday', 'last week'... as of this time (ISO 8601)")
    sp.add_argument("--locale", help="how you write dates and which holidays you keep, e.g. en_GB "
                    "(default: this machine's LC_TIME/LANG)")
