"""The periodic import pass of ``mail --every``, ``calendar --every`` and their threads in ``up``."""

from __future__ import annotations

import threading

import pytest

from connectors.periodic import Background, repeat

pytestmark = pytest.mark.fast


def test_a_failed_pass_is_reported_and_the_next_one_goes_on_until_stopped() -> None:
    stop = threading.Event()
    passes: list[int] = []
    reported: list[str] = []

    def run_pass() -> None:
        passes.append(len(passes))
        if len(passes) == 2:
            raise OSError("the server is away")
        if len(passes) == 4:
            stop.set()

    repeat(run_pass, 0.01, stop, on_error=lambda exc: reported.append(str(exc)))
    assert passes == [0, 1, 2, 3]
    assert reported == ["the server is away"]


def test_an_error_it_does_not_take_ends_the_passes() -> None:
    passes: list[int] = []

    def run_pass() -> None:
        passes.append(1)
        raise KeyError("state")

    with pytest.raises(KeyError):
        repeat(run_pass, 0.01, threading.Event(), on_error=lambda exc: None, errors=(OSError,))
    with pytest.raises(KeyError):
        repeat(run_pass, 0.01, threading.Event())
    assert len(passes) == 2


def test_the_background_thread_stops_when_asked() -> None:
    ran = threading.Event()
    background = Background("test-pass")
    background.run_every(3600, ran.set, on_error=lambda exc: None)
    assert ran.wait(5)
    background.stop()  # wakes the thread from its hour-long wait
    assert background.thread is not None and not background.thread.is_alive()
