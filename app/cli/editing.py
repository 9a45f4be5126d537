"""Changing what is kept from the terminal: ``edit`` (a source's words, title and tags) and ``tags`` (the
list, and one tag added to or taken off several sources)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli.client import detail_of, http_client, http_error, unreachable, wait_for_jobs
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say


def add_parser(sub: Any, client_opts: Any) -> None:
    ed = sub.add_parser("edit", help="edit a source: its text (a new version), its title or its tags")
    ed.add_argument("source_id")
    ed.add_argument("--title", help="the new title")
    words = ed.add_mutually_exclusive_group()
    words.add_argument("--text", help="the new text (a note's or a text file's; a new version)")
    words.add_argument("--text-file", metavar="FILE", help="the new text, read from FILE ('-': standard input)")
    ed.add_argument("--tag", action="append", default=[], metavar="TAG", help="add this tag (repeat for more)")
    ed.add_argument("--untag", action="append", default=[], metavar="TAG", help="remove this tag (repeat for more)")
    ed.add_argument("--version", type=int, metavar="N",
                    help="refuse the edit if the source is no longer at version N (someone changed it meanwhile)")
    ed.add_argument("--no-wait", action="store_true", help="do not wait for the new version to be indexed")
    client_opts(ed)
    ed.set_defaults(func=cmd_edit)

    tg = sub.add_parser("tags", help="list your tags, or add one to (or take it off) sources")
    tg.add_argument("action", nargs="?", choices=["list", "add", "remove"], default="list")
    tg.add_argument("tag", nargs="?", help="the tag to add or remove")
    tg.add_argument("source_ids", nargs="*", help="the sources to add it to or take it off")
    client_opts(tg)
    tg.set_defaults(func=cmd_tags)


def cmd_edit(args: argparse.Namespace) -> int:
    """Edit one source through ``PATCH /v1/sources/{id}``."""
    import httpx

    text: str | None = args.text
    if args.text_file:
        try:
            text = sys.stdin.read() if args.text_file == "-" else Path(args.text_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"error: cannot read {args.text_file}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if text is None and args.title is None and not args.tag and not args.untag:
        print("error: nothing to change: give --title, --text, --text-file, --tag or --untag", file=sys.stderr)
        return EXIT_USAGE
    body: dict[str, Any] = {}
    if text is not None:
        body["text"] = text
    if args.title is not None:
        body["title"] = args.title
    headers = {"If-Match": f'"{args.version}"'} if args.version is not None else {}
    try:
        with http_client(args) as client:
            if args.tag or args.untag:
                shown = client.get(f"/v1/sources/{args.source_id}")
                if shown.status_code == 404:
                    print(f"error: you have no source {args.source_id}", file=sys.stderr)
                    return EXIT_FAILED
                if shown.status_code != 200:
                    return http_error(shown)
                have = shown.json().get("tags", [])
                drop = {t.strip().lstrip("#").lower() for t in args.untag}
                body["tags"] = [t for t in [*have, *args.tag] if t not in drop]
            resp = client.patch(f"/v1/sources/{args.source_id}", json=body, headers=headers)
            if resp.status_code == 404:
                print(f"error: you have no source {args.source_id}", file=sys.stderr)
                return EXIT_FAILED
            if resp.status_code in (409, 412, 413, 422):
                print(f"error: {detail_of(resp)}", file=sys.stderr)
                return EXIT_FAILED
            if resp.status_code not in (200, 202):
                return http_error(resp)
            out = resp.json()
            if resp.status_code == 202 and not args.no_wait:
                done = wait_for_jobs(client, [(args.source_id, out["job_id"])], timeout_s=300)
                job = done.get(out["job_id"], {})
                if job.get("status") != "succeeded":
                    print(f"error: the new version did not go through: {job.get('reason') or job.get('status')}",
                          file=sys.stderr)
                    return EXIT_FAILED
                out = client.get(f"/v1/sources/{args.source_id}").json()
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if args.json:
        print(json.dumps(out))
    elif resp.status_code == 202 and args.no_wait:
        say(f"edited: the new version is being indexed (`secondbrain jobs {out['job_id']}`)")
    else:
        tags = ", ".join(out.get("tags") or []) or "none"
        say(f"{out['title']}: version {out.get('current_version') or '-'}, tags: {tags}")
    return EXIT_OK


def cmd_tags(args: argparse.Namespace) -> int:
    """List tags, or add one to (or take it off) several sources."""
    import httpx

    if args.action in ("add", "remove") and (not args.tag or not args.source_ids):
        print(f"error: give the tag and the sources: secondbrain tags {args.action} TAG SOURCE_ID...",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        with http_client(args) as client:
            if args.action == "list":
                resp = client.get("/v1/tags")
            else:
                resp = client.request("POST" if args.action == "add" else "DELETE",
                                      f"/v1/tags/{args.tag}/sources", json={"source_ids": args.source_ids})
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code in (404, 422):
        print(f"error: {detail_of(resp)}", file=sys.stderr)
        return EXIT_FAILED
    if resp.status_code != 200:
        return http_error(resp)
    out = resp.json()
    if args.json:
        print(json.dumps(out))
    elif args.action == "list":
        for row in out["tags"]:
            print(f"{row['tag']:<32} {row['sources']}")
        if not out["tags"]:
            say("no tags yet: add one with `secondbrain tags add TAG SOURCE_ID` or `secondbrain edit ID --tag TAG`")
    else:
        done = "added to" if args.action == "add" else "taken off"
        say(f"{out['tag']}: {done} {out['changed']} of {len(out['source_ids'])} sources")
    return EXIT_OK
