"""What a service that answers questions needs of the agenda: its lines for a window, as ``GET /v1/agenda``
gives them, each with the passage it cites.  The agenda service provides it (``services.agenda.deps.lines``);
the process wiring hands it to the query service, which answers "what do I have next week?" with it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from secondbrain.search_hits import SearchHit
from secondbrain.temporal import Conventions


@dataclass(frozen=True, slots=True)
class AgendaLine:
    """One line of the agenda: as the API gives it (``line``: its id, when, title, quote, moves, citation) and
    the passage that says it (``hit``)."""

    line: dict[str, Any]
    hit: SearchHit


class AgendaLines(Protocol):
    def __call__(self, user: str, start: datetime, end: datetime, tz: ZoneInfo,
                 conventions: Conventions) -> list[AgendaLine]:
        """The lines of ``user``'s agenda in ``[start, end)``, earliest first, read in ``tz``."""
        ...
