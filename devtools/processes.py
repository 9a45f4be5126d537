"""Real ``secondbrain`` processes started from this checkout, for the end-to-end tests and the benchmarks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from secondbrain.infra.ports import free_port

REPO = Path(__file__).resolve().parents[1]


# Where `secondbrain up` notes its data directory for clients on the machine: one place for the
# whole run (a test session, a benchmark), outside the person's home.
STATE_HOME = Path(tempfile.mkdtemp(prefix="sb-state-"))
# The platform's user data and config directories for the run: a process started without a data
# directory (the default place) or a service file written by a test land here, never in the person's.
DATA_HOME = Path(tempfile.mkdtemp(prefix="sb-data-home-"))
CONFIG_HOME = Path(tempfile.mkdtemp(prefix="sb-config-home-"))
DATA_HOME.chmod(0o755)  # run as root, the embedded PostgreSQL's own user passes through to a data directory here
AWAY_FROM_HOME = {"XDG_STATE_HOME": str(STATE_HOME), "XDG_DATA_HOME": str(DATA_HOME),
                  "XDG_CONFIG_HOME": str(CONFIG_HOME)}


def keep_away_from_home() -> None:
    """Point this process's platform directories (and so its children's) at the run's own, so nothing
    it does reaches the person's data, state or configuration (the test suite calls it first)."""
    os.environ.update(AWAY_FROM_HOME)


# A stopped, initialised PostgreSQL data directory that `up` copies for a new data directory instead of running
# initdb (the test suite makes one per run: about 2 s saved on each of its many fresh starts).
POSTGRES_TEMPLATE: Path | None = None


def cli_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment for a child process: this one, minus SB_* leaks, plus ``extra``.  `up`'s daily backups
    are off (a backup a minute after each start would add load to every test and benchmark, and write beside
    their data directories); the runs that are about backups turn them on in ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")}
    env.update({"PYTHONUNBUFFERED": "1", "SB_LOG_LEVEL": "INFO", **AWAY_FROM_HOME, "SB_BACKUP_INTERVAL": "off",
                **({"SB_POSTGRES_TEMPLATE": str(POSTGRES_TEMPLATE)} if POSTGRES_TEMPLATE else {}), **extra})
    return env


def run_cli(args: list[str], env: dict[str, str], *, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run ``secondbrain ARGS`` to completion (the client commands)."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=cli_env(env), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Service:
    """One long-running ``secondbrain`` process."""

    name: str
    args: list[str]
    env: dict[str, str]
    log_dir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    cwd: Path = REPO  # where it runs (an earlier version's ./.secondbrain is looked for there)

    @property
    def url(self) -> str:
        """Base URL of its HTTP server."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """Where its stdout/stderr go."""
        return self.log_dir / f"{self.name}.log"

    @property
    def data_dir(self) -> Path | None:
        """The data directory of a `secondbrain up` (its ``--data-dir``)."""
        if "--data-dir" in self.args:
            return Path(self.args[self.args.index("--data-dir") + 1])
        return Path(self.env["SB_DATA_DIR"]) if "SB_DATA_DIR" in self.env else None

    @property
    def key(self) -> str:
        """The admin key `secondbrain up` saved in its data directory (as the CLI reads it)."""
        assert self.data_dir is not None, f"{self.name} has no data directory"
        return (self.data_dir / "api-key").read_text().strip()

    def client(self, **kwargs: Any) -> httpx.Client:
        """An HTTP client for this process, sending the local key."""
        kwargs.setdefault("timeout", 30)
        headers = {"Authorization": f"Bearer {self.key}", **kwargs.pop("headers", {})}
        return httpx.Client(base_url=self.url, headers=headers, **kwargs)

    def start(self) -> Service:
        """Launch the process (not waiting for readiness)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        env = cli_env({**self.env, "SB_PORT": str(self.port)})
        self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", *self.args], env=env, cwd=self.cwd,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        return self

    def restart(self) -> Service:
        """Launch it again after it exited, on a fresh port.

        While it was down, its old port may have been handed to some client socket as an
        ephemeral source port (the range overlaps), and the new server could not bind it."""
        assert self.proc is None or self.proc.poll() is not None, f"{self.name} is still running"
        self.port = free_port()
        return self.start()

    def wait_ready(self, timeout: float = 90.0, path: str = "/readyz") -> Service:
        """Block until ``path`` answers 200; fail with the log tail if the process dies or times out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                if httpx.get(self.url + path, timeout=2.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"{self.name} not ready after {timeout}s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        """The last lines of its log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except FileNotFoundError:
            return "(no log)"

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the whole process group (the process and any broker it started)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)

    def stop(self, timeout: float = 30.0) -> int | None:
        """Ctrl-C, then SIGKILL if it does not exit in time; return the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: the process dies mid-work with no chance to clean up."""
        self.signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)
