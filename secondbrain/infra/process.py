"""What every helper server secondbrain starts itself shares: its output log and its end.

The local Kafka broker (and the tests' llama.cpp server, ``devtools/llm_server.py``) are
subprocesses with the same life: their output goes to a log file (or a temporary one shown in
start errors and removed on stop), a stop is SIGTERM then SIGKILL and happens at interpreter
exit too, and they work as context managers.  Subclasses launch the process and decide when
it is ready.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from secondbrain.infra.ports import terminate


class ManagedProcess:
    """A subprocess with a log file, stopped on :meth:`stop`, at exit, or leaving a ``with`` block."""

    log_prefix = "process"  # temporary log file names start with this
    output_label = "process output"  # the heading of the log tail in error messages

    def __init__(self, log_path: Path | None = None) -> None:
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._temp_log: Path | None = None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """Process id, once started."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> Self:
        """Start the process and wait until it is ready (subclasses)."""
        raise NotImplementedError

    def _open_log(self) -> None:
        if self._log_file is not None:
            return
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        else:
            fd, name = tempfile.mkstemp(prefix=f"{self.log_prefix}-", suffix=".log")
            self._temp_log = Path(name)
            self._log_file = os.fdopen(fd, "wb")

    def _log_tail(self, limit: int = 4000) -> str:
        path = self.log_path or self._temp_log
        if path is None or not path.exists():
            return ""
        data = path.read_bytes()[-limit:]
        return f"--- {self.output_label} ---\n" + data.decode(errors="replace")

    def _terminate(self, timeout: float = 5.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc, timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after ``timeout`` seconds); idempotent."""
        atexit.unregister(self.stop)
        self._terminate(timeout)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._temp_log is not None:
            with contextlib.suppress(OSError):
                self._temp_log.unlink()
            self._temp_log = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
