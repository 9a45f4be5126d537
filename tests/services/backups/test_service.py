"""`up`'s backup schedule: on by default (daily, beside the data directory), a backup whenever the last one is
an interval old, and a warning only when one is really late; the processes the tests and benchmarks start
have it off."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devtools.processes import cli_env
from secondbrain.backup import folder as backup_folder
from secondbrain.settings import Settings
from services.backups.service import TICK_S, Backups

pytestmark = pytest.mark.fast

START = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)  # fixed date: the schedule runs on a fake clock


def settings(monkeypatch: pytest.MonkeyPatch, **values: Any) -> Settings:
    monkeypatch.delenv("SB_BACKUP_INTERVAL", raising=False)
    monkeypatch.delenv("SB_BACKUP_DIR", raising=False)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_up_backs_up_daily_by_default_into_a_folder_beside_its_data(monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings(monkeypatch, data_dir=Path("/home/ada/.secondbrain"))
    assert s.backup_interval_s == 24 * 3600
    assert s.backups_dir == Path("/home/ada/secondbrain-backups")
    assert settings(monkeypatch, backup_interval="off").backup_interval_s is None


def test_the_processes_tests_and_benchmarks_start_do_not_back_up_unless_asked(monkeypatch: pytest.MonkeyPatch
                                                                             ) -> None:
    monkeypatch.setenv("SB_BACKUP_INTERVAL", "1h")  # not leaked into a child
    env = cli_env({})
    assert env["SB_BACKUP_INTERVAL"] == "off"
    monkeypatch.setenv("SB_BACKUP_INTERVAL", env["SB_BACKUP_INTERVAL"])
    assert Settings(_env_file=None).backup_interval_s is None  # type: ignore[call-arg]
    assert cli_env({"SB_BACKUP_INTERVAL": "1h"})["SB_BACKUP_INTERVAL"] == "1h"


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def schedule(tmp_path: Path, clock: Clock) -> tuple[Backups, list[datetime]]:
    """Backups on a fake clock whose ``take`` writes an empty archive (the writing itself is tested with the
    real stores in tests/e2e/test_backup.py)."""
    backups = Backups(folder=tmp_path, sources=lambda: None, staging_root=tmp_path,  # type: ignore[arg-type,return-value]
                      interval_s=3600, clock=clock)
    taken: list[datetime] = []

    def take() -> backup_folder.Archive:
        taken.append(clock())
        (tmp_path / backup_folder.archive_name(clock(), tmp_path)).write_bytes(b"archive")
        found = backup_folder.latest(tmp_path)
        assert found is not None
        return found

    backups.take = take  # type: ignore[method-assign]
    return backups, taken


async def until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the schedule did not back up"
        await asyncio.sleep(0.01)


def test_the_schedule_backs_up_once_an_interval_has_passed(tmp_path: Path) -> None:
    clock = Clock()
    backups, taken = schedule(tmp_path, clock)

    async def run() -> None:
        loop = asyncio.create_task(backups.loop(tick_s=0.01))
        try:
            await until(lambda: len(taken) == 1)  # none yet: the first look takes one
            clock.now += timedelta(minutes=59)
            await asyncio.sleep(0.2)  # many looks within the hour: none is due
            assert len(taken) == 1
            clock.now += timedelta(minutes=1)
            await until(lambda: len(taken) == 2)
        finally:
            loop.cancel()

    asyncio.run(run())
    assert taken == [START, START + timedelta(hours=1)]


def test_late_means_older_than_twice_the_interval_or_a_first_backup_that_did_not_come(tmp_path: Path) -> None:
    clock = Clock()
    backups, _ = schedule(tmp_path, clock)
    assert backups.status()["stale"] is False  # just started: the first backup is a tick away
    backups.started -= 2 * TICK_S + 1
    assert backups.status()["stale"] is True  # it should have come by now
    backups.take()
    clock.now += timedelta(hours=2)
    assert backups.status()["stale"] is False
    clock.now += timedelta(seconds=1)
    assert backups.status()["stale"] is True
    fresh, _ = schedule(tmp_path / "other", clock)
    (tmp_path / "other").mkdir()
    fresh.last_error = "2026-03-01T02:01:00+00:00: the disk is full"
    assert fresh.status()["stale"] is True  # the first one failed
    fresh.interval_s = None
    assert fresh.status()["stale"] is False  # no schedule: nothing is late
