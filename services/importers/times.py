"""Reading the times exports write: epoch numbers in seconds, milliseconds or microseconds, ISO 8601, and
local times without a zone (read in the import's zone)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, tzinfo


def from_epoch(value: object) -> datetime | None:
    """An epoch number (seconds, milliseconds or microseconds, told apart by size) as an aware UTC time."""
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    if number <= 0:
        return None
    if number > 1e14:  # microseconds (Keep, Firefox)
        number /= 1e6
    elif number > 1e11:  # milliseconds
        number /= 1e3
    try:
        return datetime.fromtimestamp(number, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def iso(value: object, tz: tzinfo) -> datetime | None:
    """ISO 8601 (``Z``, an offset, or none: then local to ``tz``), also with a space for the ``T``."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)


def local(value: str, formats: Iterable[str], tz: tzinfo) -> datetime | None:
    """``value`` in the first of ``formats`` (``strptime``) that reads it, in ``tz`` unless it names a zone."""
    text = " ".join(value.replace("\u202f", " ").split())
    for fmt in formats:
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            continue
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)
    return None
