"""Servers: ``up`` (embedded), ``gateway``, ``query``, ``worker STAGE...``, ``migrate`` and ``topics``."""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from app.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    KEY_FILE,
    backup_before,
    not_upgraded,
    noted_data_dir,
    running_servers,
    say,
    server_opts,
    server_pointer,
    settings_for,
    up_options,
)
from connectors.calendars import Refresher
from connectors.folders import Watcher
from connectors.mail import Mailer

if TYPE_CHECKING:
    from secondbrain.infra.lan import LanCertificate
    from secondbrain.settings import Settings


def _port_free(host: str, port: int) -> bool:
    """Check the HTTP port before starting anything, so a busy port is a one-line error, not a crash."""
    from secondbrain.infra.ports import port_is_bindable

    if port_is_bindable(port, host):
        return True
    print(f"error: {host}:{port} is already in use (another secondbrain?). Stop that process or pick "
          "another port with --port N (or SB_PORT).", file=sys.stderr)
    return False


DEFAULT_KAFKA_PORT = 9092  # the usual Kafka port, so an app's default settings find the local broker


def _kafka_port_free(port: int) -> bool:
    """A broker port asked for explicitly must be free: falling back to another would leave apps
    configured with it talking to nobody (or to another broker)."""
    from secondbrain.infra.ports import port_is_bindable

    if port_is_bindable(port, "127.0.0.1"):
        return True
    print(f"error: the broker port 127.0.0.1:{port} is already in use (another Kafka or secondbrain?). "
          "Stop that process, or pick another port with --kafka-port N (or SB_KAFKA_PORT); leave both "
          "unset to take 9092 or any free port.", file=sys.stderr)
    return False


def _json_logs(args: argparse.Namespace) -> bool:
    return args.log_format == "json" or (args.log_format == "auto" and not sys.stderr.isatty())


def backups_line(settings: Settings) -> str:
    """What `up` says about its backups at start."""
    folder = settings.backups_dir.resolve()
    if settings.backup_interval_s is None:
        return (f"  backups: only when asked (`secondbrain backup`, or Settings > Back up now), into {folder}; "
                "SB_BACKUP_INTERVAL=24h backs up daily")
    return (f"  backups: every {settings.backup_interval} into {folder} (SB_BACKUP_INTERVAL, SB_BACKUP_DIR; "
            "put them on another disk)")


def cmd_up(args: argparse.Namespace) -> int:
    """Embedded mode: broker, Postgres, vector engine and every service in one command."""
    from secondbrain.infra.private import PRIVATE_UMASK

    # Everything this process and its children (broker, Postgres, vector engine) create is the owner's only.
    os.umask(PRIVATE_UMASK)
    plan = plan_up(args)
    if plan is None:
        return EXIT_USAGE
    return run_up(plan, look_for_llm=not getattr(args, "no_llm", False))


@dataclasses.dataclass(frozen=True)
class UpPlan:
    """What ``up`` runs, decided (and checked) before anything starts: the settings, the data directory (made
    private), the LAN listener and its certificate when asked for, whether the embedded PostgreSQL's user must
    pass through the data directory (run as root)."""

    settings: Any
    data_dir: Path
    lan: Any = None  # app.serve.LanListener
    cert: Any = None  # secondbrain.infra.lan.LanCertificate
    pg_passes: bool = False


def plan_up(args: argparse.Namespace) -> UpPlan | None:
    """``up``'s plan from its options and settings; ``None`` after saying why it cannot run (an address off this
    machine, a data directory already served or unusable, a port taken, data newer than this version)."""
    from secondbrain.infra.ports import is_loopback
    from secondbrain.infra.private import make_private
    from secondbrain.logs import setup_logging

    settings = settings_for(args, mode="embedded", object_store="files", vector_store="edge",
                            llm_base_url=getattr(args, "llm", None), llm_model=getattr(args, "llm_model", None))
    setup_logging(args.log_level, json_logs=_json_logs(args))
    if not is_loopback(settings.host):
        print(f"error: refusing to listen on {settings.host}: embedded mode serves one machine. "
              "Use 127.0.0.1, or run the distributed services (they require API keys off loopback).",
              file=sys.stderr)
        return None
    data_dir = _data_dir_for_up(settings)
    if data_dir is None:
        return None
    already = next((s.url for s in running_servers() if s.data_dir == data_dir), None)
    if already:  # a second `up` on the same data would only fail later, on the vector engine's lock
        print(f"error: secondbrain is already running on {data_dir} at {already}: `secondbrain open` signs a "
              "browser in to it. To restart it, stop that one first (Ctrl-C where it runs; as a service, "
              "`secondbrain service install` restarts it).", file=sys.stderr)
        return None
    if not _port_free(settings.host, settings.port):
        return None
    if settings.kafka_port is not None and not _kafka_port_free(settings.kafka_port):
        return None
    lan_address = None
    if getattr(args, "lan", False) or getattr(args, "lan_address", None):
        lan_address = _lan_address(args, settings)
        if lan_address is None:
            return None
    update: dict[str, Any] = {"data_dir": data_dir}  # the derived locations are absolute too
    if lan_address is not None:  # the address links are made with (calendar feeds), when no public one is set
        update["lan_address"] = lan_address
    settings = settings.model_copy(update=update)
    (data_dir / "logs").mkdir(parents=True, exist_ok=True)
    # Run as root, the embedded PostgreSQL runs as the user 'pgserver', who must pass through the data directory.
    pg_passes = os.geteuid() == 0 and settings.postgres_dsn is None
    opened = make_private(data_dir, others_may_pass=pg_passes)  # a data directory from an earlier version
    if opened:
        say(f"secondbrain: made {opened} files and folders in {data_dir} readable by you only")
    if settings.postgres_dsn is None and not _postgres_not_newer(settings.postgres_dir):
        return None
    if lan_address is None:
        return UpPlan(settings, data_dir, pg_passes=pg_passes)
    from app.serve import LanListener
    from secondbrain.infra.lan import ensure_certificate

    cert = ensure_certificate(data_dir, lan_address)  # made once, then reused: the phone trusts it once
    return UpPlan(settings, data_dir, LanListener(lan_address, settings.port, cert.cert_file, cert.key_file), cert,
                  pg_passes)


def _local_kafka(broker: Any) -> dict[str, Any]:
    """The settings for the local broker: its address, and waits made short for one process on one machine
    (explicit settings still win)."""
    update: dict[str, Any] = {"kafka_bootstrap": broker.bootstrap}
    # One process owns every consumer group here, so a short session makes the group joins at
    # start-up quick (the local broker's join time follows it).
    if "SB_KAFKA_SESSION_TIMEOUT_MS" not in os.environ:
        update["kafka_session_timeout_ms"] = 3000
    if "SB_KAFKA_HEARTBEAT_INTERVAL_MS" not in os.environ:
        update["kafka_heartbeat_interval_ms"] = 750
    # The local broker holds every fetch for its whole wait, even when a record arrives meanwhile: each hop
    # between stages would cost up to that wait. So it is asked not to hold them, and the consumers pace
    # themselves, woken when this process publishes (secondbrain/pipeline/fetch_pacing.py).
    if "SB_KAFKA_FETCH_MAX_WAIT_MS" not in os.environ:
        update["kafka_fetch_max_wait_ms"] = 5
    if "SB_KAFKA_FETCH_IDLE_MS" not in os.environ:
        update["kafka_fetch_idle_ms"] = 1000
    return update


def run_up(plan: UpPlan, *, look_for_llm: bool) -> int:
    """Run ``plan``: the broker, PostgreSQL and every service in this process, and the connectors the settings
    name, until Ctrl-C or SIGTERM; then everything stopped in order."""
    from app.serve import serve
    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.infra.private import tighten_top
    from secondbrain.infra.tansu import TansuBroker
    from secondbrain.llm_discovery import resolve_answer_model
    from secondbrain.stages import STAGES

    settings, data_dir = plan.settings, plan.data_dir
    t0 = time.perf_counter()
    say(f"secondbrain: starting in {data_dir}")
    # Looking for a model server runs while the broker and Postgres start, so it delays nothing.
    answers = _in_background(resolve_answer_model, settings, look=look_for_llm)
    # Loopback only: other apps on this machine publish to it; nothing else can reach it.
    broker = TansuBroker(port=settings.kafka_port, preferred_port=DEFAULT_KAFKA_PORT,
                         log_path=data_dir / "logs" / "broker.log").start()
    pg = None
    clients = _Connectors()
    pointer = server_pointer(settings.port)
    try:
        update = _local_kafka(broker)
        if settings.postgres_dsn is None:
            pg = EmbeddedPostgres(settings.postgres_dir, template=settings.postgres_template).start()
            update["postgres_dsn"] = SecretStr(pg.dsn)
            tighten_top(data_dir, others_may_pass=plan.pg_passes)  # pgserver opens it to others when run as root
        if settings.pipeline_key is None:  # the internal topics' events are sealed with the data dir's key
            update["pipeline_key"] = SecretStr(local_pipeline_key(data_dir))
        llm_update, answers_line = answers.result()
        settings = settings.model_copy(update={**update, **llm_update})
        if not upgrade_data(settings):
            return EXIT_USAGE
        # One link per browser to sign in: this computer's, the phone's at the public address, on the LAN.
        key_file, new_key, links = local_key(settings, links=1 + bool(settings.public_url) + bool(plan.lan))
        ready_settings = settings

        def ready(proc: Any, _elapsed: float) -> None:
            url = f"http://{ready_settings.host}:{ready_settings.port}"
            say(f"secondbrain is up in {time.perf_counter() - t0:.1f}s: {url}  (API docs: {url}/docs)")
            say(f"  {answers_line}")
            _say_up(plan, ready_settings, url, links, key_file, new_key, broker.bootstrap, pointer)
            clients.start(url, key_file, ready_settings, data_dir)

        stopping = _StopDeadline(lambda: _stop_local_services(broker, pg))
        # uvicorn stops the server on SIGINT/SIGTERM, then raises the signal again: with Python's default
        # handlers that would end the process (or cancel the stop under way) before the stages, the broker
        # and Postgres below are stopped.  Before the server runs, the signals end start-up.
        handler = functools.partial(_on_stop_signal, stopping)
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
        asyncio.run(serve(settings, gateway=True, query=True, stages=list(STAGES), embedded=True,
                          on_ready=ready, on_stop=stopping.arm, lan=plan.lan))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        clients.stop()
        with contextlib.suppress(OSError):
            if noted_data_dir(pointer) == data_dir:
                pointer.unlink()
        _stop_local_services(broker, pg)
    if _busy_threads():
        # A stage thread still inside one document: its event is processed again at the next start; waiting
        # for it (as the interpreter would at exit) could take minutes.
        _exit_now(EXIT_OK)
    return EXIT_OK


def _say_up(plan: UpPlan, settings: Any, url: str, links: list[str], key_file: Path, new_key: str | None,
            bootstrap: str, pointer: Path) -> None:
    """What ``up`` says once it serves: how to sign a browser in, where the key is, how to try it; and the note
    that lets clients on this machine find the data directory (not the key)."""
    say(f"  web app: open {url}/?token={links[0]}")
    say("    (signs this browser in once; run `secondbrain open` for a new link)")
    if settings.public_url:
        say_public(f"{settings.public_url}/?token={links[1]}")
    if plan.lan is not None:
        _say_lan(plan.lan.host, plan.lan.port, links[-1], plan.cert)
    if new_key:  # never printed: output ends up in logs; the sign-in link above is enough
        say(f"  created an admin API key for user {settings.default_user!r}")
    say(f"  the key is saved in {key_file} (readable only by you); the CLI reads it from there, "
         "other apps send it as 'Authorization: Bearer <key>'")
    with contextlib.suppress(OSError):  # clients on this machine find the data directory (not the key)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        here = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
        pointer.write_text(f"{plan.data_dir}\nhttp://{here}:{settings.port}\n{os.getpid()}\n")
    # Point at the command as it can be typed here (the venv may not be on PATH).
    prog = sys.argv[0] if Path(sys.argv[0]).name == "secondbrain" and not shutil.which("secondbrain") \
        else "secondbrain"
    say(f"  Kafka broker for other apps on this machine: {bootstrap}  (publish signed events to "
        "artifacts.submitted or urls.requested; see docs/events.md, the event contract)")
    say(f'  try:  {prog} ingest --note "hello"   then   {prog} search hello')
    say("  stop with Ctrl-C; data stays in " + str(plan.data_dir))
    say(backups_line(settings))


class _Connectors:
    """The connectors ``up`` runs as clients of its own server, each on a thread of its own: folder sync
    (SB_WATCH_DIRS), mail (SB_MAIL_*), calendar feeds (SB_CALENDAR_URLS)."""

    def __init__(self) -> None:
        self.watcher = Watcher()
        self.mailer = Mailer()
        self.calendars = Refresher()

    def start(self, url: str, key_file: Path, settings: Any, data_dir: Path) -> None:
        if settings.watch_paths:
            self.watcher.start(url, key_file, settings.watch_paths, data_dir / "watch-state.json")
        if settings.mail_host or settings.mail_maildir:
            self.mailer.start(url, key_file, settings, data_dir / "mail-state.json")
        if settings.calendar_urls is not None and settings.calendar_urls.get_secret_value().strip():
            self.calendars.start(url, key_file, settings, data_dir / "calendar-state.json")

    def stop(self) -> None:
        self.watcher.stop()
        self.mailer.stop()
        self.calendars.stop()


def _data_dir_for_up(settings: Any) -> Path | None:
    """The data directory ``up`` keeps (absolute), after moving an earlier version's ``./.secondbrain`` to the
    platform's place when no directory was named; ``None`` after saying why it cannot be used."""
    from app.data_home import DataDirError, legacy_data_dir, move_legacy

    chosen = Path(settings.data_dir).expanduser().resolve()
    if "data_dir" in settings.model_fields_set:  # --data-dir or SB_DATA_DIR: used where it is
        return chosen
    old = legacy_data_dir(Path.cwd())
    if old is None or old == chosen:
        return chosen

    def running_at(path: Path) -> str | None:
        return next((s.url for s in running_servers() if s.data_dir == path), None)

    try:
        return move_legacy(old, chosen, running_at=running_at, say=say)
    except (DataDirError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _lan_address(args: argparse.Namespace, settings: Any) -> str | None:
    """The address ``--lan`` serves on, checked, or None after saying why there is none."""
    from secondbrain.infra.lan import LanError, choose_address

    if settings.auth == "off":
        print("error: refusing --lan with SB_AUTH=off: every device on the network could read your memory "
              "without a key. Remove SB_AUTH.", file=sys.stderr)
        return None
    try:
        address = choose_address(getattr(args, "lan_address", None) or settings.lan_address)
    except LanError as exc:
        print(f"error: refusing to start with --lan: {exc}.", file=sys.stderr)
        return None
    if address == settings.host:
        print(f"error: refusing --lan on {address}: plain http listens there already. Name the address of "
              "this machine on the local network with --lan-address IP.", file=sys.stderr)
        return None
    # The same port on both addresses: one number to remember, and the phone's link says it anyway.
    return address if _port_free(address, settings.port) else None


def say_public(url: str) -> None:
    """The phone's sign-in link at the public address (SB_PUBLIC_URL), and its QR code."""
    say(f"  on your phone: open {url}")
    say("    or scan this code with the phone's camera (the link works once, within a day; "
        "`secondbrain open --phone` makes another):")
    say("\n".join(_qr_lines(url, sys.stderr)))


def _say_lan(host: str, port: int, token: str, cert: LanCertificate) -> None:
    """How the phone signs in: the link and its QR code, and the certificate's fingerprint to compare."""
    url = f"https://{host}:{port}/?token={token}"
    say(f"  on your phone (same network): open {url}")
    say("    or scan this code with the phone's camera:")
    say("\n".join(_qr_lines(url, sys.stderr)))  # one write: no log line from another thread cuts it
    if cert.made and cert.why:
        say(f"    made a new certificate ({cert.why}): a phone that trusted the old one must trust this one")
    say(f"    certificate fingerprint (SHA-256): {cert.fingerprint}")
    say("    the phone warns that the certificate is not trusted: go on only if the SHA-256 fingerprint it shows "
        "is this one. Anyone on this network can reach the sign-in page (your key and sessions still guard "
        "your data): use it on a network you trust, and stop with Ctrl-C when you are done")


def _qr_lines(text: str, stream: Any) -> list[str]:
    """``text`` as a QR code in block characters, two rows of modules a line.  On a terminal it is drawn
    in explicit colours (light modules white on black), so it scans on dark and light themes alike."""
    import io

    import qrcode

    tty = bool(getattr(stream, "isatty", lambda: False)())
    qr = qrcode.QRCode(border=4)
    qr.add_data(text)
    qr.make(fit=True)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=tty)
    lines = out.getvalue().splitlines()
    try:
        "".join(lines).encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):  # a terminal without these characters: the link is enough
        return ["    (the QR code needs a UTF-8 terminal)"]
    if tty:
        return [f"\x1b[48;5;232m\x1b[38;5;255m{line}\x1b[0m" for line in lines]
    return lines


def _in_background(fn: Any, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
    """Run ``fn`` on a thread of its own (not left waiting on at exit: it only reads)."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="answers-lookup", daemon=True).start()
    return future


def _on_stop_signal(stopping: _StopDeadline, signum: int, _frame: Any) -> None:
    """SIGINT/SIGTERM outside uvicorn's own handling: during start-up they end it; once the server is
    stopping (uvicorn raises the signal it handled again when it has stopped) the orderly stop goes on."""
    if stopping.armed:
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(0)


STOP_DEADLINE_S = 13.0  # a stop asked for (Ctrl-C, SIGTERM) ends the process within this, whatever is stuck
_local_stop_lock = threading.Lock()


def _stop_local_services(broker: Any, pg: Any) -> None:
    """Stop the broker and the embedded PostgreSQL (once, from whichever path gets here first)."""
    with _local_stop_lock:
        broker.stop()
        if pg is not None:
            pg.stop()


class _StopDeadline:
    """Once a stop is asked for, the process ends within :data:`STOP_DEADLINE_S`: if the orderly stop has not
    finished by then (a stage thread deep in one document, a connection that does not close), the broker
    and PostgreSQL are stopped cleanly and the process exits.  Events in flight are not lost: their offsets
    were not committed, and at the next start unfinished jobs are queued again from PostgreSQL."""

    def __init__(self, stop_services: Any, deadline_s: float = STOP_DEADLINE_S) -> None:
        self._stop_services = stop_services
        self._deadline_s = deadline_s
        self._armed = threading.Event()

    @property
    def armed(self) -> bool:
        """Whether a stop was asked for."""
        return self._armed.is_set()

    def arm(self) -> None:
        if self._armed.is_set():
            return
        self._armed.set()
        threading.Thread(target=self._expire, name="stop-deadline", daemon=True).start()

    def _expire(self) -> None:
        time.sleep(self._deadline_s)
        logging.getLogger(__name__).warning(
            "stopping took longer than %.0fs: leaving the work still running (it is resumed at the next start)",
            self._deadline_s)
        with contextlib.suppress(Exception):
            self._stop_services()
        _exit_now(EXIT_OK)


def _exit_now(code: int) -> None:
    """End the process at once (after flushing what it printed and logged): threads still busy with a
    document are not waited for."""
    logging.shutdown()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _busy_threads() -> list[threading.Thread]:
    """Threads the interpreter would wait for at exit (a stage thread still inside one document)."""
    return [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]




def _postgres_not_newer(pgdata: Path) -> bool:
    """Whether the data directory's PostgreSQL cluster is one the PostgreSQL shipped here can run (after
    saying why not)."""
    from app.upgrade import DataTooNew, check_postgres_version

    try:
        check_postgres_version(pgdata)
    except DataTooNew as exc:
        print(f"error: {exc}", file=sys.stderr)
        return False
    return True


def upgrade_data(settings: Any) -> bool:
    """``up``'s upgrade step: the data directory migrated in place to this version (see :mod:`app.upgrade`),
    or refused with a sentence when a newer secondbrain wrote it (False)."""
    from app.assembly import build_metadata
    from app.upgrade import DataTooNew, upgrade_in_place
    from secondbrain.backup.archive import BackupError

    store = build_metadata(settings)
    try:
        upgrade_in_place(settings.data_dir, store.database, say=say, before_migrating=backup_before(settings))
    except DataTooNew as exc:
        print(f"error: {exc}", file=sys.stderr)
        return False
    except BackupError as exc:
        print(f"error: {not_upgraded(settings.data_dir, exc)}", file=sys.stderr)
        return False
    finally:
        store.database.close()
    return True



PIPELINE_KEY_FILE = "pipeline.key"


def local_pipeline_key(data_dir: Path) -> str:
    """Embedded mode's pipeline key (see :mod:`secondbrain.events.sealing`): made on the first start and kept
    in the data directory, readable only by its owner, so events still in the broker open after a restart."""
    from secondbrain.events.sealing import new_key, parse_key

    path = data_dir / PIPELINE_KEY_FILE
    if path.exists():
        text = path.read_text().strip()
        parse_key(text)  # a damaged file is an error that says what the key must be
        return text
    text = new_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    return text


def local_key(settings: Any, links: int = 1) -> tuple[Path, str | None, list[str]]:
    """Embedded mode's start: the local user and its admin key, saved (0600) under the data directory
    on the first start, and one-time sign-in links for the web page (one per browser: the computer's,
    the phone's).  Returns the key file, the new key (``None`` when one exists) and the links' tokens."""
    from app.assembly import build_metadata
    from services.web.session import LINK_TTL_S

    key_file = settings.data_dir / KEY_FILE
    store = build_metadata(settings)
    secret: str | None = None
    try:
        store.database.migrate()
        store.users.ensure_user(settings.default_user, None)
        existing = key_file.read_text().strip() if key_file.exists() else ""
        principal = store.api_keys.authenticate(existing) if existing else None
        if principal is None or principal.key_id is None:
            info, secret = store.api_keys.create_api_key(
                settings.default_user, "local (created by secondbrain up)", "admin")
            key_id = info.key_id
        else:
            key_id = principal.key_id
        tokens = [store.sessions.create_login_link(key_id, LINK_TTL_S) for _ in range(links)]
    finally:
        store.database.close()
    if secret is not None:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secret + "\n")
        key_file.chmod(0o600)  # also when the file was there before (with a revoked key)
    return key_file, secret, tokens


def _serve_piece(args: argparse.Namespace, *, gateway: bool, query: bool, stages: list[str]) -> int:
    from app.serve import serve
    from secondbrain.logs import setup_logging

    settings = settings_for(args, mode="distributed")
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
    from secondbrain.stages import STAGES

    bad = [s for s in args.stages if s not in STAGES]
    if bad:
        print(f"error: unknown stage(s) {', '.join(bad)}; choose from {', '.join(STAGES)}", file=sys.stderr)
        return EXIT_USAGE
    return _serve_piece(args, gateway=False, query=False, stages=list(dict.fromkeys(args.stages)))


def cmd_migrate(args: argparse.Namespace) -> int:
    """Apply database migrations and exit (a Kubernetes Job in production)."""
    from app.assembly import build_metadata
    from secondbrain.stores.migrations import NewerSchema

    store = build_metadata(settings_for(args))
    try:
        applied = store.database.migrate()
    except NewerSchema as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.database.close()
    print(json.dumps({"applied": applied}))
    return EXIT_OK


def cmd_topics(args: argparse.Namespace) -> int:
    """Create the pipeline's Kafka topics and exit."""
    from secondbrain.pipeline.kafka_security import aiokafka_options
    from secondbrain.pipeline.topics import ensure_topics
    from secondbrain.topic_names import TopicNames

    s = settings_for(args)
    created = asyncio.run(ensure_topics(s.kafka_bootstrap, TopicNames(s.topic_prefix), partitions=s.partitions,
                                        replication=s.replication_factor, client_options=aiokafka_options(s)))
    print(json.dumps({"created": created}))
    return EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """The servers: ``up``, the distributed pieces and the set-up jobs."""
    up = sub.add_parser("up", help="run everything locally (embedded mode)")
    up_options(up)
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
