"""The connectors' state file: one per connector, server and key; written whole, readable by its owner only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from connectors.calendars import default_state_path as calendars_state
from connectors.folders import default_state_path as watch_state
from connectors.mail import default_state_path as mail_state
from connectors.state import read_state, state_path, write_state

pytestmark = pytest.mark.fast  # files only: in the fast lane


def test_each_connector_server_and_key_has_its_own_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    url, key = "http://127.0.0.1:8000", "3f2a"
    paths = {mail_state(url, key), calendars_state(url, key), watch_state(url, key, [tmp_path / "notes"]),
             mail_state(url, "other key"), mail_state("http://127.0.0.1:9000", key)}
    assert len(paths) == 5 and all(p.parent == tmp_path / "secondbrain" for p in paths)
    assert mail_state(url, key).name.startswith("mail-") and mail_state(url, key) == mail_state(url, key)
    assert key not in str(mail_state(url, key))  # the key is never in the name, only a hash with it
    assert watch_state(url, key, [tmp_path / "a"]) != watch_state(url, key, [tmp_path / "b"])
    assert state_path("mail", url, key) == mail_state(url, key)


def test_the_state_is_written_whole_and_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "mail-1.json"
    assert read_state(path) is None  # a first run
    write_state(path, {"version": 1, "folders": {"INBOX": {"uid": 7}}})
    assert read_state(path) == {"version": 1, "folders": {"INBOX": {"uid": 7}}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["mail-1.json"]  # no half-written file left
    path.write_text("{not json")
    with pytest.raises(ValueError):
        read_state(path)  # each connector says what a broken file means for it
