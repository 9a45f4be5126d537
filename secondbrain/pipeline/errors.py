"""The pipeline's error policy: which failures are worth retrying and which are not.

A *permanent* error is a property of the input (a corrupt file, an unknown user): retrying
cannot help, so the event goes straight to the dead-letter topic and the job fails with a
human-readable reason.  A *retryable* error is a property of the moment (a store that does
not answer): the runner retries with bounded exponential backoff, then dead-letters.
"""

from __future__ import annotations

import socket
from typing import Literal

ErrorKind = Literal["retryable", "permanent"]


class PermanentError(Exception):
    """Bad input: retrying will not help. ``reason`` is shown to the user."""

    def __init__(self, reason: str, *, kind: str = "permanent") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # the dead-letter ``error_kind``: permanent | malformed | unauthorized


class Unauthorized(PermanentError):
    """The event may not enter the pipeline (dead-lettered with ``error_kind=unauthorized``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, kind="unauthorized")


class SourceGone(Exception):
    """The source this work is for was deleted meanwhile: the event is dropped (acknowledged, nothing
    published, no job failed), not dead-lettered."""


class RetryableError(Exception):
    """A transient failure (a dependency that did not answer): worth retrying later."""


def classify(exc: BaseException) -> ErrorKind:
    """Decide whether ``exc`` is worth retrying.

    Unknown exceptions count as permanent: retrying a bug only delays the dead letter, and
    the dead letter keeps the event for a replay once the bug is fixed.
    """
    if isinstance(exc, PermanentError):
        return "permanent"
    if isinstance(exc, RetryableError | TimeoutError | ConnectionError | socket.timeout):
        return "retryable"
    try:  # optional clients: imported lazily so this module stays light
        import psycopg

        if isinstance(exc, psycopg.OperationalError | psycopg.errors.SerializationFailure
                      | psycopg.errors.DeadlockDetected):
            return "retryable"
    except ImportError:  # pragma: no cover
        pass
    try:
        import urllib3.exceptions

        if isinstance(exc, urllib3.exceptions.HTTPError):
            return "retryable"
    except ImportError:  # pragma: no cover
        pass
    try:
        from minio.error import S3Error, ServerError

        if isinstance(exc, ServerError):
            return "retryable"
        if isinstance(exc, S3Error) and exc.code in {"SlowDown", "InternalError", "ServiceUnavailable",
                                                      "RequestTimeout"}:
            return "retryable"
    except ImportError:  # pragma: no cover
        pass
    if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError | PermissionError):
        return "retryable"
    return "permanent"

