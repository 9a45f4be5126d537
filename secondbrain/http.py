"""The HTTP application: gateway and/or query routes plus health endpoints."""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Header, HTTPException
from fastapi.responses import JSONResponse

from secondbrain import __version__
from secondbrain.runtime import Runtime


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

    required = rt.settings.auth_required()

    async def current_user(authorization: Annotated[str | None, Header()] = None) -> str:
        """The user a request acts as: the owner of its bearer key.  Without a key only a
        loopback-only server (``SB_AUTH=auto``) lets it act as the default local user."""
        if authorization:
            scheme, _, key = authorization.partition(" ")
            if scheme.lower() != "bearer" or not key.strip():
                raise HTTPException(401, "use an 'Authorization: Bearer <API key>' header",
                                    headers={"WWW-Authenticate": "Bearer"})
            user = await asyncio.to_thread(rt.metadata.authenticate, key.strip())
            if user is None:
                raise HTTPException(401, "unknown or revoked API key; create one with `secondbrain keys create`",
                                    headers={"WWW-Authenticate": "Bearer"})
            return user
        if required:
            raise HTTPException(401, "an API key is required: send 'Authorization: Bearer <key>' "
                                     "(create one with `secondbrain keys create --user <id>`)",
                                headers={"WWW-Authenticate": "Bearer"})
        return rt.settings.default_user

    if gateway:
        from services.ingest_gateway.api import create_router as gateway_router

        app.include_router(gateway_router(rt, relay, current_user))
    if query:
        from services.query.api import create_router as query_router

        app.include_router(query_router(rt, current_user, llm=rt.llm))

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
        if rt.vectors is not None:
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

    return app
