"""The memory as MCP tools (Model Context Protocol), for AI assistants: Claude Desktop, Cursor, any MCP client.

Every tool is a call to secondbrain's own HTTP API made with the caller's key, so the tools see
exactly what that key sees (never another user's data), and are limited and logged like any
request.  The same tools are served two ways:

* over stdio by ``secondbrain mcp`` (the assistant starts it; it talks to a running server), and
* over MCP's streamable HTTP transport at ``/mcp`` of the HTTP services, where the request's own
  ``Authorization`` header is passed on to the API inside the same process; where that process
  answers questions, ``ask`` calls its answerer (:mod:`services.query.answerer`) directly, for the
  same caller, rather than reading back ``/v1/ask``'s server-sent events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any, Literal
from urllib.parse import quote

import httpx
from httpx_sse import aconnect_sse
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.exceptions import HTTPException

from secondbrain import __version__
from secondbrain.answer_events import AnswerEvent, Done, Error, Sources
from secondbrain.http_security import short

ClientFor = Callable[[Context[Any, Any, Any]], AbstractAsyncContextManager[httpx.AsyncClient]]
AskHere = Callable[[Context[Any, Any, Any], dict[str, Any]], Awaitable[AsyncIterator["AnswerEvent"]]]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

INSTRUCTIONS = (
    "secondbrain is the user's personal memory: their notes, documents, web pages, recordings and photos, "
    "each with the time it was captured. Use `search` to find passages (time words such as 'last week' "
    "work in the query), `ask` for an answer grounded in numbered citations, `timeline` for what was captured "
    "when, `agenda` for what the user's own sources say is coming up (or happened), and `capture_note` / "
    "`capture_url` to remember something new. Cite what you use: every result "
    "carries its source's title, capture time, and page or time span."
)

TimeText = Annotated[str | None, Field(description="ISO 8601 date or date-time, e.g. 2026-03-01 or "
                                                   "2026-03-01T09:30:00+01:00")]
Zone = Annotated[str | None, Field(description="The user's IANA time zone, e.g. Europe/Paris: what "
                                               "'yesterday' or 'last week' mean (default: the server's)")]


def _where(item: dict[str, Any]) -> dict[str, Any]:
    """A passage's provenance: which source, when it was captured, where in it (page, seconds, headings)."""
    out: dict[str, Any] = {
        "title": item.get("title"), "source_id": item.get("source_id"), "source_uri": item.get("source_uri") or None,
        "modality": item.get("modality"), "captured_at": item.get("captured_at_local") or item.get("captured_at"),
    }
    for key in ("page", "t_start", "t_end", "position", "at_start", "at_end"):
        if item.get(key) is not None:
            out[key] = item[key]
    if item.get("heading_path"):
        out["section"] = " > ".join(item["heading_path"])
    tags = str((item.get("attributes") or {}).get("tags") or "").split()  # a Markdown note's tags, as the API
    if tags:  # shows them with a passage (space-joined), a list
        out["tags"] = tags
    for key in ("links", "speakers"):  # its links, a chat's speakers: lists
        if item.get(key):
            out[key] = item[key]
    if item.get("link") or item.get("artifact_id"):
        out["raw_link"] = item.get("link") or f"/v1/artifacts/{quote(str(item['artifact_id']), safe='')}/raw"
    return out


def _segment(value: str, what: str) -> str:
    """``value`` as one segment of an API path: percent-escaped, so an id such as ``../me`` cannot reach
    another route; an empty id and the dot segments (which clients resolve away) are refused."""
    value = value.strip()
    if value in ("", ".", "..") or len(value) > 512:
        raise ToolError(f"{short(value)!r} is not a {what}; take one from search, ask or list_sources")
    return quote(value, safe="")


async def _json(resp: httpx.Response) -> Any:
    if resp.status_code >= 400:
        try:
            detail = resp.json().get("detail", resp.text)
        except ValueError:
            detail = resp.text
        raise ToolError(f"secondbrain answered HTTP {resp.status_code}: {detail}")
    if resp.status_code == 204:
        return None
    return resp.json()


class MemoryServer(FastMCP[Any]):
    """The MCP server, knowing how to reach the API for a caller: ``client_for(ctx)`` opens an HTTP client to
    the API acting for the caller; ``ask_here(ctx, body)``, where this process answers questions itself, gives
    the answer's events for ``POST /v1/ask``'s body, acting for the caller (raising ``HTTPException`` where the
    route would refuse), so ``ask`` needs no HTTP round trip."""

    def __init__(self, client_for: ClientFor, ask_here: AskHere | None, log_level: LogLevel) -> None:
        super().__init__(
            "secondbrain", instructions=INSTRUCTIONS, stateless_http=True, json_response=True,
            streamable_http_path="/mcp", log_level=log_level,
            # The HTTP services already check Host and Origin for every path (secondbrain.http_security).
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self._mcp_server.version = __version__  # serverInfo.version: secondbrain's, not the SDK's
        self.client_for = client_for
        self.ask_here = ask_here


def _server(ctx: Context[Any, Any, Any]) -> MemoryServer:
    """The server a tool is called on (its way to the API)."""
    server = ctx.fastmcp
    assert isinstance(server, MemoryServer)
    return server


async def _answer_here(ask_here: AskHere, ctx: Context[Any, Any, Any], body: dict[str, Any]
                       ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The answer's cited sources and its end, from this process's answerer."""
    sources: list[dict[str, Any]] = []
    done: dict[str, Any] | None = None
    try:
        events = await ask_here(ctx, body)
    except HTTPException as exc:  # refused before answering, as the route would answer it
        raise ToolError(f"secondbrain answered HTTP {exc.status_code}: {exc.detail}") from None
    async for event in events:
        if isinstance(event, Sources):
            sources = event.data()
        elif isinstance(event, Done):
            done = event.data()
        elif isinstance(event, Error):
            raise ToolError(f"the answer failed: {event.message}")
    return sources, done


async def _answer_over_http(client_for: ClientFor, ctx: Context[Any, Any, Any], body: dict[str, Any]
                            ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The answer's cited sources and its end, from ``POST /v1/ask``'s server-sent events."""
    sources: list[dict[str, Any]] = []
    done: dict[str, Any] | None = None
    async with client_for(ctx) as api, aconnect_sse(api, "POST", "/v1/ask", json=body,
                                                    timeout=httpx.Timeout(300.0, connect=10.0)) as stream:
        if stream.response.status_code >= 400:
            await stream.response.aread()
            await _json(stream.response)
        async for sse in stream.aiter_sse():
            try:
                data = sse.json()
            except ValueError:
                continue
            if sse.event == "sources":
                sources = data
            elif sse.event == "done":
                done = data
            elif sse.event == "error":
                raise ToolError(f"the answer failed: {data.get('message', 'unknown error')}")
    return sources, done


async def search(
    ctx: Context[Any, Any, Any],
    query: Annotated[str, Field(description="What to look for, in the user's words; time words work: "
                                            "'the invoice from last March', 'what I read yesterday'")],
    k: Annotated[int, Field(ge=1, le=50, description="How many passages")] = 8,
    modalities: Annotated[list[str] | None, Field(description="Only these kinds: note, markdown, pdf, web, "
                                                              "audio, image, office...")] = None,
    source_ids: Annotated[list[str] | None, Field(description="Only these sources")] = None,
    start: TimeText = None,
    end: TimeText = None,
    timezone: Zone = None,
) -> dict[str, Any]:
    """Search the user's memory (hybrid keyword and meaning search that understands time words).

    Returns the time range understood (if any) and the passages that match, each with its text and its
    provenance: source title and id, capture time, page (documents), time span in seconds (recordings),
    section headings and a link to the original file.  When nothing matches well enough, ``matched`` is
    false and ``closest`` holds the closest few passages."""
    params: list[tuple[str, Any]] = [("q", query), ("k", k)]
    params += [("modality", m) for m in modalities or []] + [("source_id", s) for s in source_ids or []]
    params += [(n, v) for n, v in (("from", start), ("to", end), ("tz", timezone)) if v]
    async with _server(ctx).client_for(ctx) as api:
        out = await _json(await api.get("/v1/search", params=params))
    return {
        "query": query, "query_class": out.get("query_class"), "time_range": out.get("time_range"),
        "understood": out.get("understood"),
        "results": [{"n": n, "text": h["text"], **_where(h)} for n, h in enumerate(out["hits"], 1)],
        # nothing matched well enough: say so, with the closest passages apart
        **({"matched": False, "closest": [{"n": n, "text": h["text"], **_where(h)}
                                          for n, h in enumerate(out.get("closest", []), 1)]}
           if out.get("matched") is False else {}),
    }

async def ask(
    ctx: Context[Any, Any, Any],
    question: Annotated[str, Field(description="A question about the user's own data")],
    k: Annotated[int, Field(ge=1, le=20, description="How many passages to ground the answer in")] = 6,
    modalities: Annotated[list[str] | None, Field(description="Only these kinds of source")] = None,
    start: TimeText = None,
    end: TimeText = None,
    timezone: Zone = None,
    conversation_id: Annotated[str | None, Field(description="Continue this conversation (follow-ups)")] = None,
    keep: Annotated[bool, Field(description="Start a conversation the user sees in their web page, to "
                                            "follow up on (default: a one-shot answer, kept nowhere)")] = False,
) -> dict[str, Any]:
    """Answer a question from the user's memory, grounded in their data.

    Returns the answer with [n] citation marks, the cited sources (n, title, capture time, page or
    time span, the quoted passage) and, when the question was kept (``keep``, or a conversation
    continued), the conversation id for follow-ups. ``unsupported: true`` means the answer cites
    nothing: do not present it as fact (``extractive`` then holds what the sources themselves say,
    when they say anything)."""
    kept = bool(keep or conversation_id)
    body: dict[str, Any] = {"question": question, "k": k, "keep": kept}
    for name, value in (("modalities", modalities), ("from", start), ("to", end), ("tz", timezone),
                        ("conversation_id", conversation_id)):
        if value:
            body[name] = value
    server = _server(ctx)
    if server.ask_here is not None:  # this process answers: the answerer's events, in-process
        sources, done = await _answer_here(server.ask_here, ctx, body)
    else:  # a running secondbrain answers over HTTP: its server-sent events
        sources, done = await _answer_over_http(server.client_for, ctx, body)
    if done is None:
        raise ToolError("the answer stream ended without an answer; try again")
    cited = set(done.get("citations") or [])
    extractive = done.get("extractive")
    if extractive:
        cited |= set(extractive.get("citations") or [])
    return {
        "answer": done["answer"], "unsupported": done.get("unsupported", False), "extractive": extractive,
        "citations": [{"n": s["n"], "quote": s.get("snippet"), **_where(s)} for s in sources if s["n"] in cited],
        "conversation_id": done.get("conversation_id") if kept else None,
    }

async def capture_note(
    ctx: Context[Any, Any, Any],
    text: Annotated[str, Field(description="The note (Markdown welcome)")],
    title: Annotated[str | None, Field(description="A title (default: from the text)")] = None,
    captured_at: TimeText = None,
) -> dict[str, Any]:
    """Remember a note in the user's memory.

    Returns the capture's job id and status ('queued' at first; it becomes searchable within seconds
    once 'succeeded'), and the job's address for checking on it."""
    body = {k: v for k, v in (("text", text), ("title", title), ("captured_at", captured_at)) if v}
    async with _server(ctx).client_for(ctx) as api:
        return dict(await _json(await api.post("/v1/notes", json=body)))

async def capture_url(
    ctx: Context[Any, Any, Any],
    url: Annotated[str, Field(description="An http(s) address of a public web page")],
    title: Annotated[str | None, Field(description="A title (default: the page's)")] = None,
    captured_at: TimeText = None,
) -> dict[str, Any]:
    """Fetch a web page and remember its main content (the same address again is a new version).

    Returns the capture's job id and status ('queued' at first)."""
    body = {k: v for k, v in (("url", url), ("title", title), ("captured_at", captured_at)) if v}
    async with _server(ctx).client_for(ctx) as api:
        return dict(await _json(await api.post("/v1/urls", json=body)))

async def list_sources(
    ctx: Context[Any, Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    offset: Annotated[int, Field(ge=0)] = 0,
    modality: Annotated[str | None, Field(description="Only this kind: note, markdown, pdf, web, audio...")] = None,
    start: TimeText = None,
    end: TimeText = None,
) -> dict[str, Any]:
    """List what the user's memory holds, newest first.

    Returns one row per version of a source: source id, title, kind, where it came from (file or web
    address), capture and ingest times, status (succeeded, failed, queued...), version and passage
    count; a failed capture (listed once, its newest try) says why (``reason``) and whether trying
    again may help (``retryable``)."""
    params = {k: v for k, v in (("limit", limit), ("offset", offset), ("modality", modality), ("from", start),
                                ("to", end)) if v is not None}
    async with _server(ctx).client_for(ctx) as api:
        out = await _json(await api.get("/v1/sources", params=params))
    keep = ("source_id", "title", "modality", "source_uri", "captured_at", "ingested_at", "status", "error",
            "reason", "retryable", "version", "superseded", "chunk_count")
    return {"sources": [{k: s.get(k) for k in keep} for s in out["sources"]], "limit": limit, "offset": offset}

async def get_source(
    ctx: Context[Any, Any, Any],
    source_id: Annotated[str, Field(description="A source id from search, ask or list_sources")],
) -> dict[str, Any]:
    """One source in detail.

    Returns its title, kind, address, current version and every version (capture time, size, passage
    count, whether the original file is still kept) with the processing status of each."""
    async with _server(ctx).client_for(ctx) as api:
        out = await _json(await api.get(f"/v1/sources/{_segment(source_id, 'source id')}"))
    for v in out.get("versions", []):
        v["jobs"] = [{k: j.get(k) for k in ("job_id", "status", "error", "finished_at")} for j in v.get("jobs", [])]
    return dict(out)

async def timeline(
    ctx: Context[Any, Any, Any],
    start: TimeText = None,
    end: TimeText = None,
    timezone: Zone = None,
    modality: Annotated[list[str] | None, Field(description="Only these kinds of source")] = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """What was captured when, grouped by day (default: the last 30 days).

    Returns the days newest first, each with its items: title, kind, capture time in the user's zone,
    source address and document id."""
    params: list[tuple[str, Any]] = [("limit", limit)] + [("modality", m) for m in modality or []]
    params += [(n, v) for n, v in (("from", start), ("to", end), ("tz", timezone)) if v]
    async with _server(ctx).client_for(ctx) as api:
        return dict(await _json(await api.get("/v1/timeline", params=params)))

async def agenda(
    ctx: Context[Any, Any, Any],
    start: TimeText = None,
    end: TimeText = None,
    days: Annotated[int, Field(ge=1, le=731, description="Without end: how many days from start")] = 14,
    timezone: Zone = None,
    habits: Annotated[bool, Field(description="Also habits ('yoga every Tuesday'), each day they fall on")] = False,
) -> dict[str, Any]:
    """What the user's own sources say is coming up (default: the next 14 days from today), or, for a past
    range, what happened.

    Returns the days in the user's zone, each event with its local time, the sentence that says it and its
    source (title, page or second, section, link). An event that was moved appears once, at its new time,
    with ``moved_from``; dates of birth, publication dates and habits are left out."""
    params: list[tuple[str, Any]] = [("days", days), ("habits", str(habits).lower())]
    params += [(n, v) for n, v in (("from", start), ("to", end), ("tz", timezone)) if v]
    async with _server(ctx).client_for(ctx) as api:
        out = await _json(await api.get("/v1/agenda", params=params))
    return {"from": out["from"], "to": out["to"], "timezone": out["timezone"], "view": out["view"],
            "days": [{"date": d["date"], "label": d["label"], "events": [
                {k: e.get(k) for k in ("when", "time", "quote", "kind", "status", "moved_from", "stated")
                 if e.get(k) is not None} | {"source": _where(e["source"])} for e in d["events"]]}
                for d in out["days"]]}


# The tools, in the order a client lists them.
TOOLS = (search, ask, capture_note, capture_url, list_sources, get_source, timeline, agenda)


def build(client_for: ClientFor, *, ask_here: AskHere | None = None, log_level: LogLevel = "INFO") -> FastMCP[Any]:
    """The MCP server with every tool (see :class:`MemoryServer` for ``client_for`` and ``ask_here``).
    ``log_level``: the SDK's own logging (stdio: WARNING, so what people ask is not logged)."""
    mcp = MemoryServer(client_for, ask_here, log_level)
    for tool in TOOLS:
        mcp.add_tool(tool)
    return mcp
