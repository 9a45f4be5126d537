"""An id given to an MCP tool stays one segment of the API path it calls.

``get_source`` put ``source_id`` into the URL as it came: ``../me`` reached ``GET /v1/me`` (an AI
assistant can be talked into passing anything).  The tools here call the real HTTP app in-process,
and every request they make is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.mcp.server import build


@pytest.fixture(scope="module")
def rt(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("mcp-paths"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off")  # keys: tests/services/mcp/test_mcp.py
    runtime = build_runtime(settings, vectors=False, models=False)
    yield runtime
    runtime.close()


class Tools:
    """The MCP tools over the real app, with the paths of the requests they made."""

    def __init__(self, rt: Runtime) -> None:
        self.app = create_app(rt, gateway=True, query=False)
        self.paths: list[str] = []

        @contextlib.asynccontextmanager
        async def client_for(_ctx: Any) -> AsyncIterator[httpx.AsyncClient]:
            async def record(request: httpx.Request) -> None:
                self.paths.append(request.url.raw_path.decode())

            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://127.0.0.1",
                                         event_hooks={"request": [record]}) as client:
                yield client

        self.mcp = build(client_for)

    def call(self, name: str, **arguments: Any) -> Any:
        async def go() -> Any:
            result = await self.mcp.call_tool(name, arguments)
            content = result[0] if isinstance(result, tuple) else result
            return json.loads(content[0].text)

        return asyncio.run(go())


def test_a_source_id_cannot_reach_another_route(rt: Runtime, tmp_path: Path) -> None:
    tools = Tools(rt)
    for bad in ("../me", "..%2Fme", "x/../../me", "../me?confirm=local", "../../v1/export"):
        with pytest.raises(ToolError, match="HTTP 404"):
            tools.call("get_source", source_id=bad)
    assert tools.paths and all(p.startswith("/v1/sources/") and p.count("/") == 3 for p in tools.paths), tools.paths
    assert tools.paths[0] == "/v1/sources/..%2Fme"
    for dot in ("..", ".", " "):
        with pytest.raises(ToolError, match="is not a source id"):
            tools.call("get_source", source_id=dot)
    assert len(tools.paths) == 5  # refused before any request


def test_a_real_source_id_still_works(rt: Runtime) -> None:
    tools = Tools(rt)
    captured = tools.call("capture_note", text="The spare key is under the blue pot.", title="Key")
    listed = tools.call("list_sources")
    assert captured["job_id"]
    (source,) = [s for s in listed["sources"] if s["title"] == "Key"]
    detail = tools.call("get_source", source_id=source["source_id"])
    assert detail["source_id"] == source["source_id"] and detail["title"] == "Key"
    assert tools.paths[-1] == f"/v1/sources/{source['source_id']}"
