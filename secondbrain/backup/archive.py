"""The backup archive: a plain POSIX (ustar) tar whose every byte is checked when it is read back.

Layout, in this order::

    format.json         what the file is and its format version (read first: a newer format is refused
                        before anything is unpacked)
    p/000001 ...        the parts: the PostgreSQL dump, the keys, each raw object, each vector file
    manifest.json       what each part is (a name such as ``objects/users/u1/artifacts/...``), its size
                        and SHA-256, plus the counts per user, the schema migration and the collections
    manifest.sha256     the SHA-256 of manifest.json (a damaged manifest is named as such)

Members carry short numbered names so every header fits ustar (no PAX or GNU extension records,
whose bytes no checksum would cover).  When an archive on disk is read, a byte changed anywhere is
found: in a header by tar's own header checksum, in a part by its SHA-256, in the manifest by
manifest.sha256, and in the padding between members or after the last one by requiring zeros there
(:func:`check_layout`).  A sealed archive (:mod:`secondbrain.backup.sealed`) is authenticated as a whole
before any of this.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

FORMAT = "secondbrain-backup"
FORMAT_VERSION = 1
FORMAT_MEMBER = "format.json"
MANIFEST_MEMBER = "manifest.json"
MANIFEST_SUM_MEMBER = "manifest.sha256"
BLOCK = 1024 * 1024
_TAR_BLOCK = 512
_HOLE = 16 * 1024  # runs of zeros this long and aligned are left as holes when a sparse file is written back


class BackupError(Exception):
    """The archive cannot be written, read or restored; the message is a sentence saying what and why."""


class ArchiveDamaged(BackupError):
    """A part of the archive does not match what the manifest says (``part``: its name)."""

    def __init__(self, message: str, part: str | None = None) -> None:
        super().__init__(message)
        self.part = part


class NewerFormat(BackupError):
    """The archive was written by a newer secondbrain."""


@dataclass(frozen=True, slots=True)
class Part:
    """One part as the manifest lists it."""

    name: str  # what it is: postgres.dump, keys/pipeline.key, objects/<key>, vectors/edge/<collection>/<file>
    member: str  # its member in the tar
    size: int
    sha256: str
    content_type: str | None = None
    encoding: str | None = None  # "zlib": stored compressed (the vector engine's files: mostly zeros)

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "member": self.member, "size": self.size, "sha256": self.sha256}
        if self.content_type is not None:
            out["content_type"] = self.content_type
        if self.encoding is not None:
            out["encoding"] = self.encoding
        return out


@dataclass
class Manifest:
    """What an archive holds (manifest.json)."""

    created_at: str
    fields: dict[str, Any]
    parts: list[Part] = field(default_factory=list)
    format_version: int = FORMAT_VERSION

    def json(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": self.format_version, "created_at": self.created_at,
                **self.fields, "parts": [p.json() for p in self.parts]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        fields = {k: v for k, v in data.items() if k not in ("format", "format_version", "created_at", "parts")}
        parts = [Part(p["name"], p["member"], int(p["size"]), p["sha256"], p.get("content_type"), p.get("encoding"))
                 for p in data.get("parts", [])]
        return cls(str(data.get("created_at", "")), fields, parts, int(data.get("format_version", 0)))

    def named(self, prefix: str) -> list[Part]:
        """The parts whose name starts with ``prefix``."""
        return [p for p in self.parts if p.name.startswith(prefix)]


def _info(member: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(member)
    info.size = size
    info.mode = 0o600
    info.mtime = int(time.time())
    info.uname = info.gname = ""
    return info


class _Hashing(io.RawIOBase):
    """A reader that hashes what passes through it."""

    def __init__(self, source: IO[bytes]) -> None:
        super().__init__()
        self.source = source
        self.digest = hashlib.sha256()
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self.source.read(-1 if size is None else size)
        self.digest.update(data)
        self.count += len(data)
        return data


class ArchiveWriter:
    """Writes an archive to ``out`` (a stream: nothing is read back or sought), part by part."""

    def __init__(self, out: IO[bytes], *, sealed: bool = False) -> None:
        self._tar = tarfile.open(fileobj=out, mode="w|", format=tarfile.USTAR_FORMAT)  # noqa: SIM115
        self.parts: list[Part] = []
        self.bytes_in = 0
        head = json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION, "sealed": sealed}).encode()
        self._add(FORMAT_MEMBER, io.BytesIO(head), len(head), record=FORMAT_MEMBER)

    def _add(self, member: str, source: IO[bytes], size: int, *, record: str | None,
             content_type: str | None = None, encoding: str | None = None) -> None:
        hashing = _Hashing(source)
        self._tar.addfile(_info(member, size), hashing)  # reads exactly ``size`` bytes
        if hashing.count != size:
            raise BackupError(f"{record or member} changed while it was being written into the archive")
        self.bytes_in += size
        if record is not None:
            self.parts.append(Part(record, member, size, hashing.digest.hexdigest(), content_type, encoding))

    def _member(self) -> str:
        return f"p/{len(self.parts):06d}"

    def add_file(self, name: str, path: Path, *, content_type: str | None = None, compress: bool = False) -> None:
        """Add the file at ``path`` as the part ``name`` (``compress``: stored deflated, through a temporary
        file beside it)."""
        if compress:
            packed = path.with_name(path.name + ".z~")
            try:
                with path.open("rb") as src, packed.open("wb") as dst:
                    deflate(src, dst)
                with packed.open("rb") as fh:
                    self._add(self._member(), fh, os.fstat(fh.fileno()).st_size, record=name,
                              content_type=content_type, encoding="zlib")
            finally:
                packed.unlink(missing_ok=True)
            return
        with path.open("rb") as fh:
            self._add(self._member(), fh, os.fstat(fh.fileno()).st_size, record=name, content_type=content_type)

    def add_bytes(self, name: str, data: bytes, *, content_type: str | None = None) -> None:
        """Add ``data`` as the part ``name``."""
        self._add(self._member(), io.BytesIO(data), len(data), record=name, content_type=content_type)

    def finish(self, manifest: Manifest) -> Manifest:
        """Write the manifest (listing every part added) and close the tar stream (not ``out``)."""
        manifest.parts = list(self.parts)
        body = json.dumps(manifest.json(), indent=1, ensure_ascii=False).encode("utf-8")
        self._add(MANIFEST_MEMBER, io.BytesIO(body), len(body), record=None)
        total = hashlib.sha256(body).hexdigest().encode() + b"\n"
        self._add(MANIFEST_SUM_MEMBER, io.BytesIO(total), len(total), record=None)
        self._tar.close()
        return manifest


# --------------------------------------------------------------------------- reading


def check_format(head: bytes) -> dict[str, Any]:
    """format.json, checked: a newer format is refused with a sentence saying what to do."""
    try:
        data = json.loads(head)
    except (ValueError, UnicodeDecodeError):
        raise ArchiveDamaged("the archive's first part (format.json) is damaged", FORMAT_MEMBER) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BackupError("this is not a secondbrain backup (its first part does not say so)")
    version = data.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ArchiveDamaged("the archive's first part (format.json) is damaged", FORMAT_MEMBER)
    if version > FORMAT_VERSION:
        raise NewerFormat(f"this backup was written in archive format {version} by a newer secondbrain, and this "
                          f"one reads formats up to {FORMAT_VERSION}: install the newer secondbrain to restore it")
    return data


def _safe_member(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


Sink = Callable[[str, IO[bytes], int], None]


def read_archive(stream: IO[bytes], unpack_to: Path | None, *,
                 progress: Callable[[int], None] | None = None) -> Manifest:
    """Read an archive from ``stream`` (start to end, never seeking), unpacking each part under
    ``unpack_to`` by member name (``None``: only checked), and check every part against the manifest.

    Raises :class:`NewerFormat` for a format this version does not read, :class:`ArchiveDamaged`
    naming the part that does not match, :class:`BackupError` for anything else that is wrong."""
    sums: dict[str, tuple[str, int]] = {}
    manifest_body: bytes | None = None
    manifest_sum: bytes | None = None
    head: bytes | None = None
    last = "the start of the archive"
    read = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for info in tar:
                if not info.isreg() or not _safe_member(info.name):
                    raise ArchiveDamaged(f"the archive holds an unexpected entry after {last}", info.name)
                if head is None and info.name != FORMAT_MEMBER:
                    raise BackupError("this is not a secondbrain backup (it does not start with format.json)")
                fh = tar.extractfile(info)
                assert fh is not None
                if info.name in (FORMAT_MEMBER, MANIFEST_MEMBER, MANIFEST_SUM_MEMBER):
                    data = fh.read()
                    digest = hashlib.sha256(data).hexdigest()
                    if info.name == FORMAT_MEMBER:
                        check_format(data)
                        head = data
                    elif info.name == MANIFEST_MEMBER:
                        manifest_body = data
                    else:
                        manifest_sum = data
                    sums[info.name] = (digest, len(data))
                else:
                    sums[info.name] = _take(fh, info, unpack_to)
                read += info.size
                if progress is not None:
                    progress(read)
                last = f"part {info.name}"
    except tarfile.TarError as exc:
        raise ArchiveDamaged(f"the archive is damaged after {last} ({exc}); it cannot be read past it") from None
    except EOFError:
        raise ArchiveDamaged(f"the archive ends early, in the middle of the part after {last}: it was cut short "
                             "(a copy that did not finish?)") from None
    return _checked(head, manifest_body, manifest_sum, sums, last)


def _take(fh: IO[bytes], info: tarfile.TarInfo, unpack_to: Path | None) -> tuple[str, int]:
    digest = hashlib.sha256()
    out = None
    if unpack_to is not None:
        target = unpack_to / info.name
        target.parent.mkdir(parents=True, exist_ok=True)
        out = open(target, "wb")  # noqa: SIM115 - closed below
    try:
        size = 0
        while block := fh.read(BLOCK):
            digest.update(block)
            size += len(block)
            if out is not None:
                out.write(block)
    finally:
        if out is not None:
            out.close()
    return digest.hexdigest(), size


def _checked(head: bytes | None, body: bytes | None, total: bytes | None, sums: dict[str, tuple[str, int]],
             last: str) -> Manifest:
    if head is None:
        raise BackupError("this is not a secondbrain backup (it is empty or not a tar archive)")
    if body is None or total is None:
        raise ArchiveDamaged(f"the archive has no manifest at its end (the last thing read is {last}): it was cut "
                             "short or damaged there", MANIFEST_MEMBER)
    if hashlib.sha256(body).hexdigest() != total.decode("ascii", "replace").strip():
        raise ArchiveDamaged("the archive's manifest (manifest.json) is damaged: it does not match its checksum",
                             MANIFEST_MEMBER)
    try:
        manifest = Manifest.from_json(json.loads(body))
    except (ValueError, KeyError, TypeError):
        raise ArchiveDamaged("the archive's manifest (manifest.json) cannot be read", MANIFEST_MEMBER) from None
    if json.loads(head).get("format_version") != manifest.format_version:
        raise ArchiveDamaged("the archive's first part (format.json) does not agree with its manifest", FORMAT_MEMBER)
    listed = {p.member for p in manifest.parts}
    for part in manifest.parts:
        found = sums.get(part.member)
        if found is None:
            raise ArchiveDamaged(f"the part {part.name} is missing from the archive", part.name)
        if found != (part.sha256, part.size):
            raise ArchiveDamaged(f"the part {part.name} is damaged: its checksum does not match the manifest's",
                                 part.name)
    extra = sorted(set(sums) - listed - {MANIFEST_MEMBER, MANIFEST_SUM_MEMBER})
    if extra:
        raise ArchiveDamaged(f"the archive holds {extra[0]}, which its manifest does not list", extra[0])
    return manifest


def check_layout(path: Path) -> None:
    """Every byte of a plain archive on disk that is neither a header nor a part's data is zero (tar's
    padding and end blocks), so a change there is found too; a header tar cannot read (its checksum
    fails) stops tar's reading, and the bytes left after the last member it read are then not zeros."""
    size = path.stat().st_size
    if size % _TAR_BLOCK:
        raise ArchiveDamaged(f"the archive's size ({size} bytes) is not a whole number of tar blocks: it was cut "
                             "short or something was added to it")
    end = 0
    last = "the start of the archive"
    with path.open("rb") as fh:
        try:
            tar = tarfile.open(fileobj=fh, mode="r:")  # noqa: SIM115 - closed below
        except tarfile.TarError as exc:
            raise ArchiveDamaged(f"the archive cannot be read as a tar archive ({exc})") from None
        try:
            for info in _members(tar):
                if info.offset != end and not _zeros(fh, end, info.offset):
                    raise ArchiveDamaged(f"the archive is damaged after {last} (bytes that should be zero are not)")
                end = info.offset_data + _padded(info.size)
                if not _zeros(fh, info.offset_data + info.size, end):
                    raise ArchiveDamaged(f"the archive is damaged in the padding of part {info.name}", info.name)
                last = f"part {info.name}"
        finally:
            tar.close()
        if not _zeros(fh, end, size):
            raise ArchiveDamaged(f"the archive is damaged after {last}: the next header cannot be read (its checksum "
                                 "fails) or bytes that should be zero are not")


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        try:
            info = tar.next()
        except tarfile.TarError:
            return
        if info is None:
            return
        yield info


def _padded(size: int) -> int:
    return (size + _TAR_BLOCK - 1) // _TAR_BLOCK * _TAR_BLOCK


def _zeros(fh: IO[bytes], start: int, stop: int) -> bool:
    fh.seek(start)
    left = stop - start
    while left > 0:
        block = fh.read(min(left, BLOCK))
        if not block or block.count(0) != len(block):
            return False
        left -= len(block)
    return True


def deflate(source: IO[bytes], target: IO[bytes]) -> None:
    """zlib-compress ``source`` into ``target`` (level 1: the engine's files are mostly zeros)."""
    packer = zlib.compressobj(1)
    while block := source.read(BLOCK):
        target.write(packer.compress(block))
    target.write(packer.flush())


def inflate_to(source: IO[bytes], path: Path) -> None:
    """Write the zlib stream ``source`` to a new file at ``path``, leaving its runs of zeros as holes (the
    engine's files are sparse, and stay so)."""
    unpacker = zlib.decompressobj()
    zero = bytes(_HOLE)
    with path.open("wb") as out:
        def put(data: bytes) -> None:
            for i in range(0, len(data), _HOLE):
                piece = data[i:i + _HOLE]
                if piece == zero[:len(piece)]:
                    out.seek(len(piece), os.SEEK_CUR)
                else:
                    out.write(piece)

        while block := source.read(BLOCK):
            put(unpacker.decompress(block, 4 * BLOCK))
            while unpacker.unconsumed_tail:
                put(unpacker.decompress(unpacker.unconsumed_tail, 4 * BLOCK))
        put(unpacker.flush())
        if not unpacker.eof:
            raise ArchiveDamaged(f"a compressed part ends early (unpacking {path.name})")
        out.truncate()


def copy_stream(source: IO[bytes], target: IO[bytes]) -> int:
    """Copy ``source`` to ``target`` in blocks; the bytes copied."""
    total = 0
    while block := source.read(BLOCK):
        target.write(block)
        total += len(block)
    return total


__all__ = ["FORMAT", "FORMAT_VERSION", "ArchiveDamaged", "ArchiveWriter", "BackupError", "Manifest", "NewerFormat",
           "Part", "check_format", "check_layout", "copy_stream", "deflate", "inflate_to", "read_archive"]
