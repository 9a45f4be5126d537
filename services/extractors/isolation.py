"""Running a heavy extractor in child processes, within a wall-time and memory budget.

The office parser is pure Python and lxml: a hostile or huge document can hold the
interpreter (and its GIL) for minutes or grow it by gigabytes, which would starve the thread
that keeps the stage's consumer-group membership alive and could take the whole worker down.
Here the parser runs in a separate process (started with ``spawn``: a clean interpreter, no
copy of the parent's threads), kept warm between documents.  The parent only waits on a pipe;
when a document passes :attr:`Budget.timeout_s` or :attr:`Budget.max_memory_bytes` the child is
killed, the job fails with a sentence, and a fresh child is started for the next document.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from secondbrain.errors import PermanentError, RetryableError
from services.extractors.budget import Budget
from services.extractors.document import Extracted, ExtractionContext, Extractor

log = logging.getLogger(__name__)

POLL_S = 0.05  # how often the parent looks at the child's memory while it works
_CTX = multiprocessing.get_context("spawn")


def _serve(factory: str, kwargs: dict[str, Any], conn: Connection) -> None:
    """The child: build the extractor once, then answer ``(raw, ctx)`` requests until the pipe closes."""
    # Ctrl-C reaches the whole process group: the parent stops the child (closing the pipe), so the
    # child does not die mid-read with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    module, _, name = factory.partition(":")
    try:
        extractor: Extractor = getattr(importlib.import_module(module), name)(**kwargs)
    except BaseException as exc:  # reported to the parent, which fails the start-up
        conn.send(("dead", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", extractor.modality))
    while True:
        try:
            raw, ctx = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send(("ok", extractor.extract(raw, ctx)))
        except PermanentError as exc:
            conn.send(("permanent", str(exc)))
        except RetryableError as exc:
            conn.send(("retryable", str(exc)))
        except MemoryError:
            conn.send(("permanent", "reading the file needed more memory than this server allows for one document"))
        except Exception as exc:  # an unexpected library error about these bytes
            conn.send(("permanent", f"the file could not be read ({type(exc).__name__}: {str(exc)[:200]})"))


def _rss(pid: int) -> int:
    """Resident memory of a process in bytes (0 where /proc is not available)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Child:
    """One warm child process and the parent's end of its pipe; :meth:`ready` waits for its imports (so the
    warm one started with the worker loads beside the rest of start-up, not before it)."""

    def __init__(self, factory: str, kwargs: dict[str, Any], start_timeout_s: float) -> None:
        self.factory, self.start_timeout_s = factory, start_timeout_s
        self.conn, child_end = _CTX.Pipe()
        self.proc = _CTX.Process(target=_serve, args=(factory, kwargs, child_end), daemon=True, name="extractor")
        self.proc.start()
        child_end.close()
        self.modality: str | None = None

    def ready(self) -> _Child:
        """Wait (once) until the child has built its extractor; ``RuntimeError`` saying why it could not."""
        if self.modality is not None:
            return self
        if not self.conn.poll(self.start_timeout_s):
            self.kill()
            raise RuntimeError(f"the extractor process {self.factory} did not start within "
                               f"{self.start_timeout_s:.0f} s")
        kind, detail = self.conn.recv()
        if kind != "ready":
            self.kill()
            raise RuntimeError(f"the extractor process {self.factory} could not start: {detail}")
        self.modality = detail
        return self

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class IsolatedExtractor:
    """An :class:`Extractor` whose work happens in child processes (see the module doc).

    ``factory`` is ``"module:callable"`` returning the real extractor (it runs in the child).
    ``workers`` children serve documents side by side; each starts on first use and again after
    it was killed.  With ``warm`` one starts at once, its imports running beside the worker's start-up: a
    child that cannot build its extractor fails the first document with the reason (and the next tries again).
    """

    def __init__(self, factory: str, budget: Budget, *, kwargs: dict[str, Any] | None = None, workers: int = 1,
                 label: str = "document", start_timeout_s: float = 120.0, warm: bool = True) -> None:
        self.factory = factory
        self.kwargs = dict(kwargs or {})
        self.budget = budget
        self.label = label
        self.start_timeout_s = start_timeout_s
        self._idle: queue.Queue[_Child | None] = queue.Queue()
        for _ in range(max(1, workers)):
            self._idle.put(None)  # a slot; its child is started when first needed
        self.modality = "office"
        if warm:  # start one child now, so the first document does not wait for the imports
            child = self._idle.get()
            self._idle.put(child or self._start())

    def _start(self) -> _Child:
        return _Child(self.factory, self.kwargs, self.start_timeout_s)

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract in a child; ``PermanentError`` with a sentence when a budget is passed."""
        child = self._idle.get()
        try:
            if child is None or not child.proc.is_alive():
                if child is not None:
                    child.kill()
                child = self._start()
            try:
                self.modality = child.ready().modality or self.modality
            except RuntimeError:
                child = None
                raise
            kind, value = self._run(child, raw, ctx)
            if kind == "killed":  # the next document gets a fresh child
                child = None
        finally:
            self._idle.put(child)
        if kind == "ok":
            assert isinstance(value, Extracted)
            return value
        if kind == "retryable":
            raise RetryableError(str(value))
        raise PermanentError(str(value))

    def _run(self, child: _Child, raw: bytes, ctx: ExtractionContext) -> tuple[str, Any]:
        """The child's answer, or ``("killed", why)`` after it was killed or died."""
        deadline = time.monotonic() + self.budget.timeout_s
        child.conn.send((raw, ctx))
        peak = 0
        while True:
            if child.conn.poll(POLL_S):
                try:
                    answer: tuple[str, Any] = child.conn.recv()
                    return answer
                except (EOFError, OSError):
                    child.kill()
                    return "killed", (f"reading the {self.label} crashed its reader (the file is damaged or "
                                      "built to break parsers); check it opens in its application")
            if not child.proc.is_alive():
                child.kill()
                return "killed", (f"reading the {self.label} crashed its reader (exit code "
                                  f"{child.proc.exitcode}); the file may be damaged")
            peak = max(peak, _rss(child.proc.pid or 0))
            if peak > self.budget.max_memory_bytes:
                child.kill()
                log.warning("extraction killed: memory budget", extra={"rss": peak})
                return "killed", (f"reading the {self.label} needed more than "
                                  f"{self.budget.max_memory_bytes // (1024 * 1024)} MiB of memory "
                                  "(SB_EXTRACT_MAX_MEMORY_MB); it is too large or built to exhaust memory. "
                                  "Split it, or ask the operator to raise the limit.")
            if time.monotonic() > deadline:
                child.kill()
                log.warning("extraction killed: time budget", extra={"timeout_s": self.budget.timeout_s})
                return "killed", (f"reading the {self.label} took longer than {self.budget.timeout_s:.0f} s "
                                  "(SB_EXTRACT_TIMEOUT_S); it is too large or built to be slow. Split it, or "
                                  "ask the operator to raise the limit.")

    def close(self) -> None:
        """Stop the children."""
        while True:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                return
            if child is not None:
                child.kill()


def isolated(factory: Callable[[], Extractor] | str, budget: Budget, **kwargs: Any) -> IsolatedExtractor:
    """An :class:`IsolatedExtractor` for ``factory`` (a module-level callable or ``"module:name"``)."""
    name = factory if isinstance(factory, str) else f"{factory.__module__}:{factory.__qualname__}"
    return IsolatedExtractor(name, budget, **kwargs)

