"""Text a client sends, checked before anything is stored: a sentence instead of a 500 later.

PostgreSQL cannot store a NUL character, and a lone UTF-16 surrogate (``"\\ud800"`` in JSON) is
not text at all (it cannot be encoded as UTF-8): both are refused where they come in, with 422.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """What makes ``value`` unstorable, or None."""
    if "\x00" in value:
        return "contains a NUL character (\\u0000), which cannot be stored; remove it"
    found = _SURROGATE.search(value)
    if found:
        return (f"contains a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), which is not valid text; "
                "send real characters (or their UTF-8 bytes)")
    return None


def capture_time(value: str | None) -> datetime | None:
    """A capture time a client gives (ISO 8601, ``Z`` allowed) as an aware datetime, UTC when it says no zone;
    None when empty.  ValueError with the sentence to show when it is no such time."""
    if not value or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"captured_at {value[:50]!r} is not an ISO 8601 date/time, "
                         "e.g. 2024-03-01T09:30:00+01:00") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _checked(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


#: A ``str`` field of a request body that must be storable text (see the module doc).
Text = Annotated[str, AfterValidator(_checked)]
