"""Admin commands on the database: ``users`` and ``keys``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, metadata_for, say
from app.cli.data import cmd_users_erase


def cmd_users(args: argparse.Namespace) -> int:
    """Create a user (idempotent)."""
    from secondbrain import keys

    try:
        keys.check_user_id(args.user_id)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with metadata_for(args) as store:
        store.users.ensure_user(args.user_id, args.name)
    print(json.dumps({"user_id": args.user_id}))
    return EXIT_OK


def cmd_users_list(args: argparse.Namespace) -> int:
    """List users with their number of live keys."""
    with metadata_for(args) as store:
        rows = [{"user_id": u.user_id, "display_name": u.display_name, "created_at": u.created_at.isoformat(),
                 "active_keys": u.active_keys} for u in store.users.list_users()]
    print(json.dumps(rows) if args.json else "\n".join(
        f"{r['user_id']:<30} {r['active_keys']} key(s)  created {r['created_at'][:16]}" for r in rows))
    return EXIT_OK


def cmd_keys(args: argparse.Namespace) -> int:
    """Create, list and revoke API keys."""
    with metadata_for(args) as store:
        if args.action == "create":
            if not store.users.user_exists(args.user):
                print(f"error: unknown user {args.user!r}; create it with `secondbrain users add {args.user}`",
                      file=sys.stderr)
                return EXIT_USAGE
            info, secret = store.api_keys.create_api_key(args.user, args.name, args.scope)
            if args.json:
                print(json.dumps({"key_id": info.key_id, "user_id": info.user_id, "scope": info.scope,
                                  "api_key": secret}))
            else:
                print(secret)
                say(f"key {info.key_id} for {info.user_id}: shown once, store it now; "
                     "clients send it as 'Authorization: Bearer <key>' (the CLI reads SB_API_KEY)")
            return EXIT_OK
        if args.action == "list":
            rows = [{"key_id": k.key_id, "name": k.name, "scope": k.scope, "created_at": k.created_at.isoformat(),
                     "last_used_at": k.last_used_at.isoformat() if k.last_used_at else None,
                     "revoked": k.revoked_at is not None} for k in store.api_keys.list_api_keys(args.user)]
            print(json.dumps(rows) if args.json else "\n".join(
                f"{r['key_id']}  {r['name']:<20} {r['scope']:<8} created {r['created_at'][:16]}  "
                f"{'revoked' if r['revoked'] else 'active'}" for r in rows))
            return EXIT_OK
        if not args.key_id:
            print("error: give the key id to revoke (see `secondbrain keys list --user ...`)", file=sys.stderr)
            return EXIT_USAGE
        if not store.api_keys.revoke_api_key(args.user, args.key_id):
            print(f"error: {args.user} has no key {args.key_id}", file=sys.stderr)
            return EXIT_FAILED
        say(f"key {args.key_id} revoked")
        return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``users`` (add, list, erase) and ``keys``: admin commands on the database."""
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
    ue = us_sub.add_parser("erase", help="erase a user and everything theirs, for good")
    ue.add_argument("user_id")
    ue.add_argument("--yes", action="store_true", help="really erase")
    ue.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ue.add_argument("--json", action="store_true", help="print JSON for scripts")
    ue.set_defaults(func=cmd_users_erase)
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
