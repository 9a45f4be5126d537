"""The service files: the systemd user unit passes ``systemd-analyze --user verify`` (systemd's own reading of
it: an unknown key, a bad value or a command that is not there fail it), quoting an awkward path right; the
launchd agent is a valid property list with what launchd needs; the settings file carries the person's SB_*
settings with the shell's PATH and never the data directory or a client's key."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dotenv import dotenv_values

from app.service import (
    AGENT_LABEL,
    ServiceSpec,
    launchd_paths,
    render_env_file,
    render_launchd_plist,
    render_systemd_unit,
    settings_environment,
    systemd_paths,
)

pytestmark = pytest.mark.fast

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """systemd's check of a user unit (a runtime directory of its own: no session is needed)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return subprocess.run([str(SYSTEMD_ANALYZE), "--user", "verify", str(unit)], capture_output=True, text=True,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, timeout=60, check=False)


def awkward_spec(tmp_path: Path) -> ServiceSpec:
    """A program in a folder whose name has a space, a percent sign and a dollar: quoting must hold."""
    folder = tmp_path / "my tools 100% $HOME"
    folder.mkdir()
    exe = folder / "secondbrain"
    exe.symlink_to(sys.executable)
    data = tmp_path / "Application Support" / "secondbrain"
    data.mkdir(parents=True)
    return ServiceSpec((str(exe), "up", "--data-dir", str(data), "--log-format", "text", "--port", "8123"), data,
                       {"SB_TIMEZONE": "Europe/Paris", "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="needs systemd-analyze (Debian: systemd)")
def test_the_systemd_unit_passes_systemds_own_check(tmp_path: Path) -> None:
    spec = awkward_spec(tmp_path)
    unit, env_file = systemd_paths(tmp_path / "config")
    unit.parent.mkdir(parents=True)
    unit.write_text(render_systemd_unit(spec, env_file))
    done = verify(unit, tmp_path)
    assert done.returncode == 0 and done.stdout + done.stderr == "", done.stdout + done.stderr
    text = unit.read_text()
    for line in ("Restart=on-failure", "RestartPreventExitStatus=2", "WantedBy=default.target", "KillMode=mixed",
                 f"EnvironmentFile={env_file}", "SyslogIdentifier=secondbrain", "Type=exec"):
        assert line in text, line
    # The quoting holds: systemd found the program by its whole path (else "is not executable" above).
    assert '"' + str(spec.command[0]).replace("%", "%%") + '" "up"' in text


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="needs systemd-analyze (Debian: systemd)")
def test_systemds_check_does_fail_a_broken_unit(tmp_path: Path) -> None:
    # So that the check above can fail: a command that is not there, and a key systemd does not know.
    spec = awkward_spec(tmp_path)
    broken = ServiceSpec((str(tmp_path / "nowhere" / "secondbrain"), "up"), spec.data_dir, spec.environment)
    unit, env_file = systemd_paths(tmp_path / "config")
    unit.parent.mkdir(parents=True)
    unit.write_text(render_systemd_unit(broken, env_file))
    assert "is not executable" in verify(unit, tmp_path).stderr
    unit.write_text(render_systemd_unit(spec, env_file).replace("Restart=on-failure", "Restart=sometimes"))
    assert "Failed to parse service restart specifier" in verify(unit, tmp_path).stderr


def test_the_launchd_agent_is_a_valid_property_list(tmp_path: Path) -> None:
    spec = awkward_spec(tmp_path)
    plist, log_file = launchd_paths(tmp_path / "home")
    assert plist == tmp_path / "home" / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    assert log_file == tmp_path / "home" / "Library" / "Logs" / "secondbrain" / "secondbrain.log"
    agent = plistlib.loads(render_launchd_plist(spec, log_file))
    assert agent["Label"] == AGENT_LABEL and agent["ProgramArguments"] == list(spec.command)
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["WorkingDirectory"] == str(spec.data_dir)
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log_file)
    assert agent["EnvironmentVariables"] == {**spec.environment, "PYTHONUNBUFFERED": "1"}
    assert isinstance(agent["ThrottleInterval"], int) and isinstance(agent["ExitTimeOut"], int)
    assert all(isinstance(a, str) for a in agent["ProgramArguments"])


def test_the_settings_are_the_persons_and_the_shells_path(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text('SB_TIMEZONE=Europe/Lisbon\nSB_MAIL_HOST=imap.example.org\nOTHER=x\nSB_DATA_DIR=/elsewhere\n')
    environ = {"SB_MAIL_HOST": "mail.example.net", "SB_MAIL_PASSWORD": 'p"a$s%w\\rd', "SB_URL": "http://x",
               "SB_API_KEY": "sb_secret", "PATH": "/opt/homebrew/bin:/usr/bin", "HOME": "/home/x", "EDITOR": "vi"}
    env = settings_environment(environ, dotenv)
    assert env == {"PATH": "/opt/homebrew/bin:/usr/bin", "SB_MAIL_HOST": "mail.example.net",
                   "SB_MAIL_PASSWORD": 'p"a$s%w\\rd', "SB_TIMEZONE": "Europe/Lisbon"}
    # Written the way EnvironmentFile= reads it: quotes and backslashes escaped, read back the same.
    written = tmp_path / "service.env"
    written.write_text(render_env_file(env))
    assert dotenv_values(written) == env
