"""Text a client sends, checked before anything is stored: a sentence instead of a 500 later.

PostgreSQL cannot store a NUL character, and a lone UTF-16 surrogate (``"\\ud800"`` in JSON) is
not text at all (it cannot be encoded as UTF-8): both are refused where they come in, with 422.
"""

from __future__ import annotations

import re
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


def _checked(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


#: A ``str`` field of a request body that must be storable text (see the module doc).
Text = Annotated[str, AfterValidator(_checked)]
