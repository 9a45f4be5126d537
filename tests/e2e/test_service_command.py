"""What the installed service runs, run for real: ``secondbrain service install`` writes the unit, then its
``ExecStart=`` command is started the way systemd would start it (in its ``WorkingDirectory=``, with only the
environment of its ``EnvironmentFile=``), serves with the person's settings and data directory, and stops
cleanly on SIGTERM within ``TimeoutStopSec=``, as ``systemctl stop`` asks it to.  (No systemd runs for the
user on this machine, so the unit itself is checked with systemd-analyze in tests/app/test_service.py.)"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from app.service import STOP_TIMEOUT_S, UNIT_NAME
from devtools.processes import cli_env, run_cli
from secondbrain.infra.ports import free_port
from tests.e2e.harness import readable_tmp

pytestmark = pytest.mark.e2e


def unit_settings(unit: Path) -> dict[str, str]:
    """``key=value`` lines of the unit (the last of each key)."""
    return dict(line.split("=", 1) for line in unit.read_text().splitlines() if "=" in line and not
                line.startswith("#"))


def exec_words(exec_start: str) -> list[str]:
    """``ExecStart=`` as systemd splits it (double quotes, C escapes; %% and $$ are literal % and $)."""
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(exec_start)]


def env_file_values(path: Path) -> dict[str, str]:
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def test_the_services_command_serves_with_the_persons_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-service-") as root:
        port = free_port()
        env = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "home" / ".config"),
               "XDG_DATA_HOME": str(root / "home" / ".local" / "share"), "SB_TIMEZONE": "Europe/Oslo"}
        installed = run_cli(["service", "install", "--port", str(port), "--no-llm"], env)
        unit = root / "home" / ".config" / "systemd" / "user" / UNIT_NAME
        assert unit.exists(), installed.stderr  # systemctl itself may not run here (see test_service.py)
        keys = unit_settings(unit)
        argv = exec_words(keys["ExecStart"])
        data_dir = Path(keys["WorkingDirectory"])
        assert data_dir == root / "home" / ".local" / "share" / "secondbrain" and data_dir.is_dir()
        environment = {**env_file_values(Path(keys["EnvironmentFile"])), "PYTHONUNBUFFERED": "1",
                       "HOME": env["HOME"], "XDG_STATE_HOME": cli_env({})["XDG_STATE_HOME"]}
        assert environment["SB_TIMEZONE"] == "Europe/Oslo"
        log = (tmp_path_factory.mktemp("logs") / "service.log").open("wb")
        proc = subprocess.Popen(argv, cwd=data_dir, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.5)
            assert proc.poll() is None, Path(log.name).read_text()[-3000:]
            key = (data_dir / "api-key").read_text().strip()
            status = httpx.get(f"http://127.0.0.1:{port}/v1/status", headers={"Authorization": f"Bearer {key}"},
                               timeout=30).json()
            assert status["timezone"] == "Europe/Oslo"  # the person's setting reached it
            said = Path(log.name).read_text()
            assert f"secondbrain: starting in {data_dir}" in said and "\x1b[" not in said  # text logs for the journal
            started = time.monotonic()
            os.kill(proc.pid, signal.SIGTERM)  # `systemctl --user stop`: SIGTERM to the main process (KillMode=mixed)
            assert proc.wait(STOP_TIMEOUT_S) == 0
            assert time.monotonic() - started < STOP_TIMEOUT_S
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            log.close()
