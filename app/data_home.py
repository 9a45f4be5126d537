"""Where embedded mode's data lives, and moving it out of a checkout.

Earlier versions kept everything in ``./.secondbrain``, inside whatever folder ``secondbrain up`` ran in
(the git clone, for ``make up``), where ``git clean -fdx`` or deleting the clone took it away.  The data
now lives in the platform's user data directory (:func:`secondbrain.settings.default_data_dir`).  When
``up`` starts without a data directory named (``--data-dir`` or ``SB_DATA_DIR``) and finds an
``./.secondbrain`` that holds data, it moves it there once and says so; a running server on it, or data
already at the new place, stop it with a sentence that says what to do instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

LEGACY_NAME = ".secondbrain"
# What only a data directory of secondbrain holds: an empty or unrelated folder is never moved.
MARKERS = ("postgres", "api-key", "objects", "vectors", "pipeline.key")


class DataDirError(Exception):
    """The data directory cannot be used or moved as asked; the message says what to do."""


def holds_data(path: Path) -> bool:
    """Whether ``path`` is a data directory with something of secondbrain's in it."""
    return path.is_dir() and any((path / m).exists() for m in MARKERS)


def legacy_data_dir(cwd: Path) -> Path | None:
    """An earlier version's data directory in ``cwd`` (``./.secondbrain``), if it holds data."""
    old = cwd / LEGACY_NAME
    return old.resolve() if holds_data(old) and not old.is_symlink() else None


def postgres_running(data_dir: Path) -> int | None:
    """The pid of a PostgreSQL server running on ``data_dir``'s cluster, if there is one."""
    try:
        pid = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return pid


def move_legacy(old: Path, new: Path, *, running_at: Callable[[Path], str | None],
                say: Callable[[str], None]) -> Path:
    """Move the data directory ``old`` to ``new`` (the platform's place) and return ``new``.

    Refused, with a :class:`DataDirError` that says what to do, while a server runs on ``old`` (its
    address from ``running_at``, or a PostgreSQL still running on it), or when ``new`` already holds data.
    The move is a rename on one file system; across file systems the copy is made beside ``new`` and
    renamed into place when complete, and only then is ``old`` removed, so an interrupted move loses
    nothing (the next start finds ``old`` as it was)."""
    keep = f"secondbrain up --data-dir {old}"
    where = running_at(old)
    if where is not None or postgres_running(old) is not None:
        at = f" at {where}" if where else ""
        raise DataDirError(
            f"a secondbrain is still running on {old}{at}, so it cannot be moved to {new}. Stop it (Ctrl-C "
            f"where it runs), then start again to move it; or keep it where it is with `{keep}`.")
    if new.exists() and any(new.iterdir()):
        raise DataDirError(
            f"your data is in {old}, and {new} (where secondbrain now keeps data) is not empty. Keep using the "
            f"old one with `{keep}` (or SB_DATA_DIR={old}), or move {new} aside and start again to move it.")
    new.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        new.rmdir()  # an empty directory left by an earlier start
    say(f"secondbrain: moving your data from {old} to {new}, where it is kept apart from any checkout "
        "(once; SB_DATA_DIR or --data-dir choose another place)")
    try:
        os.rename(old, new)
    except OSError:  # another file system: copy beside the destination, then swap it in
        staging = Path(tempfile.mkdtemp(prefix=".moving-", dir=new.parent))
        try:
            shutil.copytree(old, staging / "data", symlinks=True)
            os.rename(staging / "data", new)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old)
    say(f"secondbrain: moved. Your data is now in {new}")
    return new
