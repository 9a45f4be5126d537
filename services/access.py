"""Who an HTTP request acts for, and what it may do: the sign-in dependencies every route uses.

The app factory keeps the process's :class:`~secondbrain.runtime.Runtime` on ``app.state.runtime``;
these dependencies read it from the request, so a route names what it needs in its signature.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request

from secondbrain import telemetry
from secondbrain.ports import Principal, RequestAuth
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings

SESSION_COOKIE = "sb_session"  # the web page's sign-in (services.web.session)

# What a capture key may do: add, and follow what it added (a job's id is known only to whoever submitted it).
CAPTURE_WRITES = frozenset({"/v1/notes", "/v1/artifacts", "/v1/urls", "/v1/pages"})
CAPTURE_READS = re.compile(r"/v1/me|/v1/jobs/[^/]+(?:/stream)?")

# Captures: their own per-minute budget (an import sends thousands; what keeps a flood in check is the backlog
# limit, which makes it wait for its own work).  Fetching a link stays with the stricter limit: it makes the
# server fetch.
UPLOADS = frozenset({"/v1/notes", "/v1/artifacts", "/v1/pages", "/v1/imports", "/v1/imports/batch"})

# Reads that cost like writes (they embed, search and may call the model): the stricter limit.
HEAVY_READS = ("/v1/search", "/v1/ask", "/v1/timeline", "/v1/export", "/v1/agenda", "/v1/digest")

# Each per-minute budget: the setting holding its limit, and what it counts, as a 429 says it.
BUDGETS: dict[str, tuple[str, str]] = {
    "upload": ("upload_rate_limit_per_minute", "captures (notes, files, pages, imports)"),
    "act": ("rate_limit_per_minute", "deletions, link fetches, searches and questions"),
    "read": ("read_rate_limit_per_minute", "requests"),
}


def capture_allowed(method: str, path: str) -> bool:
    """Whether a capture key may make this request."""
    if method == "POST":
        return path in CAPTURE_WRITES
    return method == "GET" and CAPTURE_READS.fullmatch(path) is not None


def key_advice(settings: Settings) -> str:
    """What to do about a key that was not accepted: where a good one is (``secondbrain keys create``
    needs the database and ``--user``, so it is not the advice for a person at the page or the CLI)."""
    if settings.mode == "embedded":
        return (f"this computer's key is in {settings.data_dir / 'api-key'} (written by `secondbrain up`); the "
                "web page also signs in with the link `secondbrain open` prints, and its Settings make new keys")
    return ("ask the person who runs secondbrain for a key (signed in, the web page's Settings make new ones)")


def key_help(settings: Settings) -> str:
    """The 401 sentence: where the key is, and how the web page signs in."""
    if settings.mode == "embedded":
        return ("an API key is required: send 'Authorization: Bearer <key>'. `secondbrain up` saved this "
                f"machine's key in {settings.data_dir / 'api-key'} (the CLI reads it from there); the web page "
                "signs in with the link `secondbrain up` prints, or run `secondbrain open` for a new one")
    return ("an API key is required: send 'Authorization: Bearer <key>' (an administrator creates one with "
            "`secondbrain keys create --user <id>`)")


def request_runtime(request: Request) -> Runtime:
    """The process's runtime, kept on the app by its factory."""
    rt: Runtime = request.app.state.runtime
    return rt


async def current_principal(request: Request,
                            authorization: Annotated[str | None, Header()] = None) -> Principal:
    """Who a request acts for: the owner of its bearer key, or of the web page's session cookie.
    Only with ``SB_AUTH=off`` (tests, loopback only) does a request without either act as the
    default user.  Counts the request against the user's per-minute limit (in the same round trip
    as the key lookup) and leaves the user's backlog in ``request.state.pending``."""
    settings = request_runtime(request).settings
    upload = request.method == "POST" and request.url.path in UPLOADS
    heavy = not upload and (request.method != "GET" or request.url.path.startswith(HEAVY_READS))
    bucket = "upload" if upload else "act" if heavy else "read"
    checked = await _check(request, authorization, bucket)
    principal = checked.principal
    if principal.scope == "producer":
        raise HTTPException(403, "this is a producer key: it can only sign events published to Kafka; "
                                 "use a user key for the HTTP API")
    if principal.scope == "capture" and not capture_allowed(request.method, request.url.path):
        raise HTTPException(403, "this is a capture key (a browser extension's): it can only add notes, "
                                 "files, pages and links and follow their progress; use a user key to read")
    telemetry.set_user(principal.user_id)  # on the request's span, hashed
    request.state.pending = checked.pending
    request.state.principal = principal  # what the key may see of a job (a capture key: only its own)
    field, what = BUDGETS[bucket]
    limit: int = getattr(settings, field)
    if 0 < limit < checked.hits:
        wait = max(1, 60 - int(time.time()) % 60)
        raise HTTPException(429, f"too many requests: your account may make {limit} {what} a minute. "
                                 f"Try again in {wait} s, or ask the operator to raise SB_{field.upper()}.",
                            headers={"Retry-After": str(wait)})
    return principal


async def _check(request: Request, authorization: str | None, bucket: str) -> RequestAuth:
    rt = request_runtime(request)
    settings = rt.settings
    required = settings.auth_required()
    counts = rt.metadata.rate_counts
    if authorization:
        scheme, _, key = authorization.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise HTTPException(401, "use an 'Authorization: Bearer <API key>' header",
                                headers={"WWW-Authenticate": "Bearer"})
        found = await asyncio.to_thread(functools.partial(counts.authenticate_request, key=key.strip(),
                                                          bucket=bucket, window_s=60))
        if found is None:
            raise HTTPException(401, f"unknown or revoked API key; {key_advice(settings)}",
                                headers={"WWW-Authenticate": "Bearer"})
        return found
    session = request.cookies.get(SESSION_COOKIE)
    if session:
        found = await asyncio.to_thread(functools.partial(counts.authenticate_request, session=session,
                                                          bucket=bucket, window_s=60))
        if found is not None:
            return found
        if required:
            raise HTTPException(401, "your sign-in has ended (signed out, expired or its key was revoked); "
                                     "sign in again", headers={"WWW-Authenticate": "Bearer"})
    if required:
        raise HTTPException(401, key_help(settings), headers={"WWW-Authenticate": "Bearer"})
    # SB_AUTH=off (tests on loopback): the default user, counted like anyone else.
    user = settings.default_user
    hits = await asyncio.to_thread(counts.count_request, user, bucket, 60)
    pending = await asyncio.to_thread(rt.metadata.jobs.pending_jobs, user)
    return RequestAuth(Principal(user_id=user, key_id=None, scope="admin"), hits, pending)


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]


async def current_user(principal: CurrentPrincipal) -> str:
    """The user id a request acts for (see ``current_principal``)."""
    return principal.user_id


async def admin_user(principal: CurrentPrincipal) -> Principal:
    """Only admin keys (or the local user of a loopback-only server) manage users and keys."""
    if principal.scope != "admin":
        raise HTTPException(403, "this needs an admin key (`secondbrain keys create --user <id> --scope admin`)")
    return principal


CurrentUser = Annotated[str, Depends(current_user)]
AdminUser = Annotated[Principal, Depends(admin_user)]
