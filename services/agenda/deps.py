"""What the agenda's routes take, as FastAPI dependencies: the shared sign-in (:mod:`services.deps`) and the
agenda the app factory binds once per process (:func:`bind`; it keeps caches across requests)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated
from zoneinfo import ZoneInfo

from fastapi import Depends, Request

from secondbrain.agenda_lines import AgendaLine, AgendaLines
from secondbrain.ports import FeedTokens, MetadataStore, Reminders
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.temporal import Conventions
from services.agenda.agenda import event_json
from services.agenda.service import Agenda, Window
from services.deps import CurrentUser

__all__ = ["AgendaDep", "Bound", "CurrentUser", "bind", "lines"]


@dataclass(frozen=True, slots=True)
class Bound:
    """What the routes need of the running process."""

    agenda: Agenda
    feeds: FeedTokens
    settings: Settings
    metadata: MetadataStore
    reminders: Reminders


def bind(rt: Runtime) -> Bound:
    """The agenda over ``rt``'s stores, for ``app.state.agenda``."""
    if rt.vectors is None:
        raise RuntimeError("the agenda needs the vector store")
    return Bound(Agenda(rt.vectors, rt.metadata), rt.metadata.feed_tokens, rt.settings, rt.metadata,
                 rt.metadata.reminders)


def lines(bound: Bound) -> AgendaLines:
    """The agenda's lines for a window, as the API gives them, for another service (the answers)."""
    def read(user: str, start: datetime, end: datetime, tz: ZoneInfo, conventions: Conventions) -> list[AgendaLine]:
        events = bound.agenda.events(user, Window(start, end, tz, conventions))
        return [AgendaLine(event_json(e, tz, conventions.date_order), e.now.hit) for e in events]
    return read


async def get_agenda(request: Request) -> Bound:
    bound: Bound = request.app.state.agenda
    return bound


AgendaDep = Annotated[Bound, Depends(get_agenda)]
