"""A connector's passes, repeated (``mail --every``, ``calendar --every`` and their threads in ``up``): run a pass,
report it, wait the interval, until stopped; a failed pass is reported and the next one goes on."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable


def stop_on_signals() -> None:
    """Ctrl-C and SIGTERM end the command (as KeyboardInterrupt, so it stops where it is and sums up), even when
    it was started with SIGINT ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)


def repeat(run_pass: Callable[[], None], interval_s: float, stop: threading.Event, *,
           on_error: Callable[[Exception], None] | None = None,
           errors: tuple[type[Exception], ...] = (Exception,)) -> None:
    """``run_pass`` now and every ``interval_s`` seconds until ``stop`` is set.  One of ``errors`` raised by
    a pass goes to ``on_error`` and the passes go on; any other error (every error, without ``on_error``)
    ends the loop, raised."""
    while not stop.is_set():
        try:
            run_pass()
        except errors as exc:
            if on_error is None:
                raise
            on_error(exc)
        stop.wait(interval_s)


class Background:
    """A periodic pass on a daemon thread of its own, as a client of the server ``up`` runs."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.event = threading.Event()
        self.thread: threading.Thread | None = None

    def run_every(self, interval_s: float, run_pass: Callable[[], None], on_error: Callable[[Exception], None]) -> None:
        # Any error is reported and the next pass goes on: the server keeps serving meanwhile.
        self.thread = threading.Thread(target=repeat, args=(run_pass, interval_s, self.event),
                                       kwargs={"on_error": on_error}, name=self.name, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.event.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
