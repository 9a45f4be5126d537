"""An :class:`~secondbrain.ports.ObjectStore` on the local filesystem (embedded mode).

Layout: the object ``users/u1/a.pdf`` is the file ``<root>/users/u1/a.pdf``.  Next to each
object lives a small JSON sidecar ``.sb~meta-a.pdf`` holding its content type and etag.
Temporary files are named ``.sb~tmp-<random>``.  Every name starting with ``.sb~`` is
internal: such files never show up in :meth:`FileObjectStore.list`, and keys using that
prefix in any segment are rejected.

Objects are their owner's alone: files are created 0600 and directories 0700, whatever the
process's umask.

Limitations compared with S3: a key cannot be both an object and a "directory" of other
objects (``a/b`` and ``a/b/c``), and one key segment may be at most 200 bytes long (the
sidecar name must still fit the usual 255-byte file-name limit).
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from secondbrain.ports import ObjectInfo, ObjectNotFound

BLOCK_SIZE = 1024 * 1024  # streams are copied in 1 MiB blocks, never read whole
DEFAULT_CONTENT_TYPE = "application/octet-stream"
_RESERVED = ".sb~"
_TMP_PREFIX = _RESERVED + "tmp-"
_META_PREFIX = _RESERVED + "meta-"
_MAX_SEGMENT_BYTES = 200
_STALE_TMP_SECONDS = 3600.0
FILE_MODE = 0o600  # objects, sidecars and temporary files
DIR_MODE = 0o700


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a safe relative object key, else raise ``ValueError``.

    Rejected: empty keys, absolute keys, backslashes, NUL and other control characters,
    empty, ``.`` or ``..`` segments (so a key can never address a file outside the store).
    """
    if not isinstance(key, str) or not key:
        raise ValueError("object key must be a non-empty string")
    _check_chars(key)
    if key.startswith("/"):
        raise ValueError(f"object key must be relative: {key!r}")
    for segment in key.split("/"):
        if segment in ("", ".", ".."):
            raise ValueError(f"object key has an empty, '.' or '..' segment: {key!r}")
    return key


def _check_chars(text: str) -> None:
    if "\\" in text:
        raise ValueError(f"backslash not allowed in object keys: {text!r}")
    if any(ord(c) < 0x20 or c == "\x7f" for c in text):
        raise ValueError(f"control characters (NUL included) not allowed in object keys: {text!r}")


def validate_prefix(prefix: str) -> str:
    """Like :func:`validate_key` for a listing prefix: may be empty or end with ``/``."""
    if not isinstance(prefix, str):
        raise ValueError("prefix must be a string")
    if not prefix:
        return prefix
    _check_chars(prefix)
    if prefix.startswith("/"):
        raise ValueError(f"prefix must be relative: {prefix!r}")
    segments = prefix.split("/")
    # The last segment is a partial name ("users/a" matches "users/ab/..."), but '..' is never allowed.
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".." or (not last and segment in ("", ".")):
            raise ValueError(f"prefix has an empty, '.' or '..' segment: {prefix!r}")
    return prefix


def _private_dirs(path: Path) -> None:
    """``mkdir -p`` whose every new directory is 0700 (``Path.mkdir`` gives parents the default mode)."""
    missing: list[Path] = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)  # the umask can only take bits away
        except FileExistsError:
            if not directory.is_dir():
                raise


def _create_private(path: Path) -> int:
    """A new file at ``path`` (it must not exist), mode 0600 whatever the umask; the open descriptor."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)


def _fsync(path: Path) -> None:
    """Sync a file, or a directory (on POSIX a rename is durable once its directory is synced)."""
    if path.is_dir() and os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_all(paths: Sequence[Path]) -> None:
    """Sync every path, several at a time: the filesystem commits syncs that wait together as one (on ext4,
    200 small files in 36 ms instead of 670 ms one after the other)."""
    if len(paths) <= 2:
        for path in paths:
            _fsync(path)
        return
    with ThreadPoolExecutor(max_workers=min(16, len(paths)), thread_name_prefix="objects-sync") as pool:
        list(pool.map(_fsync, paths))  # consumed, so that a failed sync raises here


@dataclass(slots=True)
class _Staged:
    """An object written to its temporary files, waiting to be synced and renamed into place."""

    key: str
    path: Path
    tmp: Path
    meta_tmp: Path
    size: int
    content_type: str
    etag: str
    placed: bool = False


class FileObjectStore:
    """Objects as files under ``root``; writes are atomic (temp file, fsync, rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        _private_dirs(self.root)
        if os.stat(self.root).st_mode & 0o077:
            self.root.chmod(DIR_MODE)

    # ------------------------------------------------------------------ paths

    def _path(self, key: str) -> Path:
        validate_key(key)
        for segment in key.split("/"):
            if segment.startswith(_RESERVED):
                raise ValueError(f"key segments starting with {_RESERVED!r} are reserved: {key!r}")
            if len(segment.encode()) > _MAX_SEGMENT_BYTES:
                raise ValueError(f"key segment longer than {_MAX_SEGMENT_BYTES} bytes: {key!r}")
        return self.root.joinpath(*key.split("/"))

    @staticmethod
    def _meta_path(path: Path) -> Path:
        return path.with_name(_META_PREFIX + path.name)

    def _key_of(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # ------------------------------------------------------------------ metadata

    def _read_meta(self, path: Path, st: os.stat_result) -> dict[str, Any]:
        """Sidecar contents, or ``{}`` when missing, unreadable or stale.

        The sidecar records the inode of the data file it describes: after a crash between
        the two renames of a put, a sidecar belonging to another version is ignored.
        """
        try:
            meta = json.loads(self._meta_path(path).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(meta, dict) or meta.get("ino") != st.st_ino or meta.get("size") != st.st_size:
            return {}
        return meta

    def _info(self, key: str, path: Path, st: os.stat_result) -> ObjectInfo:
        meta = self._read_meta(path, st)
        return ObjectInfo(
            key=key,
            size=st.st_size,
            content_type=str(meta.get("content_type") or DEFAULT_CONTENT_TYPE),
            etag=meta.get("etag"),
            last_modified=datetime.fromtimestamp(st.st_mtime, tz=UTC),
        )

    # ------------------------------------------------------------------ writes

    def put(self, key: str, data: bytes | IO[bytes], *, size: int | None = None,
            content_type: str = DEFAULT_CONTENT_TYPE) -> ObjectInfo:
        """Store ``data`` under ``key`` atomically; a failing stream leaves the old object intact.

        With ``size`` given (>= 0) the stream must deliver exactly that many bytes, else
        ``ValueError`` and nothing is stored.
        """
        return self._put_all([(key, data, size, content_type)])[0]

    def put_many(self, objects: Sequence[tuple[str, bytes, str]]) -> builtins.list[ObjectInfo]:
        """Store each ``(key, data, content_type)``, all durable when this returns: written first, then synced
        to disk together (a sync a file, one after the other, was most of a 100-note import batch's time)."""
        return self._put_all([(key, data, len(data), content_type) for key, data, content_type in objects])

    def _put_all(self, objects: Sequence[tuple[str, bytes | IO[bytes], int | None, str]]
                 ) -> builtins.list[ObjectInfo]:
        """Write every object to its temporary files, sync them all, then rename them into place and sync
        their directories.  On an error nothing of the batch is left but what was renamed already."""
        staged: builtins.list[_Staged] = []
        try:
            for key, data, size, content_type in objects:
                staged.append(self._stage(key, data, size, content_type))
            _sync_all([f for one in staged for f in (one.tmp, one.meta_tmp)])
            for one in staged:
                # Data first: once it is renamed the object exists; the new sidecar follows and
                # a crash in between only loses the content type (stale sidecar is ignored).
                os.replace(one.tmp, one.path)
                os.replace(one.meta_tmp, self._meta_path(one.path))
                one.placed = True
            _sync_all(sorted({one.path.parent for one in staged}))
        except BaseException:
            for one in staged:
                if not one.placed:
                    for leftover in (one.tmp, one.meta_tmp):
                        with contextlib.suppress(OSError):
                            leftover.unlink()
                    self._prune(one.path.parent)  # directories created just for this object
            raise
        out = []
        for one in staged:
            final = one.path.stat()
            out.append(ObjectInfo(key=one.key, size=one.size, content_type=one.content_type, etag=one.etag,
                                  last_modified=datetime.fromtimestamp(final.st_mtime, tz=UTC)))
        return out

    def _stage(self, key: str, data: bytes | IO[bytes], size: int | None, content_type: str) -> _Staged:
        """``data`` and its sidecar written to temporary files beside ``key``'s path, not synced yet."""
        path = self._path(key)
        if path.is_dir():
            raise ValueError(f"key {key!r} names a directory of other objects")
        tmp = self._create_temp(path, key)
        meta_tmp = tmp.with_name(tmp.name + "-meta")
        try:
            digest = hashlib.md5(usedforsecurity=False)
            written = 0
            with open(tmp, "wb") as out:
                for block in _blocks(data):
                    out.write(block)
                    digest.update(block)
                    written += len(block)
                if size is not None and size >= 0 and written != size:
                    raise ValueError(f"stream for {key!r} gave {written} bytes, expected {size}")
                st = os.fstat(out.fileno())
            meta: dict[str, Any] = {"content_type": content_type or DEFAULT_CONTENT_TYPE,
                                    "etag": digest.hexdigest(), "ino": st.st_ino, "size": written}
            with os.fdopen(_create_private(meta_tmp), "w", encoding="utf-8") as out_meta:
                out_meta.write(json.dumps(meta))  # dump() would take the pure-Python encoder
        except BaseException:
            for leftover in (tmp, meta_tmp):
                with contextlib.suppress(OSError):
                    leftover.unlink()
            self._prune(path.parent)
            raise
        return _Staged(key, path, tmp, meta_tmp, written, meta["content_type"], meta["etag"])

    def _create_temp(self, path: Path, key: str) -> Path:
        """Create an empty temp file next to ``path`` (same directory, so rename is atomic)."""
        for _ in range(5):
            try:
                _private_dirs(path.parent)
            except (FileExistsError, NotADirectoryError) as exc:
                raise ValueError(f"key {key!r} lies under an existing object") from exc
            except FileNotFoundError:  # a concurrent delete pruned a directory just made: again
                continue
            tmp = path.with_name(f"{_TMP_PREFIX}{uuid.uuid4().hex}")
            try:
                fd = _create_private(tmp)
            except FileNotFoundError:
                # A concurrent delete pruned the freshly created directory; create it again.
                continue
            os.close(fd)
            return tmp
        raise OSError(f"could not create a temporary file for {key!r}")

    # ------------------------------------------------------------------ reads

    def get(self, key: str) -> bytes:
        """Return the whole object; raise :class:`ObjectNotFound` when absent."""
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFound(key) from None

    def open(self, key: str) -> Iterator[bytes]:
        """Stream the object in 1 MiB blocks; raise :class:`ObjectNotFound` when absent.

        The file is opened here (so absence is reported at once) and closed when the
        iterator is exhausted or closed.
        """
        path = self._path(key)
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed by the generator
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFound(key) from None
        return _read_blocks(handle)

    def stat(self, key: str) -> ObjectInfo | None:
        """Metadata of ``key`` or ``None`` when absent."""
        path = self._path(key)
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not path.is_file():
            return None
        return self._info(key, path, st)

    def list(self, prefix: str) -> list[ObjectInfo]:
        """All objects whose key starts with ``prefix`` (plain string prefix), sorted by key."""
        return [info for info, _ in self._walk(prefix)]

    def _walk(self, prefix: str) -> builtins.list[tuple[ObjectInfo, Path]]:
        validate_prefix(prefix)
        base = self._base_dir(prefix)
        found: builtins.list[tuple[ObjectInfo, Path]] = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = [d for d in dirnames if not d.startswith(_RESERVED)]
            for name in filenames:
                if name.startswith(_RESERVED):
                    continue
                path = Path(dirpath, name)
                key = self._key_of(path)
                if not key.startswith(prefix):
                    continue
                try:
                    st = path.stat()
                except FileNotFoundError:  # deleted while walking
                    continue
                found.append((self._info(key, path, st), path))
        found.sort(key=lambda item: item[0].key)
        return found

    def linked_copy(self, dest: Path) -> builtins.list[tuple[ObjectInfo, Path]]:
        """Every object as it is now, hard-linked under ``dest`` (same filesystem; copied otherwise), with
        its info: a picture that later writes cannot change (a put renames a new file over the old one, and
        the link keeps the old one)."""
        dest.mkdir(parents=True, exist_ok=True)
        taken: builtins.list[tuple[ObjectInfo, Path]] = []
        for info, path in self._walk(""):
            target = dest / f"{len(taken):08d}"
            try:
                os.link(path, target)
            except FileNotFoundError:  # deleted while walking: not part of the picture
                continue
            except OSError:  # another filesystem, or links not allowed: a copy
                try:
                    shutil.copyfile(path, target)
                except FileNotFoundError:
                    continue
            taken.append((info, target))
        return taken

    def _base_dir(self, prefix: str) -> Path:
        """The deepest directory that contains every key starting with ``prefix``."""
        head = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        return self.root.joinpath(*head.split("/")) if head else self.root

    # ------------------------------------------------------------------ deletes

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error."""
        path = self._path(key)
        self._remove(path)
        self._prune(path.parent)

    def _remove(self, path: Path) -> bool:
        if path.is_dir():  # a "directory" of other objects is not an object
            return False
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return False
        with contextlib.suppress(FileNotFoundError):
            self._meta_path(path).unlink()
        return True

    def delete_prefix(self, prefix: str) -> int:
        """Remove every object under ``prefix`` and the directories left empty; return the count."""
        removed = 0
        for _, path in self._walk(prefix):
            if self._remove(path):
                removed += 1
        base = self._base_dir(prefix)
        if base.is_dir():
            self._prune_tree(base)
        self._prune(base)
        return removed

    def _prune_tree(self, base: Path) -> None:
        """Remove empty directories below ``base`` (bottom-up), plus stale temp/orphan files."""
        now = time.time()
        for dirpath, dirnames, filenames in os.walk(base, topdown=False):
            for name in filenames:
                path = Path(dirpath, name)
                orphan_meta = name.startswith(_META_PREFIX) and not (
                    path.with_name(name[len(_META_PREFIX):]).exists())
                stale_tmp = name.startswith(_TMP_PREFIX) and _older_than(path, now - _STALE_TMP_SECONDS)
                if orphan_meta or stale_tmp:
                    with contextlib.suppress(OSError):
                        path.unlink()
            for name in dirnames:
                with contextlib.suppress(OSError):  # not empty, or removed concurrently
                    Path(dirpath, name).rmdir()

    def _prune(self, directory: Path) -> None:
        """Remove ``directory`` and its ancestors while they are empty (never the root)."""
        while directory != self.root and self.root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    # ------------------------------------------------------------------ health

    def check(self) -> None:
        """Raise ``OSError`` unless the root directory exists and accepts a synced write."""
        if not self.root.is_dir():
            raise OSError(f"object store root {self.root} is not a directory")
        probe = self.root / f"{_TMP_PREFIX}check-{uuid.uuid4().hex}"
        try:
            with os.fdopen(_create_private(probe), "wb") as out:
                out.write(b"ok")
                out.flush()
                os.fsync(out.fileno())
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()

    def __repr__(self) -> str:
        return f"FileObjectStore(root={str(self.root)!r})"


def _older_than(path: Path, cutoff: float) -> bool:
    try:
        return path.stat().st_mtime < cutoff
    except OSError:
        return False


def _blocks(data: bytes | IO[bytes]) -> Iterator[bytes]:
    """Yield in-memory ``data`` as is, or a stream's content in :data:`BLOCK_SIZE` blocks."""
    if isinstance(data, bytes | bytearray | memoryview):
        yield bytes(data)  # already in memory: one write, no copying into blocks
        return
    if not callable(getattr(data, "read", None)):
        raise TypeError(f"data must be bytes or a binary stream, not {type(data).__name__}")
    while True:
        block = data.read(BLOCK_SIZE)
        if not block:
            return
        if isinstance(block, str):
            raise TypeError("stream must be opened in binary mode")
        yield block


def _read_blocks(handle: IO[bytes]) -> Iterator[bytes]:
    with handle:
        while block := handle.read(BLOCK_SIZE):
            yield block
