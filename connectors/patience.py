"""A client's patience with the secondbrain server, on tenacity: a request sent again while the server is busy or
restarting (its Retry-After obeyed) or unreachable.  What every HTTP client of the API shares (the connectors,
the command line); the server side's own retries are :mod:`secondbrain.pipeline.retry`."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from tenacity import RetryCallState, Retrying, nap, retry_if_exception_type, retry_if_result, stop_never
from tenacity.stop import stop_base


def server_asked_wait(response: Any, default_s: float, max_s: float) -> float:
    """How long a server's answer asks to wait (its Retry-After in seconds, ``default_s`` without one), at most
    ``max_s``."""
    return min(float(response.headers.get("retry-after", str(default_s)) or default_s), max_s)


def server_patience(*, statuses: Collection[int], asked_default_s: float, asked_max_s: float,
                    unreachable: type[BaseException] | tuple[type[BaseException], ...] | None = None,
                    unreachable_wait_s: float = 2.0,
                    stop: stop_base | Callable[[RetryCallState], bool] = stop_never,
                    before_sleep: Callable[[RetryCallState], Any] | None = None,
                    sleep: Callable[[float], None] | None = None) -> Retrying:
    """A client's request to the secondbrain server, sent again while the server answers one of ``statuses``
    (busy, restarting: after the wait its Retry-After asks for, see :func:`server_asked_wait`) or, when
    ``unreachable`` is given, while sending fails with it (every ``unreachable_wait_s``).  Once ``stop`` says
    so, the last answer is returned (or the last error raised).  ``sleep``, when given, waits instead of
    ``time.sleep`` (a client may keep its progress moving meanwhile)."""
    def wait(state: RetryCallState) -> float:
        assert state.outcome is not None
        if state.outcome.failed:
            return unreachable_wait_s
        return server_asked_wait(state.outcome.result(), asked_default_s, asked_max_s)

    def give_up(state: RetryCallState) -> Any:
        assert state.outcome is not None
        return state.outcome.result()  # the last answer, or its error raised

    return Retrying(retry=retry_if_result(lambda resp: resp.status_code in statuses)
                    | retry_if_exception_type(unreachable if unreachable is not None else ()),
                    wait=wait, stop=stop, before_sleep=before_sleep, sleep=sleep or nap.sleep,
                    retry_error_callback=give_up)
