"""The backup folder: an archive is there whole or not at all, and rotation keeps N daily and M weekly."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from secondbrain.backup import folder

pytestmark = pytest.mark.fast


def make(path: Path, when: datetime) -> Path:
    target = path / folder.archive_name(when, path)
    target.write_bytes(b"x" * 10)
    return target


def test_rotation_keeps_the_newest_of_each_recent_day_and_week(tmp_path: Path) -> None:
    start = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)  # fixed date: rotation is about calendar days and weeks
    for hours in range(0, 40 * 24, 6):  # every six hours for 40 days
        make(tmp_path, start + timedelta(hours=hours))
    folder.rotate(tmp_path, daily=7, weekly=4)
    kept = folder.archives(tmp_path)
    days = {a.taken_at.date() for a in kept}
    newest = start + timedelta(hours=40 * 24 - 6)
    assert kept[-1].taken_at == newest
    # The last 7 days each keep their last archive; 4 weeks keep their last one (some the same).
    for d in range(7):
        assert (newest - timedelta(days=d)).date() in days
    weeks = {a.taken_at.isocalendar()[:2] for a in kept}
    assert len(weeks) >= 4 and len(kept) <= 7 + 4
    assert all(a.taken_at.hour == 20 for a in kept)  # each day's last one


def test_a_failed_write_leaves_the_earlier_archive_alone(tmp_path: Path) -> None:
    earlier = make(tmp_path, datetime(2026, 3, 1, tzinfo=UTC))  # fixed date: names only
    target = tmp_path / "secondbrain-20260302T000000Z.sbk"
    with pytest.raises(RuntimeError), folder.written_whole(target) as out:
        out.write(b"half an archive")
        raise RuntimeError("killed")
    assert not target.exists() and earlier.read_bytes() == b"x" * 10
    assert [a.path for a in folder.archives(tmp_path)] == [earlier]
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_a_dead_backups_leftover_is_removed(tmp_path: Path) -> None:
    dead = tmp_path / "secondbrain-20260302T000000Z.sbk.tmp-999999999"
    alive = tmp_path / f"secondbrain-20260302T000001Z.sbk.tmp-{os.getpid()}"
    dead.write_bytes(b"half")
    alive.write_bytes(b"being written")
    assert folder.remove_leftovers(tmp_path) == [dead]
    assert alive.exists() and folder.archives(tmp_path) == []


def test_only_archive_names_are_served() -> None:
    assert folder.is_archive_name("secondbrain-20260302T000000Z.sbk")
    assert folder.is_archive_name("secondbrain-20260302T000000Z-2.sbk")
    for bad in ("../secondbrain-20260302T000000Z.sbk", "secondbrain-20260302T000000Z.sbk.tmp-1", "api-key", ""):
        assert not folder.is_archive_name(bad)
