"""An export as its files: one file, a folder, or a zip (with the zips inside it, as Notion splits a large
export into ``...-Part-1.zip``), read entry by entry and never unpacked whole.

Paths are POSIX and relative to the export (``Takeout/Keep/Groceries.json``).  Hidden files and macOS'
``__MACOSX`` folder are left out.  An entry larger than :data:`MAX_ENTRY_BYTES` is refused when read (a zip
bomb, or not something a note app wrote).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path, PurePosixPath
from typing import IO

from services.importers.model import ExportError

MAX_ENTRY_BYTES = 512 * 1024 * 1024
MAX_ENTRIES = 200_000
# What reading a damaged or locked zip member raises: a wrong CRC or a cut-off stream (BadZipFile, zlib.error,
# EOFError), a password (RuntimeError), a compression this Python cannot read (NotImplementedError).
_DAMAGE = (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


class DamagedEntry(ExportError):
    """One file of a zip cannot be read (a wrong checksum, cut short, encrypted): the sentence names it."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path} in the archive cannot be read: {why}")
        self.path = path
        self.why = why


def damage(exc: BaseException) -> str:
    """What is wrong with a zip member, as a person would say it, from what reading it raised."""
    text = str(exc)
    if isinstance(exc, RuntimeError) and ("encrypted" in text.lower() or "password" in text.lower()):
        return "it is encrypted (password-protected); export it again without a password"
    if "crc" in text.lower():
        return ("its checksum is wrong (a bad CRC-32): the archive was changed or cut short; download the "
                "export again")
    if isinstance(exc, NotImplementedError):
        return f"it is packed in a way this cannot unpack ({text[:120]})"
    return f"it is damaged ({type(exc).__name__}: {text[:160]}); download the export again"


def _truncated_zip(head: bytes) -> bool:
    """A file that starts like a zip but is not one any more: its table of contents (at the end) is missing."""
    return head.startswith(_ZIP_MAGIC)


@dataclass(frozen=True, slots=True)
class Entry:
    """One file of an export."""

    path: str
    size: int
    # The file's modification time: aware for a file on disk; a zip stores a local time without a zone
    # (read in the import's zone by :meth:`Export.modified`).
    mtime: datetime | None

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.path).suffix.lower()

    @property
    def parent(self) -> str:
        parent = str(PurePosixPath(self.path).parent)
        return "" if parent == "." else parent


# Where a file's bytes are: on disk, a member of an open zip, or the uploaded file itself.
_Where = Path | tuple[zipfile.ZipFile, zipfile.ZipInfo] | IO[bytes]


def _skipped(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


class Export:
    """The files of an export (see the module doc).  Use as a context manager, or :meth:`close` it."""

    def __init__(self, name: str) -> None:
        self.name = name  # the file or folder name the person gave: some formats take a title from it
        # A server reading an uploaded zip bounds what it unpacks (a zip bomb); on the person's own machine
        # nothing is bounded but each file.
        self.entry_limit = MAX_ENTRY_BYTES
        self.total_limit: int | None = None
        self.unpacked = 0
        self._entries: dict[str, Entry] = {}
        self._where: dict[str, _Where] = {}  # where each file's bytes are
        self._zips: list[zipfile.ZipFile] = []
        self._temps: list[IO[bytes]] = []
        # Files of a zip that could not be read (path: why), as they were tried: the import names them.
        self.damaged: dict[str, str] = {}

    # --- opening
    @classmethod
    def open(cls, path: Path) -> Export:
        """A file, a folder or a zip on disk."""
        if not path.exists():
            raise ExportError(f"{path} does not exist")
        export = cls(path.name)
        try:
            if path.is_dir():
                export._add_folder(path)
            elif zipfile.is_zipfile(path):
                export._add_zip(zipfile.ZipFile(path), "")
            else:
                with path.open("rb") as fh:
                    if _truncated_zip(fh.read(4)) and path.suffix.lower() == ".zip":
                        raise ExportError(_INCOMPLETE.format(name=path.name))
                stat = path.stat()
                export._add("", path.name, stat.st_size, datetime.fromtimestamp(stat.st_mtime, UTC), path)
        except DamagedEntry:
            export.close()
            raise
        except (OSError, *_DAMAGE) as exc:
            export.close()
            raise ExportError(f"{path.name} could not be read: {damage(exc)}") from exc
        return export

    @classmethod
    def from_file(cls, name: str, fh: IO[bytes], *, entry_limit: int = MAX_ENTRY_BYTES,
                  total_limit: int | None = None) -> Export:
        """An uploaded export (a seekable file object): a zip, or one file named ``name``; each file in it at
        most ``entry_limit`` bytes, and all of them ``total_limit`` (a zip bomb is refused as it unpacks)."""
        export = cls(name)
        export.entry_limit, export.total_limit = entry_limit, total_limit
        try:
            fh.seek(0)
            if zipfile.is_zipfile(fh):
                fh.seek(0)
                export._add_zip(zipfile.ZipFile(fh), "")
            else:
                fh.seek(0)
                if _truncated_zip(fh.read(4)):
                    raise ExportError(_INCOMPLETE.format(name=name))
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(0)
                export._add("", PurePosixPath(name).name or "export", size, None, fh)
        except (ExportError, OSError, *_DAMAGE) as exc:
            export.close()
            if isinstance(exc, ExportError):
                raise
            raise ExportError(f"{name} could not be read as a zip archive: {damage(exc)}") from exc
        return export

    def _add(self, prefix: str, path: str, size: int, mtime: datetime | None, where: _Where) -> None:
        full = f"{prefix}{path}"
        if _skipped(full) or full in self._entries:
            return
        if len(self._entries) >= MAX_ENTRIES:
            raise ExportError(f"the export holds more than {MAX_ENTRIES} files; import it a folder at a time")
        self._entries[full] = Entry(full, size, mtime)
        self._where[full] = where

    def _add_folder(self, root: Path) -> None:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__MACOSX")
            for name in sorted(filenames):
                path = Path(dirpath) / name
                rel = path.relative_to(root).as_posix()
                with contextlib.suppress(OSError):  # a file that vanished meanwhile is not part of it
                    stat = path.stat()
                    if path.suffix.lower() == ".zip" and zipfile.is_zipfile(path):
                        self._add_zip(zipfile.ZipFile(path), "")
                        continue
                    self._add("", rel, stat.st_size, datetime.fromtimestamp(stat.st_mtime, UTC), path)

    def _add_zip(self, archive: zipfile.ZipFile, prefix: str, depth: int = 0) -> None:
        self._zips.append(archive)
        for info in archive.infolist():
            if info.is_dir() or _skipped(info.filename):
                continue
            name = info.filename.replace("\\", "/").lstrip("/")
            if ".." in PurePosixPath(name).parts:
                continue  # a name that climbs out of the archive is nobody's note
            try:
                stamp: datetime | None = datetime(*info.date_time)
            except ValueError:
                stamp = None
            if name.lower().endswith(".zip") and depth == 0 and info.file_size <= self.entry_limit:
                try:
                    inner = self._spool(archive, info)
                except _DAMAGE as exc:  # named when the import reads it; the rest of the archive goes on
                    self.damaged[f"{prefix}{name}"] = damage(exc)
                    inner = None
                if inner is not None and zipfile.is_zipfile(inner):
                    inner.seek(0)
                    self._add_zip(zipfile.ZipFile(inner), prefix, depth + 1)
                    continue
            self._add(prefix, name, info.file_size, stamp, (archive, info))

    def _spool(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> IO[bytes] | None:
        tmp = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the export
        self._temps.append(tmp)
        with archive.open(info) as src:
            source = src if self.total_limit is None else _Member(src, self, info.filename)
            shutil.copyfileobj(source, tmp, 1024 * 1024)
        tmp.seek(0)
        return tmp

    # --- reading
    def entries(self) -> list[Entry]:
        """Every file, in path order."""
        return [self._entries[p] for p in sorted(self._entries)]

    def candidates(self, *suffixes: str) -> list[Entry]:
        """The files a format looks into: those with one of ``suffixes`` (``""``: none), or the only file
        of a one-file export whatever its name (the content decides, a renamed export is still read)."""
        entries = self.entries()
        if len(entries) == 1:
            return entries
        return [e for e in entries if e.suffix in suffixes]

    def get(self, path: str) -> Entry | None:
        return self._entries.get(path)

    def read(self, entry: Entry | str, limit: int = MAX_ENTRY_BYTES) -> bytes:
        """The whole file (refused past ``limit`` or the export's own limits)."""
        limit = min(limit, self.entry_limit)
        with self.open_entry(entry, limit) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise ExportError(f"{_path(entry)} is larger than {_mb(limit)}")
        return data

    @contextlib.contextmanager
    def open_entry(self, entry: Entry | str, limit: int = MAX_ENTRY_BYTES) -> Iterator[IO[bytes]]:
        """The file as a stream (an Evernote export of a few GB is parsed as it is read)."""
        path = _path(entry)
        where = self._where[path]
        size = self._entries[path].size
        limit = min(limit, self.entry_limit)
        if size > limit:
            raise ExportError(f"{path} is larger than {_mb(limit)}")
        if isinstance(where, Path):
            with where.open("rb") as fh:
                yield fh
        elif isinstance(where, tuple):
            archive, info = where
            try:
                member = archive.open(info)
            except _DAMAGE as exc:
                raise self._damaged(path, exc) from None
            with member:
                yield _Member(member, self, path)  # type: ignore[misc]
        else:
            where.seek(0)
            yield where

    def _damaged(self, path: str, exc: BaseException) -> DamagedEntry:
        why = damage(exc)
        self.damaged[path] = why
        return DamagedEntry(path, why)

    def damage_report(self) -> str | None:
        """The files of the archive that could not be read, as a sentence naming them (None: all were read)."""
        if not self.damaged:
            return None
        items = sorted(self.damaged.items())
        named = "; ".join(f"{path}: {why}" for path, why in items[:5])
        more = f" (and {len(items) - 5} more)" if len(items) > 5 else ""
        return f"{self.name}: {len(items)} file{'s' if len(items) > 1 else ''} in it cannot be read. {named}{more}"

    def modified(self, entry: Entry, tz: tzinfo) -> datetime | None:
        """The file's modification time, aware (a zip's local time is read in ``tz``)."""
        if entry.mtime is None:
            return None
        if entry.mtime.tzinfo is None:
            if entry.mtime.year <= 1980:  # the zip format's "no date"
                return None
            return entry.mtime.replace(tzinfo=tz)
        return entry.mtime

    def close(self) -> None:
        for z in self._zips:
            with contextlib.suppress(Exception):
                z.close()
        for t in self._temps:
            with contextlib.suppress(Exception):
                t.close()
        self._zips, self._temps = [], []

    def __enter__(self) -> Export:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _path(entry: Entry | str) -> str:
    return entry if isinstance(entry, str) else entry.path


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size} bytes"


_INCOMPLETE = ("{name} starts like a zip archive but is incomplete or damaged (its table of contents, at the end, "
               "is missing: the download was probably cut short); download the export again")


class _Member:
    """A zip member as it is read: its bytes count against the export's unpacking budget (``total_limit``),
    and a damaged member (wrong checksum, cut short, encrypted) raises :class:`DamagedEntry` naming it."""

    def __init__(self, member: IO[bytes], export: Export, path: str) -> None:
        self.member = member
        self.export = export
        self.path = path

    def read(self, size: int = -1) -> bytes:
        try:
            data = self.member.read(size)
        except _DAMAGE as exc:
            raise self.export._damaged(self.path, exc) from None
        self.export.unpacked += len(data)
        limit = self.export.total_limit
        if limit is not None and self.export.unpacked > limit:
            raise ExportError(f"the export unpacks to more than {_mb(limit)}; import it from your own machine with "
                              "`secondbrain import`, which reads it there")
        return data
