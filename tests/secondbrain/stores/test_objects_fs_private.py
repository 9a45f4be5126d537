"""The file object store writes its owner's files only (0600, folders 0700), whatever the umask."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from secondbrain.stores.objects_fs import FileObjectStore

pytestmark = pytest.mark.fast  # no services: in the fast lane


@pytest.fixture()
def open_umask() -> Iterator[None]:
    """A process that did not set a private umask (the usual 022, or even none)."""
    before = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(before)


def test_objects_sidecars_and_folders_are_private(tmp_path: Path, open_umask: None) -> None:
    root = tmp_path / "objects"
    store = FileObjectStore(root)
    store.put("users/alice/a/b/note.md", b"# private")
    store.put("users/alice/c.pdf", io.BytesIO(b"%PDF-1.4" * 1000), content_type="application/pdf")
    store.check()
    seen = {p.relative_to(root).as_posix(): stat.S_IMODE(os.lstat(p).st_mode) for p in root.rglob("*")}
    assert "users/alice/a/b/note.md" in seen and "users/alice/a/b/.sb~meta-note.md" in seen
    for name, mode in seen.items():
        assert mode == (0o700 if (root / name).is_dir() else 0o600), (name, oct(mode))
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def test_an_existing_open_root_is_closed(tmp_path: Path, open_umask: None) -> None:
    root = tmp_path / "objects"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    FileObjectStore(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
