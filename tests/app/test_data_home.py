"""Where the data lives: the platform's user data directory by default, an earlier version's ``./.secondbrain``
moved there once (never while a server runs on it, never over data already there), and the test suite kept
away from the person's own directories."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.data_home import DataDirError, holds_data, legacy_data_dir, move_legacy
from secondbrain.settings import Settings, default_data_dir

pytestmark = pytest.mark.fast


def old_data_dir(cwd: Path) -> Path:
    """What an earlier version left in the folder it ran in."""
    old = cwd / ".secondbrain"
    (old / "postgres").mkdir(parents=True)
    (old / "postgres" / "PG_VERSION").write_text("18\n")
    (old / "objects" / "local").mkdir(parents=True)
    (old / "objects" / "local" / "note.md").write_text("The spare key is under the blue pot.")
    (old / "api-key").write_text("sb_local_key\n")
    return old


def test_the_default_is_the_platforms_user_data_directory_not_the_checkout(tmp_path: Path) -> None:
    script = "from secondbrain.settings import Settings; print(Settings().data_dir)"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SB_")}, "XDG_DATA_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == str(tmp_path / "secondbrain")  # ~/.local/share/secondbrain when XDG_DATA_HOME is unset
    env.pop("XDG_DATA_HOME")
    env["HOME"] = str(tmp_path / "home")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.strip()
    expected = {"darwin": "Library/Application Support/secondbrain"}.get(sys.platform, ".local/share/secondbrain")
    assert out == str(tmp_path / "home" / expected)


def test_the_suite_never_reaches_the_persons_own_directories() -> None:
    # tests/conftest.py points the platform directories at the run's own, for this process and its children.
    home = Path.home().resolve()
    for path in (default_data_dir(), Settings().data_dir):  # type: ignore[call-arg]
        assert Path(path).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve()), path
        assert not Path(path).resolve().is_relative_to(home / ".local"), path


def test_an_earlier_versions_folder_is_moved_once_with_a_message(tmp_path: Path) -> None:
    old = old_data_dir(tmp_path / "clone")
    new = tmp_path / "share" / "secondbrain"
    assert legacy_data_dir(tmp_path / "clone") == old.resolve()
    said: list[str] = []
    assert move_legacy(old, new, running_at=lambda _p: None, say=said.append) == new
    assert not old.exists()
    assert (new / "objects" / "local" / "note.md").read_text() == "The spare key is under the blue pot."
    assert (new / "api-key").read_text() == "sb_local_key\n"
    assert said[0].startswith(f"secondbrain: moving your data from {old} to {new}")
    assert said[-1] == f"secondbrain: moved. Your data is now in {new}"
    assert legacy_data_dir(tmp_path / "clone") is None  # nothing left to move next time


def test_an_empty_or_unrelated_dot_folder_is_not_taken_for_data(tmp_path: Path) -> None:
    (tmp_path / ".secondbrain").mkdir()
    assert legacy_data_dir(tmp_path) is None
    (tmp_path / ".secondbrain" / "notes.txt").write_text("mine")
    assert legacy_data_dir(tmp_path) is None and not holds_data(tmp_path / ".secondbrain")


def test_a_folder_a_server_runs_on_is_not_moved(tmp_path: Path) -> None:
    old = old_data_dir(tmp_path / "clone")
    new = tmp_path / "share" / "secondbrain"
    with pytest.raises(DataDirError) as refused:
        move_legacy(old, new, running_at=lambda p: "http://127.0.0.1:8000" if p == old else None, say=print)
    message = str(refused.value)
    assert f"a secondbrain is still running on {old} at http://127.0.0.1:8000" in message
    assert "Stop it (Ctrl-C where it runs), then start again to move it" in message
    assert f"secondbrain up --data-dir {old}" in message
    assert old.is_dir() and not new.exists()
    # A PostgreSQL left running on it (its pid file names a live process) counts as a server too.
    (old / "postgres" / "postmaster.pid").write_text(f"{os.getpid()}\n{old / 'postgres'}\n")
    with pytest.raises(DataDirError, match="still running"):
        move_legacy(old, new, running_at=lambda _p: None, say=print)


def test_data_already_at_the_new_place_is_never_overwritten(tmp_path: Path) -> None:
    old = old_data_dir(tmp_path / "clone")
    new = tmp_path / "share" / "secondbrain"
    (new / "postgres").mkdir(parents=True)
    with pytest.raises(DataDirError) as refused:
        move_legacy(old, new, running_at=lambda _p: None, say=print)
    assert f"secondbrain up --data-dir {old}" in str(refused.value) and f"SB_DATA_DIR={old}" in str(refused.value)
    assert (old / "api-key").exists() and not (new / "api-key").exists()
    # An empty folder there (made by an earlier start) is no obstacle.
    (new / "postgres").rmdir()
    assert move_legacy(old, new, running_at=lambda _p: None, say=lambda _m: None) == new


def test_a_move_to_another_file_system_copies_then_swaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = old_data_dir(tmp_path / "clone")
    new = tmp_path / "share" / "secondbrain"
    real_rename = os.rename
    calls: list[tuple[str, str]] = []

    def rename(src: str | Path, dst: str | Path) -> None:
        calls.append((str(src), str(dst)))
        if Path(src) == old:  # what os.rename does across file systems
            raise OSError(18, "Invalid cross-device link")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    move_legacy(old, new, running_at=lambda _p: None, say=lambda _m: None)
    assert not old.exists() and (new / "objects" / "local" / "note.md").exists()
    assert calls[-1][1] == str(new)  # the complete copy was renamed into place
    assert [p.name for p in new.parent.iterdir()] == ["secondbrain"]  # no staging folder left behind
