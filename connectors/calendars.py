"""Calendars you subscribe to: an iCalendar feed (a secret ``https://`` or ``webcal://`` address) fetched and
kept in step with secondbrain.

Each refresh fetches the feed (HTTPS only, a size limit and a timeout; ``ETag`` / ``Last-Modified`` sent back,
so an unchanged feed costs one small request and nothing else), reads it as ``secondbrain import`` reads an
``.ics`` (:mod:`services.importers.ics`) and sends the events through the import batch route: an unchanged event
adds nothing, a changed one becomes the next version of its source.  What the calendar no longer has (an event
deleted or cancelled) has its source deleted: the state file remembers, per feed, the sources the last refresh
had.  A recurring event is one source (its rule, its exceptions and its moved occurrences; see
:mod:`services.importers.ics`): an occurrence taken out or moved changes that source.  The sources an earlier
version made for each occurrence are deleted on the next refresh, the series standing for them.

The address is a secret (whoever has it reads the calendar): it is never shown in full, and the state file,
readable only by its owner, names each feed by a hash of it.
"""

from __future__ import annotations

import hashlib
import io
import ipaddress
import socket
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpcore
import httpx
from tenacity import stop_after_attempt

from connectors.patience import server_patience
from connectors.periodic import Background
from connectors.sender import Progress, Sender, Tally, api_client, counted, say
from connectors.state import read_state, state_path, write_state
from secondbrain import ids
from secondbrain.addresses import literal_address
from services.importers import ics
from services.importers.archive import Export
from services.importers.model import ExportError, Options, Skipped

MAX_FEED_BYTES = 20 * 1024 * 1024  # a busy calendar of ten years is a few MB
TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


class FeedError(Exception):
    """The feed could not be read (unreachable, refused, not a calendar): a sentence; nothing was changed."""


def normalize(url: str, allowed_hosts: Collection[str] = ()) -> str:
    """``webcal://`` is HTTPS; plain HTTP only to this machine or a private network (a test server, a NAS).
    Never to a link-local, unspecified or multicast address (a cloud server's metadata service at
    169.254.169.254, ``0.0.0.0``), whatever the scheme, unless the operator allows the host by name
    (``SB_CALENDAR_ALLOW_HOSTS``).  ValueError otherwise."""
    url = url.strip()
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("webcal", "webcals", "http", "https"):
        raise ValueError(f"{shown(url)} is not a calendar address (https://... or webcal://...)")
    if not host:
        raise ValueError(f"{shown(url)} names no server")
    allowed = host in {h.strip().lower().strip("[]") for h in allowed_hosts}
    address = literal_address(host)
    refusal = None if allowed or address is None else address_refusal(address)
    if refusal:
        raise ValueError(f"{shown(url)} is {refusal}: calendars are not fetched from there. If the calendar really is "
                         "there, the operator can allow the host by name in SB_CALENDAR_ALLOW_HOSTS")
    if scheme in ("webcal", "webcals"):
        parts = parts._replace(scheme="https")
    elif scheme == "http" and not (allowed or _near(host, address)):
        raise ValueError(f"{shown(url)}: calendars are fetched over HTTPS only (the address is a secret); "
                         "use the https:// or webcal:// address")
    return urlunsplit(parts)


def address_refusal(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why a calendar is never fetched from ``ip``, or None.  This machine and the private network are fine (a
    test server, a NAS); an address that reaches a cloud server's metadata service or everyone at once is not."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified:
        return f"the unspecified address ({ip}: it reaches this machine on every interface)"
    if ip.is_link_local:
        return f"a link-local address ({ip}: where cloud servers answer with their credentials)"
    if ip.is_multicast:
        return f"a multicast address ({ip})"
    if ip.is_reserved or (isinstance(ip, ipaddress.IPv4Address) and ip == ipaddress.IPv4Address("255.255.255.255")):
        return f"a reserved address ({ip})"
    return None


def _near(host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    if host == "localhost":
        return True
    return address is not None and (address.is_loopback or address.is_private)


def checked_address(host: str, port: int, allowed_hosts: Collection[str] = ()) -> str:
    """Resolve ``host`` once and check every address it has (a name may lead to 169.254.169.254 too); the one
    to connect to.  A host the operator allows by name is taken as it resolves."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FeedError(f"the calendar's server {host} could not be found ({exc.strerror})") from None
    addresses = [str(info[4][0]).split("%")[0] for info in infos]
    if host.lower().strip("[]") not in {h.strip().lower().strip("[]") for h in allowed_hosts}:
        for address in addresses:
            refusal = address_refusal(ipaddress.ip_address(address))
            if refusal:
                raise FeedError(f"the calendar's server {host} is at {refusal}: refused (the operator can allow it "
                                "by name in SB_CALENDAR_ALLOW_HOSTS)")
    if not addresses:
        raise FeedError(f"the calendar's server {host} could not be found (no addresses)")
    return addresses[0]


class _CheckedBackend(httpcore.SyncBackend):
    """Opens each connection to an address checked in the same step (no second lookup a rebinding name could
    answer differently).  TLS still checks the certificate against the host name."""

    def __init__(self, allowed_hosts: Collection[str]) -> None:
        super().__init__()
        self.allowed_hosts = allowed_hosts

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return super().connect_tcp(checked_address(host, port, self.allowed_hosts), port, timeout=timeout,
                                   local_address=local_address, socket_options=socket_options)


def _transport(allowed_hosts: Collection[str]) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport()
    # httpx takes no network backend; its pool does (the same defaults as httpx's own pool).
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(),
                                              network_backend=_CheckedBackend(allowed_hosts))
    return transport


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
          limit: int = MAX_FEED_BYTES, allowed_hosts: Collection[str] = ()) -> Fetched:
    """The feed, or None when the server says it has not changed; FeedError says why not.  Each redirect is
    checked before it is followed (the same rules as the address itself), and every connection goes to an
    address checked when it was looked up."""
    headers = {"Accept": "text/calendar, */*;q=0.5", "User-Agent": "secondbrain-calendar"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    where = shown(url)
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False,
                          transport=_transport(allowed_hosts)) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                with client.stream("GET", url, headers=headers) as resp:
                    location = resp.headers.get("location")
                    if resp.status_code in _REDIRECTS and location:
                        url = _next_hop(url, location, where, allowed_hosts)
                        continue
                    return _received(resp, where, etag, last_modified, limit)
            raise FeedError(f"{where} redirected more than {MAX_REDIRECTS} times")
    except httpx.TimeoutException:
        raise FeedError(f"{where} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise FeedError(f"{where} is not reachable ({type(exc).__name__}: {_no_url(str(exc), url)})") from None


def _next_hop(url: str, location: str, where: str, allowed_hosts: Collection[str]) -> str:
    """Where a redirect leads, checked before it is followed."""
    target = urljoin(url, location)
    try:
        return normalize(target, allowed_hosts)
    except ValueError as exc:  # the sentence names the address as shown (never its secret path)
        raise FeedError(f"{where} sent the request on to {shown(target)}; refused: {exc}") from None


def _received(resp: httpx.Response, where: str, etag: str | None, last_modified: str | None,
              limit: int) -> Fetched:
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
            raise FeedError(f"{where} sent more than {limit // (1024 * 1024)} MB; that is not a calendar this reads")
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body.lstrip(b"\xef\xbb\xbf \t\r\n").upper().startswith(b"BEGIN:VCALENDAR"):
        raise FeedError(f"{where} did not send a calendar (no BEGIN:VCALENDAR); check that it is the iCal address")
    return Fetched(body, resp.headers.get("etag"), resp.headers.get("last-modified"))


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
        try:
            loaded = read_state(path)
        except (OSError, ValueError) as exc:
            raise FeedError(f"the calendar state file {path} cannot be read ({exc}); move it away to start "
                            "again (events already there are not added twice)") from None
        if isinstance(loaded, dict) and isinstance(loaded.get("feeds"), dict):
            self.feeds = loaded["feeds"]

    def save(self) -> None:
        write_state(self.path, {"version": 1, "feeds": self.feeds})


# Sends captures and returns once the gateway answered for each: each one's status ("refused" when refused).
Send = Callable[[list[Any]], list[str]]
# Deletes a source by id: True when it is gone (deleted now, or already).
Delete = Callable[[str], bool]


def refresh(url: str, state: State, user_id: str, send: Send, delete: Delete, *, tz: tzinfo,
            now: datetime | None = None, fetcher: Callable[..., Fetched] = fetch,
            allowed_hosts: Collection[str] = ()) -> Refresh:
    """Fetch one feed and bring secondbrain in step with it.  FeedError (nothing changed) when it cannot be
    read; what was sent or deleted before a lost server stays done, and the next refresh finishes it.
    ``allowed_hosts``: hosts the operator allows by name whatever their address (SB_CALENDAR_ALLOW_HOSTS)."""
    url = normalize(url, allowed_hosts)
    key = feed_key(url)
    mark = state.feeds.get(key) or {}
    report = Refresh(shown(url))
    got = fetcher(url, etag=mark.get("etag"), last_modified=mark.get("last_modified"), allowed_hosts=allowed_hosts)
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
                                          "series": c.attributes.get("import.series") == "yes"} for c in captures}
    report.refused = statuses.count("refused")
    # What the calendar no longer has goes.  So do the occurrences an earlier version kept one record each for:
    # their series is one record now, and it holds them.
    for uri, seen in had.items():
        if uri in has:
            continue
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


def split_urls(text: str) -> list[str]:
    """Addresses separated by commas, spaces or lines (SB_CALENDAR_URLS, --urls-file)."""
    return [u for u in text.replace(",", " ").split() if u]


def default_state_path(url: str, user_hint: str) -> Path:
    """Where ``secondbrain calendar`` keeps its record: one file per server and key."""
    return state_path("calendars", url, user_hint)


def refresh_all(client: Any, state_path: Path, urls: list[str], *, tally: Tally, progress: Progress,
                tz: Any, allowed_hosts: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], Sender]:
    """One refresh of each feed: a row per feed (its error, when it failed) and the sender.  A feed that fails
    changes nothing and the others go on."""
    me = client.get("/v1/me")
    me.raise_for_status()
    user_id = str(me.json()["user_id"])
    state = State(state_path)
    sender = Sender(client, tally, progress, "ics", batch_items=100)
    send = sender.send_all  # the state moves on only once the gateway answered for what was sent

    # A calendar cleared at once is many deletions: the per-minute limit may answer 429, tried 5 times in all.
    patience = server_patience(statuses=(429,), asked_default_s=5.0, asked_max_s=30.0,
                               stop=stop_after_attempt(5))

    def delete(source_id: str) -> bool:
        resp = patience(client.delete, f"/v1/sources/{source_id}")
        return resp.status_code in (204, 404)  # 404: already gone (deleted by hand, say)

    rows: list[dict[str, Any]] = []
    for url in urls:
        before = len(tally.items)
        try:
            got = refresh(url, state, user_id, send, delete, tz=tz, allowed_hosts=allowed_hosts)
        except (FeedError, ValueError) as exc:  # ValueError: not a calendar address (SB_CALENDAR_URLS)
            rows.append({"feed": shown(url), "error": str(exc)})
            continue
        new = [i for i in tally.items[before:] if not i.earlier and i.status != "refused"]
        rows.append({"feed": got.feed, "unchanged": got.unchanged, "events": got.events, "added": len(new),
                     "removed": got.removed, "refused": got.refused, "delete_failed": len(got.failed),
                     "skipped": [{"label": lb, "reason": r} for lb, r in got.skipped]})
    return rows, sender


def feed_line(row: dict[str, Any]) -> str:
    """What one refresh of a feed did, as a line (a row of :func:`refresh_all`)."""
    if "error" in row:
        return f"{row['error']}; nothing was changed"  # each error names the feed (as shown) already
    if row["unchanged"]:
        return f"{row['feed']}: not changed since the last refresh"
    text = f"{row['feed']}: {counted(row['events'], 'event')}, {row['added']} new or changed, {row['removed']} removed"
    if row["refused"]:
        text += f", {row['refused']} refused (sent again next time)"
    if row["delete_failed"]:
        text += f", {row['delete_failed']} could not be removed (tried again next time)"
    return text


def background_pass(url: str, key_file: Path, settings: Any, state: Path) -> tuple[list[str], list[str]]:
    """One refresh for ``up`` (SB_CALENDAR_*): (a line per feed that changed, a line per feed that failed).
    Raises FeedError (the state file) or OSError."""
    from zoneinfo import ZoneInfo

    urls = split_urls(settings.calendar_urls.get_secret_value()) if settings.calendar_urls else []
    tally = Tally(0)
    with api_client(url, key_file) as client:
        rows, _sender = refresh_all(client, state, urls, tally=tally, progress=Progress(tally, quiet=True),
                                    tz=ZoneInfo(settings.timezone), allowed_hosts=settings.calendar_hosts())
    return ([feed_line(r) for r in rows if "error" not in r and not r["unchanged"] and (r["added"] or r["removed"])],
            [feed_line(r) for r in rows if "error" in r])


class Refresher(Background):
    """SB_CALENDAR_URLS: each calendar refreshed every SB_CALENDAR_INTERVAL_S, on a thread of its own, as a client
    of this server."""

    def __init__(self) -> None:
        super().__init__("calendar")

    def start(self, url: str, key_file: Path, settings: Any, state: Path) -> None:
        told: set[str] = set()  # a lasting failure (a feed gone) is said once, and again when it changes

        def report(changes: list[str], errors: list[str]) -> None:
            nonlocal told
            for line in changes + [e for e in errors if e not in told]:
                say(f"calendar: {line}")
            told = set(errors)

        def run_pass() -> None:
            report(*background_pass(url, key_file, settings, state))

        def failed(exc: Exception) -> None:  # the person sees why calendars do not come
            report([], [f"{type(exc).__name__}: {exc}"])

        feeds = split_urls(settings.calendar_urls.get_secret_value())
        say(f"  refreshing {len(feeds)} calendar{'s' if len(feeds) != 1 else ''} "
            f"({', '.join(shown(u) for u in feeds)}) every {settings.calendar_interval_s:g} s (SB_CALENDAR_URLS)")
        self.run_every(settings.calendar_interval_s, run_pass, failed)
