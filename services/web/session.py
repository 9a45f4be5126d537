"""Signing the web page in: a one-time link or a key, exchanged for an HttpOnly session cookie.

``secondbrain up`` (and ``secondbrain open``) print ``http://127.0.0.1:8000/?token=...``: the page
posts the token here once, gets a session cookie and removes the token from the address bar (the
pattern Jupyter uses).  A pasted key is exchanged the same way, so the page never keeps a key in
the browser's storage.  The cookie is ``HttpOnly`` and ``SameSite=Strict`` (no other site can send
it), ``Secure`` off loopback; the session ends with its key, on sign-out, or when it expires.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Request, Response
from pydantic import BaseModel, Field

from secondbrain.http_security import split_host
from secondbrain.infra.ports import is_loopback
from secondbrain.validation import Text
from services.access import SESSION_COOKIE, key_advice
from services.web.deps import CurrentPrincipal, MetadataDep, SettingsDep

LINK_TTL_S = 24 * 3600  # a printed link works once, within a day
BROWSER_SESSION_S = 24 * 3600  # without "remember me": until the browser closes, at most a day


class SessionIn(BaseModel):
    """How to sign in: a one-time token from a sign-in link (or a key in the Authorization header)."""

    token: Text | None = Field(None, max_length=200, description="The token of a sign-in link (?token=...).")
    remember: bool = Field(False, description="Stay signed in on this browser (SB_SESSION_DAYS) instead of "
                                              "until it closes.")


def secure_cookie(request: Request) -> bool:
    """Cookies are ``Secure`` unless the page was reached on this machine (plain http on loopback)."""
    host, _ = split_host(request.headers.get("host", ""))
    return request.url.scheme == "https" or not is_loopback(host or "127.0.0.1")


router = APIRouter(tags=["web sign-in"])


@router.post("/v1/session", summary="Sign the web page in with a one-time link's token or a key")
async def sign_in(body: SessionIn, request: Request, response: Response, store: MetadataDep,
                  settings: SettingsDep, authorization: Annotated[str | None, Header()] = None) -> dict[str, Any]:
    key = None
    if authorization:
        scheme, _, value = authorization.partition(" ")
        key = value.strip() if scheme.lower() == "bearer" else None
    if not key and not body.token:
        raise HTTPException(422, "send the token of a sign-in link, or your key as 'Authorization: Bearer <key>'")
    ttl = settings.session_days * 86400 if body.remember else BROWSER_SESSION_S
    opened = await asyncio.to_thread(store.sessions.open_session, key_secret=key or None,
                                     link_token=None if key else body.token, ttl_s=ttl)
    if opened is None:
        what = "key" if key else "sign-in link"
        advice = (key_advice(settings) if key else
                  "links work once and for a day: run `secondbrain open` for a new one")
        raise HTTPException(401, f"that {what} was not accepted (unknown, used, expired or revoked); {advice}")
    secret, principal = opened
    response.set_cookie(SESSION_COOKIE, secret, max_age=ttl if body.remember else None, path="/",
                        httponly=True, samesite="strict", secure=secure_cookie(request))
    return {"user_id": principal.user_id, "key_id": principal.key_id, "scope": principal.scope}


@router.delete("/v1/session", status_code=204, summary="Sign the web page out")
async def sign_out(request: Request, store: MetadataDep) -> Response:
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        await asyncio.to_thread(store.sessions.close_session, secret)
    out = Response(status_code=204)
    out.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure_cookie(request))
    return out


@router.post("/v1/login-links", status_code=201, summary="A one-time sign-in link for the web page")
async def login_link(principal: CurrentPrincipal, store: MetadataDep, request: Request,
                     settings: SettingsDep) -> dict[str, Any]:
    if principal.key_id is None:
        raise HTTPException(409, "sign-in links act as a key; this request carried none")
    try:
        token = await asyncio.to_thread(store.sessions.create_login_link, principal.key_id, LINK_TTL_S)
    except KeyError:
        raise HTTPException(401, "the key was revoked meanwhile") from None
    return {"path": f"/?token={token}", "token": token, "expires_in_s": LINK_TTL_S,
            # The whole link at the server's public address (SB_PUBLIC_URL), where a phone reaches it.
            "public_url": f"{settings.public_url}/?token={token}" if settings.public_url else None,
            "note": "works once, within a day; open it in the browser that should be signed in"}

