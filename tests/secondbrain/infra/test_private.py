"""A data directory from an earlier version (folders 0755, raw files 0644) is made its owner's alone."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from secondbrain.infra.private import make_private, tighten_top

pytestmark = pytest.mark.fast  # no services: in the fast lane


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def old_data_dir(root: Path) -> Path:
    data = root / "data"
    (data / "objects" / "users" / "local").mkdir(parents=True)
    for d in (data, data / "objects", data / "objects" / "users", data / "objects" / "users" / "local"):
        d.chmod(0o755)
    (data / "objects" / "users" / "local" / "a.pdf").write_bytes(b"%PDF")
    (data / "objects" / "users" / "local" / "a.pdf").chmod(0o644)
    (data / "api-key").write_text("sb_x\n")
    (data / "api-key").chmod(0o600)
    return data


def test_an_old_data_directory_is_closed_to_others(tmp_path: Path) -> None:
    data = old_data_dir(tmp_path)
    (data / "elsewhere").symlink_to(tmp_path)  # a link is not followed nor changed
    tmp_path.chmod(0o755)
    assert make_private(data) == 4  # three folders and the raw file below the data directory
    assert mode(data) == 0o700
    for path in data.rglob("*"):
        if not path.is_symlink():
            assert mode(path) & 0o077 == 0, path
    assert mode(tmp_path) == 0o755
    # Once private, a start does not walk it again.
    (data / "objects" / "later.txt").write_text("x")
    (data / "objects" / "later.txt").chmod(0o644)
    assert make_private(data) == 0 and mode(data / "objects" / "later.txt") == 0o644


def test_under_root_others_may_only_pass_through(tmp_path: Path) -> None:
    """The embedded PostgreSQL, run for root as the user 'pgserver', passes through to its folder."""
    data = old_data_dir(tmp_path)
    assert make_private(data, others_may_pass=True) == 4
    assert mode(data) == 0o711 and mode(data / "objects") == 0o700
    data.chmod(0o755)  # what pgserver does to every parent of its folder when it starts a server
    tighten_top(data, others_may_pass=True)
    assert mode(data) == 0o711


def test_sockets_are_left_alone(tmp_path: Path) -> None:
    data = old_data_dir(tmp_path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(data / "s.sock"))
        before = mode(data / "s.sock")
        make_private(data)
        assert mode(data / "s.sock") == before
