"""``secondbrain service install|uninstall|status``.

Where no systemd runs for the user (this machine: not booted with systemd), ``install`` is tried against the
real ``systemctl``: it writes the unit and its settings, then says that systemd does not run here and what to
run once it does.  The calls a working systemd or launchd would get are checked through a recording stand-in
for ``systemctl``/``launchctl`` (a user service manager cannot run here); the files they install are checked
by systemd-analyze and plistlib in tests/app/test_service.py, and the command they run is started for real
in tests/e2e/test_service_command.py."""

from __future__ import annotations

import os
import plistlib
import socket
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.cli.parser import build_parser
from app.cli.service import cmd_service, run_command
from app.service import AGENT_LABEL, UNIT_NAME

pytestmark = pytest.mark.fast


class Recorder:
    """Stands in for systemctl/launchctl: records each call and answers ``answers[first words]``."""

    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str]] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.answers = answers or {}

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        for prefix, (code, out) in self.answers.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return subprocess.CompletedProcess(list(argv), code, out, "")
        return subprocess.CompletedProcess(list(argv), 0, "", "")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home" / ".local" / "state"))
    monkeypatch.setenv("SB_TIMEZONE", "Europe/Oslo")
    monkeypatch.delenv("SB_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def service(*argv: str) -> object:
    return build_parser().parse_args(["service", *argv])


def user_systemd_answers() -> bool:
    return run_command(["systemctl", "--user", "is-system-running"]).returncode == 0


@pytest.mark.skipif(user_systemd_answers(), reason="a systemd user manager runs here: the test would reach it")
def test_where_systemd_does_not_run_for_the_user_install_says_so(home: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_service(service("install", "--port", "8123"), platform="linux") == 1
    err = capsys.readouterr().err
    unit = home / ".config" / "systemd" / "user" / UNIT_NAME
    assert "error: `systemctl --user daemon-reload` failed:" in err
    assert f"The unit is written to {unit}; once it runs, start it with `systemctl --user daemon-reload && " \
           f"systemctl --user enable --now {UNIT_NAME}`" in err
    data = home / ".local" / "share" / "secondbrain"
    assert f'"up" "--data-dir" "{data}" "--log-format" "text" "--port" "8123"' in unit.read_text()
    settings = home / ".config" / "secondbrain" / "service.env"
    assert 'SB_TIMEZONE="Europe/Oslo"' in settings.read_text()
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600 and stat.S_IMODE(unit.stat().st_mode) == 0o644


def test_install_status_and_uninstall_with_systemd(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    systemctl = Recorder({("systemctl", "--user", "show"): (0, "UnitFileState=enabled\nActiveState=active\n"
                                                               "SubState=running\nMainPID=4242\nNRestarts=1\n"
                                                               "ExecMainStartTimestamp=Sun 2026-11-29 08:00:00 UTC\n")})
    assert cmd_service(service("install"), platform="linux", run=systemctl) == 0
    assert systemctl.calls == [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", UNIT_NAME],
                               ["systemctl", "--user", "restart", UNIT_NAME]]  # again: a new version takes over
    err = capsys.readouterr().err
    assert f"installed {UNIT_NAME} (a systemd user service)" in err and "(re)started now" in err
    assert "journalctl --user -u secondbrain -f" in err and "loginctl enable-linger" in err
    assert cmd_service(service("status"), platform="linux", run=systemctl) == 0
    assert "secondbrain service: enabled, active (running) since Sun 2026-11-29 08:00:00 UTC, pid 4242, " \
           "restarted 1 times after failing" in capsys.readouterr().err
    assert cmd_service(service("uninstall"), platform="linux", run=systemctl) == 0
    assert systemctl.calls[-2:] == [["systemctl", "--user", "disable", "--now", UNIT_NAME],
                                    ["systemctl", "--user", "daemon-reload"]]
    assert not (home / ".config" / "systemd" / "user" / UNIT_NAME).exists()
    assert not (home / ".config" / "secondbrain" / "service.env").exists()
    assert cmd_service(service("status"), platform="linux", run=systemctl) == 1
    assert "not installed (`secondbrain service install` runs it at login)" in capsys.readouterr().err


def test_a_server_already_running_on_the_data_is_not_started_twice(home: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = home / ".local" / "share" / "secondbrain"
    with socket.socket() as sock:  # a running `up` on that data directory, as it records itself
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        pointers = home / ".local" / "state" / "secondbrain"
        pointers.mkdir(parents=True)
        (pointers / f"server-{port}").write_text(f"{data}\nhttp://127.0.0.1:{port}\n")
        systemctl = Recorder()
        assert cmd_service(service("install"), platform="linux", run=systemctl) == 0
    assert systemctl.calls[-1] == ["systemctl", "--user", "enable", UNIT_NAME]  # at the next login, not now
    err = capsys.readouterr().err
    assert f"not started now: secondbrain is already running on {data} at http://127.0.0.1:{port}" in err


def test_install_status_and_uninstall_with_launchd(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uid = os.getuid()
    launchctl = Recorder({("launchctl", "print"): (0, f"gui/{uid}/{AGENT_LABEL} = {{\n\tstate = running\n"
                                                     "\tpid = 777\n\tlast exit code = 1\n}\n")})
    assert cmd_service(service("install", "--no-llm"), platform="darwin", run=launchctl) == 0
    plist = home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    assert launchctl.calls == [["launchctl", "bootout", f"gui/{uid}/{AGENT_LABEL}"],
                               ["launchctl", "bootstrap", f"gui/{uid}", str(plist)]]
    agent = plistlib.loads(plist.read_bytes())
    assert agent["ProgramArguments"][-5:] == ["--data-dir", str(home / ".local" / "share" / "secondbrain"),
                                              "--log-format", "text", "--no-llm"]
    assert agent["EnvironmentVariables"]["SB_TIMEZONE"] == "Europe/Oslo"
    assert stat.S_IMODE(plist.stat().st_mode) == 0o600  # it holds the settings
    assert (home / "Library" / "Logs" / "secondbrain").is_dir()
    assert f"installed the launch agent {AGENT_LABEL}" in capsys.readouterr().err
    assert cmd_service(service("status"), platform="darwin", run=launchctl) == 0
    assert "secondbrain service: running, pid 777, last exit code 1" in capsys.readouterr().err
    assert cmd_service(service("uninstall"), platform="darwin", run=launchctl) == 0
    assert launchctl.calls[-1] == ["launchctl", "bootout", f"gui/{uid}/{AGENT_LABEL}"] and not plist.exists()


def test_another_system_is_told_what_to_use_instead(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_service(service("install"), platform="win32", run=Recorder()) == 2
    assert "Windows: Task Scheduler" in capsys.readouterr().err
