"""The HTTP application: gateway and/or query routes plus health endpoints."""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from secondbrain import __version__, telemetry
from secondbrain.http_security import BodyLimit, BodyTooLarge, SecurityMiddleware, short
from secondbrain.ports import IdempotencyConflict, UnknownUser
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.access import current_principal
from services.deps import RuntimeDep
from services.ingest_gateway.admin_api import router as admin_router

if TYPE_CHECKING:
    from services.query.answerer import Answerer

ERASED_MEANWHILE = ("this account was erased while the request was under way; nothing was kept. An administrator "
                    "can create the user again.")


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


async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with what is wrong, repeating at most a short prefix of what was sent."""
    return JSONResponse({"detail": [_error_json(e) for e in exc.errors()]}, status_code=422)


async def body_too_large(_request: Request, exc: BodyTooLarge) -> JSONResponse:
    return JSONResponse({"detail": exc.limit.refusal}, status_code=413, headers={"Connection": "close"})


async def idempotency_conflict(_request: Request, exc: IdempotencyConflict) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=422)


async def user_erased(_request: Request, _exc: UnknownUser) -> JSONResponse:
    # A request that was under way while its account was erased: nothing of it was kept.
    return JSONResponse({"detail": ERASED_MEANWHILE}, status_code=410)


async def http_error(request: Request, exc: StarletteHTTPException) -> Any:
    if exc.status_code == 401 and request.url.path == "/share" \
            and request.headers.get("sec-fetch-mode") == "navigate":
        # The share sheet opened the app signed out: to the page (not a JSON error), which says to sign
        # in and share again.  Nothing of the share was read or kept.
        return RedirectResponse("/?share=signed-out", status_code=303)
    if isinstance(exc.__cause__, RecursionError):
        # FastAPI answers a body nested thousands of levels deep with "There was an error parsing the body".
        return JSONResponse({"detail": "the JSON body is nested too deeply; send a flat object"}, status_code=422)
    return await http_exception_handler(request, exc)


# What a refusal looks like, whichever route or dependency raised it.
EXCEPTION_HANDLERS: dict[Any, Callable[..., Any]] = {
    RequestValidationError: invalid_request, BodyTooLarge: body_too_large,
    IdempotencyConflict: idempotency_conflict, UnknownUser: user_erased, StarletteHTTPException: http_error,
}


health = APIRouter(tags=["health"])


@health.get("/healthz", summary="Liveness: the process is alive and working")
async def healthz(request: Request) -> JSONResponse:
    liveness = request.app.state.liveness
    reason = liveness() if liveness else None
    if reason:
        return JSONResponse({"status": "failing", "reason": reason}, status_code=503)
    return JSONResponse({"status": "ok"})


@health.get("/readyz", summary="Readiness: every dependency answers")
async def readyz(request: Request, rt: RuntimeDep) -> JSONResponse:
    state = request.app.state
    gateway, query, relay = state.serves_gateway, state.serves_query, state.relay
    checks: dict[str, Callable[[], None]] = {
        "postgres": rt.metadata.database.check,
        "object_store": rt.objects.check,
        "kafka": lambda: kafka_reachable(rt.settings.kafka_bootstrap),
    }
    # A gateway on its own keeps accepting work while the vector store is down (only deleting
    # and exporting need it), so the vector store does not decide its readiness.
    if rt.vectors is not None and (query or not gateway):
        checks["vector_store"] = rt.vectors.check
    llm_now = await asyncio.to_thread(state.answer_model.current) if query else None
    llm_url = getattr(llm_now, "base_url", None)
    if llm_url:
        checks["llm"] = functools.partial(llm_reachable, llm_url)
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


def create_app(rt: Runtime, *, gateway: bool, query: bool, relay: Any = None,
               liveness: Callable[[], str | None] | None = None, backups: Any = None) -> FastAPI:
    """Build the FastAPI app for a process.

    ``liveness`` returns a reason when the process should be restarted (e.g. a stage that
    stopped consuming), or ``None`` when all is well.
    """
    app = FastAPI(title="secondbrain", version=__version__, exception_handlers=EXCEPTION_HANDLERS)

    settings = rt.settings
    # What the routes' dependencies (services.deps and each service's deps) read.
    app.state.runtime = rt
    app.state.relay = relay
    app.state.liveness = liveness
    app.state.backups = backups  # `up`'s backups (services.backups); None where another process takes them
    app.state.serves_gateway, app.state.serves_query = gateway, query

    app.include_router(admin_router)
    from services.backups.api import router as backups_router

    app.include_router(backups_router)
    from services.query.answer_model import AnswerModel
    from services.query.settings_api import router as settings_router

    # The model answers come from: one an admin stored at run time, else the start-up one.
    answer_model = AnswerModel(rt.metadata.server_settings, rt.llm, settings)
    app.state.answer_model = answer_model
    app.include_router(settings_router)

    if gateway:
        _include_gateway(app)
    answerer = app.state.answerer = _include_query(app, rt, answer_model) if query else None
    if gateway or query:  # the web app: static files calling the API on the same origin
        from services.web import create_router as web_router
        from services.web.session import router as session_router

        app.include_router(web_router())
        app.include_router(session_router)

    if gateway or query:
        # The memory as MCP tools (services/mcp), for AI assistants.  The tools call this process's own
        # routes: all of them under `up`; in distributed mode, those of the service behind /mcp.  Where this
        # process answers questions, `ask` calls its answerer directly.
        _mount_mcp(app, current_principal, answerer)

    app.include_router(health)

    _add_middleware(app, settings)
    telemetry.instrument_app(app)  # request spans and http.server.request.duration, when telemetry is on
    return app


def _include_gateway(app: FastAPI) -> None:
    """The ingest gateway's routes: captures, sources, their lifecycle, dead letters and imports."""
    from services.ingest_gateway.api import router as gateway_router
    from services.ingest_gateway.deadletters_api import router as deadletters_router
    from services.ingest_gateway.lifecycle_api import router as lifecycle_router

    app.include_router(gateway_router)
    app.include_router(lifecycle_router)
    from services.ingest_gateway.sources_api import router as sources_router

    app.include_router(sources_router)
    app.include_router(deadletters_router)
    from services.importers.api import router as imports_router

    app.include_router(imports_router)


def _include_query(app: FastAPI, rt: Runtime, answer_model: Any) -> Answerer:
    """The query service's routes (search, ask, the agenda) and its answerer, returned."""
    from services.query.answerer import Answerer
    from services.query.api import router as query_router
    from services.query.question import warm_up

    warm_up()  # the question tagger loads now, so no first question waits for it
    answerer = Answerer.for_runtime(rt, llm=rt.llm, answer_model=answer_model)
    app.state.answerer = answerer
    app.include_router(query_router)
    from services.agenda import deps as agenda_deps
    from services.agenda.api import router as agenda_router

    app.state.agenda = agenda_deps.bind(rt)
    answerer.agenda = agenda_deps.lines(app.state.agenda)  # "what do I have next week?" from the agenda
    app.include_router(agenda_router)
    return answerer


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """CORS for the origins the operator lists, inside the security middleware that refuses a request before
    anything else sees it."""
    if settings.origins:  # other origins may call the API only when the operator lists them
        app.add_middleware(CORSMiddleware, allow_origins=settings.origins, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "X-Filename"],
                           allow_credentials=False)
    # Outermost: refused requests never reach a route (or CORS, or telemetry).
    app.add_middleware(SecurityMiddleware, allowed_hosts=settings.host_names,
                       allowed_origins=[*settings.origins, *settings.own_origins],
                       max_head_bytes=settings.max_header_bytes, body_limit=body_limits(settings),
                       navigation_paths=("/share",))


def _mount_mcp(app: FastAPI, current_principal: Callable[..., Any], answerer: Answerer | None = None) -> None:
    """``/mcp``: MCP's streamable HTTP transport.  A request is authenticated like any other (key, limits)
    before the MCP server sees it; each tool then calls this same app in-process with the request's own
    credentials, so it sees exactly what the caller's key sees.  ``ask`` calls ``answerer`` (when this
    process has one) for the user the request's credentials name, counted and limited as ``POST /v1/ask``."""
    from starlette.routing import Route

    from services.mcp.server import build

    ask_here = None if answerer is None else _asking_here(answerer, current_principal)
    server = build(_in_process_client(app), ask_here=ask_here)
    server.streamable_http_app()  # creates the session manager the route hands requests to
    # First, so no catch-all of the web app's answers for it; not in the OpenAPI document (it is not REST).
    app.router.routes.insert(0, Route("/mcp", McpEndpoint(server.session_manager, current_principal),
                                      methods=["GET", "POST", "DELETE"], include_in_schema=False))


def _in_process_client(app: FastAPI) -> Callable[[Any], Any]:
    """An MCP tool's HTTP client: this same app, in-process, with the MCP request's own credentials."""
    import contextlib

    import httpx

    @contextlib.asynccontextmanager
    async def client_for(ctx: Any) -> Any:
        request = ctx.request_context.request
        passed = {k: v for k, v in request.headers.items() if k in ("authorization", "cookie")}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1",
                                     headers=passed, timeout=httpx.Timeout(300.0)) as client:
            yield client

    return client_for


def _asking_here(answerer: Answerer, current_principal: Callable[..., Any]) -> Callable[[Any, dict[str, Any]], Any]:
    """The MCP ``ask`` tool's way to this process's answerer, for the MCP request's caller."""
    from pydantic import ValidationError

    from secondbrain.ports import UnknownUser
    from services.query.api import answer_events
    from services.query.params import AskIn

    async def ask_here(ctx: Any, body: dict[str, Any]) -> Any:
        request = ctx.request_context.request
        # As `POST /v1/ask` with the same credentials: authenticated, counted and limited (a heavy
        # request), then the body read, refused the same way (422, 403, 410) before anything streams.
        principal = await current_principal(request, request.headers.get("authorization"))
        try:
            asked = AskIn.model_validate(body)
        except ValidationError as exc:
            raise HTTPException(422, [_error_json({**e, "loc": ("body", *e["loc"])}) for e in exc.errors()]
                                ) from None
        try:
            return await answer_events(answerer, principal.user_id, asked)
        except UnknownUser:
            raise HTTPException(410, ERASED_MEANWHILE) from None

    return ask_here


class McpEndpoint:
    """The ``/mcp`` route: the caller authenticated first, then the request handed to the MCP session
    manager.  The app runs without a lifespan (uvicorn lifespan="off"): the manager's task group starts with
    the first MCP request and lives as long as the event loop."""

    def __init__(self, manager: Any, current_principal: Callable[..., Any]) -> None:
        self.manager = manager
        self.current_principal = current_principal
        self.ready: asyncio.Event | None = None
        self.task: asyncio.Task[None] | None = None

    async def ensure_started(self) -> None:
        if self.ready is None:
            ready = self.ready = asyncio.Event()

            async def run() -> None:
                async with self.manager.run():
                    ready.set()
                    await asyncio.Event().wait()

            self.task = asyncio.get_running_loop().create_task(run())
        await self.ready.wait()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import JSONResponse as PlainJSON

        request = Request(scope, receive)
        try:
            await self.current_principal(request, request.headers.get("authorization"))
        except HTTPException as exc:
            await PlainJSON({"detail": exc.detail}, status_code=exc.status_code,
                            headers=exc.headers)(scope, receive, send)
            return
        if request.method == "GET":
            # The tools answer each POST in full (stateless, JSON): there is no stream of server
            # messages to open, which MCP's spec lets a server say with 405.
            await PlainJSON({"detail": "this MCP endpoint takes POST requests (streamable HTTP, no "
                                       "server-sent stream)"}, status_code=405,
                            headers={"Allow": "POST, DELETE"})(scope, receive, send)
            return
        await self.ensure_started()
        await self.manager.handle_request(scope, receive, send)


def body_limits(settings: Settings) -> Callable[[str, str], BodyLimit]:
    """Each route's request body limit (checked before a route reads or parses anything): uploads stream
    up to ``SB_MAX_UPLOAD_BYTES``; a note or a page's text (and an MCP call, which may carry a note) up
    to what ``SB_MAX_NOTE_CHARS`` characters can take in JSON; every other body up to ``SB_MAX_JSON_BYTES``."""
    upload = BodyLimit(settings.max_upload_bytes + UPLOAD_FRAMING_BYTES,
                       f"the upload is over the {settings.max_upload_bytes}-byte limit (SB_MAX_UPLOAD_BYTES); "
                       "split the file or raise the limit.", streamed=True)
    note = BodyLimit(settings.max_note_body_bytes,
                     f"the request body is over the {settings.max_note_body_bytes}-byte limit for notes (room for "
                     f"{settings.max_note_chars} characters, SB_MAX_NOTE_CHARS); upload long text as a file "
                     "(POST /v1/artifacts) instead.")
    page = BodyLimit(settings.max_note_body_bytes,
                     f"the request body is over the {settings.max_note_body_bytes}-byte limit for a page's text "
                     f"(room for {settings.max_note_chars} characters, SB_MAX_NOTE_CHARS); save a selection of it "
                     "instead.")
    other = BodyLimit(settings.max_json_bytes,
                      f"the request body is over the {settings.max_json_bytes}-byte limit (SB_MAX_JSON_BYTES); "
                      "send less, or upload long text as a file (POST /v1/artifacts).")

    def limit(method: str, path: str) -> BodyLimit:
        if path in ("/v1/artifacts", "/v1/imports", "/v1/imports/batch", "/share"):  # streamed files
            return upload
        if path in ("/v1/notes", "/mcp") or (method == "PATCH" and path.startswith("/v1/sources/")):
            return note  # an edit of a note's words may be as long as the note
        if path == "/v1/pages":  # a page's whole text, as long as a note may be
            return page
        return other

    return limit


UPLOAD_FRAMING_BYTES = 64 * 1024  # multipart boundaries and the small form fields around the file


def _error_json(error: Mapping[str, Any]) -> dict[str, Any]:
    msg = str(error.get("msg", ""))
    ctx = error.get("ctx") or {}
    if error.get("type") == "string_unicode":  # pydantic's words for a lone surrogate in JSON
        msg = "not valid text: it contains a lone UTF-16 surrogate (\\udXXX); send real characters"
    elif error.get("type") in ("too_long", "string_too_long") and "max_length" in ctx:
        msg = f"too long: at most {ctx['max_length']} characters"
    out: dict[str, Any] = {"loc": list(error.get("loc", ())), "msg": msg, "type": error.get("type", "")}
    if "input" in error:
        value = error["input"]
        if not (isinstance(value, int | float | bool) or value is None):
            # A short prefix only, and never a character the answer itself could not encode.
            value = short(value).encode("utf-8", "backslashreplace").decode("utf-8")
        out["input"] = value
    return out
