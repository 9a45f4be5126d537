"""The pipeline's error policy: what is retried, what goes straight to the dead-letter topic."""

from __future__ import annotations

import psycopg
import pytest

from secondbrain.pipeline.errors import PermanentError, RetryableError, backoff_delay, classify

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


def test_backoff_grows_exponentially() -> None:
    delays = [backoff_delay(a, base_s=0.5, max_s=1000.0) for a in range(1, 6)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert all(isinstance(d, float) for d in delays)


def test_backoff_is_capped() -> None:
    assert backoff_delay(4, base_s=1.0, max_s=5.0) == 5.0
    assert backoff_delay(60, base_s=1.0, max_s=30.0) == 30.0
    assert backoff_delay(10_000, base_s=0.2, max_s=30.0) == 30.0  # no overflow for huge attempts


def test_backoff_first_attempt_and_nonpositive_attempts_wait_the_base() -> None:
    assert backoff_delay(1, base_s=0.25, max_s=10.0) == 0.25
    assert backoff_delay(0, base_s=0.25, max_s=10.0) == 0.25
    assert backoff_delay(-3, base_s=0.25, max_s=10.0) == 0.25


def test_backoff_is_monotonic() -> None:
    delays = [backoff_delay(a, base_s=0.1, max_s=7.0) for a in range(1, 40)]
    assert delays == sorted(delays)
    assert max(delays) == 7.0
