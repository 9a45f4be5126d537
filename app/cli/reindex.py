"""Moving users to another embedding model: ``reindex``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, metadata_for, say, settings_for


def _index_json(i: Any) -> dict[str, Any]:
    return {"user_id": i.user_id, "version": i.version, "status": i.status, "model": i.model,
            "model_id": i.model_id, "dense_size": i.dense_size, "points_done": i.points_done,
            "points_total": i.points_total, "keep_old": i.keep_old, "lease_owner": i.lease_owner,
            "created_at": i.created_at.isoformat(),
            "activated_at": i.activated_at.isoformat() if i.activated_at else None,
            "retired_at": i.retired_at.isoformat() if i.retired_at else None,
            "dropped": i.dropped_at is not None}


def _index_line(i: Any, rows: list[Any] | None = None) -> str:
    extra = ""
    if i.status == "building":
        extra = f"  {i.points_done}/{i.points_total if i.points_total is not None else '?'} points"
        extra += f", by {i.lease_owner}" if i.lease_owner else ", waiting"
    elif i.status == "retired" and i.dropped_at is not None:
        extra = "  (collection dropped)"
    elif i.status == "retired" and i.activated_at is None:
        extra = "  (cancelled)"
    elif i.status == "retired":  # kept when the index that replaced it asked so; else dropped shortly
        kept = any(r.user_id == i.user_id and r.version > i.version and r.keep_old for r in rows or ())
        extra = "  (collection kept)" if kept else "  (collection being dropped)"
    return f"{i.user_id:<20} v{i.version:<4} {i.status:<9} {i.dense_size:>5}-d  {i.model_id}{extra}"


def cmd_reindex(args: argparse.Namespace) -> int:
    """Re-embed users' chunks with another model into a new collection version, then switch to it."""
    from app.assembly import build_gated_stores
    from secondbrain.embedding import EmbedderPool, check_spec, load_embedder
    from secondbrain.errors import RetryableError
    from secondbrain.sparse import Bm25Encoder
    from secondbrain.stores.vectors_edge import VectorsInUse
    from services.embedder.reindex import Reindexer

    settings = settings_for(args)
    settings = settings.model_copy(update={"data_dir": settings.data_dir.resolve()})
    with metadata_for(args) as store:
        if args.status:
            rows = store.indexes.vector_indexes(args.user)
            print(json.dumps([_index_json(i) for i in rows]) if args.json else
                  "\n".join(_index_line(i, rows) for i in rows) or "no vector indexes yet")
            return EXIT_OK
        if bool(args.user) == bool(args.all):
            print("error: give --user USER or --all", file=sys.stderr)
            return EXIT_USAGE
        if args.user and not store.users.user_exists(args.user):
            print(f"error: unknown user {args.user!r}", file=sys.stderr)
            return EXIT_USAGE
        users = [args.user] if args.user else sorted({i.user_id for i in store.indexes.vector_indexes(status="active")})
        if args.cancel:
            for user in users:
                cancelled = store.indexes.cancel_reindex(user)
                say(f"{user}: re-index to {cancelled.model_id} (v{cancelled.version}) cancelled" if cancelled
                     else f"{user}: no re-index in progress")
            return EXIT_OK
        spec = args.model or settings.embedding_model
        try:
            check_spec(spec)

            def load(name: str) -> Any:
                return load_embedder(name, batch_size=settings.embed_batch_size, base_url=settings.embedding_base_url,
                                     api_key=settings.embedding_api_key, timeout_s=settings.embedding_timeout_s)

            embedders = EmbedderPool(load(spec), load)
        except (ValueError, RetryableError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not users:
            say("no user has anything indexed yet: nothing to re-index")
            return EXIT_OK
        # Dropping the old index or stale points waits while a backup takes its picture.
        _gate, _objects, vectors = build_gated_stores(settings, store, vectors=True)
        assert vectors is not None
        reindexer = Reindexer(store, vectors, embedders, Bm25Encoder(), batch_size=args.batch_size,
                              on_progress=_Shown())
        if settings.vector_store == "edge":
            reindexer.drop_grace_s = 0.0  # the in-process engine is ours alone: nobody searches the old version
        results: list[dict[str, Any]] = []
        failed = False
        try:
            try:  # a running embedded server holds the in-process vector engine: it does the work then
                vectors.count(users[0])
                local = True
            except VectorsInUse:
                local = False
            if not local:
                return _reindex_through_server(store, reindexer, users, spec, args)
            failed = _reindex_here(reindexer, users, spec, args, results)
        finally:
            vectors.close()
            embedders.close()
        if args.json:
            print(json.dumps(results))
        return EXIT_FAILED if failed else EXIT_OK


class _Shown:
    """A re-index's progress: one line redrawn on a terminal, a line every 5 seconds otherwise (a log)."""

    def __init__(self) -> None:
        self.last_print = 0.0

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        if sys.stderr.isatty():
            print("\r" + p.line() + " " * 8, end="", file=sys.stderr, flush=True)
        elif now - self.last_print >= 5 or p.done >= p.total:
            self.last_print = now
            say(p.line())


def _reindex_here(reindexer: Any, users: list[str], spec: str, args: argparse.Namespace,
                  results: list[dict[str, Any]]) -> bool:
    """Re-index each user in this process (it holds the vectors), a result each into ``results``; whether one
    failed."""
    from secondbrain.errors import RetryableError
    from services.embedder.reindex import ReindexBusy, ReindexIncomplete

    failed = False
    for user in users:
        try:
            outcome = reindexer.reindex(user, spec, keep_old=args.keep_old)
        except (ReindexBusy, ReindexIncomplete, ValueError, LookupError, RetryableError) as exc:
            if sys.stderr.isatty():
                print(file=sys.stderr)
            print(f"error: {exc}", file=sys.stderr)
            failed = True
            results.append({"user_id": user, "status": "failed", "message": str(exc)})
            continue
        if sys.stderr.isatty() and outcome.status == "switched":
            print(file=sys.stderr)
        rate = outcome.run_points / outcome.seconds if outcome.seconds > 0 else 0.0
        say(outcome.message + (f" ({outcome.run_points} re-embedded in {outcome.seconds:.1f}s, "
                                f"{rate:.1f} points/s)" if outcome.status == "switched" else ""))
        results.append({"user_id": user, "status": outcome.status, "message": outcome.message,
                        "points": outcome.points, "seconds": round(outcome.seconds, 2),
                        "index": _index_json(outcome.index) if outcome.index else None})
    return failed


def _reindex_through_server(store: Any, reindexer: Any, users: list[str], spec: str, args: argparse.Namespace) -> int:
    """Record the re-indexes and follow the running embedded server filling them (it owns the vectors)."""
    begun = {}
    for user in users:
        try:
            index, why = reindexer.begin(user, spec, keep_old=args.keep_old)
        except (ValueError, LookupError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        say(why)
        if index is not None:
            begun[user] = index.version
    if not begun:
        return EXIT_OK
    say("secondbrain is running on this data directory: it re-embeds in the background "
         "(search keeps working); `secondbrain reindex --status` shows how far it is")
    if args.no_wait:
        return EXIT_OK
    shown: dict[str, str] = {}
    try:
        while begun:
            for index in store.indexes.vector_indexes():
                if begun.get(index.user_id) != index.version:
                    continue
                if index.status == "active":
                    say(f"{index.user_id}: now searching v{index.version} ({index.model_id})")
                    del begun[index.user_id]
                elif index.status == "retired":
                    print(f"error: {index.user_id}: the re-index to v{index.version} was cancelled", file=sys.stderr)
                    return EXIT_FAILED
                else:
                    line = _index_line(index)
                    if shown.get(index.user_id) != line:
                        shown[index.user_id] = line
                        say(line)
            time.sleep(1.0)
    except KeyboardInterrupt:
        say("stopped following; the server carries on")
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``reindex``."""
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
