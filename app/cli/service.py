"""``secondbrain service install|uninstall|status``: ``up`` kept running by the platform's service manager
(systemd for the user on Linux, launchd on macOS), with the files :mod:`app.service` renders."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, running_servers, say, settings_for, up_options
from app.service import (
    AGENT_LABEL,
    UNIT_NAME,
    ServiceSpec,
    launchd_paths,
    program,
    render_env_file,
    render_launchd_plist,
    render_systemd_unit,
    settings_environment,
    shown,
    systemd_paths,
)

Run = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run a service manager's command; a missing program is an exit status 127 with a sentence."""
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=90, check=False)
    except FileNotFoundError:
        return subprocess.CompletedProcess(list(argv), 127, "", f"{argv[0]}: command not found")


class Manager(Protocol):
    """A platform's service manager, as the three commands use it."""

    def install(self, spec: ServiceSpec, running_url: str | None) -> int: ...

    def uninstall(self) -> int: ...

    def status(self) -> int: ...


def _write_private(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    path.chmod(mode)  # also when the file was there before


def _address(data_dir: Path) -> str | None:
    return next((s.url for s in running_servers() if s.data_dir == data_dir), None)


class Systemd:
    """A systemd user unit (``systemctl --user``)."""

    def __init__(self, config_home: Path, run: Run = run_command) -> None:
        self.unit, self.env_file = systemd_paths(config_home)
        self.run = run

    def systemctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(["systemctl", "--user", *args])

    def _failed(self, done: subprocess.CompletedProcess[str]) -> int:
        why = (done.stderr or done.stdout).strip().splitlines()
        say(f"error: `{shown(done.args)}` failed: {why[-1] if why else f'exit status {done.returncode}'}.")
        say(f"  systemd does not run for your user here (it does in a desktop or an ssh login). The unit is "
            f"written to {self.unit}; once it runs, start it with "
            f"`systemctl --user daemon-reload && systemctl --user enable --now {UNIT_NAME}`.")
        return EXIT_FAILED

    def install(self, spec: ServiceSpec, running_url: str | None) -> int:
        _write_private(self.env_file, render_env_file(spec.environment).encode(), 0o600)
        _write_private(self.unit, render_systemd_unit(spec, self.env_file).encode(), 0o644)
        # Started, or restarted when it ran already: installing again is how a new version or new settings
        # take over (not while another `up` keeps the data: it would only fail on the port).
        steps = [("daemon-reload",), ("enable", UNIT_NAME)] + ([] if running_url else [("restart", UNIT_NAME)])
        for step in steps:
            done = self.systemctl(*step)
            if done.returncode != 0:
                return self._failed(done)
        say(f"secondbrain: installed {UNIT_NAME} (a systemd user service): it runs `{shown(spec.command)}` at "
            "login, starts it again when it fails, and logs to the journal.")
        say(f"  unit: {self.unit}; settings: {self.env_file} ({len(spec.environment)} values, readable by you only)")
        if running_url:
            say(f"  not started now: secondbrain is already running on {spec.data_dir} at {running_url}. Stop it "
                f"(Ctrl-C where it runs), then `systemctl --user start {UNIT_NAME}` (or log in again)")
        else:
            say("  (re)started now; sign a browser in with `secondbrain open`")
        say("  logs: journalctl --user -u secondbrain -f    state: secondbrain service status")
        say("  to keep it running while you are logged out (a home server): loginctl enable-linger $USER")
        return EXIT_OK

    def uninstall(self) -> int:
        if not self.unit.exists():
            say(f"secondbrain: no service to remove ({self.unit} does not exist)")
            return EXIT_OK
        done = self.systemctl("disable", "--now", UNIT_NAME)
        stopped = done.returncode == 0
        self.unit.unlink()
        self.env_file.unlink(missing_ok=True)
        self.systemctl("daemon-reload")
        say(f"secondbrain: removed {UNIT_NAME}" + ("" if stopped else f" (systemd did not answer: "
                                                              f"{(done.stderr or '').strip()[:200]})"))
        say("  your data stays where it was; `secondbrain up` runs it by hand")
        return EXIT_OK

    def status(self) -> int:
        if not self.unit.exists():
            say("secondbrain service: not installed (`secondbrain service install` runs it at login)")
            return EXIT_FAILED
        done = self.systemctl("show", UNIT_NAME, "--property=UnitFileState,ActiveState,SubState,MainPID,"
                                                 "NRestarts,ExecMainStartTimestamp,Result")
        if done.returncode != 0:
            say(f"secondbrain service: installed ({self.unit}), but systemd does not answer: "
                f"{(done.stderr or done.stdout).strip()[:200]}")
            return EXIT_FAILED
        state = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        active = state.get("ActiveState") == "active"
        line = f"secondbrain service: {state.get('UnitFileState', '?')}, {state.get('ActiveState', '?')} " \
               f"({state.get('SubState', '?')})"
        if active:
            line += f" since {state.get('ExecMainStartTimestamp', '?')}, pid {state.get('MainPID', '?')}"
        if state.get("NRestarts", "0") not in ("", "0"):
            line += f", restarted {state['NRestarts']} times after failing"
        say(line)
        say(f"  unit: {self.unit}")
        say("  logs: journalctl --user -u secondbrain -f")
        return EXIT_OK if active else EXIT_FAILED


class Launchd:
    """A launch agent of the person's session (``launchctl`` in the ``gui/<uid>`` domain)."""

    def __init__(self, home: Path, run: Run = run_command, uid: int | None = None) -> None:
        self.plist, self.log_file = launchd_paths(home)
        self.run = run
        self.domain = f"gui/{os.getuid() if uid is None else uid}"

    def install(self, spec: ServiceSpec, running_url: str | None) -> int:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        # 0600: the agent carries the settings, passwords included.
        _write_private(self.plist, render_launchd_plist(spec, self.log_file), 0o600)
        self.run(["launchctl", "bootout", f"{self.domain}/{AGENT_LABEL}"])  # an earlier one, if loaded
        if not running_url:
            done = self.run(["launchctl", "bootstrap", self.domain, str(self.plist)])
            if done.returncode != 0:
                say(f"error: `{shown(done.args)}` failed: {(done.stderr or done.stdout).strip()[:300]}. The agent "
                    f"is written to {self.plist}; it starts at your next login.")
                return EXIT_FAILED
        say(f"secondbrain: installed the launch agent {AGENT_LABEL}: it runs `{shown(spec.command)}` at login "
            "and starts it again when it fails.")
        say(f"  agent: {self.plist} (readable by you only: it holds your settings); logs: {self.log_file}")
        if running_url:
            say(f"  not started now: secondbrain is already running on {spec.data_dir} at {running_url}. Stop it "
                f"(Ctrl-C where it runs), then `launchctl bootstrap {self.domain} {shown([str(self.plist)])}`")
        else:
            say("  started now; sign a browser in with `secondbrain open`")
        say(f"  state: secondbrain service status    follow the log: tail -f {shown([str(self.log_file)])}")
        return EXIT_OK

    def uninstall(self) -> int:
        if not self.plist.exists():
            say(f"secondbrain: no service to remove ({self.plist} does not exist)")
            return EXIT_OK
        self.run(["launchctl", "bootout", f"{self.domain}/{AGENT_LABEL}"])
        self.plist.unlink()
        say(f"secondbrain: removed the launch agent {AGENT_LABEL}; your data stays where it was")
        return EXIT_OK

    def status(self) -> int:
        if not self.plist.exists():
            say("secondbrain service: not installed (`secondbrain service install` runs it at login)")
            return EXIT_FAILED
        done = self.run(["launchctl", "print", f"{self.domain}/{AGENT_LABEL}"])
        info = {k.strip(): v.strip() for k, _, v in (ln.partition(" = ") for ln in done.stdout.splitlines()) if v}
        running = done.returncode == 0 and info.get("state") == "running"
        state = info.get("state", "not loaded") if done.returncode == 0 else "not loaded"
        line = f"secondbrain service: {state}"
        if running:
            line += f", pid {info.get('pid', '?')}"
        if info.get("last exit code") not in (None, "0", "(never exited)"):
            line += f", last exit code {info['last exit code']}"
        say(line)
        say(f"  agent: {self.plist}; logs: {self.log_file}")
        return EXIT_OK if running else EXIT_FAILED


def manager_for(platform: str, environ: dict[str, str] | os._Environ[str], run: Run = run_command) -> Manager | None:
    """The service manager of ``platform`` (``sys.platform``), or None where there is none to use."""
    home = Path(environ.get("HOME") or Path.home())
    if platform.startswith("linux"):
        return Systemd(Path(environ.get("XDG_CONFIG_HOME") or home / ".config"), run)
    if platform == "darwin":
        return Launchd(home, run)
    return None


def up_command(args: argparse.Namespace, data_dir: Path) -> list[str]:
    """``secondbrain up`` with the options given to ``service install`` (and the data directory, absolute)."""
    command = [*program(), "up", "--data-dir", str(data_dir), "--log-format", "text"]
    for flag, name in (("--host", "host"), ("--port", "port"), ("--llm", "llm"), ("--llm-model", "llm_model"),
                       ("--kafka-port", "kafka_port"), ("--lan-address", "lan_address")):
        value = getattr(args, name, None)
        if value is not None:
            command += [flag, str(value)]
    for flag, name in (("--no-llm", "no_llm"), ("--lan", "lan")):
        if getattr(args, name, False):
            command.append(flag)
    if getattr(args, "log_level", "INFO") != "INFO":
        command += ["--log-level", args.log_level]
    return command


def cmd_service(args: argparse.Namespace, *, platform: str = sys.platform, run: Run = run_command) -> int:
    """Install, remove or report on the service that keeps ``secondbrain up`` running."""
    manager = manager_for(platform, os.environ, run)
    if manager is None:
        say(f"error: `secondbrain service` knows systemd (Linux) and launchd (macOS), not {platform}: run "
            "`secondbrain up` from your system's own start-up tool (Windows: Task Scheduler, at log on).")
        return EXIT_USAGE
    if args.service_action == "uninstall":
        return manager.uninstall()
    if args.service_action == "status":
        return manager.status()
    from app.cli.servers import _data_dir_for_up

    settings = settings_for(args)
    data_dir = _data_dir_for_up(settings)  # an earlier version's ./.secondbrain moves now, as `up` would
    if data_dir is None:
        return EXIT_USAGE
    data_dir.mkdir(parents=True, exist_ok=True)
    spec = ServiceSpec(tuple(up_command(args, data_dir)), data_dir,
                       settings_environment(os.environ, Path.cwd() / ".env"))
    return manager.install(spec, _address(data_dir))


def add_parser(sub: Any, client_opts: Any) -> None:
    """``secondbrain service install|uninstall|status``."""
    sv = sub.add_parser("service", help="run `secondbrain up` at login and keep it running (systemd on Linux, "
                                        "launchd on macOS)")
    sv_sub = sv.add_subparsers(dest="service_action", required=True)
    install = sv_sub.add_parser("install", help="install (or update) the service with up's options and the SB_* "
                                                "settings of this shell and ./.env, and start it")
    up_options(install)
    for name, text in (("uninstall", "stop and remove the service (the data stays)"),
                       ("status", "whether the service is installed and running")):
        sv_sub.add_parser(name, help=text)
    sv.set_defaults(func=cmd_service)
