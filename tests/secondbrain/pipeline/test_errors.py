"""The pipeline's error policy: what is retried, what goes straight to the dead-letter topic."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from secondbrain.errors import PermanentError, RetryableError, classify
from secondbrain.pipeline import retry

pytestmark = pytest.mark.fast  # no services: in the fast lane


@pytest.mark.parametrize(
    "exc",
    [
        PermanentError("the file is empty"),
        PermanentError("unknown user 'x'", kind="unauthorized"),
        ValueError("bad value"),
        KeyError("missing"),
        TypeError("a bug"),
        FileNotFoundError("no such file"),
        PermissionError("denied"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_permanent_errors(exc: BaseException) -> None:
    assert classify(exc) == "permanent"


@pytest.mark.parametrize(
    "exc",
    [
        RetryableError("store busy"),
        TimeoutError("timed out"),
        ConnectionError("refused"),
        ConnectionRefusedError("refused"),
        ConnectionResetError("reset"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        psycopg.errors.SerializationFailure("could not serialize access"),
        psycopg.errors.DeadlockDetected("deadlock detected"),
        OSError("I/O error"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_retryable_errors(exc: BaseException) -> None:
    assert classify(exc) == "retryable"


def test_permanent_error_beats_its_cause() -> None:
    """A PermanentError raised from a transient-looking cause is still permanent."""
    try:
        try:
            raise ConnectionError("refused")
        except ConnectionError as cause:
            raise PermanentError("the object key is outside the user's storage") from cause
    except PermanentError as exc:
        assert classify(exc) == "permanent"


def test_permanent_error_carries_reason_and_kind() -> None:
    exc = PermanentError("unknown user 'bob'", kind="unauthorized")
    assert exc.reason == "unknown user 'bob'"
    assert str(exc) == "unknown user 'bob'"
    assert exc.kind == "unauthorized"
    assert PermanentError("x").kind == "permanent"


def test_a_programming_error_in_psycopg_is_not_retried() -> None:
    """A SQL mistake is a bug: retrying only delays the dead letter."""
    assert classify(psycopg.errors.UndefinedTable("relation does not exist")) == "permanent"


def test_the_relay_keeps_trying_with_pauses_growing_to_ten_seconds() -> None:
    """Accepted work waits in the outbox while the broker is away: the relay never gives up."""
    pauses: list[float] = []
    failures = 40

    async def no_sleep(seconds: float) -> None:
        pauses.append(seconds)

    async def round_() -> int:
        nonlocal failures
        if failures:
            failures -= 1
            raise ConnectionError("broker away")
        return 3

    async def run() -> int:
        got = 0
        async for attempt in retry.relaying(before_sleep=lambda _state: None).copy(sleep=no_sleep):
            with attempt:
                got = await round_()
        return got

    assert asyncio.run(run()) == 3
    assert len(pauses) == 40 and pauses == sorted(pauses)
    assert pauses[0] == 0.5 and max(pauses) == 10
