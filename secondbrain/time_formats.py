"""How times are written where they are stored or compared as text."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(value: datetime) -> str:
    """Format ``value`` as RFC 3339 UTC with microseconds (``2026-03-02T09:00:00.000000Z``).

    A naive datetime is taken as UTC.  The fixed width makes the strings sort chronologically.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
