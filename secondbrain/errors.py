"""The error policy shared by the pipeline, the services and the core: which failures are worth retrying.

A *permanent* error is a property of the input (a corrupt file, an unknown user): retrying
cannot help, so the event goes straight to the dead-letter topic and the job fails with a
human-readable reason.  A *retryable* error is a property of the moment (a store that does
not answer): the runner retries with bounded exponential backoff, then dead-letters.
"""

from __future__ import annotations

import re
import socket
from typing import Literal

ErrorKind = Literal["retryable", "permanent"]


class PermanentError(Exception):
    """Bad input: retrying will not help. ``reason`` is shown to the user.

    ``retry_helps``: the failure is not the input's but how this server is set up (OCR not installed, a
    kind of file switched off): the same capture can succeed once that changes, so it is offered again
    (the job says ``retryable``); it is still not retried on its own."""

    def __init__(self, reason: str, *, kind: str = "permanent", retry_helps: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # the dead-letter ``error_kind``: permanent | malformed | unauthorized
        self.retry_helps = retry_helps


class Unauthorized(PermanentError):
    """The event may not enter the pipeline (dead-lettered with ``error_kind=unauthorized``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, kind="unauthorized")


class SourceGone(Exception):
    """The source this work is for was deleted meanwhile: the event is dropped (acknowledged, nothing
    published, no job failed), not dead-lettered."""


class RetryableError(Exception):
    """A transient failure (a dependency that did not answer): worth retrying later."""


def retry_may_help(exc: BaseException) -> bool:
    """Whether a person trying the failed capture again may succeed: the failure was of the moment
    (retries ran out while a dependency was away) or of the server's set-up, not of the input."""
    if isinstance(exc, PermanentError):
        return exc.retry_helps
    return classify(exc) == "retryable"


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



# A job's error is "<stage> failed: <reason>" (the runner) or a step's own words.
_STAGE_PREFIX = re.compile(r"^[a-z][\w-]*(?: stage)? failed:\s*")
_EXCEPTION_TEXT = re.compile(r"^[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Timeout|Refused)\b")
_PLAIN_WORD = re.compile(r"^[a-z][a-z']*(?=[\s,;]|$)")


def failure_sentence(error: str | None, *, retryable: bool = False) -> str | None:
    """A failed job's reason as people read it (the web page shows it as it is): the failure's own words
    without the stage prefix, as a sentence; a dependency that did not answer (retries ran out on an
    exception that has no words for people) is said as such."""
    if not error or not error.strip():
        return None
    text = _STAGE_PREFIX.sub("", error.strip(), count=1).strip() or error.strip()
    if retryable and _EXCEPTION_TEXT.match(text):
        return f"A service it needs did not answer ({text.rstrip('.')}). Try again in a while."
    if _PLAIN_WORD.match(text):  # an ordinary word starts it: capitalised (never a URL, a path or a name)
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
