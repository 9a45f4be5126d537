"""The second of a recording at which a passage's words are said (pure, no I/O).

A speech passage carries ``word_times`` (written by the chunker, ``services/chunker/logic.py``): for each
word, where it starts in the passage's text and the second (0.1 s) it is said at.  A citation of a quoted
sentence names the second its first word is said at; a passage without them (indexed before they existed,
or not a recording) spreads its span over its text.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

from secondbrain.events.models import WordTime


def quoted_second(word_times: Sequence[WordTime], t_start: float | None, t_end: float | None, text_len: int,
                  char_offset: int) -> float | None:
    """The second at which the character at ``char_offset`` of a passage's text is said.

    From the passage's ``word_times`` when it has them (the last word starting at or before the
    offset); else the passage's span spread over its ``text_len`` characters (rounded to 0.1 s); else
    its start.  ``None`` when the passage has no time at all.
    """
    marks = sorted((w.offset, w.second) for w in word_times if math.isfinite(w.second) and w.second >= 0)
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
