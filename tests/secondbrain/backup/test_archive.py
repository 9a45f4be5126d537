"""The archive format: what goes in comes back, and a byte changed anywhere in the file is refused with a
sentence that names where."""

from __future__ import annotations

import io
import json
import random
import tarfile
from pathlib import Path

import pytest

from secondbrain.backup.archive import (
    FORMAT_VERSION,
    ArchiveDamaged,
    ArchiveWriter,
    BackupError,
    Manifest,
    NewerFormat,
    check_layout,
    read_archive,
)

pytestmark = pytest.mark.fast


def write(path: Path, *, parts: dict[str, bytes] | None = None) -> Manifest:
    parts = parts if parts is not None else {
        "postgres.dump": b"PGDMP" + bytes(range(256)) * 40, "keys/pipeline.key": b"k" * 44 + b"\n",
        "objects/users/u1/artifacts/a1": b"# A note\n\nThe bike is in the shed.\n",
        "objects/users/u1/artifacts/a2": bytes(random.Random(1).randbytes(70_000))}
    source = path.parent / "vector.bin"
    source.write_bytes(b"\x00" * 200_000 + b"\x01\x02\x03" + b"\x00" * 50_000)
    with path.open("wb") as fh:
        writer = ArchiveWriter(fh)
        for name, data in parts.items():
            writer.add_bytes(name, data, content_type="text/markdown" if name.endswith("a1") else None)
        writer.add_file("vectors/edge/u_u1_v1/segment", source, compress=True)
        return writer.finish(Manifest("2026-01-01T00:00:00+00:00", {"users": {"u1": {"sources": 2}}}))


def read(path: Path, out: Path | None = None) -> Manifest:
    check_layout(path)
    with path.open("rb") as fh:
        return read_archive(fh, out)


def test_every_part_comes_back_as_it_went_in(tmp_path: Path) -> None:
    written = write(tmp_path / "a.sbk")
    got = read(tmp_path / "a.sbk", tmp_path / "out")
    assert [p.json() for p in got.parts] == [p.json() for p in written.parts]
    assert got.fields["users"] == {"u1": {"sources": 2}}
    note = next(p for p in got.parts if p.name.endswith("a1"))
    assert (tmp_path / "out" / note.member).read_bytes() == b"# A note\n\nThe bike is in the shed.\n"
    assert note.content_type == "text/markdown"
    vector = next(p for p in got.parts if p.name.startswith("vectors/"))
    assert vector.encoding == "zlib" and vector.size < 2_000  # stored compressed: the zeros cost nothing
    # It is a plain tar: any tool lists it.
    with tarfile.open(tmp_path / "a.sbk") as tar:
        assert tar.getnames()[0] == "format.json" and tar.getnames()[-1] == "manifest.sha256"


def test_a_byte_changed_anywhere_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.sbk"
    write(path)
    original = path.read_bytes()
    rng = random.Random(7)
    # Every kind of place: headers, part data, padding, the manifest, the end blocks, plus random bytes.
    positions = [0, 100, 148, 512, 600, len(original) - 1, len(original) - 600, len(original) - 5000]
    positions += rng.sample(range(len(original)), 60)
    for pos in positions:
        damaged = bytearray(original)
        damaged[pos] ^= 0x20
        path.write_bytes(bytes(damaged))
        with pytest.raises(BackupError) as caught:
            read(path)
        assert str(caught.value), pos
    path.write_bytes(original)
    read(path)


def test_a_changed_part_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.sbk"
    written = write(path)
    data = bytearray(path.read_bytes())
    needle = b"The bike is in the shed."
    data[data.index(needle) + 4] ^= 0x01
    path.write_bytes(bytes(data))
    with path.open("rb") as fh, pytest.raises(ArchiveDamaged) as caught:
        read_archive(fh, None)
    assert caught.value.part == "objects/users/u1/artifacts/a1"
    assert "objects/users/u1/artifacts/a1 is damaged" in str(caught.value)
    assert any(p.name == caught.value.part for p in written.parts)


def test_a_cut_short_archive_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.sbk"
    write(path)
    whole = path.read_bytes()
    for keep in (len(whole) // 2 // 512 * 512, len(whole) - 10240, 700):
        path.write_bytes(whole[:keep])
        with pytest.raises(BackupError) as caught:
            read(path)
        assert "cut short" in str(caught.value) or "damaged" in str(caught.value)


def test_a_newer_format_is_refused_with_a_sentence(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        head = json.dumps({"format": "secondbrain-backup", "format_version": FORMAT_VERSION + 1}).encode()
        info = tarfile.TarInfo("format.json")
        info.size = len(head)
        tar.addfile(info, io.BytesIO(head))
    buf.seek(0)
    with pytest.raises(NewerFormat) as caught:
        read_archive(buf, None)
    assert f"format {FORMAT_VERSION + 1}" in str(caught.value) and "newer secondbrain" in str(caught.value)


def test_something_else_is_not_taken_for_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "notes.tar"
    with tarfile.open(path, "w") as tar:
        (tmp_path / "x.md").write_text("hello")
        tar.add(tmp_path / "x.md", "x.md")
    with path.open("rb") as fh, pytest.raises(BackupError, match="not a secondbrain backup"):
        read_archive(fh, None)
