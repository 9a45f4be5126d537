"""The argument parser and the entry point."""

from __future__ import annotations

import argparse
import os
from typing import Any

from app.cli.accounts import cmd_keys, cmd_users, cmd_users_list
from app.cli.agenda import cmd_agenda, cmd_digest
from app.cli.asking import cmd_ask, cmd_jobs, cmd_search
from app.cli.backup import add_parser as add_backup_parser
from app.cli.calendar import add_parser as add_calendar_parser
from app.cli.capture import cmd_ingest, cmd_open
from app.cli.common import DEFAULT_URL, server_url
from app.cli.data import cmd_export, cmd_retention, cmd_sources, cmd_users_erase
from app.cli.deadletters import cmd_deadletters
from app.cli.editing import add_parser as add_editing_parser
from app.cli.importing import add_parser as add_import_parser
from app.cli.mail import add_parser as add_mail_parser
from app.cli.mcp import cmd_mcp
from app.cli.reindex import cmd_reindex
from app.cli.servers import cmd_gateway, cmd_migrate, cmd_query, cmd_topics, cmd_up, cmd_worker
from app.cli.service import add_parser as add_service_parser
from app.cli.watch import cmd_watch


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = argparse.ArgumentParser(prog="secondbrain", description="A personal memory engine.")
    sub = p.add_subparsers(dest="command", required=True)

    def server_opts(sp: argparse.ArgumentParser, port: int | None = None) -> None:
        sp.add_argument("--host", help="address to listen on (default 127.0.0.1)")
        sp.add_argument("--port", type=int, default=port, help="HTTP port (default 8000; SB_PORT)")
        sp.add_argument("--log-level", default=os.environ.get("SB_LOG_LEVEL", "INFO"))
        sp.add_argument("--log-format", choices=("auto", "json", "text"),
                        default=os.environ.get("SB_LOG_FORMAT", "auto"),
                        help="JSON lines for log collectors, text for people; auto: text on a terminal")

    up = sub.add_parser("up", help="run everything locally (embedded mode)")
    up_options(up, server_opts)
    up.set_defaults(func=cmd_up)
    add_service_parser(sub, lambda sp: up_options(sp, server_opts))

    for name, fn, helptext in (("gateway", cmd_gateway, "run the ingest gateway (distributed mode)"),
                               ("query", cmd_query, "run the query service (distributed mode)")):
        sp = sub.add_parser(name, help=helptext)
        server_opts(sp)
        sp.set_defaults(func=fn)
    wk = sub.add_parser("worker", help="run pipeline stages (distributed mode)")
    wk.add_argument("stages", nargs="+", metavar="STAGE", help="fetch, extract, chunk and/or embed")
    server_opts(wk)
    wk.set_defaults(func=cmd_worker)
    for name, fn, helptext in (("migrate", cmd_migrate, "apply database migrations and exit"),
                               ("topics", cmd_topics, "create Kafka topics and exit")):
        sp = sub.add_parser(name, help=helptext)
        sp.set_defaults(func=fn)

    us = sub.add_parser("users", help="manage users (admin, talks to the database)")
    us_sub = us.add_subparsers(dest="users_action", required=True)
    ua = us_sub.add_parser("add", help="create a user")
    ua.add_argument("user_id")
    ua.add_argument("--name", default=None, help="display name")
    ua.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ua.set_defaults(func=cmd_users)
    ul = us_sub.add_parser("list", help="list users")
    ul.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ul.add_argument("--json", action="store_true", help="print JSON for scripts")
    ul.set_defaults(func=cmd_users_list)
    ks = sub.add_parser("keys", help="create, list or revoke API keys (admin, talks to the database)")
    ks.add_argument("action", choices=["create", "list", "revoke"])
    ks.add_argument("key_id", nargs="?", help="the key to revoke")
    ks.add_argument("--user", required=True, help="whose keys")
    ks.add_argument("--name", default="cli", help="a label for a new key")
    ks.add_argument("--scope", choices=["user", "admin", "producer", "capture"], default="user",
                    help="user: the HTTP API; admin: also manage users and keys; producer: only sign Kafka events; "
                         "capture: only add notes, files, pages and links (e.g. a browser extension's)")
    ks.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ks.add_argument("--json", action="store_true", help="print JSON for scripts")
    ks.set_defaults(func=cmd_keys)

    def client_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--url", default=None, help="secondbrain's address (default: SB_URL, else the newest "
                                                    f"`secondbrain up` running on this machine, else {DEFAULT_URL})")
        sp.add_argument("--api-key", default=None, help="API key (default: SB_API_KEY, else the key `secondbrain "
                                                        "up` saved in its data directory)")
        sp.add_argument("--data-dir", default=None, help="where `secondbrain up` keeps its data (and key): talk to "
                                                         "the `up` keeping it (default: SB_DATA_DIR, else the "
                                                         "platform's place)")
        sp.add_argument("--json", action="store_true", help="print JSON for scripts")

    ing = sub.add_parser("ingest", help="add files, web pages (URLs) or a note")
    ing.add_argument("paths", nargs="*", metavar="PATH", help="files, folders or http(s) URLs to ingest")
    ing.add_argument("--note", help="ingest this text as a note")
    ing.add_argument("--title")
    ing.add_argument("--captured-at", help="when it happened (ISO 8601, e.g. 2026-03-01T09:30:00+01:00)")
    ing.add_argument("--no-wait", action="store_true", help="print job ids and return at once")
    ing.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the jobs")
    client_opts(ing)
    ing.set_defaults(func=cmd_ingest)
    add_import_parser(sub, client_opts)
    add_backup_parser(sub, client_opts)
    add_mail_parser(sub, client_opts)
    add_calendar_parser(sub, client_opts)

    wa = sub.add_parser("watch", help="keep folders in sync: new, changed, moved and deleted files follow")
    wa.add_argument("dirs", nargs="+", metavar="DIR", help="folders to keep in sync (an Obsidian vault, Documents...)")
    wa.add_argument("--once", action="store_true", help="sync once (deletions included) and exit")
    wa.add_argument("--state", metavar="FILE", help="where to keep what was synced (default: under "
                                                    "~/.local/state/secondbrain)")
    client_opts(wa)
    wa.set_defaults(func=cmd_watch)

    mc = sub.add_parser("mcp", help="serve your memory as MCP tools on stdin/stdout, for AI assistants "
                                     "(Claude Desktop, Cursor...)")
    client_opts(mc)
    mc.set_defaults(func=cmd_mcp)

    op = sub.add_parser("open", help="sign the web page in: a one-time link, opened in the browser")
    op.add_argument("--print", dest="print_only", action="store_true", help="only print the link")
    op.add_argument("--phone", action="store_true", help="a link at the public address (SB_PUBLIC_URL) with a "
                                                         "QR code to scan with the phone")
    client_opts(op)
    op.set_defaults(func=cmd_open)

    se = sub.add_parser("search", help="search your data")
    se.add_argument("query")
    se.add_argument("-k", type=int, default=5)
    se.add_argument("--mode", choices=("hybrid", "dense", "sparse"), default="hybrid")
    se.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    se.add_argument("--as-of", metavar="TIME", help="read 'yesterday', 'last week'... as of this time (ISO 8601)")
    se.add_argument("--locale", help="how you write dates and which holidays you keep, e.g. en_GB "
                    "(default: this machine's LC_TIME/LANG)")
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
    ak.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    ak.add_argument("--as-of", metavar="TIME", help="read 'yesterday', 'last week'... as of this time (ISO 8601)")
    ak.add_argument("--locale", help="how you write dates and which holidays you keep, e.g. en_GB "
                    "(default: this machine's LC_TIME/LANG)")
    client_opts(ak)
    ak.set_defaults(func=cmd_ask)

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

    jb = sub.add_parser("jobs", help="show a job's progress")
    jb.add_argument("job_id")
    jb.add_argument("--retry", action="store_true", help="try a failed capture again (as a new job)")
    client_opts(jb)
    jb.set_defaults(func=cmd_jobs)

    dl = sub.add_parser("deadletters", help="events the pipeline refused or could not process, and why")
    dl.add_argument("--limit", type=int, default=50, help="at most this many, newest first (default 50)")
    client_opts(dl)
    dl.set_defaults(func=cmd_deadletters)

    so = sub.add_parser("sources", help="list your sources, show one, or delete one (every version)")
    so.add_argument("action", nargs="?", choices=["list", "show", "delete"], default="list")
    so.add_argument("source_id", nargs="?", help="the source to show or delete")
    so.add_argument("--modality", help="only this kind: note, markdown, pdf, web, audio, image...")
    so.add_argument("--status", choices=["queued", "running", "succeeded", "failed", "duplicate", "superseded"])
    so.add_argument("--limit", type=int, default=100)
    so.add_argument("--tag", action="append", default=[], metavar="TAG",
                    help="only sources with this tag (repeat: with every one)")
    client_opts(so)
    so.set_defaults(func=cmd_sources)
    add_editing_parser(sub, client_opts)
    ex = sub.add_parser("export", help="download all your data as a ZIP archive")
    ex.add_argument("-o", "--output", required=True, metavar="FILE.zip", help="where to save the archive")
    ex.add_argument("--force", action="store_true", help="overwrite FILE.zip")
    client_opts(ex)
    ex.set_defaults(func=cmd_export)
    ue = us_sub.add_parser("erase", help="erase a user and everything theirs, for good")
    ue.add_argument("user_id")
    ue.add_argument("--yes", action="store_true", help="really erase")
    ue.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ue.add_argument("--json", action="store_true", help="print JSON for scripts")
    ue.set_defaults(func=cmd_users_erase)
    rt_ = sub.add_parser("retention", help="raw-file retention (admin, talks to the database)")
    rt_.add_argument("action", choices=["run"], help="remove the raw files that have expired, now")
    rt_.add_argument("--days", type=int, default=None, help="keep raw files this many days (default "
                                                            "SB_RAW_RETENTION_DAYS)")
    rt_.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    rt_.add_argument("--json", action="store_true", help="print JSON for scripts")
    rt_.set_defaults(func=cmd_retention)
    ri = sub.add_parser("reindex", help="move users to another embedding model, searching the old index meanwhile "
                                        "(admin, talks to the database and the vector store)")
    ri.add_argument("--model", default=None, help="'minilm-int8' or 'openai:<model name>' (served at "
                                                  "SB_EMBEDDING_BASE_URL); default SB_EMBEDDING_MODEL")
    ri.add_argument("--user", default=None, help="re-index this user")
    ri.add_argument("--all", action="store_true", help="re-index every user with indexed data")
    ri.add_argument("--keep-old", action="store_true", help="keep the replaced collection (default: drop it)")
    ri.add_argument("--status", action="store_true", help="show each user's index versions and progress")
    ri.add_argument("--cancel", action="store_true", help="abandon the re-index in progress")
    ri.add_argument("--batch-size", type=int, default=64, help="points embedded per request (default 64)")
    ri.add_argument("--no-wait", action="store_true", help="with a running embedded server: return once recorded")
    ri.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ri.add_argument("--json", action="store_true", help="print JSON for scripts")
    ri.set_defaults(func=cmd_reindex)
    return p


def up_options(up: argparse.ArgumentParser, server_opts: Any) -> None:
    """``up``'s options (also taken by ``service install``, which runs ``up`` with them)."""
    up.add_argument("--data-dir", default=None,
                    help="where data lives (default: ~/.local/share/secondbrain on Linux, ~/Library/Application "
                         "Support/secondbrain on macOS; SB_DATA_DIR)")
    server_opts(up)
    up.add_argument("--llm", metavar="URL", default=None,
                    help="OpenAI-compatible endpoint for answers, e.g. http://127.0.0.1:11434/v1 (SB_LLM_BASE_URL; "
                         "default: a local Ollama, llama.cpp or LM Studio if one is running)")
    up.add_argument("--llm-model", metavar="NAME", default=None,
                    help="the model to answer with (SB_LLM_MODEL; default: the first the server lists)")
    up.add_argument("--no-llm", action="store_true", help="do not look for a local model server")
    up.add_argument("--kafka-port", type=int, default=None,
                    help="port of the local Kafka broker other apps publish to, on 127.0.0.1 "
                         "(default 9092 when free, else any free port; SB_KAFKA_PORT)")
    up.add_argument("--lan", action="store_true",
                    help="also serve HTTPS on this machine's local network address, for a phone (a self-signed "
                         "certificate kept in the data directory; see the phone in docs/at-home.md)")
    up.add_argument("--lan-address", metavar="IP", default=None,
                    help="the IPv4 address to serve --lan on (implies --lan; SB_LAN_ADDRESS; default: the "
                         "private address of the interface traffic leaves by)")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``secondbrain`` command."""
    args = build_parser().parse_args(argv)
    if hasattr(args, "url") and args.url is None:  # a client command: the server it talks to
        args.url = server_url(args)
    return int(args.func(args))
