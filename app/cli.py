"""The ``secondbrain`` command.

Servers: ``up`` (embedded, everything in one process), ``gateway``, ``query`` and
``worker STAGE...`` (distributed pieces), ``migrate`` and ``topics`` (one-off set-up jobs).
Clients of the HTTP API: ``ingest``, ``search``, ``ask``, ``jobs``, ``sources``, ``export``.
Admin commands on the database: ``users``, ``keys``, ``retention``.

Exit codes: 0 success; 1 the work failed or found nothing; 2 bad usage or the service could
not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import mimetypes
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_URL = "http://127.0.0.1:8000"


# --------------------------------------------------------------------------- servers


def _settings(args: argparse.Namespace, **overrides: Any) -> Any:
    from secondbrain.settings import Settings

    base = Settings()  # type: ignore[call-arg]  # values come from the environment
    update = {k: v for k, v in overrides.items() if v is not None}
    for name in ("data_dir", "port", "host"):
        value = getattr(args, name, None)
        if value is not None:
            update[name] = Path(value) if name == "data_dir" else value
    return base.model_copy(update=update)


def _port_free(host: str, port: int) -> bool:
    """Check the HTTP port before starting anything, so a busy port is a one-line error, not a crash."""
    from secondbrain.infra.ports import port_is_bindable

    if port_is_bindable(port, host):
        return True
    print(f"error: {host}:{port} is already in use (another secondbrain?). Stop that process or pick "
          "another port with --port N (or SB_PORT).", file=sys.stderr)
    return False


def _json_logs(args: argparse.Namespace) -> bool:
    return args.log_format == "json" or (args.log_format == "auto" and not sys.stderr.isatty())


def cmd_up(args: argparse.Namespace) -> int:
    """Embedded mode: broker, Postgres, vector engine and every service in one command."""
    from app.serve import serve
    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.infra.tansu import TansuBroker
    from secondbrain.logs import setup_logging
    from secondbrain.pipeline.topology import STAGES

    settings = _settings(args, mode="embedded", object_store="files", vector_store="edge")
    setup_logging(args.log_level, json_logs=_json_logs(args))
    from secondbrain.infra.ports import is_loopback

    if not is_loopback(settings.host):
        print(f"error: refusing to listen on {settings.host}: embedded mode serves one machine. "
              "Use 127.0.0.1, or run the distributed services (they require API keys off loopback).",
              file=sys.stderr)
        return EXIT_USAGE
    if not _port_free(settings.host, settings.port):
        return EXIT_USAGE
    data_dir = settings.data_dir.resolve()
    settings = settings.model_copy(update={"data_dir": data_dir})  # the derived locations are absolute too
    (data_dir / "logs").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    _say(f"secondbrain: starting in {data_dir}")
    broker = TansuBroker(log_path=data_dir / "logs" / "broker.log").start()
    pg = None
    pointer = _server_pointer(settings.port)
    try:
        update: dict[str, Any] = {"kafka_bootstrap": broker.bootstrap}
        # One process owns every consumer group here, so a short session makes the group joins at
        # start-up quick (the local broker's join time follows it); explicit settings still win.
        if "SB_KAFKA_SESSION_TIMEOUT_MS" not in os.environ:
            update["kafka_session_timeout_ms"] = 3000
        if "SB_KAFKA_HEARTBEAT_INTERVAL_MS" not in os.environ:
            update["kafka_heartbeat_interval_ms"] = 750
        if settings.postgres_dsn is None:
            pg = EmbeddedPostgres(settings.postgres_dir).start()
            update["postgres_dsn"] = SecretStr(pg.dsn)
        settings = settings.model_copy(update=update)
        key_file, new_key, link = local_key(settings)

        def ready(proc: Any, _elapsed: float) -> None:
            url = f"http://{settings.host}:{settings.port}"
            _say(f"secondbrain is up in {time.perf_counter() - t0:.1f}s: {url}  (API docs: {url}/docs)")
            _say(f"  web app: open {url}/?token={link}")
            _say("    (signs this browser in once; run `secondbrain open` for a new link)")
            if new_key:
                _say(f"  your API key (user {settings.default_user!r}, admin): {new_key}")
            _say(f"  the key is saved in {key_file} (readable only by you); the CLI reads it from there, "
                 "other apps send it as 'Authorization: Bearer <key>'")
            with contextlib.suppress(OSError):  # clients on this machine find the data directory (not the key)
                pointer.parent.mkdir(parents=True, exist_ok=True)
                pointer.write_text(str(data_dir) + "\n")
            # Point at the command as it can be typed here (the venv may not be on PATH).
            prog = sys.argv[0] if Path(sys.argv[0]).name == "secondbrain" and not shutil.which("secondbrain") \
                else "secondbrain"
            _say(f'  try:  {prog} ingest --note "hello"   then   {prog} search hello')
            _say("  stop with Ctrl-C; data stays in " + str(data_dir))

        # uvicorn shuts down gracefully on SIGTERM, then raises the signal again: with Python's default
        # handler that would end the process before the broker and Postgres below are stopped.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        asyncio.run(serve(settings, gateway=True, query=True, stages=list(STAGES), embedded=True,
                          on_ready=ready))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        with contextlib.suppress(OSError):
            if pointer.read_text().strip() == str(data_dir):
                pointer.unlink()
        broker.stop()
        if pg is not None:
            pg.stop()
    return EXIT_OK


def _exit_on_sigterm(_signum: int, _frame: Any) -> None:
    raise SystemExit(0)


KEY_FILE = "api-key"


def local_key(settings: Any) -> tuple[Path, str | None, str]:
    """Embedded mode's start: the local user and its admin key, saved (0600) under the data directory
    on the first start, and a one-time sign-in link for the web page.  Returns the key file, the new
    key (``None`` when one exists) and the link's token."""
    from app.assembly import build_metadata
    from services.web.session import LINK_TTL_S

    key_file = settings.data_dir / KEY_FILE
    store = build_metadata(settings)
    secret: str | None = None
    try:
        store.database.migrate()
        store.users.ensure_user(settings.default_user, None)
        existing = key_file.read_text().strip() if key_file.exists() else ""
        principal = store.users.authenticate(existing) if existing else None
        if principal is None or principal.key_id is None:
            info, secret = store.users.create_api_key(
                settings.default_user, "local (created by secondbrain up)", "admin")
            key_id = info.key_id
        else:
            key_id = principal.key_id
        link = store.users.create_login_link(key_id, LINK_TTL_S)
    finally:
        store.database.close()
    if secret is not None:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secret + "\n")
        key_file.chmod(0o600)  # also when the file was there before (with a revoked key)
    return key_file, secret, link


def _serve_piece(args: argparse.Namespace, *, gateway: bool, query: bool, stages: list[str]) -> int:
    from app.serve import serve
    from secondbrain.logs import setup_logging

    settings = _settings(args, mode="distributed")
    setup_logging(args.log_level, json_logs=_json_logs(args))
    if not _port_free(settings.host, settings.port):
        return EXIT_USAGE
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings, gateway=gateway, query=query, stages=stages))
    return EXIT_OK


def cmd_gateway(args: argparse.Namespace) -> int:
    """The ingest gateway and its outbox relay."""
    return _serve_piece(args, gateway=True, query=False, stages=[])


def cmd_query(args: argparse.Namespace) -> int:
    """The query service."""
    return _serve_piece(args, gateway=False, query=True, stages=[])


def cmd_worker(args: argparse.Namespace) -> int:
    """One or more pipeline stages (health endpoints on --port)."""
    from secondbrain.pipeline.topology import STAGES

    bad = [s for s in args.stages if s not in STAGES]
    if bad:
        print(f"error: unknown stage(s) {', '.join(bad)}; choose from {', '.join(STAGES)}", file=sys.stderr)
        return EXIT_USAGE
    return _serve_piece(args, gateway=False, query=False, stages=list(dict.fromkeys(args.stages)))


def cmd_migrate(args: argparse.Namespace) -> int:
    """Apply database migrations and exit (a Kubernetes Job in production)."""
    from app.assembly import build_metadata

    store = build_metadata(_settings(args))
    try:
        applied = store.database.migrate()
    finally:
        store.database.close()
    print(json.dumps({"applied": applied}))
    return EXIT_OK


def cmd_topics(args: argparse.Namespace) -> int:
    """Create the pipeline's Kafka topics and exit."""
    from secondbrain.pipeline.kafka_security import aiokafka_options
    from secondbrain.pipeline.topics import TopicNames, ensure_topics

    s = _settings(args)
    created = asyncio.run(ensure_topics(s.kafka_bootstrap, TopicNames(s.topic_prefix), partitions=s.partitions,
                                        replication=s.replication_factor, client_options=aiokafka_options(s)))
    print(json.dumps({"created": created}))
    return EXIT_OK


# --------------------------------------------------------------------------- users and API keys


@contextlib.contextmanager
def _metadata(args: argparse.Namespace) -> Any:
    """The metadata store: SB_POSTGRES_DSN, or the embedded Postgres under --data-dir (shared with a
    running `secondbrain up`)."""
    from app.assembly import build_metadata

    settings = _settings(args)
    pg = None
    if settings.postgres_dsn is None:
        from secondbrain.infra.postgres import EmbeddedPostgres

        pg = EmbeddedPostgres(settings.data_dir.resolve() / "postgres").start()
        settings = settings.model_copy(update={"postgres_dsn": SecretStr(pg.dsn)})
    store = build_metadata(settings)
    try:
        store.database.migrate()
        yield store
    finally:
        store.database.close()
        if pg is not None:
            pg.stop()


def cmd_users(args: argparse.Namespace) -> int:
    """Create a user (idempotent)."""
    from secondbrain import keys

    try:
        keys.check_user_id(args.user_id)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with _metadata(args) as store:
        store.users.ensure_user(args.user_id, args.name)
    print(json.dumps({"user_id": args.user_id}))
    return EXIT_OK


def cmd_users_list(args: argparse.Namespace) -> int:
    """List users with their number of live keys."""
    with _metadata(args) as store:
        rows = [{"user_id": u.user_id, "display_name": u.display_name, "created_at": u.created_at.isoformat(),
                 "active_keys": u.active_keys} for u in store.users.list_users()]
    print(json.dumps(rows) if args.json else "\n".join(
        f"{r['user_id']:<30} {r['active_keys']} key(s)  created {r['created_at'][:16]}" for r in rows))
    return EXIT_OK


def cmd_keys(args: argparse.Namespace) -> int:
    """Create, list and revoke API keys."""
    with _metadata(args) as store:
        if args.action == "create":
            if not store.users.user_exists(args.user):
                print(f"error: unknown user {args.user!r}; create it with `secondbrain users add {args.user}`",
                      file=sys.stderr)
                return EXIT_USAGE
            info, secret = store.users.create_api_key(args.user, args.name, args.scope)
            if args.json:
                print(json.dumps({"key_id": info.key_id, "user_id": info.user_id, "scope": info.scope,
                                  "api_key": secret}))
            else:
                print(secret)
                _say(f"key {info.key_id} for {info.user_id}: shown once, store it now; "
                     "clients send it as 'Authorization: Bearer <key>' (the CLI reads SB_API_KEY)")
            return EXIT_OK
        if args.action == "list":
            rows = [{"key_id": k.key_id, "name": k.name, "scope": k.scope, "created_at": k.created_at.isoformat(),
                     "last_used_at": k.last_used_at.isoformat() if k.last_used_at else None,
                     "revoked": k.revoked_at is not None} for k in store.users.list_api_keys(args.user)]
            print(json.dumps(rows) if args.json else "\n".join(
                f"{r['key_id']}  {r['name']:<20} {r['scope']:<8} created {r['created_at'][:16]}  "
                f"{'revoked' if r['revoked'] else 'active'}" for r in rows))
            return EXIT_OK
        if not args.key_id:
            print("error: give the key id to revoke (see `secondbrain keys list --user ...`)", file=sys.stderr)
            return EXIT_USAGE
        if not store.users.revoke_api_key(args.user, args.key_id):
            print(f"error: {args.user} has no key {args.key_id}", file=sys.stderr)
            return EXIT_FAILED
        _say(f"key {args.key_id} revoked")
        return EXIT_OK


# --------------------------------------------------------------------------- clients


def _client(args: argparse.Namespace) -> Any:
    import httpx

    key = _find_key(args)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=args.url, timeout=httpx.Timeout(30.0, connect=5.0), headers=headers)


def _server_pointer(port: int) -> Path:
    """Where ``up`` notes its data directory for clients on this machine (a path, never the key)."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "secondbrain" / f"server-{port}"


def _find_key(args: argparse.Namespace) -> str | None:
    """The key a client sends: ``--api-key``, ``SB_API_KEY``, else the key ``secondbrain up`` saved in its
    data directory (``--data-dir``/``SB_DATA_DIR``, or the one a local ``up`` on that port noted)."""
    from urllib.parse import urlsplit

    key = getattr(args, "api_key", None) or os.environ.get("SB_API_KEY")
    if key:
        return str(key).strip()
    dirs: list[Path] = []
    if getattr(args, "data_dir", None):
        dirs.append(Path(args.data_dir))
    else:
        with contextlib.suppress(Exception):  # a broken .env is reported by the commands that need it
            dirs.append(_settings(args).data_dir)
    try:
        url = urlsplit(args.url)
        from secondbrain.infra.ports import is_loopback

        if url.hostname and is_loopback(url.hostname):
            noted = _server_pointer(url.port or 80)
            if noted.is_file():
                dirs.append(Path(noted.read_text().strip()))
    except (OSError, ValueError):
        pass
    for d in dirs:
        with contextlib.suppress(OSError):
            found = (d / KEY_FILE).read_text().strip()
            if found:
                return found
    return None


def _unreachable(args: argparse.Namespace, exc: Exception) -> int:
    print(f"error: cannot reach secondbrain at {args.url} ({exc}). Start it with `secondbrain up`, "
          "or pass --url / set SB_URL.", file=sys.stderr)
    return EXIT_USAGE


def _http_error(resp: Any) -> int:
    try:
        detail = resp.json().get("detail", resp.text)
    except ValueError:
        detail = resp.text
    print(f"error: HTTP {resp.status_code}: {detail}", file=sys.stderr)
    if resp.status_code == 401:
        print("  (the CLI sends --api-key, SB_API_KEY, or the key `secondbrain up` saved in its data directory: "
              "run it where `up` runs, or pass --data-dir)", file=sys.stderr)
    return EXIT_USAGE if resp.status_code < 500 else EXIT_FAILED


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _guess_type(path: Path) -> str:
    if path.suffix.lower() in (".md", ".markdown", ".mdown", ".mkd"):
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _expand(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file()
                              and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        else:
            out.append(p)
    return out


_MARK = {"pending": "·", "running": "…", "retrying": "↻", "succeeded": "✓", "failed": "✗", "skipped": "-"}


def _progress_line(label: str, job: dict[str, Any]) -> str:
    stages = "  ".join(f"{s['stage']} {_MARK.get(s['status'], '?')}" for s in job.get("stages", []))
    return f"{label[:40]:<40}  {job['status']:<9}  {stages}"


def wait_for_jobs(client: Any, jobs: list[tuple[str, str]], *, timeout_s: float) -> dict[str, dict[str, Any]]:
    """Poll jobs until they finish, drawing one progress line per job on stderr."""
    tty = sys.stderr.isatty()
    final: dict[str, dict[str, Any]] = {}
    last: dict[str, str] = {}
    deadline = time.monotonic() + timeout_s
    drawn = 0
    while len(final) < len(jobs) and time.monotonic() < deadline:
        lines = []
        for label, job_id in jobs:
            if job_id in final:
                lines.append(_progress_line(label, final[job_id]))
                continue
            resp = client.get(f"/v1/jobs/{job_id}")
            if resp.status_code == 429:  # over the read limit: wait as told, the job is not lost
                lines.append(_progress_line(label, final.get(job_id) or {"status": "waiting", "stages": []}))
                time.sleep(min(float(resp.headers.get("retry-after", "1") or 1), 10.0))
                continue
            if resp.status_code != 200:
                final[job_id] = {"job_id": job_id, "status": "failed", "error": f"HTTP {resp.status_code}",
                                 "stages": []}
                lines.append(f"{label[:40]:<40}  lost ({resp.status_code})")
                continue
            job = resp.json()
            if job["status"] in ("succeeded", "failed", "duplicate"):
                final[job_id] = job
            line = _progress_line(label, job)
            lines.append(line)
            if not tty and last.get(job_id) != line:
                _say(line)
                last[job_id] = line
        if tty:
            sys.stderr.write("\x1b[F" * drawn + "".join(f"\x1b[K{ln}\n" for ln in lines))
            sys.stderr.flush()
            drawn = len(lines)
        if len(final) < len(jobs):
            # About 4 polls a second in all, however many jobs: well inside the per-user read limit.
            time.sleep(max(0.25, 0.25 * (len(jobs) - len(final)) / 4))
    for _label, job_id in jobs:
        final.setdefault(job_id, {"job_id": job_id, "status": "timeout", "stages": []})
    return final


def cmd_ingest(args: argparse.Namespace) -> int:
    """Send notes and files to the gateway, then wait for their jobs."""
    import httpx

    if not args.paths and args.note is None:
        print("error: give file paths or --note TEXT", file=sys.stderr)
        return EXIT_USAGE
    submitted: list[dict[str, Any]] = []
    try:
        with _client(args) as client:
            if args.note is not None:
                body: dict[str, Any] = {"text": args.note}
                if args.title:
                    body["title"] = args.title
                if args.captured_at:
                    body["captured_at"] = args.captured_at
                resp = client.post("/v1/notes", json=body)
                if resp.status_code != 202:
                    return _http_error(resp)
                submitted.append({"label": args.title or args.note[:40], **resp.json()})
            urls = [p for p in args.paths if p.lower().startswith(("http://", "https://"))]
            for url in urls:
                page: dict[str, Any] = {"url": url}
                if args.title:
                    page["title"] = args.title
                if args.captured_at:
                    page["captured_at"] = args.captured_at
                resp = client.post("/v1/urls", json=page)
                if resp.status_code != 202:
                    return _http_error(resp)
                submitted.append({"label": url if len(url) <= 40 else url[:39] + "…", **resp.json()})
            files = _expand([p for p in args.paths if p not in urls])
            missing = [str(f) for f in files if not f.is_file()]
            if missing:
                print(f"error: not found: {', '.join(missing)}", file=sys.stderr)
                return EXIT_USAGE
            for path in files:
                data: dict[str, str] = {}
                if args.title:
                    data["title"] = args.title
                if args.captured_at:
                    data["captured_at"] = args.captured_at
                with path.open("rb") as fh:
                    resp = client.post("/v1/artifacts", data=data,
                                       files={"file": (path.name, fh, _guess_type(path))})
                if resp.status_code != 202:
                    return _http_error(resp)
                submitted.append({"label": path.name, **resp.json()})
            if not args.json:
                for s in submitted:
                    print(s["job_id"])
            if args.no_wait:
                if args.json:
                    print(json.dumps({"jobs": submitted}))
                return EXIT_OK
            results = wait_for_jobs(client, [(s["label"], s["job_id"]) for s in submitted], timeout_s=args.timeout)
    except httpx.TransportError as exc:
        return _unreachable(args, exc)
    failed = [r for r in results.values() if r["status"] not in ("succeeded", "duplicate")]
    if args.json:
        print(json.dumps({"jobs": list(results.values())}, default=str))
    for r in failed:
        _say(f"job {r['job_id']} {r['status']}: {r.get('error') or 'no reason given'}")
    return EXIT_FAILED if failed else EXIT_OK


def cmd_open(args: argparse.Namespace) -> int:
    """A one-time sign-in link for the web page, opened in this machine's browser (or printed)."""
    import httpx

    try:
        with _client(args) as client:
            resp = client.post("/v1/login-links")
    except httpx.TransportError as exc:
        return _unreachable(args, exc)
    if resp.status_code != 201:
        return _http_error(resp)
    link = args.url.rstrip("/") + resp.json()["path"]
    if args.json:
        print(json.dumps({"url": link, "expires_in_s": resp.json()["expires_in_s"]}))
        return EXIT_OK
    print(link)
    _say("  this link signs one browser in, once, within a day")
    if not args.print_only:
        import webbrowser

        with contextlib.suppress(Exception):  # no browser here (a server, ssh): the printed link is enough
            webbrowser.open(link)
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    """Hybrid search from the terminal."""
    import httpx

    try:
        with _client(args) as client:
            params: dict[str, Any] = {"q": args.query, "k": args.k, "mode": args.mode}
            tz = args.tz or _local_tz()
            if tz:
                params["tz"] = tz
            if args.as_of:
                params["now"] = args.as_of
            locale = args.locale or _local_locale()
            if locale:
                params["locale"] = locale
            resp = client.get("/v1/search", params=params)
    except httpx.TransportError as exc:
        return _unreachable(args, exc)
    if resp.status_code != 200:
        return _http_error(resp)
    out = resp.json()
    if args.json:
        print(json.dumps(out))
    else:
        if not out["hits"]:
            _say("nothing found")
        for i, h in enumerate(out["hits"], 1):
            where = " > ".join(h["heading_path"]) if h["heading_path"] else ""
            print(f"{i}. {h['title']}  ({h['captured_at'][:10]}, {h['modality']}{', ' + where if where else ''})"
                  f"  score {h['score']:.3f}")
            snippet = " ".join(h["text"].split())
            print(f"   {snippet[:240]}{'…' if len(snippet) > 240 else ''}")
    return EXIT_OK if out["hits"] else EXIT_FAILED


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


def cmd_ask(args: argparse.Namespace) -> int:
    """Ask a question and show the streamed answer, then the sources it cites."""
    import httpx

    sources: list[dict[str, Any]] = []
    done: dict[str, Any] = {}
    body: dict[str, Any] = {"question": args.question, "k": args.k}
    if args.conversation:
        body["conversation_id"] = args.conversation
    tz = args.tz or _local_tz()
    if tz:
        body["tz"] = tz
    if args.as_of:
        body["now"] = args.as_of
    locale = args.locale or _local_locale()
    if locale:
        body["locale"] = locale
    try:
        with _client(args) as client, client.stream("POST", "/v1/ask", json=body,
                                                     timeout=httpx.Timeout(180.0, connect=5.0)) as resp:
            if resp.status_code != 200:
                resp.read()
                return _http_error(resp)
            event = ""
            for line in resp.iter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:].strip())
                    if event == "meta" and not args.json:
                        if data.get("understood"):
                            _say(f"time: {data['understood']['description']}"
                                 + (" (a hint, not a filter)" if data["understood"].get("vague") else ""))
                        if data.get("standalone_question"):
                            _say(f"understood as: {data['standalone_question']}")
                        if data.get("note"):
                            _say(data["note"])
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
        return _unreachable(args, exc)
    if args.json:
        print(json.dumps({**done, "sources": sources}))
    else:
        print()
        for s in sources:
            if s["n"] in done.get("citations", []):
                print(_cited_line(s))
        if done.get("conversation_id"):
            _say(f"follow up with: secondbrain ask -c {done['conversation_id']} \"...\"")
    return EXIT_OK if done.get("grounded") else EXIT_FAILED


def cmd_jobs(args: argparse.Namespace) -> int:
    """Show one job with its stages and events."""
    import httpx

    try:
        with _client(args) as client:
            resp = client.get(f"/v1/jobs/{args.job_id}")
    except httpx.TransportError as exc:
        return _unreachable(args, exc)
    if resp.status_code != 200:
        return _http_error(resp)
    job = resp.json()
    if args.json:
        print(json.dumps(job))
    else:
        print(_progress_line(job.get("title") or job["job_id"], job))
        if job.get("error"):
            print(f"error: {job['error']}")
    return EXIT_OK if job["status"] in ("succeeded", "duplicate", "queued", "running") else EXIT_FAILED


# --------------------------------------------------------------------------- your data: sources, export, erasure


def _source_line(s: dict[str, Any]) -> str:
    version = f"v{s['version']}" if s.get("version") else "  "
    raw = "  (raw file expired)" if s.get("raw") == "expired" else ""
    stale = "  (older version)" if s.get("superseded") else ""
    return (f"{(s.get('source_id') or '-'):<36}  {version:<4} {s['status'] or '-':<9}  {(s.get('modality') or '-'):<9}"
            f"  {(s.get('title') or s.get('source_uri') or '')[:60]}{stale}{raw}")


def cmd_sources(args: argparse.Namespace) -> int:
    """List your sources, show one with every version, or delete one."""
    import httpx

    if args.action in ("show", "delete") and not args.source_id:
        print(f"error: give the source id to {args.action} (see `secondbrain sources`)", file=sys.stderr)
        return EXIT_USAGE
    try:
        with _client(args) as client:
            if args.action == "delete":
                resp = client.delete(f"/v1/sources/{args.source_id}")
                if resp.status_code == 404:
                    print(f"error: you have no source {args.source_id}", file=sys.stderr)
                    return EXIT_FAILED
                if resp.status_code != 204:
                    return _http_error(resp)
                if args.json:
                    print(json.dumps({"deleted": args.source_id}))
                _say(f"source {args.source_id} deleted: every version, its passages and its raw files")
                return EXIT_OK
            if args.action == "show":
                resp = client.get(f"/v1/sources/{args.source_id}")
                if resp.status_code == 404:
                    print(f"error: you have no source {args.source_id}", file=sys.stderr)
                    return EXIT_FAILED
                if resp.status_code != 200:
                    return _http_error(resp)
                out = resp.json()
                if args.json:
                    print(json.dumps(out))
                    return EXIT_OK
                print(f"{out['title']}  ({out['source_uri']})  {out['status']}")
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
            resp = client.get("/v1/sources", params=params)
    except httpx.TransportError as exc:
        return _unreachable(args, exc)
    if resp.status_code != 200:
        return _http_error(resp)
    rows = resp.json()["sources"]
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(_source_line(r))
        if not rows:
            _say("nothing here yet: add something with `secondbrain ingest`")
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
        with _client(args) as client, client.stream("GET", "/v1/export",
                                                     timeout=httpx.Timeout(600.0, connect=5.0)) as resp:
            if resp.status_code != 200:
                resp.read()
                return _http_error(resp)
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
        return _unreachable(args, exc)
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
        _say(f"saved {target} ({_size(got)} in {time.monotonic() - t0:.1f}s): {counts['sources']} source versions, "
             f"{counts['documents']} documents, {counts['raw_files']} original files, "
             f"{counts['conversations']} conversations"
             + (f"; {counts['raw_expired']} originals had expired (retention)" if counts.get("raw_expired") else ""))
    return EXIT_OK


def _admin_stores(args: argparse.Namespace, *, vectors: bool) -> tuple[Any, Any]:
    """The object store (and vector store) of the deployment the admin command acts on."""
    from app.assembly import build_objects, build_vectors

    settings = _settings(args)
    settings = settings.model_copy(update={"data_dir": settings.data_dir.resolve()})
    return build_objects(settings), (build_vectors(settings) if vectors else None)


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
    with _metadata(args) as store:
        objects, vectors = _admin_stores(args, vectors=True)
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
        _say(f"{args.user_id} erased: {sum(report.rows.values())} rows, {report.objects} objects, "
             "and their vector collections")
    else:
        _say(f"no user {args.user_id}; cleared anything left under that id")
    return EXIT_OK if report.found else EXIT_FAILED


def cmd_retention(args: argparse.Namespace) -> int:
    """Remove the raw files the retention setting says have expired, now."""
    from secondbrain import lifecycle

    days = args.days if args.days is not None else _settings(args).raw_retention_days
    if days is None:
        print("error: raw-file retention is off: set SB_RAW_RETENTION_DAYS=N, or pass --days N", file=sys.stderr)
        return EXIT_USAGE
    if days < 0:
        print("error: --days must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    with _metadata(args) as store:
        objects, _ = _admin_stores(args, vectors=False)
        report = lifecycle.purge_expired_raw(store, objects, days)
    if args.json:
        print(json.dumps({"days": days, **report.to_json()}))
    else:
        _say(f"removed {report.artifacts} raw file(s) ({_size(report.bytes)}) of work finished before "
             f"{report.cutoff.isoformat(timespec='seconds')}; their text stays searchable")
    return EXIT_OK


# --------------------------------------------------------------------------- embedding model (re-index)


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
    from app.assembly import build_vectors
    from secondbrain.embedding import EmbedderPool, check_spec, load_embedder
    from secondbrain.pipeline.errors import RetryableError
    from secondbrain.sparse import Bm25Encoder
    from secondbrain.stores.vectors_edge import VectorsInUse
    from services.embedder.reindex import Progress, ReindexBusy, Reindexer, ReindexIncomplete

    settings = _settings(args)
    settings = settings.model_copy(update={"data_dir": settings.data_dir.resolve()})
    with _metadata(args) as store:
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
                _say(f"{user}: re-index to {cancelled.model_id} (v{cancelled.version}) cancelled" if cancelled
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
            _say("no user has anything indexed yet: nothing to re-index")
            return EXIT_OK
        vectors = build_vectors(settings)
        last_print = [0.0]

        def show(p: Progress) -> None:
            now = time.monotonic()
            if sys.stderr.isatty():
                print("\r" + p.line() + " " * 8, end="", file=sys.stderr, flush=True)
            elif now - last_print[0] >= 5 or p.done >= p.total:
                last_print[0] = now
                _say(p.line())

        reindexer = Reindexer(store, vectors, embedders, Bm25Encoder(), batch_size=args.batch_size, on_progress=show)
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
                _say(outcome.message + (f" ({outcome.run_points} re-embedded in {outcome.seconds:.1f}s, "
                                        f"{rate:.1f} points/s)" if outcome.status == "switched" else ""))
                results.append({"user_id": user, "status": outcome.status, "message": outcome.message,
                                "points": outcome.points, "seconds": round(outcome.seconds, 2),
                                "index": _index_json(outcome.index) if outcome.index else None})
        finally:
            vectors.close()
            embedders.close()
        if args.json:
            print(json.dumps(results))
        return EXIT_FAILED if failed else EXIT_OK


def _reindex_through_server(store: Any, reindexer: Any, users: list[str], spec: str, args: argparse.Namespace) -> int:
    """Record the re-indexes and follow the running embedded server filling them (it owns the vectors)."""
    begun = {}
    for user in users:
        try:
            index, why = reindexer.begin(user, spec, keep_old=args.keep_old)
        except (ValueError, LookupError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        _say(why)
        if index is not None:
            begun[user] = index.version
    if not begun:
        return EXIT_OK
    _say("secondbrain is running on this data directory: it re-embeds in the background "
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
                    _say(f"{index.user_id}: now searching v{index.version} ({index.model_id})")
                    del begun[index.user_id]
                elif index.status == "retired":
                    print(f"error: {index.user_id}: the re-index to v{index.version} was cancelled", file=sys.stderr)
                    return EXIT_FAILED
                else:
                    line = _index_line(index)
                    if shown.get(index.user_id) != line:
                        shown[index.user_id] = line
                        _say(line)
            time.sleep(1.0)
    except KeyboardInterrupt:
        _say("stopped following; the server carries on")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


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
    up.add_argument("--data-dir", default=None, help="where data lives (default ./.secondbrain; SB_DATA_DIR)")
    server_opts(up)
    up.set_defaults(func=cmd_up)

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
    ks.add_argument("--scope", choices=["user", "admin", "producer"], default="user",
                    help="user: the HTTP API; admin: also manage users and keys; producer: only sign Kafka events")
    ks.add_argument("--data-dir", default=None, help="embedded mode's data directory (without SB_POSTGRES_DSN)")
    ks.add_argument("--json", action="store_true", help="print JSON for scripts")
    ks.set_defaults(func=cmd_keys)

    def client_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--url", default=os.environ.get("SB_URL", DEFAULT_URL), help="secondbrain's address")
        sp.add_argument("--api-key", default=None, help="API key (default: SB_API_KEY, else the key `secondbrain "
                                                        "up` saved in its data directory)")
        sp.add_argument("--data-dir", default=None, help="where `secondbrain up` keeps its data (and key), if not "
                                                         "./.secondbrain or SB_DATA_DIR")
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

    op = sub.add_parser("open", help="sign the web page in: a one-time link, opened in the browser")
    op.add_argument("--print", dest="print_only", action="store_true", help="only print the link")
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
    ak.add_argument("--tz", help="your time zone, e.g. Europe/Paris (default: this machine's)")
    ak.add_argument("--as-of", metavar="TIME", help="read 'yesterday', 'last week'... as of this time (ISO 8601)")
    ak.add_argument("--locale", help="how you write dates and which holidays you keep, e.g. en_GB "
                    "(default: this machine's LC_TIME/LANG)")
    client_opts(ak)
    ak.set_defaults(func=cmd_ask)

    jb = sub.add_parser("jobs", help="show a job's progress")
    jb.add_argument("job_id")
    client_opts(jb)
    jb.set_defaults(func=cmd_jobs)

    so = sub.add_parser("sources", help="list your sources, show one, or delete one (every version)")
    so.add_argument("action", nargs="?", choices=["list", "show", "delete"], default="list")
    so.add_argument("source_id", nargs="?", help="the source to show or delete")
    so.add_argument("--modality", help="only this kind: note, markdown, pdf, web, audio, image...")
    so.add_argument("--status", choices=["queued", "running", "succeeded", "failed", "duplicate"])
    so.add_argument("--limit", type=int, default=100)
    client_opts(so)
    so.set_defaults(func=cmd_sources)
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``secondbrain`` command."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
