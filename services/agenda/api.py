"""The agenda over HTTP: what is coming up and what happened (``/v1/agenda``), on this day in earlier years
(``/v1/agenda/on-this-day``), the week's digest (``/v1/digest``), calendar feeds (``/v1/feeds``) and the
feed itself (``/v1/agenda.ics``, opened by its token alone: calendar apps send no header).

Every route but the feed acts for the signed-in user; the feed for its token's.  The agenda itself is bound
once per process (:func:`services.agenda.deps.bind`).
"""

from __future__ import annotations

import asyncio
import time as clock
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field

from secondbrain.addresses import parse_networks
from secondbrain.ports import FeedInfo, PushSubscription
from secondbrain.settings import Settings
from secondbrain.submissions import private_target
from secondbrain.validation import Text
from services.agenda.agenda import days_json, event_json
from services.agenda.deps import AgendaDep, Bound, CurrentUser
from services.agenda.digest import week_digest
from services.agenda.ics import calendar
from services.agenda.push import public_key, push_configured, vapid_key
from services.agenda.reminders import default_minutes, mail_configured, reminder_json
from services.agenda.service import Window, day_bounds
from services.deps import public_base
from services.http_helpers import aware, conventions, zone

DEFAULT_DAYS = 14
FEED_PAST = timedelta(days=30)  # a subscribed calendar shows the last month too
FEED_AHEAD = timedelta(days=365)
NO_FEED = ("this calendar feed's address is not valid or was revoked; make a new one in Settings "
           "(POST /v1/feeds) and subscribe to its address")


class FeedIn(BaseModel):
    """A calendar feed to make."""

    name: Text = Field("calendar", min_length=1, max_length=100, description="What it is for (shown in lists).")
    tz: Text | None = Field(None, max_length=64, description="The IANA zone the feed's times are read in "
                                                             "(default: the server's).")


router = APIRouter(tags=["agenda"])
Ctx = AgendaDep
User = CurrentUser
Tz = Annotated[str | None, Query(max_length=64, description="Your IANA time zone (default: the server's).")]
Locale = Annotated[str | None, Query(max_length=40, description="How you write dates, e.g. en_GB (default: "
                                                                "the server's).")]
DateOrder = Annotated[str | None, Query(pattern="^(mdy|dmy|ymd)$", description="Date order of numeric dates.")]


# --------------------------------------------------------------------------- routes


@router.get("/v1/agenda", summary="What is coming up, or what happened")
async def get_agenda(
    ctx: Ctx, user: User, tz: Tz = None,
    start: Annotated[datetime | None, Query(alias="from", description="From (ISO 8601; default: the start of "
                                                                      "today in your zone).")] = None,
    end: Annotated[datetime | None, Query(alias="to", description="Until, exclusive (default: `days` on).")] = None,
    days: Annotated[int, Query(ge=1, le=731, description="Without 'to': how many days from 'from'.")] = DEFAULT_DAYS,
    now: Annotated[datetime | None, Query(description="Read the agenda as of this time (ISO 8601).")] = None,
    habits: Annotated[bool, Query(description="Also habits ('yoga every Tuesday'), each day they fall on.")] = False,
    locale: Locale = None, date_order: DateOrder = None,
) -> dict[str, Any]:
    """The dated things your sources speak of in a window, by day in your zone: what is coming up, or, for a
    past window, what happened.  Each with its time, the sentence that says it and its citation; an event
    several sources date differently (booked, then moved) once, at its newest time, with ``moved_from``."""
    z = zone(tz, ctx.settings.timezone)
    cal = conventions(ctx.settings, locale, date_order=date_order)
    at = aware(now, z) or datetime.now(z)
    lo = aware(start, z) or day_bounds(at.astimezone(z).date(), z)[0]
    hi = aware(end, z) or lo + timedelta(days=days)
    if hi <= lo:
        raise HTTPException(422, "'to' must come after 'from'")
    if hi - lo > timedelta(days=731):
        raise HTTPException(422, "ask for two years at most at a time")
    events = await asyncio.to_thread(ctx.agenda.events, user, Window(lo, hi, z, cal, habits))
    return {"from": lo.isoformat(), "to": hi.isoformat(), "timezone": str(z), "now": at.isoformat(),
            "view": "upcoming" if hi > at else "what happened", "total": len(events),
            "days": days_json(events, z, cal.date_order)}


@router.get("/v1/agenda/on-this-day",
            summary="What you saved and what happened on this date in earlier years")
async def on_this_day(
    ctx: Ctx, user: User, tz: Tz = None,
    day: Annotated[date | None, Query(alias="date", description="The day (default: today in your zone).")] = None,
    years: Annotated[int, Query(ge=1, le=50, description="How many earlier years to look at.")] = 10,
    locale: Locale = None, date_order: DateOrder = None,
) -> dict[str, Any]:
    """What you saved, and what your sources say happened, on this date in earlier years."""
    z = zone(tz, ctx.settings.timezone)
    cal = conventions(ctx.settings, locale, date_order=date_order)
    today = day or datetime.now(z).date()
    out = []
    for back in range(1, years + 1):
        try:
            then = today.replace(year=today.year - back)
        except ValueError:  # 29 February
            continue
        lo, hi = day_bounds(then, z)
        saved = await asyncio.to_thread(ctx.agenda.saved_between, user, lo, hi, limit=50)
        happened = await asyncio.to_thread(ctx.agenda.events, user, Window(lo, hi, z, cal,
                                                                            lookback=timedelta(days=2)))
        if saved or happened:
            lines = [line for d in days_json(happened, z, cal.date_order) for line in d["events"]]
            out.append({"year": then.year, "date": then.isoformat(), "years_ago": back, "saved": saved,
                        "happened": lines})
    return {"date": today.isoformat(), "timezone": str(z), "years": out}


@router.get("/v1/digest", summary="The week: what you saved, what is coming")
async def digest(
    ctx: Ctx, user: User, tz: Tz = None,
    days: Annotated[int, Query(ge=1, le=31, description="How many days back and ahead.")] = 7,
    now: Annotated[datetime | None, Query(description="As of this time (ISO 8601).")] = None,
    locale: Locale = None, date_order: DateOrder = None,
) -> dict[str, Any]:
    """The week in one answer: what you saved, by kind, and what is coming up."""
    z = zone(tz, ctx.settings.timezone)
    cal = conventions(ctx.settings, locale, date_order=date_order)
    at = aware(now, z) or datetime.now(z)
    return await asyncio.to_thread(week_digest, ctx.agenda, user, at, z, cal, days)


def link_base(request: Request, settings: Settings) -> str | None:
    """The address a calendar app opens a source's link at: ``SB_PUBLIC_URL``, else the LAN address ``up --lan``
    serves (HTTPS), else the address the feed was asked at unless that is loopback; ``None`` when only this
    machine can reach the server (a phone's calendar cannot open 127.0.0.1)."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    if settings.lan_address:
        return f"https://{settings.lan_address}:{settings.port}"
    host = request.url.hostname or ""
    if host in ("localhost", "") or host.startswith("127.") or host == "::1":
        return None
    return str(request.base_url).rstrip("/")


def feed_json(f: FeedInfo) -> dict[str, Any]:
    return {"feed_id": f.feed_id, "name": f.name, "timezone": f.timezone, "created_at": f.created_at.isoformat(),
            "last_used_at": f.last_used_at.isoformat() if f.last_used_at else None, "revoked": f.revoked_at is not None}


@router.get("/v1/feeds", summary="Your calendar feeds")
async def list_feeds(ctx: Ctx, user: User) -> dict[str, Any]:
    """Your calendar feeds (never their addresses: those are shown once)."""
    return {"feeds": [feed_json(f) for f in await asyncio.to_thread(ctx.feeds.list, user)]}


@router.post("/v1/feeds", status_code=201, summary="Make a calendar feed")
async def new_feed(ctx: Ctx, user: User, body: FeedIn, request: Request) -> dict[str, Any]:
    """A read-only calendar address for your agenda, to subscribe to in any calendar app; shown once."""
    z = zone(body.tz, ctx.settings.timezone)
    feed, token = await asyncio.to_thread(ctx.feeds.create, user, body.name, str(z))
    path = f"/v1/agenda.ics?token={token}"
    return {**feed_json(feed), "token": token, "path": path, "url": public_base(request, ctx.settings) + path,
            "note": "shown once: subscribe to this address in your calendar app; anyone with it can read your "
                    "agenda (and nothing else) until you revoke it"}


@router.delete("/v1/feeds/{feed_id}", status_code=204, summary="Revoke a calendar feed")
async def revoke_feed(ctx: Ctx, user: User, feed_id: str) -> Response:
    """Revoke a calendar feed: its address stops working at once."""
    if not await asyncio.to_thread(ctx.feeds.revoke, user, feed_id):
        raise HTTPException(404, "no such calendar feed")
    return Response(status_code=204)


class ReminderIn(BaseModel):
    """"Remind me" on a line of the agenda."""

    event_id: Text = Field(min_length=1, max_length=64, description="The agenda line's ``id`` (GET /v1/agenda).")
    minutes_before: int | None = Field(None, ge=0, le=60 * 24 * 60, description=(
        "How long before the start to remind (default by the line's kind: an hour before an appointment, three "
        "before travel, 09:00 the day before a deadline, a payment or a birthday)."))
    tz: Text | None = Field(None, max_length=64, description="Your IANA time zone (default: the server's).")
    now: datetime | None = Field(None, description="Read the agenda as of this time (ISO 8601).")


REMINDER_HORIZON = timedelta(days=366)  # the lines a reminder can be set on: the coming year's


@router.post("/v1/reminders", status_code=201, summary="Be reminded of a line of the agenda")
async def add_reminder(ctx: Ctx, user: User, body: ReminderIn) -> dict[str, Any]:
    """Keep a reminder of one agenda line of the coming year; `up` sends it when it is due, by e-mail through the
    SMTP server set up in ``SB_SMTP_*`` (``sends`` says how, or null when nothing is set up to send it).  Asking
    again for the same line moves its reminder."""
    z = zone(body.tz, ctx.settings.timezone)
    cal = conventions(ctx.settings)
    at = aware(body.now, z) or datetime.now(z)
    window = Window(day_bounds(at.astimezone(z).date(), z)[0], at + REMINDER_HORIZON, z, cal, True)
    events = await asyncio.to_thread(ctx.agenda.events, user, window)
    line = next((x for x in (event_json(e, z, cal.date_order) for e in events) if x["id"] == body.event_id), None)
    if line is None:
        raise HTTPException(404, "no such line in your agenda for the coming year")
    starts = datetime.fromisoformat(line["start"])
    minutes = body.minutes_before if body.minutes_before is not None else default_minutes(line["kind"])
    kept = await asyncio.to_thread(ctx.reminders.put, user, body.event_id, line["title"], line["kind"], starts,
                                   starts - timedelta(minutes=minutes), str(z))
    return {**reminder_json(kept), "sends": await sends(ctx, user)}


async def sends(ctx: Bound, user: str) -> str | None:
    """How the user's reminders go: by e-mail, by push to their browsers, both, or nothing is set up (null)."""
    ways = ["e-mail"] if mail_configured(ctx.settings) else []
    if push_configured(ctx.settings):
        browsers = await asyncio.to_thread(ctx.metadata.push_subscriptions.listed, user)
        if browsers:
            ways.append("push")
    return " and ".join(ways) or None


@router.get("/v1/reminders", summary="Your reminders")
async def list_reminders(ctx: Ctx, user: User) -> dict[str, Any]:
    """Your reminders, the next first (those sent too, with when)."""
    return {"reminders": [reminder_json(r) for r in await asyncio.to_thread(ctx.reminders.listed, user)],
            "sends": await sends(ctx, user)}


@router.delete("/v1/reminders/{reminder_id}", status_code=204, summary="Remove a reminder")
async def delete_reminder(ctx: Ctx, user: User, reminder_id: str) -> Response:
    if not await asyncio.to_thread(ctx.reminders.delete, user, reminder_id):
        raise HTTPException(404, "no such reminder")
    return Response(status_code=204)


# ---------------------------------------------------------------------------------------------- reminders by web push

PUSH_OFF = "web push is turned off on this server (SB_PUSH_REMINDERS=false)"
B64URL = r"^[A-Za-z0-9_-]+={0,2}$"


class PushKeysIn(BaseModel):
    """The browser's keys a push is encrypted to, as ``PushSubscription.toJSON()`` gives them."""

    p256dh: str = Field(min_length=16, max_length=200, pattern=B64URL, description="The browser's P-256 key.")
    auth: str = Field(min_length=8, max_length=100, pattern=B64URL, description="The browser's auth secret.")


class PushSubscriptionIn(BaseModel):
    """A browser's push subscription (``PushSubscription.toJSON()``; other fields are ignored)."""

    endpoint: str = Field(min_length=12, max_length=2000, pattern=r"^https://[^\s]+$",
                          description="The push service's address for this browser (https).")
    keys: PushKeysIn


def push_json(s: PushSubscription) -> dict[str, Any]:
    return {"subscription_id": s.subscription_id, "endpoint": s.endpoint, "created_at": s.created_at.isoformat()}


@router.get("/v1/push/key", summary="The server's public key for web push")
async def push_key(ctx: Ctx, user: User) -> dict[str, Any]:
    """The key a browser subscribes with (``applicationServerKey``), and whether reminders go by push at all."""
    vapid = await asyncio.to_thread(vapid_key, ctx.settings.data_dir)
    return {"public_key": public_key(vapid), "enabled": push_configured(ctx.settings)}


@router.get("/v1/push/subscriptions", summary="Your browsers that get reminders")
async def list_push_subscriptions(ctx: Ctx, user: User) -> dict[str, Any]:
    return {"subscriptions": [push_json(s) for s in
                              await asyncio.to_thread(ctx.metadata.push_subscriptions.listed, user)]}


@router.post("/v1/push/subscriptions", status_code=201, summary="Get reminders on this browser")
async def add_push_subscription(ctx: Ctx, user: User, body: PushSubscriptionIn) -> dict[str, Any]:
    """Keep this browser's push subscription: `up` pushes each due reminder to it.  The same browser again
    (its endpoint) replaces its keys."""
    if not push_configured(ctx.settings):
        raise HTTPException(409, PUSH_OFF)
    refusal = None if ctx.settings.fetch_allow_private else private_target(
        body.endpoint, parse_networks(ctx.settings.fetch_allow_networks))
    if refusal:  # a push service is on the internet; an address inside this network is refused at once
        raise HTTPException(422, f"not a push service's address: {refusal}")
    kept = await asyncio.to_thread(ctx.metadata.push_subscriptions.put, user, body.endpoint, body.keys.p256dh,
                                   body.keys.auth)
    return push_json(kept)


@router.delete("/v1/push/subscriptions/{subscription_id}", status_code=204,
               summary="Stop reminders on a browser")
async def delete_push_subscription(ctx: Ctx, user: User, subscription_id: str) -> Response:
    if not await asyncio.to_thread(ctx.metadata.push_subscriptions.delete, user, subscription_id):
        raise HTTPException(404, "no such push subscription")
    return Response(status_code=204)


@router.get("/v1/agenda.ics", summary="Your agenda as an iCalendar feed", response_class=Response)
async def agenda_ics(
    ctx: Ctx, request: Request,
    token: Annotated[str | None, Query(max_length=200, description="The feed's token (from POST /v1/feeds).")] = None,
) -> Response:
    """Your agenda as iCalendar, for a calendar app to subscribe to: the last 30 days and the next year."""
    feed = await asyncio.to_thread(ctx.feeds.authenticate, token.strip()) if token else None
    if feed is None:
        raise HTTPException(401, NO_FEED)
    limit = ctx.settings.read_rate_limit_per_minute
    hits = await asyncio.to_thread(ctx.metadata.rate_counts.count_request, feed.user_id, "read", 60)
    if 0 < limit < hits:
        wait = max(1, 60 - int(clock.time()) % 60)
        raise HTTPException(429, f"too many requests; try again in {wait} s", headers={"Retry-After": str(wait)})
    z = zone(feed.timezone, ctx.settings.timezone)
    cal = conventions(ctx.settings)
    now = datetime.now(UTC)
    events = await asyncio.to_thread(ctx.agenda.events, feed.user_id,
                                     Window(now - FEED_PAST, now + FEED_AHEAD, z, cal))
    lines = [line for d in days_json(events, z, cal.date_order) for line in d["events"]]
    body = calendar(lines, name=f"secondbrain: {feed.name}", base_url=link_base(request, ctx.settings), now=now)
    return Response(body, media_type="text/calendar; charset=utf-8",
                    headers={"Cache-Control": "private, max-age=300",
                             "Content-Disposition": 'inline; filename="agenda.ics"'})
