"""Calendars you subscribe to: an iCalendar feed (a secret ``https://`` or ``webcal://`` address) fetched and
kept in step with secondbrain.

Each refresh fetches the feed (HTTPS only, a size limit and a timeout; ``ETag`` / ``Last-Modified`` sent back,
so an unchanged feed costs one small request and nothing else), reads it as ``secondbrain import`` reads an
``.ics`` (:mod:`services.importers.ics`) and sends the events through the import batch route: an unchanged event
adds nothing, a changed one becomes the next version of its source.  What the calendar no longer has (an event
deleted or cancelled, an occurrence taken out) has its source deleted: the state file remembers, per feed, the
sources the last refresh had.  An occurrence of a recurring event that only fell out of the rolling window (more
than :data:`~services.importers.ics.YEARS_BACK` years ago) is kept: it happened.

The address is a secret (whoever has it reads the calendar): it is never shown in full, and the state file,
readable only by its owner, names each feed by a hash of it.
"""

from __future__ import annotations

import hashlib
import io
import ipaddress
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from secondbrain import ids
from services.importers import ics
from services.importers.archive import Export
from services.importers.model import ExportError, Options, Skipped

MAX_FEED_BYTES = 20 * 1024 * 1024  # a busy calendar of ten years is a few MB
TIMEOUT_S = 30.0
# Past the window's start by this much is "fell out of it", not "taken out" (zones, all-day events).
WINDOW_MARGIN_S = 2 * 86400


class FeedError(Exception):
    """The feed could not be read (unreachable, refused, not a calendar): a sentence; nothing was changed."""


def normalize(url: str) -> str:
    """``webcal://`` is HTTPS; plain HTTP only to this machine or a private network (a test server, a NAS):
    ValueError otherwise."""
    url = url.strip()
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("webcal", "webcals"):
        parts = parts._replace(scheme="https")
    elif scheme == "http":
        if not _near(parts.hostname or ""):
            raise ValueError(f"{shown(url)}: calendars are fetched over HTTPS only (the address is a secret); "
                             "use the https:// or webcal:// address")
    elif scheme != "https":
        raise ValueError(f"{shown(url)} is not a calendar address (https://... or webcal://...)")
    if not parts.hostname:
        raise ValueError(f"{shown(url)} names no server")
    return urlunsplit(parts)


def _near(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private


def shown(url: str) -> str:
    """The address as it may be printed or logged: its server, never the secret path or query."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.hostname or '?'}/…" if parts.scheme else "a calendar address"


def feed_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:24]


@dataclass
class Fetched:
    body: bytes | None  # None: not modified since the last refresh
    etag: str | None = None
    last_modified: str | None = None


def fetch(url: str, *, etag: str | None, last_modified: str | None, timeout_s: float = TIMEOUT_S,
          limit: int = MAX_FEED_BYTES) -> Fetched:
    """The feed, or None when the server says it has not changed; FeedError says why not."""
    headers = {"Accept": "text/calendar, */*;q=0.5", "User-Agent": "secondbrain-calendar"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    where = shown(url)
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=True, max_redirects=5) as client, \
                client.stream("GET", url, headers=headers) as resp:
            # A redirect must keep to HTTPS too (or stay on this machine / the private network).
            try:
                normalize(str(resp.url))
            except ValueError:
                raise FeedError(f"{where} sent the request on to a plain HTTP address; refused") from None
            if resp.status_code == 304:
                return Fetched(None, etag, last_modified)
            if resp.status_code != 200:
                hint = " (the address may have been reset: copy the secret address again)" \
                    if resp.status_code in (401, 403, 404, 410) else ""
                raise FeedError(f"{where} answered HTTP {resp.status_code}{hint}")
            chunks: list[bytes] = []
            size = 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise FeedError(f"{where} sent more than {limit // (1024 * 1024)} MB; that is not a calendar "
                                    "this reads")
                chunks.append(chunk)
            body = b"".join(chunks)
            new_etag, modified = resp.headers.get("etag"), resp.headers.get("last-modified")
    except httpx.TimeoutException:
        raise FeedError(f"{where} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise FeedError(f"{where} is not reachable ({type(exc).__name__}: {_no_url(str(exc), url)})") from None
    if not body.lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(b"BEGIN:VCALENDAR"):
        raise FeedError(f"{where} did not send a calendar (no BEGIN:VCALENDAR); check that it is the iCal address")
    return Fetched(body, new_etag, modified)


def _no_url(text: str, url: str) -> str:
    return text.replace(url, shown(url))[:200]


@dataclass
class Refresh:
    """What one refresh of one feed did."""

    feed: str  # as shown
    unchanged: bool = False  # 304: nothing was read or sent
    events: int = 0  # captures sent (new, changed or the same as before)
    removed: int = 0  # sources deleted: taken out of the calendar
    skipped: list[tuple[str, str]] = field(default_factory=list)
    refused: int = 0  # events the gateway refused
    failed: list[str] = field(default_factory=list)  # deletions the server refused (tried again next time)


class State:
    """Per feed (by a hash of its address): its validators and the sources the last refresh had."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.feeds: dict[str, Any] = {}
        if path.exists():
            try:
                loaded = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise FeedError(f"the calendar state file {path} cannot be read ({exc}); move it away to start "
                                "again (events already there are not added twice)") from None
            if isinstance(loaded, dict) and isinstance(loaded.get("feeds"), dict):
                self.feeds = loaded["feeds"]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"version": 1, "feeds": self.feeds}, fh)
        os.replace(tmp, self.path)


# Sends captures and returns once the gateway answered for each: each one's status ("refused" when refused).
Send = Callable[[list[Any]], list[str]]
# Deletes a source by id: True when it is gone (deleted now, or already).
Delete = Callable[[str], bool]


def refresh(url: str, state: State, user_id: str, send: Send, delete: Delete, *, tz: tzinfo,
            now: datetime | None = None, fetcher: Callable[..., Fetched] = fetch) -> Refresh:
    """Fetch one feed and bring secondbrain in step with it.  FeedError (nothing changed) when it cannot be
    read; what was sent or deleted before a lost server stays done, and the next refresh finishes it."""
    url = normalize(url)
    key = feed_key(url)
    mark = state.feeds.get(key) or {}
    report = Refresh(shown(url))
    got = fetcher(url, etag=mark.get("etag"), last_modified=mark.get("last_modified"))
    if got.body is None:
        report.unchanged = True
        return report
    now = now or datetime.now(UTC)
    name = f"{urlsplit(url).hostname}.ics"  # the record's provenance names the server, not the secret address
    captures: list[Any] = []
    export = Export.from_file(name, io.BytesIO(got.body), entry_limit=MAX_FEED_BYTES)
    try:
        for result in ics.read(export, Options(tz=tz, now=now)):
            if isinstance(result, Skipped):
                if not result.duplicate:
                    report.skipped.append((result.label, result.reason))
            else:
                captures.append(result)
    except (ExportError, OSError, ValueError) as exc:
        raise FeedError(f"{report.feed} is not a readable calendar ({str(exc)[:200]})") from None
    finally:
        export.close()
    statuses = send(captures) if captures else []
    report.events = len(captures)
    had: dict[str, Any] = dict(mark.get("sources") or {})
    # Everything the feed has stays remembered, even what the gateway refused: it is still in the calendar.
    has: dict[str, Any] = {c.source_uri: {"at": c.captured_at.isoformat() if c.captured_at else None,
                                          "series": bool(c.attributes.get("import.occurrence"))} for c in captures}
    report.refused = statuses.count("refused")
    window_start = ics._years(now, -ics.YEARS_BACK).timestamp() + WINDOW_MARGIN_S
    for uri, seen in had.items():
        if uri in has:
            continue
        if seen.get("series") and seen.get("at") and datetime.fromisoformat(seen["at"]).timestamp() < window_start:
            continue  # it happened: only the window moved past it
        if delete(ids.source_id(user_id, uri)):
            report.removed += 1
        else:
            has[uri] = seen  # tried again next time
            report.failed.append(uri)
    # The validators are kept only once everything is done (every event taken, every deletion made): otherwise
    # the next refresh reads the feed again and sends it all, the events taken before adding nothing.
    done = not report.failed and not report.refused
    state.feeds[key] = {"sources": has, "checked": now.isoformat(),
                        "etag": got.etag if done else None,
                        "last_modified": got.last_modified if done else None}
    state.save()
    return report
