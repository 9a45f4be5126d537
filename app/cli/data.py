"""Your data: ``sources``, ``export``, ``users erase`` and ``retention``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, metadata_for, say, settings_for


def _source_line(s: dict[str, Any]) -> str:
    version = f"v{s['version']}" if s.get("version") else "  "
    raw = "  (raw file expired)" if s.get("raw") == "expired" else ""
    stale = "  (older version)" if s.get("superseded") else ""
    tags = "  " + " ".join(f"#{t}" for t in s["tags"]) if s.get("tags") else ""
    line = (f"{(s.get('source_id') or '-'):<36}  {version:<4} {s['status'] or '-':<9}  {(s.get('modality') or '-'):<9}"
            f"  {(s.get('title') or s.get('source_uri') or '')[:60]}{stale}{raw}{tags}")
    if s["status"] != "failed":
        return line
    # A failed capture says why and what to do, as the web page's list of failed files does.
    then = (f"trying again may help: `secondbrain jobs {s['job_id']} --retry`" if s.get("retryable")
            else "fix the file and add it again")
    return f"{line}\n{'':<38}{s.get('reason') or s.get('error') or 'No reason was given.'} {then[0].upper()}{then[1:]}."


def cmd_sources(args: argparse.Namespace) -> int:
    """List your sources, show one with every version, or delete one."""
    import httpx

    if args.action in ("show", "delete") and not args.source_id:
        print(f"error: give the source id to {args.action} (see `secondbrain sources`)", file=sys.stderr)
        return EXIT_USAGE
    try:
        with http_client(args) as client:
            if args.action == "delete":
                resp = client.delete(f"/v1/sources/{args.source_id}")
                if resp.status_code == 404:
                    print(f"error: you have no source {args.source_id}", file=sys.stderr)
                    return EXIT_FAILED
                if resp.status_code != 204:
                    return http_error(resp)
                if args.json:
                    print(json.dumps({"deleted": args.source_id}))
                say(f"source {args.source_id} deleted: every version, its passages and its raw files")
                return EXIT_OK
            if args.action == "show":
                resp = client.get(f"/v1/sources/{args.source_id}")
                if resp.status_code == 404:
                    print(f"error: you have no source {args.source_id}", file=sys.stderr)
                    return EXIT_FAILED
                if resp.status_code != 200:
                    return http_error(resp)
                out = resp.json()
                if args.json:
                    print(json.dumps(out))
                    return EXIT_OK
                print(f"{out['title']}  ({out['source_uri']})  {out['status']}"
                      + ("  tags: " + ", ".join(out["tags"]) if out.get("tags") else ""))
                for v in out["versions"]:
                    label = f"v{v['version']}" if v["version"] else "(not extracted)"
                    state = "older" if v["superseded"] else "current" if v["version"] else ""
                    print(f"  {label:<5} {state:<8} {v['ingested_at'][:16]}  {v['size_bytes']} bytes  "
                          f"{v['chunk_count'] or 0} passages  raw {v['raw'] or '-'}  "
                          + ", ".join(f"job {j['job_id']} {j['status']}" for j in v["jobs"]))
                return EXIT_OK
            params: dict[str, Any] = {"limit": args.limit}
            if args.modality:
                params["modality"] = args.modality
            if args.status:
                params["status"] = args.status
            if getattr(args, "tag", None):
                params["tags"] = args.tag
            resp = client.get("/v1/sources", params=params)
    except httpx.TransportError as exc:
        return unreachable(args, exc)
    if resp.status_code != 200:
        return http_error(resp)
    rows = resp.json()["sources"]
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(_source_line(r))
        if not rows:
            say("nothing here yet: add something with `secondbrain ingest`")
    return EXIT_OK


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def cmd_export(args: argparse.Namespace) -> int:
    """Download all your data as a ZIP archive, with progress on stderr."""
    import zipfile

    import httpx

    target = Path(args.output)
    if target.exists() and not args.force:
        print(f"error: {target} exists; pass --force to overwrite it", file=sys.stderr)
        return EXIT_USAGE
    part = target.with_name(target.name + ".part")
    tty = sys.stderr.isatty()
    t0 = last = time.monotonic()
    got = 0
    try:
        with http_client(args) as client, client.stream("GET", "/v1/export",
                                                     timeout=httpx.Timeout(600.0, connect=5.0)) as resp:
            if resp.status_code != 200:
                resp.read()
                return http_error(resp)
            with part.open("wb") as fh:
                for block in resp.iter_bytes(1024 * 1024):
                    fh.write(block)
                    got += len(block)
                    now = time.monotonic()
                    if now - last >= (0.2 if tty else 5.0):
                        line = f"downloading: {_size(got)} ({_size(got / max(now - t0, 1e-6))}/s)"
                        sys.stderr.write(f"\r\x1b[K{line}" if tty else line + "\n")
                        sys.stderr.flush()
                        last = now
    except httpx.TransportError as exc:
        part.unlink(missing_ok=True)
        return unreachable(args, exc)
    if tty:
        sys.stderr.write("\r\x1b[K")
    try:
        with zipfile.ZipFile(part) as zf:
            manifest = json.loads(zf.read("manifest.json"))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        part.unlink(missing_ok=True)
        print(f"error: the download was cut short or is damaged ({exc}); run the export again", file=sys.stderr)
        return EXIT_FAILED
    part.replace(target)
    counts = manifest["counts"]
    if args.json:
        print(json.dumps({"path": str(target), "bytes": got, **manifest}))
    else:
        say(f"saved {target} ({_size(got)} in {time.monotonic() - t0:.1f}s): {counts['sources']} source versions, "
             f"{counts['documents']} documents, {counts['raw_files']} original files, "
             f"{counts['conversations']} conversations"
             + (f"; {counts['raw_expired']} originals had expired (retention)" if counts.get("raw_expired") else ""))
    return EXIT_OK


def _admin_stores(args: argparse.Namespace, metadata: Any, *, vectors: bool) -> tuple[Any, Any, Any]:
    """The backup gate, object store (and vector store) of the deployment the admin command acts on; their
    removals hold the gate, so a backup taken meanwhile (by `up` or another command) keeps its picture whole."""
    from app.assembly import build_gated_stores

    settings = settings_for(args)
    settings = settings.model_copy(update={"data_dir": settings.data_dir.resolve()})
    return build_gated_stores(settings, metadata, vectors=vectors)


def cmd_users_erase(args: argparse.Namespace) -> int:
    """Erase a user and everything theirs: rows, objects, vector collections."""
    from secondbrain import keys, lifecycle

    try:
        keys.check_user_id(args.user_id)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.yes:
        print(f"error: this erases {args.user_id} and everything they stored, for good; "
              f"repeat with --yes to do it", file=sys.stderr)
        return EXIT_USAGE
    with metadata_for(args) as store:
        _gate, objects, vectors = _admin_stores(args, store, vectors=True)
        try:
            try:  # before touching anything: a running embedded server holds its vector shards
                vectors.count(args.user_id)
            except RuntimeError as exc:
                print(f"error: {exc}. Stop `secondbrain up` first, or erase through it "
                      "(DELETE /v1/me?confirm=<user> with the user's key).", file=sys.stderr)
                return EXIT_USAGE
            report = lifecycle.erase_user(store, objects, vectors, args.user_id)
        finally:
            vectors.close()
    if args.json:
        print(json.dumps(report.to_json()))
    elif report.found:
        say(f"{args.user_id} erased: {sum(report.rows.values())} rows, {report.objects} objects, "
             "and their vector collections")
    else:
        say(f"no user {args.user_id}; cleared anything left under that id")
    return EXIT_OK if report.found else EXIT_FAILED


def cmd_retention(args: argparse.Namespace) -> int:
    """Remove the raw files the retention setting says have expired, now."""
    from secondbrain import lifecycle

    days = args.days if args.days is not None else settings_for(args).raw_retention_days
    if days is None:
        print("error: raw-file retention is off: set SB_RAW_RETENTION_DAYS=N, or pass --days N", file=sys.stderr)
        return EXIT_USAGE
    if days < 0:
        print("error: --days must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    with metadata_for(args) as store:
        gate, objects, _ = _admin_stores(args, store, vectors=False)
        report = lifecycle.purge_expired_raw(store, objects, days, gate=gate)
    if args.json:
        print(json.dumps({"days": days, **report.to_json()}))
    else:
        say(f"removed {report.artifacts} raw file(s) ({_size(report.bytes)}) of work finished before "
             f"{report.cutoff.isoformat(timespec='seconds')}; their text stays searchable")
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """``sources``, ``export`` and ``retention``."""
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

    ex = sub.add_parser("export", help="download all your data as a ZIP archive")
    ex.add_argument("-o", "--output", required=True, metavar="FILE.zip", help="where to save the archive")
    ex.add_argument("--force", action="store_true", help="overwrite FILE.zip")
    client_opts(ex)
    ex.set_defaults(func=cmd_export)

    rt_ = sub.add_parser("retention", help="raw-file retention (admin, talks to the database)")
    rt_.add_argument("action", choices=["run"], help="remove the raw files that have expired, now")
    rt_.add_argument("--days", type=int, default=None, help="keep raw files this many days (default "
                                                            "SB_RAW_RETENTION_DAYS)")
    rt_.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    rt_.add_argument("--json", action="store_true", help="print JSON for scripts")
    rt_.set_defaults(func=cmd_retention)
