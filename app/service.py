"""``secondbrain up`` as a service of the person's session: a systemd user unit on Linux, a launchd agent on
macOS.  It starts at login with the person's settings, starts again when it fails, and logs where the
platform keeps logs (the journal; ``~/Library/Logs/secondbrain``).

This module renders the files and knows where they go; :mod:`app.cli.service` installs, removes and
reports on them with ``systemctl --user`` and ``launchctl``.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

UNIT_NAME = "secondbrain.service"
AGENT_LABEL = "org.secondbrain.up"
# up stops its stages, broker and database within 13 s of SIGTERM (app.cli.servers.STOP_DEADLINE_S).
STOP_TIMEOUT_S = 30
# Exit status 2 is a refusal that a restart cannot mend (data a newer version wrote, a port taken by
# another program, a setting that makes no sense): the service stops and says why in its log.
USAGE_EXIT = 2
# Environment variables of the person's shell that `up` and what it starts need besides the settings.
PASSED_ON = ("PATH", "LANG", "LC_ALL", "LC_TIME", "TZ", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
             "https_proxy", "http_proxy", "no_proxy")
# Settings a service does not take from the environment: the data directory goes on its command line,
# and the client's address and key are not settings of the server.
NOT_PASSED = ("SB_DATA_DIR", "SB_URL", "SB_API_KEY")


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """What the service runs: the command (``secondbrain up`` with the person's options), where, and with
    which settings."""

    command: tuple[str, ...]
    data_dir: Path
    environment: Mapping[str, str]


def program() -> list[str]:
    """This installation's ``secondbrain`` command, by absolute path (a service has no shell's PATH)."""
    script = Path(sys.executable).parent / "secondbrain"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "app.cli"]


def settings_environment(environ: Mapping[str, str], dotenv: Path | None) -> dict[str, str]:
    """The person's settings as the service's environment: every ``SB_*`` of the ``.env`` file ``up`` would
    read here and of the environment (which wins, as for ``up``), and what the programs need from the
    shell (PATH, locale, time zone, proxy)."""
    values: dict[str, str] = {}
    if dotenv is not None and dotenv.is_file():
        from dotenv import dotenv_values

        values.update({k.upper(): v for k, v in dotenv_values(dotenv).items()
                       if v is not None and k.upper().startswith("SB_")})
    values.update({k: v for k, v in environ.items() if k.startswith("SB_")})
    for name in NOT_PASSED:
        values.pop(name, None)
    values.update({k: environ[k] for k in PASSED_ON if environ.get(k)})
    return dict(sorted(values.items()))


# ----------------------------------------------------------------------------- systemd


def systemd_paths(config_home: Path) -> tuple[Path, Path]:
    """Where the unit goes (systemd's user unit folder) and the settings file it reads (0600: it can hold
    passwords)."""
    return config_home / "systemd" / "user" / UNIT_NAME, config_home / "secondbrain" / "service.env"


def _systemd_value(text: str) -> str:
    """A path or word in a unit file: systemd expands ``%`` specifiers everywhere."""
    return text.replace("%", "%%")


def _systemd_word(arg: str, *, program: bool = False) -> str:
    """One word of ``ExecStart=``: quoted, C escapes, no specifier or variable expansion (systemd expands
    ``$`` in the arguments only, not in the program's path)."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped if program else escaped.replace("$", "$$")}"'


def render_systemd_unit(spec: ServiceSpec, env_file: Path) -> str:
    """The user unit that runs ``spec``."""
    exec_start = " ".join(_systemd_word(a, program=n == 0) for n, a in enumerate(spec.command))
    return f"""\
# secondbrain, your personal memory, run at login by systemd.
# Written by `secondbrain service install` (again to change it); removed by `secondbrain service uninstall`.
# Logs: journalctl --user -u secondbrain

[Unit]
Description=secondbrain personal memory (secondbrain up)
# Five failed starts within five minutes: it stops trying (see `secondbrain service status`).
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=exec
WorkingDirectory={_systemd_value(str(spec.data_dir))}
# The settings (SB_*) it was installed with, and the shell's PATH and locale.
EnvironmentFile={_systemd_value(str(env_file))}
Environment=PYTHONUNBUFFERED=1
ExecStart={exec_start}
Restart=on-failure
RestartSec=5
RestartPreventExitStatus={USAGE_EXIT}
# up stops the work, its broker and its database itself: SIGTERM to it alone, the rest after it.
KillMode=mixed
TimeoutStopSec={STOP_TIMEOUT_S}
SyslogIdentifier=secondbrain

[Install]
WantedBy=default.target
"""


def render_env_file(environment: Mapping[str, str]) -> str:
    """The settings as systemd's ``EnvironmentFile=`` reads them (double quotes, backslash escapes)."""
    lines = ["# secondbrain's settings for its service (written by `secondbrain service install`)."]
    for key, value in environment.items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'{key}="{escaped}"')
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- launchd


def launchd_paths(home: Path) -> tuple[Path, Path]:
    """Where the agent goes and where it logs (macOS's per-user log folder)."""
    return home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist", \
        home / "Library" / "Logs" / "secondbrain" / "secondbrain.log"


def render_launchd_plist(spec: ServiceSpec, log_file: Path) -> bytes:
    """The launch agent that runs ``spec`` at login and again when it exits with a failure."""
    agent = {
        "Label": AGENT_LABEL,
        "ProgramArguments": list(spec.command),
        "WorkingDirectory": str(spec.data_dir),
        "EnvironmentVariables": {**spec.environment, "PYTHONUNBUFFERED": "1"},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # again after a failure; not after a stop asked for
        "ThrottleInterval": 10,
        "ExitTimeOut": STOP_TIMEOUT_S,
        "ProcessType": "Standard",
        "StandardOutPath": str(log_file),
        "StandardErrorPath": str(log_file),
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML, sort_keys=False)


def shown(command: list[str] | tuple[str, ...]) -> str:
    """A command as it can be typed in a shell."""
    return " ".join(shlex.quote(a) for a in command)
