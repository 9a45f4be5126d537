"""Exit codes and the default address, shared by every command."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_URL = "http://127.0.0.1:8000"
KEY_FILE = "api-key"


def settings_for(args: argparse.Namespace, **overrides: Any) -> Any:
    from secondbrain.settings import Settings

    base = Settings()  # type: ignore[call-arg]  # values come from the environment
    update = {k: v for k, v in overrides.items() if v is not None}
    for name in ("data_dir", "port", "host", "kafka_port"):
        value = getattr(args, name, None)
        if value is not None:
            update[name] = Path(value) if name == "data_dir" else value
    return base.model_copy(update=update)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def server_pointer(port: int) -> Path:
    """Where ``up`` notes its data directory (first line), its address (second line) and its process id
    (third line) for clients on this machine (never the key)."""
    return _state_dir() / f"server-{port}"


def _state_dir() -> Path:
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "secondbrain"


def noted_data_dir(pointer: Path) -> Path | None:
    """The data directory a server pointer names (None when it cannot be read)."""
    try:
        first = pointer.read_text().splitlines()[0].strip()
    except (OSError, IndexError):
        return None
    return Path(first) if first else None


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A ``secondbrain up`` that recorded itself on this machine and answers on its port."""

    data_dir: Path
    url: str
    since: float  # when it recorded itself, as it became ready (seconds since the epoch)

    def line(self) -> str:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.since))
        return f"{self.url}  data in {self.data_dir}  (up since {started})"


def named_data_dir(args: argparse.Namespace) -> Path | None:
    """The data directory the person named (``--data-dir``, else ``SB_DATA_DIR`` in the environment or
    ``.env``), resolved; ``None`` when none was named (the default place then applies)."""
    named = getattr(args, "data_dir", None)
    if named:
        return Path(named).expanduser().resolve()
    with contextlib.suppress(Exception):  # a broken .env is reported by the commands that need it
        settings = settings_for(args)
        if "data_dir" in settings.model_fields_set:
            return Path(settings.data_dir).expanduser().resolve()
    return None


def server_url(args: argparse.Namespace) -> str:
    """The address a client command talks to: ``SB_URL``; else the ``secondbrain up`` keeping the data
    directory named (``--data-dir``, ``SB_DATA_DIR``); else the newest ``up`` running on this machine
    (saying so, with the others and how to choose, when several run); else :data:`DEFAULT_URL`."""
    if os.environ.get("SB_URL"):
        return os.environ["SB_URL"]
    running = running_servers()
    named = named_data_dir(args)
    if named is not None:
        same = [s for s in running if s.data_dir == named]
        return same[0].url if same else DEFAULT_URL  # a named directory is that server's or none
    if not running:
        return DEFAULT_URL
    if len(running) > 1:
        say(f"secondbrain: {len(running)} servers are running on this machine; talking to the newest, "
            f"{running[0].url}:")
        for n, server in enumerate(running):
            say(f"  {server.line()}" + ("   <- this one" if n == 0 else ""))
        say("  choose another with --url URL, --data-dir DIR (the one it keeps) or SB_URL=URL")
    return running[0].url


def running_servers() -> list[RunningServer]:
    """Each ``secondbrain up`` that recorded itself on this machine and answers on its port, newest first."""
    import socket
    from urllib.parse import urlsplit

    found = []
    with contextlib.suppress(OSError):
        for pointer in _state_dir().glob("server-*"):
            try:
                lines = pointer.read_text().splitlines()
                port = int(pointer.name.removeprefix("server-"))
                since = pointer.stat().st_mtime
            except (OSError, ValueError):
                continue
            if not lines or not lines[0].strip():
                continue
            url = lines[1].strip() if len(lines) > 1 and lines[1].strip() else f"http://127.0.0.1:{port}"
            if len(lines) > 2 and lines[2].strip().isdigit() and not _alive(int(lines[2])):
                continue  # its `up` was killed; the port may be another program's by now
            parts = urlsplit(url)
            try:  # a pointer left by a server that was killed is not a running server
                with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or port), timeout=0.3):
                    pass
            except OSError:
                continue
            found.append(RunningServer(Path(lines[0].strip()), url, since))
    return sorted(found, key=lambda s: s.since, reverse=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def default_data_dir(args: argparse.Namespace, *, say_so: bool = False) -> Path:
    """The data directory a command that opens it (the key, the embedded database) uses when none is
    named: the platform's place, or an earlier version's ``./.secondbrain`` while ``up`` has not moved it
    yet (it moves it at its next start)."""
    from app.data_home import holds_data, legacy_data_dir

    place = Path(settings_for(args).data_dir).expanduser().resolve()
    old = legacy_data_dir(Path.cwd())
    if old is not None and old != place and not holds_data(place):
        if say_so:
            say(f"secondbrain: using the data in {old} (where earlier versions kept it); the next "
                f"`secondbrain up` moves it to {place}")
        return old
    return place


def backup_before(settings: Any) -> Callable[[Any], None]:
    """``before_migrating`` of an upgrade (:mod:`app.upgrade`): an archive of the data directory as the earlier
    version left it, taken through the embedded PostgreSQL ``settings`` point at, and said."""
    from app.backups import back_up_before_upgrade

    def take(plan: Any) -> None:
        say(f"secondbrain: backing up {settings.data_dir} before the upgrade...")
        archive = back_up_before_upgrade(settings)
        say(f"secondbrain: backed up the data as it was to {archive} ({archive.stat().st_size / 1e6:.1f} MB); "
            f"`secondbrain restore {archive} --data-dir NEW_DIR` brings it back")

    return take


def not_upgraded(data_dir: Path, exc: Exception) -> str:
    """Why an upgrade did not happen when its backup failed, and what to do."""
    return (f"secondbrain did not upgrade the data in {data_dir}, because the backup it takes first failed: {exc}. "
            "Nothing was changed: fix that (or set SB_BACKUP_DIR to a folder with room) and start it again, or go "
            "back to the version you had.")


@contextlib.contextmanager
def metadata_for(args: argparse.Namespace) -> Any:
    """The metadata store: SB_POSTGRES_DSN, or the embedded Postgres under --data-dir (shared with a
    running `secondbrain up`), upgraded in place as ``up`` upgrades it (:mod:`app.upgrade`)."""
    from app.assembly import build_metadata
    from app.upgrade import DataTooNew, check_postgres_version, upgrade_in_place
    from secondbrain.backup.archive import BackupError
    from secondbrain.stores.migrations import NewerSchema

    settings = settings_for(args)
    pg = None
    data_dir = None
    if settings.postgres_dsn is None:
        from secondbrain.infra.postgres import EmbeddedPostgres

        data_dir = named_data_dir(args) or default_data_dir(args, say_so=True)
        try:
            check_postgres_version(data_dir / "postgres")
        except DataTooNew as exc:
            say(f"error: {exc}")
            raise SystemExit(EXIT_USAGE) from None
        pg = EmbeddedPostgres(data_dir / "postgres", template=settings.postgres_template).start()
        settings = settings.model_copy(update={"postgres_dsn": SecretStr(pg.dsn), "data_dir": data_dir})
    store = build_metadata(settings)
    try:
        try:
            if data_dir is not None:
                upgrade_in_place(data_dir, store.database, say=say, before_migrating=backup_before(settings))
            else:
                store.database.migrate()
        except (NewerSchema, DataTooNew) as exc:  # an older command on data a newer secondbrain wrote
            say(f"error: {exc}")
            raise SystemExit(EXIT_USAGE) from None
        except BackupError as exc:
            say(f"error: {not_upgraded(data_dir or settings.data_dir, exc)}")
            raise SystemExit(EXIT_USAGE) from None
        yield store
    finally:
        store.database.close()
        if pg is not None:
            pg.stop()


def server_opts(sp: argparse.ArgumentParser, port: int | None = None) -> None:
    """A server's options: where it listens, how it logs."""
    sp.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    sp.add_argument("--port", type=int, default=port, help="HTTP port (default 8000; SB_PORT)")
    sp.add_argument("--log-level", default=os.environ.get("SB_LOG_LEVEL", "INFO"))
    sp.add_argument("--log-format", choices=("auto", "json", "text"),
                    default=os.environ.get("SB_LOG_FORMAT", "auto"),
                    help="JSON lines for log collectors, text for people; auto: text on a terminal")


def up_options(up: argparse.ArgumentParser) -> None:
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
