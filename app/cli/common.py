"""Exit codes and the default address, shared by every command."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
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
    """Where ``up`` notes its data directory (first line) and its address (second line) for clients on
    this machine (never the key)."""
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


def server_url(args: argparse.Namespace) -> str:
    """The address a client command talks to: ``SB_URL``, else the ``secondbrain up`` this machine runs
    (the one keeping this data directory; without ``--data-dir``, else the only one running), else
    :data:`DEFAULT_URL`."""
    if os.environ.get("SB_URL"):
        return os.environ["SB_URL"]
    running = _running_servers()
    if not running:
        return DEFAULT_URL
    named = getattr(args, "data_dir", None)
    wanted = None
    with contextlib.suppress(Exception):  # a broken .env is reported by the commands that need it
        wanted = (Path(named) if named else settings_for(args).data_dir).resolve()
    same = [url for data_dir, url in running if data_dir == wanted]
    if same:
        return same[0]
    # A data directory given by name is that server's or none; otherwise the one server running here.
    return running[0][1] if len(running) == 1 and not named else DEFAULT_URL


def _running_servers() -> list[tuple[Path, str]]:
    """(data directory, address) of each ``secondbrain up`` that noted itself and answers on its port."""
    import socket
    from urllib.parse import urlsplit

    found = []
    with contextlib.suppress(OSError):
        for pointer in sorted(_state_dir().glob("server-*")):
            try:
                lines = pointer.read_text().splitlines()
                port = int(pointer.name.removeprefix("server-"))
            except (OSError, ValueError):
                continue
            if not lines or not lines[0].strip():
                continue
            url = lines[1].strip() if len(lines) > 1 and lines[1].strip() else f"http://127.0.0.1:{port}"
            parts = urlsplit(url)
            try:  # a pointer left by a server that was killed is not a running server
                with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or port), timeout=0.3):
                    pass
            except OSError:
                continue
            found.append((Path(lines[0].strip()), url))
    return found


@contextlib.contextmanager
def metadata_for(args: argparse.Namespace) -> Any:
    """The metadata store: SB_POSTGRES_DSN, or the embedded Postgres under --data-dir (shared with a
    running `secondbrain up`)."""
    from app.assembly import build_metadata

    settings = settings_for(args)
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

