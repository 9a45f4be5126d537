"""What every HTTP request passes before any route runs: a bounded head, a known Host, a same-site origin.

Loopback is not a trust boundary: a web page the person visits can reach ``127.0.0.1`` too, by
DNS rebinding (a name of the attacker's that resolves to 127.0.0.1, sent in ``Host``) or with a
plain cross-site form.  So, on every service:

* **Host allowlist.**  A ``Host`` that is a DNS name must be ``localhost`` or one of
  ``SB_ALLOWED_HOSTS`` (a leading dot allows subdomains); IP literals pass (a rebinding attack
  needs a name, and probes and direct access by address keep working).  Others get 400.
* **Cross-site writes refused.**  A POST/PUT/PATCH/DELETE whose ``Origin`` (or, without one,
  ``Referer``) is not the server's own origin or one of ``SB_ALLOWED_ORIGINS`` gets 403.
  Requests without either (scripts, the CLI) are judged by their credentials alone.  A browser
  extension's origin (``chrome-extension://``, ``moz-extension://``...) passes only with an
  ``Authorization`` header: no web page can send that origin, and a key in a header, unlike a
  cookie, is never added by the browser on anyone's behalf.  A route the
  browser or the phone opens as a page (``navigation_paths``: a share to the installed app) may come
  with ``Origin: null`` (the system started it, or a page sending no referrer did): it passes only
  when ``Sec-Fetch-Site``, which no page can set, says the browser itself (``none``) or this origin
  (``same-origin``) started it.
* **Bounded head.**  The request line and headers together over ``SB_MAX_HEADER_BYTES``
  get 431; a NUL in the path or query (never valid, and not storable) gets 400.
* **Bounded body.**  Every route has a body limit (:class:`BodyLimit`: JSON routes a few MB, uploads
  ``SB_MAX_UPLOAD_BYTES``).  A ``Content-Length`` over it gets 413 before a byte of the body is read;
  a chunked body is read only up to the limit, then refused with 413, so nothing over the limit is
  ever held or parsed.  Uploads (``streamed``) are counted as their route reads them, never buffered.

A pure ASGI middleware: it costs a few microseconds a request (see the security page of the
documentation); it reads a body only when it arrives chunked (without ``Content-Length``) for a route
that parses it whole anyway, up to that route's limit.
"""

from __future__ import annotations

import functools
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Origins only a browser extension can have (a web page cannot claim them).
EXTENSION_SCHEMES = frozenset({"chrome-extension", "moz-extension", "safari-web-extension"})
ECHO_LIMIT = 64  # characters of a client's input repeated in an error message, at most


def split_host(value: str) -> tuple[str, int | None]:
    """``host[:port]`` (IPv6 in brackets) as (lower-case host without brackets, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = value.partition(":") if value.count(":") == 1 else (value, "", "")
    return host.rstrip("."), int(port) if port.isdigit() else None


@functools.lru_cache(maxsize=1024)
def is_ip_literal(host: str) -> bool:
    """Whether ``host`` is an IPv4 or IPv6 address (not a name)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """An IP literal, ``localhost``, or a configured name (``.example.org`` also allows subdomains)."""
    if not host or is_ip_literal(host) or host == "localhost":
        return True
    for name in allowed:
        name = name.strip().lower().rstrip(".")
        if not name:
            continue
        if name == "*" or host == name or (name.startswith(".") and (host.endswith(name) or host == name[1:])):
            return True
    return False


@functools.lru_cache(maxsize=1024)  # a handful of distinct origins and hosts reach one server
def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL (default ports dropped), or None when it has none."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not parts.scheme or not host:
        return None
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port and port != default else "")


def short(value: object, limit: int = ECHO_LIMIT) -> str:
    """A client's value as it may be repeated back: at most ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


@dataclass(frozen=True)
class BodyLimit:
    """How large a route's request body may be, and the 413 sentence past it.  ``streamed``: the route
    reads the body as it arrives (uploads), so it is counted on the way, not gathered first."""

    max_bytes: int
    refusal: str
    streamed: bool = False


class BodyTooLarge(Exception):
    """Raised from ``receive`` when a streamed body passes its limit (the app answers 413)."""

    def __init__(self, limit: BodyLimit) -> None:
        super().__init__(limit.refusal)
        self.limit = limit


# Ample for any JSON request but a note; the app passes its own limits (SB_MAX_JSON_BYTES).
DEFAULT_BODY_LIMIT = BodyLimit(2 * 1024 * 1024, "the request body is over the 2097152-byte limit")


class SecurityMiddleware:
    """Host allowlist, cross-site write refusal, head and body limits (see the module doc).

    ``body_limit(method, path)`` says how large a request's body may be; ``navigation_paths`` are the
    routes that take ``Origin: null`` from a navigation the browser itself or this origin started."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (),
                 max_head_bytes: int = 32 * 1024,
                 body_limit: Callable[[str, str], BodyLimit] | None = None,
                 navigation_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.navigation_paths = frozenset(navigation_paths)
        self.allowed_hosts = tuple(h.strip().lower() for h in allowed_hosts if h.strip())
        self.allowed_origins = frozenset(o for o in (origin_of(x) for x in allowed_origins) if o)
        self.max_head_bytes = max_head_bytes
        self.body_limit = body_limit or (lambda _method, _path: DEFAULT_BODY_LIMIT)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.check(scope)
        if refusal is not None:
            await refuse(send, *refusal)
            return
        limit = self.body_limit(scope.get("method", "GET").upper(), scope.get("path", ""))
        declared: int | None = None
        chunked = False
        for k, v in scope.get("headers") or []:
            if k == b"content-length" and v.strip().isdigit():
                declared = int(v)
            elif k == b"transfer-encoding" and b"chunked" in v.lower():
                chunked = True
        if declared is not None and declared > limit.max_bytes:
            await refuse(send, 413, limit.refusal)  # before a byte of it is read
            return
        if not chunked:
            # No body, or one of a declared size within the limit (the HTTP layer delivers no more).
            await self.app(scope, receive, send)
        elif limit.streamed:
            await self.app(scope, counted(receive, limit), send)
        else:
            gathered = await gather_body(receive, limit.max_bytes)
            if gathered is None:
                await refuse(send, 413, limit.refusal)
                return
            await self.app(scope, replay(gathered, receive), send)

    def check(self, scope: Scope) -> tuple[int, str] | None:
        """The refusal (status, sentence) for a request, or None when it may go on."""
        headers: list[tuple[bytes, bytes]] = scope.get("headers") or []
        raw_path: bytes = scope.get("raw_path") or scope.get("path", "").encode()
        query: bytes = scope.get("query_string") or b""
        size = len(scope.get("method", "")) + len(raw_path) + len(query) + 12 \
            + sum(len(k) + len(v) + 4 for k, v in headers)
        if size > self.max_head_bytes:
            return 431, (f"the request line and headers are {size} bytes; the limit is {self.max_head_bytes}. "
                         "Send less (large values belong in the body).")
        if b"%00" in raw_path or b"%00" in query or b"\x00" in raw_path or "\x00" in scope.get("path", ""):
            return 400, "the address contains a NUL character, which is never valid; remove it"
        found: dict[bytes, bytes] = {}
        for k, v in headers:
            if k in (b"host", b"origin", b"referer", b"authorization", b"sec-fetch-site") and k not in found:
                found[k] = v
        host_header = found.get(b"host", b"").decode("latin-1")
        host, _port = split_host(host_header)
        if not host_allowed(host, self.allowed_hosts):
            return 400, (f"this server does not answer to the name {short(host)!r}: only to its IP address, "
                         "'localhost' and the names its operator lists in SB_ALLOWED_HOSTS")
        if scope.get("method", "GET").upper() not in UNSAFE_METHODS:
            return None
        origin = found.get(b"origin", b"").decode("latin-1").strip()
        source = "Origin"
        if not origin:
            referer = found.get(b"referer", b"").decode("latin-1").strip()
            if not referer:
                return None  # not sent by a browser on a page: credentials alone decide
            origin, source = origin_of(referer) or "null", "Referer"
        scheme = scope.get("scheme", "http")
        own = origin_of(f"{scheme}://{host_header}") if host_header else None
        claimed = origin_of(origin) if origin != "null" else None
        if claimed is not None and (claimed == own or claimed in self.allowed_origins):
            return None
        if claimed is not None and claimed.split("://", 1)[0] in EXTENSION_SCHEMES:
            if found.get(b"authorization", b"").strip().lower().startswith(b"bearer "):
                return None  # the key decides, as for a script
            return 403, ("a browser extension must send its API key in an 'Authorization: Bearer <key>' header; "
                         "requests from an extension that rely on the page's sign-in cookie are refused")
        if origin == "null" and source == "Origin" and scope.get("path", "") in self.navigation_paths \
                and found.get(b"sec-fetch-site", b"").strip().lower() in (b"none", b"same-origin"):
            return None  # a share from the phone's share sheet, or this origin's own form
        return 403, (f"cross-site request refused: it comes from {short(origin)!r} ({source} header), not from "
                     "this server's own pages. Use the API from a script or the CLI, or ask the operator to list "
                     "that origin in SB_ALLOWED_ORIGINS.")


class OnlyAuthority:
    """A listener that answers to one ``host:port`` only (``up --lan``'s address on the local network).

    Every device on the network reaches that listener, so the Host rule there is exact rather than
    "any IP address": a request naming anything else (another address, a name, the loopback one) gets
    421 before any route runs.  The Origin rule needs no change: the page's own origin there is
    ``https://<address>:<port>``, and any other is refused by :class:`SecurityMiddleware` as usual."""

    def __init__(self, app: ASGIApp, host: str, port: int) -> None:
        self.app = app
        self.host = host.lower()
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            value = next((v for k, v in scope.get("headers") or [] if k == b"host"), b"").decode("latin-1")
            host, port = split_host(value)
            if host != self.host or (port or 443) != self.port:  # browsers leave out the default port
                await refuse(send, 421, f"this address answers only to {self.host}:{self.port}, not to "
                                        f"{short(value)!r}; open https://{self.host}:{self.port}/")
                return
        await self.app(scope, receive, send)


async def refuse(send: Send, status: int, message: str) -> None:
    """Answer ``status`` with ``{"detail": message}`` and close the connection (what was not read of
    the request is never read)."""
    body = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


async def gather_body(receive: Receive, max_bytes: int) -> bytes | None:
    """The whole body, or ``None`` as soon as it passes ``max_bytes`` (the rest is left unread)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return b"".join(parts)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the app: the gathered body in one message, then the connection's own messages
    (a disconnect while a response streams)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def counted(receive: Receive, limit: BodyLimit) -> Receive:
    """``receive`` that raises :class:`BodyTooLarge` once the body read so far passes the limit."""
    size = 0

    async def reading() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit.max_bytes:
                raise BodyTooLarge(limit)
        return message

    return reading
