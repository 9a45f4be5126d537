"""The HTTP application: gateway and/or query routes plus health endpoints."""

from __future__ import annotations

import asyncio
import functools
import socket
import time
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import JSONResponse

from secondbrain import __version__, telemetry
from secondbrain.ports import Principal
from secondbrain.runtime import Runtime
from services.ingest_gateway.admin_api import create_router as admin_router

# Reads that cost like writes (they embed, search and may call the model): the stricter limit.
HEAVY_READS = ("/v1/search", "/v1/ask", "/v1/timeline", "/v1/export")


def kafka_reachable(bootstrap: str, timeout_s: float = 1.0) -> None:
    """Raise unless one of the bootstrap brokers accepts a TCP connection."""
    errors = []
    for hostport in bootstrap.split(","):
        host, _, port = hostport.strip().rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
                return
        except OSError as exc:
            errors.append(f"{hostport}: {exc}")
    raise ConnectionError("; ".join(errors))


def llm_reachable(base_url: str, timeout_s: float = 2.0) -> None:
    """Raise unless the OpenAI-compatible endpoint answers (any HTTP status means it is up)."""
    import httpx

    try:
        httpx.get(base_url.rstrip("/") + "/models", timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise ConnectionError(f"{base_url}: {exc}") from None


def create_app(rt: Runtime, *, gateway: bool, query: bool, relay: Any = None,
               liveness: Callable[[], str | None] | None = None) -> FastAPI:
    """Build the FastAPI app for a process.

    ``liveness`` returns a reason when the process should be restarted (e.g. a stage that
    stopped consuming), or ``None`` when all is well.
    """
    app = FastAPI(title="secondbrain", version=__version__)

    settings = rt.settings
    required = settings.auth_required()

    async def current_principal(request: Request,
                                authorization: Annotated[str | None, Header()] = None) -> Principal:
        """Who a request acts for: the owner of its bearer key.  Without a key only a loopback-only
        server (``SB_AUTH=auto``) lets it act as the default local user (with admin rights: whoever
        can reach loopback can read the data directory anyway).  Counts the request against the
        user's per-minute limit."""
        principal = await _principal(authorization)
        if principal.scope == "producer":
            raise HTTPException(403, "this is a producer key: it can only sign events published to Kafka; "
                                     "use a user key for the HTTP API")
        telemetry.set_user(principal.user_id)  # on the request's span, hashed
        await _count(principal.user_id, request)
        return principal

    async def _principal(authorization: str | None) -> Principal:
        if authorization:
            scheme, _, key = authorization.partition(" ")
            if scheme.lower() != "bearer" or not key.strip():
                raise HTTPException(401, "use an 'Authorization: Bearer <API key>' header",
                                    headers={"WWW-Authenticate": "Bearer"})
            principal = await asyncio.to_thread(rt.metadata.authenticate, key.strip())
            if principal is None:
                raise HTTPException(401, "unknown or revoked API key; create one with `secondbrain keys create`",
                                    headers={"WWW-Authenticate": "Bearer"})
            return principal
        if required:
            raise HTTPException(401, "an API key is required: send 'Authorization: Bearer <key>' "
                                     "(create one with `secondbrain keys create --user <id>`)",
                                headers={"WWW-Authenticate": "Bearer"})
        return Principal(user_id=settings.default_user, key_id=None, scope="admin")

    async def _count(user_id: str, request: Request) -> None:
        """Fixed one-minute windows per user, shared by every replica through Postgres."""
        heavy = request.method != "GET" or request.url.path.startswith(HEAVY_READS)
        limit = settings.rate_limit_per_minute if heavy else settings.read_rate_limit_per_minute
        if limit <= 0:
            return
        hits = await asyncio.to_thread(rt.metadata.count_request, user_id, "act" if heavy else "read", 60)
        if hits > limit:
            wait = max(1, 60 - int(time.time()) % 60)
            what = "submissions, deletions, searches and questions" if heavy else "requests"
            setting = "SB_RATE_LIMIT_PER_MINUTE" if heavy else "SB_READ_RATE_LIMIT_PER_MINUTE"
            raise HTTPException(429, f"too many requests: your account may make {limit} {what} a minute. "
                                     f"Try again in {wait} s, or ask the operator to raise {setting}.",
                                headers={"Retry-After": str(wait)})

    caller = Depends(current_principal)

    async def current_user(principal: Principal = caller) -> str:
        """The user id a request acts for (see ``current_principal``)."""
        return principal.user_id

    async def admin_user(principal: Principal = caller) -> Principal:
        """Only admin keys (or the local user of a loopback-only server) manage users and keys."""
        if principal.scope != "admin":
            raise HTTPException(403, "this needs an admin key (`secondbrain keys create --user <id> --scope admin`)")
        return principal

    @app.middleware("http")
    async def header_limit(request: Request, call_next: Any) -> Any:
        """Refuse oversized request heads with 431 (the protocol layer drops far larger ones)."""
        size = sum(len(k) + len(v) + 4 for k, v in request.scope.get("headers", ()))
        if size > settings.max_header_bytes:
            return JSONResponse({"detail": f"the request headers are {size} bytes; the limit is "
                                           f"{settings.max_header_bytes}. Send less (large values belong "
                                           "in the body)."}, status_code=431)
        return await call_next(request)

    app.include_router(admin_router(rt, current_principal, admin_user))

    if gateway:
        from services.ingest_gateway.api import create_router as gateway_router

        app.include_router(gateway_router(rt, relay, current_user))
        from services.ingest_gateway.lifecycle_api import create_router as lifecycle_router

        app.include_router(lifecycle_router(rt, current_user))
    if query:
        from services.query.api import create_router as query_router

        app.include_router(query_router(rt, current_user, llm=rt.llm))
    if gateway or query:  # the web app: static files calling the API on the same origin
        from services.web import create_router as web_router

        app.include_router(web_router())

    @app.get("/healthz", tags=["health"], summary="Liveness: the process is alive and working")
    async def healthz() -> JSONResponse:
        reason = liveness() if liveness else None
        if reason:
            return JSONResponse({"status": "failing", "reason": reason}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/readyz", tags=["health"], summary="Readiness: every dependency answers")
    async def readyz() -> JSONResponse:
        checks: dict[str, Callable[[], None]] = {
            "postgres": rt.metadata.check,
            "object_store": rt.objects.check,
            "kafka": lambda: kafka_reachable(rt.settings.kafka_bootstrap),
        }
        # A gateway on its own keeps accepting work while the vector store is down (only deleting
        # and exporting need it), so the vector store does not decide its readiness.
        if rt.vectors is not None and (query or not gateway):
            checks["vector_store"] = rt.vectors.check
        if query and rt.llm is not None and rt.settings.llm_base_url:
            checks["llm"] = functools.partial(llm_reachable, rt.settings.llm_base_url)
        results: dict[str, Any] = {}
        for name, fn in checks.items():
            try:
                await asyncio.wait_for(asyncio.to_thread(fn), timeout=3.0)
                results[name] = "ok"
            except Exception as exc:
                results[name] = f"error: {type(exc).__name__}: {exc}"[:300]
        if relay is not None:
            results["outbox_relay"] = "ok" if relay.last_error is None else f"retrying: {relay.last_error}"[:300]
        ready = all(v == "ok" for k, v in results.items() if k != "outbox_relay")
        return JSONResponse({"status": "ready" if ready else "not ready", "checks": results},
                            status_code=200 if ready else 503)

    telemetry.instrument_app(app)  # request spans and http.server.request.duration, when telemetry is on
    return app
