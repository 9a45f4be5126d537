"""The second of a recording at which a passage's words are said (pure, no I/O).

A speech passage carries ``word_times`` (written by the chunker, ``services/chunker/logic.py``): compact
JSON ``[[offset, second], ...]``, the offset of each word's start in the passage's text and the second
(0.1 s) it is said at.  A citation of a quoted sentence names the second its first word is said at;
a passage without them (indexed before they existed, or not a recording) spreads its span over its text.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Mapping

WORD_TIMES = "word_times"


def quoted_second(attributes: Mapping[str, str], t_start: float | None, t_end: float | None, text_len: int,
                  char_offset: int) -> float | None:
    """The second at which the character at ``char_offset`` of a passage's text is said.

    From the passage's ``word_times`` when it has them (the last word starting at or before the
    offset); else the passage's span spread over its ``text_len`` characters (rounded to 0.1 s); else
    its start.  ``None`` when the passage has no time at all.  A malformed ``word_times`` is ignored.
    """
    marks = _marks(attributes.get(WORD_TIMES, "") if attributes else "")
    if marks:
        k = bisect_right([at for at, _ in marks], max(0, char_offset))
        if k:
            return marks[k - 1][1]
    if t_start is None:
        return marks[0][1] if marks else None
    if t_end is None or t_end <= t_start or text_len <= 0:
        return t_start
    share = min(1.0, max(0.0, char_offset / text_len))
    return round(t_start + (t_end - t_start) * share, 1)


def _marks(raw: str) -> list[tuple[int, float]]:
    """(offset, second) pairs sorted by offset; empty when ``raw`` is missing or cannot be read."""
    if not raw:
        return []
    try:
        rows = json.loads(raw)
        marks = [(int(r[0]), float(r[1])) for r in rows]
    except (ValueError, TypeError, IndexError, KeyError, RecursionError):
        return []
    return sorted((at, s) for at, s in marks if math.isfinite(s) and s >= 0)
