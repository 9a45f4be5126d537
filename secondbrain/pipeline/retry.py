"""The server side's retries, in one place, on tenacity: the pipeline's (bounded, with exponential backoff, and
only for errors classified as worth retrying, :func:`secondbrain.errors.classify`) and the broker's while it
starts.  A client's waiting out a busy or restarting server is :mod:`connectors.patience`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
    wait_fixed,
)

from secondbrain.errors import classify
from secondbrain.settings import Settings

log = logging.getLogger(__name__)

BOOKKEEPING_ATTEMPTS = 30  # job state must not be lost while Postgres restarts (about 4 minutes at most)


def retryable(exc: BaseException) -> bool:
    """Whether ``exc`` is worth another try."""
    return classify(exc) == "retryable"


def kafka_retryable(exc: BaseException) -> bool:
    """A broker error that may pass (the broker is away, a leader moved); aiokafka says which."""
    retriable = getattr(exc, "retriable", None)
    if isinstance(retriable, bool):
        return retriable
    return isinstance(exc, ConnectionError | TimeoutError | OSError) or retryable(exc)


def _wait(settings: Settings) -> Any:
    return wait_exponential(multiplier=settings.retry_backoff_s, min=settings.retry_backoff_s,
                            max=settings.retry_backoff_max_s)


def _log(what: str) -> Callable[[RetryCallState], None]:
    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        log.warning(f"{what} failed, retrying", extra={"attempt": state.attempt_number, "error": repr(exc)})
    return before_sleep


def work(settings: Settings, before_sleep: Callable[[RetryCallState], Any] | None = None) -> AsyncRetrying:
    """A stage's work on one event: ``max_attempts`` tries, retryable errors only."""
    return AsyncRetrying(retry=retry_if_exception(retryable), stop=stop_after_attempt(settings.max_attempts),
                         wait=_wait(settings), before_sleep=before_sleep, reraise=True)


def bookkeeping(settings: Settings, what: str) -> AsyncRetrying:
    """A job-state write: kept trying while the store is unreachable, within a bound."""
    return AsyncRetrying(retry=retry_if_exception(retryable), stop=stop_after_attempt(BOOKKEEPING_ATTEMPTS),
                         wait=_wait(settings), before_sleep=_log(what), reraise=True)


def relaying(before_sleep: Callable[[RetryCallState], Any]) -> AsyncRetrying:
    """The outbox relay's round: unbounded on purpose (accepted work waits in Postgres until the broker
    is back, nothing is lost), backing off from 0.5 s to 10 s between tries."""
    return AsyncRetrying(retry=retry_if_exception_type(Exception),
                         wait=wait_exponential(multiplier=0.5, min=0.5, max=10), before_sleep=before_sleep,
                         reraise=True)


def publishing(settings: Settings) -> AsyncRetrying:
    """A publish to Kafka: retried while the broker says it may pass, for at most ``publish_timeout_s``."""
    return AsyncRetrying(retry=retry_if_exception(kafka_retryable), stop=stop_after_delay(settings.publish_timeout_s),
                         wait=_wait(settings), before_sleep=_log("publish"), reraise=True)


def broker_starting(timeout_s: float, errors: tuple[type[BaseException], ...]) -> AsyncRetrying:
    """An admin call to a broker that may still be starting: ``errors`` retried every 0.5 s, for at most
    ``timeout_s`` (then the last error is raised)."""
    return AsyncRetrying(retry=retry_if_exception_type(errors), stop=stop_after_delay(timeout_s), wait=wait_fixed(0.5),
                         reraise=True)
