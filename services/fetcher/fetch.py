"""Download one URL for ingestion: polite, bounded, and with failure reasons a person can read.

No broker or database here: :func:`fetch` takes a URL and a :class:`FetchPolicy` and returns
the bytes with what the server said about them.  Every failure is raised as
``PermanentError`` (the URL itself is the problem: a 404, an image, a page that is too
large, robots.txt says no) or ``RetryableError`` (the moment is the problem: a timeout, a
5xx).  The messages become the job's failure reason, so they say what happened in words.

robots.txt follows RFC 9309: a 4xx answer means "no rules, everything allowed"; a 5xx
answer or no answer means the rules are unknown and the standard says to fetch nothing, so
that raises ``RetryableError`` (the runner retries later, then fails the job with the reason).
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib import robotparser
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpcore
import httpx

from secondbrain.addresses import Networks, check_host_allowed, public_address
from secondbrain.errors import PermanentError, RetryableError

MIB = 1024 * 1024
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
KEPT_HEADERS = ("etag", "last-modified")
ACCEPT = ("text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,"
          "application/pdf;q=0.8,*/*;q=0.1")
_REDIRECTS = {301, 302, 303, 307, 308}


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """Limits and manners of one fetch.

    ``timeout_s`` bounds each wait for the server (headers, then each piece of the body);
    ``total_timeout_s`` bounds the whole fetch, redirects and robots.txt included, so a server
    that drips bytes cannot hold a worker forever.
    """

    timeout_s: float = 20.0
    connect_timeout_s: float = 10.0
    max_bytes: int = 20 * MIB
    max_redirects: int = 5
    user_agent: str = "secondbrain/0.1 (+https://github.com/secondbrain)"
    respect_robots: bool = True
    allowed_content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "text/plain",
                                              "text/markdown", "application/pdf")
    allow_private: bool = False  # server-side requests must not reach the inside of the network
    # Private networks the operator opens on purpose (an intranet wiki); the rest stays refused.
    allow_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    total_timeout_s: float = 120.0


@dataclass(frozen=True, slots=True)
class Fetched:
    """What the server returned for a URL.

    ``redirects`` lists the URLs that answered with a redirect, in order (the first is
    ``requested_url`` when there was any); ``url`` is where the body came from.
    ``content_type`` is the bare media type, lowercased; ``headers`` keeps only the validators
    (``etag``, ``last-modified``) a later re-fetch can send back.
    """

    url: str
    requested_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    fetched_at: datetime
    redirects: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)


def _format_mib(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"


def validate_url(url: str) -> str:
    """Return ``url`` without its fragment, or raise ``PermanentError`` if it is not a fetchable web URL."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise PermanentError(f"{url!r} is not a valid URL") from exc
    if parts.scheme.lower() not in ("http", "https"):
        raise PermanentError(f"only http and https URLs can be fetched, not {url!r}")
    if not parts.hostname:
        raise PermanentError(f"the URL {url!r} has no host name")
    del port
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def check(self, url: str) -> None:
        if time.monotonic() > self.end:
            raise RetryableError(f"fetching {url} took longer than {self.seconds:g} s in total")


def _dns_not_found(exc: BaseException) -> bool:
    """Whether a connection failed because the host name does not exist (not a passing DNS hiccup)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, socket.gaierror):
            return cur.errno != getattr(socket, "EAI_AGAIN", None)
        text = str(cur)
        if "Name or service not known" in text or "nodename nor servname" in text:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _transport_error(exc: httpx.HTTPError, url: str, policy: FetchPolicy) -> Exception:
    """Turn an httpx failure into a Permanent/Retryable error with a readable reason."""
    host = urlsplit(url).hostname or url
    if isinstance(exc, httpx.ConnectTimeout):
        return RetryableError(f"fetching {url} timed out: {host} did not accept a connection within "
                              f"{policy.connect_timeout_s:g} s")
    if isinstance(exc, httpx.TimeoutException):
        return RetryableError(f"fetching {url} timed out: the site did not answer within {policy.timeout_s:g} s")
    if isinstance(exc, httpx.ConnectError):
        if _dns_not_found(exc):
            return PermanentError(f"the host {host} could not be found (DNS lookup failed); check the URL")
        return RetryableError(f"could not connect to {host} to fetch {url}: {exc or type(exc).__name__}")
    if isinstance(exc, httpx.DecodingError):
        return PermanentError(f"{host} sent a corrupt compressed body for {url}")
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return PermanentError(f"{url!r} is not a URL that can be fetched")
    return RetryableError(f"the connection to {host} failed while fetching {url}: {exc or type(exc).__name__}")


def _status_error(status: int, url: str) -> Exception:
    """The error for a non-success HTTP status."""
    if status in (404, 410):
        word = "not found" if status == 404 else "gone"
        return PermanentError(f"the page was {word} (HTTP {status}): {url}")
    if status in (401, 403):
        return PermanentError(f"the site refused access to the page (HTTP {status}); it may need a login: {url}")
    if status in (408, 425, 429):
        return RetryableError(f"the site asked to try again later (HTTP {status}): {url}")
    if 500 <= status < 600:
        return RetryableError(f"the site had an error (HTTP {status}); it may work later: {url}")
    return PermanentError(f"the site answered HTTP {status} for {url}; the page cannot be fetched")


def _read_limited(resp: httpx.Response, limit: int, url: str, deadline: _Deadline, what: str) -> bytes:
    """Read the (decoded) body, refusing as soon as it grows past ``limit``."""
    chunks: list[bytes] = []
    size = 0
    for chunk in resp.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise PermanentError(f"{what} is larger than {_format_mib(limit)}, the most that is fetched: {url}")
        chunks.append(chunk)
        deadline.check(url)
    return b"".join(chunks)


def _media_type(header: str) -> tuple[str, str | None]:
    """``text/html; charset=UTF-8`` -> (``text/html``, ``utf-8``)."""
    main, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("'\"").lower()
    return main.strip().lower(), charset


def _sniff(body: bytes) -> str:
    """A media type for a body sent without a Content-Type header."""
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")) or b"<html" in head:
        return "text/html"
    if b"\x00" not in body[:8192]:
        try:
            body[:8192].decode("utf-8")
            return "text/plain"
        except UnicodeDecodeError as exc:
            if exc.start < len(body[:8192]) - 4:  # not just a character cut at the 8 KiB boundary
                return "application/octet-stream"
            return "text/plain"
    return "application/octet-stream"


class _PinnedBackend(httpcore.SyncBackend):
    """Opens every TCP connection to an address that was checked in the same step.

    TLS still verifies the certificate against the host name: httpcore passes the URL's host
    as the server name, whatever address the socket went to.
    """

    def __init__(self, allowed: Networks = ()) -> None:
        super().__init__()
        self.allowed = allowed

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        """Connect to a public address of ``host`` (raises ``PermanentError`` for any other)."""
        return super().connect_tcp(public_address(host, self.allowed), port, timeout=timeout,
                                   local_address=local_address, socket_options=socket_options)


def guarded_transport(allowed: Networks = ()) -> httpx.HTTPTransport:
    """An httpx transport whose connections only reach public (or ``allowed``) addresses (the SSRF guard)."""
    transport = httpx.HTTPTransport()
    # httpx does not take a network backend; its pool does.  Same defaults as httpx's own pool.
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(),
                                              network_backend=_PinnedBackend(allowed))
    return transport


class _Robots:
    """robots.txt rules per origin, fetched once per :func:`fetch` call."""

    def __init__(self, client: httpx.Client, policy: FetchPolicy, deadline: _Deadline) -> None:
        self.client = client
        self.policy = policy
        self.deadline = deadline
        self.rules: dict[str, robotparser.RobotFileParser | None] = {}

    def _load(self, origin: str) -> robotparser.RobotFileParser | None:
        """Parsed rules, or None when the site has none (everything allowed)."""
        url = origin + "/robots.txt"
        host = urlsplit(origin).hostname or origin
        for _ in range(self.policy.max_redirects + 1):
            self.deadline.check(url)
            req = self.client.build_request("GET", url, headers={"User-Agent": self.policy.user_agent,
                                                                  "Accept": "text/plain,*/*;q=0.1"},
                                            timeout=_timeout(self.policy))
            try:
                resp = self.client.send(req, stream=True, follow_redirects=False)
            except httpx.HTTPError as exc:
                err = _transport_error(exc, url, self.policy)
                if isinstance(err, PermanentError):
                    raise err from exc
                raise RetryableError(f"robots.txt of {host} could not be read ({err}); the robots standard "
                                     "says not to fetch until it can be") from exc
            try:
                if resp.status_code in _REDIRECTS and resp.headers.get("location"):
                    nxt = urljoin(url, resp.headers["location"])
                    if urlsplit(nxt).scheme not in ("http", "https"):
                        return None  # a robots.txt that redirects off the web has no rules for us
                    if not self.policy.allow_private:
                        check_host_allowed(urlsplit(nxt).hostname or "", self.policy.allow_networks)
                    url = nxt
                    continue
                if 400 <= resp.status_code < 500:
                    return None  # RFC 9309: "unavailable" -> no restrictions
                if resp.status_code >= 500:
                    raise RetryableError(f"robots.txt of {host} could not be read (HTTP {resp.status_code}); the "
                                         "robots standard says not to fetch until it can be; try again later")
                if not 200 <= resp.status_code < 300:
                    return None
                try:
                    body = _read_limited(resp, ROBOTS_MAX_BYTES, url, self.deadline, "robots.txt")
                except PermanentError:
                    return None  # an oversized robots.txt is treated as absent rather than blocking
                except httpx.HTTPError as exc:
                    raise RetryableError(f"robots.txt of {host} could not be read ({exc}); try again later") \
                        from exc
            finally:
                resp.close()
            parser = robotparser.RobotFileParser(url)
            parser.parse(body.decode("utf-8", "replace").splitlines())
            return parser
        return None  # RFC 9309: too many redirects -> treat as unavailable

    def check(self, url: str) -> None:
        """Raise ``PermanentError`` when robots.txt of ``url``'s site disallows it for our user agent."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self.rules:
            self.rules[origin] = self._load(origin)
        rules = self.rules[origin]
        if rules is not None and not rules.can_fetch(self.policy.user_agent, url):
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            agent = self.policy.user_agent.split("/")[0]
            raise PermanentError(f"robots.txt of {parts.hostname} disallows fetching {path} for {agent}")


def _timeout(policy: FetchPolicy) -> httpx.Timeout:
    return httpx.Timeout(policy.timeout_s, connect=policy.connect_timeout_s)


def fetch(url: str, policy: FetchPolicy, *, client: httpx.Client | None = None) -> Fetched:
    """Download ``url`` under ``policy``: robots.txt, redirects, size, time and content-type limits.

    Raises ``PermanentError`` when the URL cannot be ingested (bad scheme, 4xx, wrong content
    type, too large, disallowed) and ``RetryableError`` when it may work later (timeouts,
    connection failures, 5xx, 429).
    """
    requested = validate_url(url)
    own_client = client is None
    http = client if client is not None else httpx.Client(
        timeout=_timeout(policy), follow_redirects=False,
        transport=None if policy.allow_private else guarded_transport(policy.allow_networks))
    try:
        return _fetch(requested, policy, http)
    finally:
        if own_client:
            http.close()


def _fetch(requested: str, policy: FetchPolicy, client: httpx.Client) -> Fetched:
    deadline = _Deadline(policy.total_timeout_s)
    robots = _Robots(client, policy, deadline)
    redirects: list[str] = []
    current = requested
    while True:
        host = urlsplit(current).hostname or ""
        if not policy.allow_private:
            check_host_allowed(host, policy.allow_networks)
        if policy.respect_robots:
            robots.check(current)
        deadline.check(current)
        req = client.build_request("GET", current, headers={"User-Agent": policy.user_agent, "Accept": ACCEPT},
                                   timeout=_timeout(policy))
        try:
            resp = client.send(req, stream=True, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise _transport_error(exc, current, policy) from exc
        try:
            status = resp.status_code
            if status in _REDIRECTS:
                location = resp.headers.get("location")
                if not location:
                    raise PermanentError(f"the site answered a redirect without a target (HTTP {status}): {current}")
                redirects.append(current)
                if len(redirects) > policy.max_redirects:
                    raise PermanentError(f"too many redirects (more than {policy.max_redirects}) starting at "
                                         f"{requested}")
                nxt = urljoin(current, location.strip())
                if urlsplit(nxt).scheme.lower() not in ("http", "https"):
                    raise PermanentError(f"{current} redirected to {nxt!r}: only http and https URLs can be fetched")
                current = validate_url(nxt)
                continue
            if not 200 <= status < 300:
                raise _status_error(status, current)
            if status == 204:
                raise PermanentError(f"the site returned no content (HTTP 204) for {current}")
            header_type = resp.headers.get("content-type", "")
            media, charset = _media_type(header_type)
            if media and media not in policy.allowed_content_types:
                raise PermanentError(f"the URL returned {media}; only web pages (HTML), text and PDF can be "
                                     "ingested from a URL")
            declared = resp.headers.get("content-length", "")
            if declared.strip().isdigit() and int(declared) > policy.max_bytes:
                raise PermanentError(f"the page is larger than {_format_mib(policy.max_bytes)} (the server says "
                                     f"{int(declared)} bytes), the most that is fetched: {current}")
            fetched_at = datetime.now(UTC)
            try:
                body = _read_limited(resp, policy.max_bytes, current, deadline, "the page")
            except httpx.HTTPError as exc:
                raise _transport_error(exc, current, policy) from exc
            if not media:
                media = _sniff(body)
                if media not in policy.allowed_content_types:
                    raise PermanentError(f"the URL returned {media}; only web pages (HTML), text and PDF can be "
                                         "ingested from a URL")
            kept = {k: resp.headers[k] for k in KEPT_HEADERS if k in resp.headers}
            return Fetched(url=current, requested_url=requested, status=status, content_type=media,
                           charset=charset, body=body, fetched_at=fetched_at, redirects=redirects, headers=kept)
        finally:
            resp.close()
