"""``secondbrain backup [PATH]`` and ``secondbrain restore PATH --data-dir DIR``.

``backup`` takes one archive of the whole instance.  While ``secondbrain up`` runs it asks that server (an
admin key: the one ``up`` saved), which writes the archive into its backup folder, and then copies it to
PATH; otherwise it reads the stores itself (the data directory, or the servers of a distributed deployment).
``restore`` builds a new instance from an archive: a data directory for ``up``, or (``--into-servers``) the
empty stores of a distributed deployment.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say, settings_for

PASSPHRASE_ENV = "SB_BACKUP_PASSPHRASE"


def add_parser(sub: Any, client_opts: Any) -> None:
    """The ``backup`` and ``restore`` commands' arguments."""
    bk = sub.add_parser("backup", help="back up the whole instance (users, keys, sources, vectors...) into one archive",
                        description="Back up the whole instance into one archive, consistent at one instant, while "
                                    "it runs. Without PATH the archive goes into the backup folder (SB_BACKUP_DIR).")
    bk.add_argument("path", nargs="?", metavar="PATH", help="the archive to write (a file name, or a folder)")
    _secret_opts(bk)
    client_opts(bk)
    bk.set_defaults(func=cmd_backup)

    rs = sub.add_parser("restore", help="build a new instance from a backup archive",
                        description="Build a new instance from a backup: every part is checked first. The data "
                                    "directory must be new (or empty); then run `secondbrain up --data-dir DIR`.")
    rs.add_argument("path", metavar="PATH", help="the backup archive")
    rs.add_argument("--data-dir", default=None, help="the new data directory to build (for `secondbrain up`)")
    rs.add_argument("--into-servers", action="store_true",
                    help="restore into the empty PostgreSQL, S3 bucket and Qdrant server the SB_* settings name "
                         "(distributed mode) instead of a data directory")
    rs.add_argument("--as-it-was", action="store_true",
                    help="keep the data as the archive holds it, without this version's database migrations: to go "
                         "back to the version that wrote it (e.g. the archive `up` takes before an upgrade)")
    rs.add_argument("--check", action="store_true", help="only check the archive (every part) and say what it holds")
    rs.add_argument("--json", action="store_true", help="print JSON for scripts")
    _secret_opts(rs)
    rs.set_defaults(func=cmd_restore)


def _secret_opts(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--passphrase", action="store_true",
                    help=f"seal (or open) the archive with a passphrase, asked for here (or {PASSPHRASE_ENV})")
    sp.add_argument("--passphrase-file", metavar="FILE", help="...read from the first line of FILE")
    sp.add_argument("--key-file", metavar="FILE", help="seal (or open) it with the key in FILE (32 random bytes or "
                                                       "more: `head -c 32 /dev/urandom > FILE`)")


def _secret(args: argparse.Namespace, *, confirm: bool) -> Any:
    """The passphrase or key file the options name (the settings' when none), or None."""
    from app.backups import secret_from
    from secondbrain.backup.sealed import Secret

    if args.key_file:
        return Secret.key_file(Path(args.key_file))
    if args.passphrase_file:
        lines = Path(args.passphrase_file).read_text().splitlines()
        return Secret.passphrase(lines[0] if lines else "")
    if args.passphrase:
        if os.environ.get(PASSPHRASE_ENV):
            return Secret.passphrase(os.environ[PASSPHRASE_ENV])
        text = getpass.getpass("passphrase: ")
        if confirm and getpass.getpass("the same passphrase again: ") != text:
            from secondbrain.backup.archive import BackupError

            raise BackupError("the two passphrases differ; nothing was written")
        return Secret.passphrase(text)
    return secret_from(settings_for(args))


class _Shown:
    """Progress on stderr: what is happening, how far, and the time left (one line a second at most)."""

    def __init__(self, what: str) -> None:
        self.what, self.started, self.last, self.tty = what, time.monotonic(), 0.0, sys.stderr.isatty()

    def __call__(self, doing: str, done: float) -> None:
        now = time.monotonic()
        if now - self.last < 1.0 and done < 1.0:
            return
        self.last = now
        elapsed = now - self.started
        left = f", about {elapsed * (1 - done) / done:.0f} s left" if done > 0.05 else ""
        end = "\r" if self.tty else "\n"
        print(f"{self.what}: {doing}: {done:.0%}{left}".ljust(78), end=end, file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def cmd_backup(args: argparse.Namespace) -> int:
    """Back up the whole instance (see the module doc)."""
    from secondbrain.backup.archive import BackupError

    try:
        secret = _secret(args, confirm=True)
        settings = settings_for(args)
        if settings.postgres_dsn is None and _running_here(args, settings):
            return _backup_through_server(args, settings, secret)
        return _backup_here(args, settings, secret)
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def _running_here(args: argparse.Namespace, settings: Any) -> bool:
    """Whether the `secondbrain up` the client options point at serves this data directory."""
    from app.cli.common import running_servers

    wanted = settings.data_dir.resolve()
    return any(server.data_dir.resolve() == wanted for server in running_servers())


def _target(path: str | None, folder: Path) -> Path:
    from datetime import UTC, datetime

    from secondbrain.backup import folder as backup_folder

    if path is None or Path(path).is_dir():
        where = Path(path) if path is not None else folder
        where.mkdir(parents=True, exist_ok=True)
        return where / backup_folder.archive_name(datetime.now(UTC), where)
    return Path(path)


def _backup_here(args: argparse.Namespace, settings: Any, secret: Any) -> int:
    from app.backups import back_up

    target = _target(args.path, settings.backups_dir)
    shown = _Shown("backup")
    taken = back_up(settings, target, secret=secret, progress=shown)
    shown.end()
    _said(args, taken.path, taken.size, taken.manifest.fields.get("users", {}), secret is not None)
    return EXIT_OK


def _said(args: argparse.Namespace, path: Path, size: int, users: dict[str, Any], sealed: bool) -> None:
    if args.json:
        print(json.dumps({"path": str(path), "size": size, "sealed": sealed, "users": users}))
        return
    passages = sum(int(u.get("passages", 0)) for u in users.values())
    sources = sum(int(u.get("sources", 0)) for u in users.values())
    say(f"backed up {len(users)} user{'s' if len(users) != 1 else ''}, {sources} sources and {passages} passages "
        f"into {path} ({size / 1e6:.1f} MB{', sealed' if sealed else ''})")
    say(f"  restore it with: secondbrain restore {path} --data-dir NEW_DIR")


def _backup_through_server(args: argparse.Namespace, settings: Any, secret: Any) -> int:
    """Ask the running `up` for a backup (its backup folder), then copy it to PATH when one is given."""
    import httpx

    from app.cli.client import http_client, http_error, unreachable

    shown = _Shown("backup")
    stop = threading.Event()
    with http_client(args) as client:
        watcher = threading.Thread(target=_watch, args=(client, shown, stop), daemon=True)
        watcher.start()
        try:
            resp = client.post("/v1/admin/backups", timeout=httpx.Timeout(None, connect=5.0))
        except httpx.TransportError as exc:
            return unreachable(args, exc)
        finally:
            stop.set()
            watcher.join(timeout=2)
            shown.end()
        if resp.status_code != 201:
            return http_error(resp, "backup")
        made = resp.json()["archive"]
        sealed = bool(resp.json()["status"].get("sealed"))
        path = Path(resp.json()["status"]["folder"]) / made["name"]
        if args.path is not None:
            target = Path(args.path) / made["name"] if Path(args.path).is_dir() else Path(args.path)
            _download(client, made["name"], target, None if sealed else secret)
            path, sealed = target, sealed or secret is not None
    _said(args, path, path.stat().st_size if path.exists() else made["size"], resp.json().get("users", {}), sealed)
    return EXIT_OK


def _watch(client: Any, shown: _Shown, stop: threading.Event) -> None:
    """Show the server's progress while it writes the backup."""
    while not stop.wait(1.0):
        with contextlib.suppress(Exception):
            running = client.get("/v1/admin/backups").json().get("running")
            if running:
                shown(running["what"], float(running["done"]))


def _download(client: Any, name: str, target: Path, secret: Any) -> None:
    """Copy an archive from the server to ``target`` (whole or not at all), sealing it on the way when asked."""
    import httpx

    from secondbrain.backup import folder as backup_folder
    from secondbrain.backup.archive import BackupError
    from secondbrain.backup.sealed import SealingWriter

    with client.stream("GET", f"/v1/admin/backups/{name}", timeout=httpx.Timeout(None, connect=5.0)) as resp:
        if resp.status_code != 200:
            resp.read()
            raise BackupError(f"the server did not hand the archive over (HTTP {resp.status_code})")
        with backup_folder.written_whole(target.resolve()) as out:
            sink: Any = SealingWriter(out, secret) if secret is not None else out
            for block in resp.iter_bytes(1024 * 1024):
                sink.write(block)
            if secret is not None:
                sink.close()


def cmd_restore(args: argparse.Namespace) -> int:
    """Check an archive, or build a new instance from it."""
    from secondbrain.backup import restore
    from secondbrain.backup.archive import BackupError

    path = Path(args.path)
    shown = _Shown("restore")
    try:
        secret = _secret(args, confirm=False)
        if args.check:
            manifest = restore.check_only(path, secret, shown)
            shown.end()
            summary = restore.summary(manifest)
            print(json.dumps(summary) if args.json else _holds(summary, "the archive is whole"))
            return EXIT_OK
        if not args.into_servers and not args.data_dir:
            print("error: name the new data directory with --data-dir DIR (or restore into servers with "
                  "--into-servers)", file=sys.stderr)
            return EXIT_USAGE
        done = _restore(args, path, secret, shown)
    except BackupError as exc:
        shown.end()
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    shown.end()
    if args.json:
        print(json.dumps(done.json()))
    else:
        say(_holds(restore.summary(done.manifest), "restored"))
        if done.applied_migrations:
            say(f"  migrated the database from schema {done.manifest.fields.get('schema_version')} "
                f"(applied {', '.join(map(str, done.applied_migrations))})")
        rec = done.reconciled
        say(f"  left out {rec.objects_removed} objects and {rec.points_removed} passages that the dump does not refer "
            "to (work that was in flight runs again at the next start)")
        if rec.missing_raw or rec.missing_points:
            say(f"  warning: {len(rec.missing_raw)} raw files and {len(rec.missing_points)} documents' passages the "
                "dump refers to are missing")
        if args.data_dir and args.as_it_was:
            say(f"  kept as the archive holds it (database schema {done.manifest.fields.get('schema_version')}): "
                f"start it with the version that wrote it, `secondbrain up --data-dir {args.data_dir}`")
        elif args.data_dir:
            say(f"  start it with: secondbrain up --data-dir {args.data_dir}")
    return EXIT_OK


def _restore(args: argparse.Namespace, path: Path, secret: Any, shown: _Shown) -> Any:
    from app.backups import restore_data_dir, restore_servers

    if args.into_servers:
        settings = settings_for(args)
        return restore_servers(path, settings, secret=secret, progress=shown,
                               staging_dir=path.resolve().parent)
    return restore_data_dir(path, Path(args.data_dir), secret=secret, progress=shown, migrate=not args.as_it_was)


def _holds(summary: dict[str, Any], what: str) -> str:
    users = summary.get("users") or {}
    lines = [f"{what}: a backup of {summary.get('created_at')} (secondbrain {summary.get('secondbrain_version')}, "
             f"schema {summary.get('schema_version')}, {summary.get('vector_engine')} vectors)"]
    for user, c in sorted(users.items()):
        lines.append(f"  {user}: {c.get('sources', 0)} sources ({c.get('versions', 0)} versions), "
                     f"{c.get('passages', 0)} passages, {c.get('conversations', 0)} conversations, "
                     f"{c.get('api_keys', 0)} keys, {c.get('feeds', 0)} calendar feeds")
    return "\n".join(lines)
