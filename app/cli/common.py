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
    """Where ``up`` notes its data directory for clients on this machine (a path, never the key)."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "secondbrain" / f"server-{port}"


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

