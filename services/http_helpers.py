"""What the HTTP services read from a request the same way: the person's time zone and calendar conventions,
times sent without a zone, and the backlog the sign-in counted (a dependency, :data:`PendingCaptures`, with the
refusal, 429, once it is full).

The readers that refuse say so in two forms: ``zone_named`` and ``calendar_conventions`` raise ``ValueError``
(for code that maps a refusal itself, as the answerer does), ``zone`` and ``conventions`` answer 422."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import Depends, HTTPException, Request

from secondbrain.settings import Settings
from secondbrain.temporal import Conventions
from services.access import CurrentPrincipal

__all__ = ["PendingCaptures", "aware", "backlog_refusal", "calendar_conventions", "conventions", "pending_captures",
           "zone", "zone_named"]


def zone_named(name: str | None, default: str) -> ZoneInfo:
    """A time zone by IANA name (``default`` when none is given); ``ValueError`` with an example when unknown."""
    try:
        return ZoneInfo(name or default)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as Europe/Paris") from None


def zone(name: str | None, default: str) -> ZoneInfo:
    """:func:`zone_named`, refused with 422."""
    try:
        return zone_named(name, default)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


def calendar_conventions(s: Settings, locale: str | None = None, country: str | None = None,
                         hemisphere: str | None = None, date_order: str | None = None) -> Conventions:
    """How the person's calendar reads: what the request says, else the settings, else what the locale implies;
    ``ValueError`` when a value is unreadable."""
    return Conventions.for_locale(locale or s.locale, country=country or s.country,
                                  hemisphere=hemisphere or s.hemisphere, date_order=date_order or s.date_order)


def conventions(s: Settings, locale: str | None = None, country: str | None = None, hemisphere: str | None = None,
                date_order: str | None = None) -> Conventions:
    """:func:`calendar_conventions`, refused with 422."""
    try:
        return calendar_conventions(s, locale, country, hemisphere, date_order)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


def aware(dt: datetime | None, tz: tzinfo) -> datetime | None:
    """A client's time; without a zone it is read in ``tz`` (the person's zone, or UTC where the API says so)."""
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)


async def pending_captures(request: Request, _signed_in: CurrentPrincipal) -> int:
    """The person's captures still in the pipeline, as the sign-in read them with the request's key
    (:func:`services.access.current_principal`, on which this depends: it has always run first, once per
    request)."""
    return int(getattr(request.state, "pending", 0))


# A route's parameter: the backlog of the person it acts for.
PendingCaptures = Annotated[int, Depends(pending_captures)]


def backlog_refusal(settings: Settings, pending: int, *, then: str, retry_after_s: int) -> HTTPException | None:
    """429 while the person has ``SB_MAX_PENDING_JOBS`` captures in the pipeline (a flood waits for its own
    work, everyone else keeps going); ``then`` says what to do meanwhile."""
    if settings.max_pending_jobs <= 0 or pending < settings.max_pending_jobs:
        return None
    return HTTPException(429, f"you have {pending} captures still being processed (the limit is "
                              f"{settings.max_pending_jobs}); {then} Operators can raise SB_MAX_PENDING_JOBS.",
                         headers={"Retry-After": str(retry_after_s)})
