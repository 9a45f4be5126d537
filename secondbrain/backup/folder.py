"""The backup folder (``SB_BACKUP_DIR``): archives written whole or not at all, and which ones are kept.

An archive is written as ``<name>.tmp-<pid>`` and renamed to ``<name>`` only once complete and on disk,
so a crash or ``kill -9`` in the middle leaves the earlier archives as they were and at worst a ``.tmp-``
file, which the next backup removes.  Archives are named by their time (UTC), so their names sort by
age: ``secondbrain-20260314T020000Z.sbk``.

Rotation keeps the newest archive of each of the last N days that have one, the newest of each of the
last M ISO weeks that have one, and always the newest archive; the others are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

PREFIX = "secondbrain-"
SUFFIX = ".sbk"
_NAME = re.compile(r"^secondbrain-(\d{8}T\d{6}Z)(?:-(\d+))?\.sbk$")
_TMP = re.compile(r"^secondbrain-.*\.sbk\.tmp-(\d+)$")


@dataclass(frozen=True, slots=True)
class Archive:
    """A complete archive in the backup folder."""

    path: Path
    taken_at: datetime
    size: int

    @property
    def name(self) -> str:
        return self.path.name

    def json(self) -> dict[str, object]:
        return {"name": self.name, "taken_at": self.taken_at.isoformat(), "size": self.size}


def archive_name(now: datetime, folder: Path) -> str:
    """A new archive's name: its time, and a number when that second is taken already."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{PREFIX}{stamp}{SUFFIX}"
    n = 1
    while (folder / name).exists():
        n += 1
        name = f"{PREFIX}{stamp}-{n}{SUFFIX}"
    return name


def is_archive_name(name: str) -> bool:
    """Whether ``name`` is an archive this folder holds (what a download may ask for)."""
    return _NAME.fullmatch(name) is not None


def archives(folder: Path) -> list[Archive]:
    """The complete archives in ``folder``, oldest first."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in folder.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match is None or not entry.is_file():
                continue
            taken = datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
            with contextlib.suppress(FileNotFoundError):
                found.append(Archive(entry, taken, entry.stat().st_size))
    return sorted(found, key=lambda a: (a.taken_at, a.name))


def latest(folder: Path) -> Archive | None:
    """The newest complete archive, if any."""
    found = archives(folder)
    return found[-1] if found else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(folder: Path) -> list[Path]:
    """Remove the ``.tmp-`` files of backups whose process is gone (killed in the middle)."""
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for entry in folder.iterdir():
            match = _TMP.fullmatch(entry.name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
                    removed.append(entry)
    return removed


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def written_whole(path: Path) -> Iterator[IO[bytes]]:
    """A file to write the archive to, which becomes ``path`` only when the block ends without error (after
    an fsync); on error it is removed and ``path`` is untouched."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb", buffering=1024 * 1024) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def to_keep(found: list[Archive], daily: int, weekly: int) -> set[Path]:
    """Which archives rotation keeps (see the module doc)."""
    keep: set[Path] = set()
    if not found:
        return keep
    newest_first = sorted(found, key=lambda a: (a.taken_at, a.name), reverse=True)
    keep.add(newest_first[0].path)
    for count, period in ((daily, _day), (weekly, _week)):
        seen: list[object] = []
        for archive in newest_first:
            key = period(archive.taken_at)
            if key in seen:
                continue
            if len(seen) >= count:
                break
            seen.append(key)
            keep.add(archive.path)
    return keep


def _day(when: datetime) -> object:
    return when.date()


def _week(when: datetime) -> object:
    return when.isocalendar()[:2]


def rotate(folder: Path, daily: int, weekly: int, *, removed: Callable[[Path], None] | None = None) -> list[Path]:
    """Remove the archives rotation does not keep; the paths removed."""
    found = archives(folder)
    keep = to_keep(found, daily, weekly)
    gone = []
    for archive in found:
        if archive.path not in keep:
            with contextlib.suppress(FileNotFoundError):
                archive.path.unlink()
                gone.append(archive.path)
                if removed is not None:
                    removed(archive.path)
    return gone
