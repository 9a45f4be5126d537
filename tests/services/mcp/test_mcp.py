"""The MCP tools with the SDK's own client, over stdio (``secondbrain mcp``) and streamable HTTP (``/mcp``),
against a running ``secondbrain up``; another user's key sees nothing of the first user's data."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from devtools.processes import REPO, cli_env
from tests.e2e.harness import Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

TOOLS = {"search", "ask", "capture_note", "capture_url", "list_sources", "get_source", "timeline", "agenda"}
SECRET = "Marrowbone-5521"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, str]]]:
    with readable_tmp("sb-mcp-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {},
                      tmp_path_factory.mktemp("mcp-logs"))
        svc.start().wait_ready(timeout=120)
        keys = {}
        with svc.client() as admin:
            for user in ("alice", "bob"):
                r = admin.post("/v1/admin/users", json={"user_id": user})
                assert r.status_code == 201, r.text
                keys[user] = r.json()["key"]["api_key"]
        yield svc, keys
        svc.stop()


@asynccontextmanager
async def over_http(svc: Service, key: str) -> AsyncIterator[ClientSession]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http, \
            streamable_http_client(svc.url + "/mcp", http_client=http) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(svc: Service, key: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "app.cli", "mcp", "--url", svc.url],
                                   env=cli_env({"SB_API_KEY": key}), cwd=str(REPO))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.isError, result.content
    assert result.structuredContent is not None
    return result.structuredContent


async def test_the_tools_over_streamable_http_give_cited_answers(server: tuple[Service, dict[str, str]]) -> None:
    svc, keys = server
    async with over_http(svc, keys["alice"]) as alice:
        tools = {t.name: t for t in (await alice.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all("Returns" in (t.description or "") for t in tools.values())

        captured = await call(alice, "capture_note", text=f"The boathouse padlock code is {SECRET}; it was changed "
                              "after the spring regatta.", title="Boathouse", captured_at="2026-04-12T18:00:00Z")
        assert captured["status"] == "queued"
        with httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {keys['alice']}"}) as c:
            assert wait_jobs(c, [captured["job_id"]])[captured["job_id"]]["status"] == "succeeded"

        found = await call(alice, "search", query="boathouse padlock code")
        top = found["results"][0]
        assert SECRET in top["text"]
        assert top["title"] == "Boathouse" and top["captured_at"].startswith("2026-04-12") and top["source_id"]

        dated = await call(alice, "search", query="padlock code in April 2026", timezone="UTC")
        assert dated["time_range"]["start"].startswith("2026-04-01")
        assert any(SECRET in r["text"] for r in dated["results"])

        answer = await call(alice, "ask", question="What is the boathouse padlock code?")
        assert SECRET in answer["answer"] and "[1]" in answer["answer"]
        cited = answer["citations"][0]
        assert cited["title"] == "Boathouse" and cited["captured_at"].startswith("2026-04-12")
        assert SECRET in cited["quote"] and cited["source_id"] == top["source_id"]
        kept = await call(alice, "ask", question="What is the boathouse padlock code?", keep=True)

        listed = await call(alice, "list_sources")
        assert [s["title"] for s in listed["sources"]] == ["Boathouse"]
        detail = await call(alice, "get_source", source_id=top["source_id"])
        assert detail["current_version"] == 1 and detail["versions"][0]["chunk_count"] >= 1
        days = await call(alice, "timeline", start="2026-04-01", end="2026-05-01", timezone="UTC")
        assert days["days"][0]["date"] == "2026-04-12" and days["days"][0]["items"][0]["title"] == "Boathouse"

        inspection = await call(alice, "capture_note", text="The boathouse inspection is on 20 April 2026 at 10:00.",
                                captured_at="2026-04-12T18:30:00Z")
        with httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {keys['alice']}"}) as c:
            wait_jobs(c, [inspection["job_id"]])
        coming = await call(alice, "agenda", start="2026-04-13", days=14, timezone="UTC")
        (event,) = [e for d in coming["days"] for e in d["events"]]
        assert event["time"] == "10:00" and "inspection" in event["quote"] and event["source"]["source_id"]

        refused = await alice.call_tool("capture_url", {"url": "http://127.0.0.1/private"})
        assert refused.isError and "not allowed" in json.dumps([c.model_dump() for c in refused.content])

    # Bob, with his own key, on either transport: nothing of Alice's.
    for transport in (over_http, over_stdio):
        async with transport(svc, keys["bob"]) as bob:
            assert (await call(bob, "list_sources"))["sources"] == []
            hits = (await call(bob, "search", query="boathouse padlock"))["results"]
            assert not any(SECRET in r["text"] for r in hits)
            answer = await call(bob, "ask", question="What is the boathouse padlock code?")
            assert SECRET not in json.dumps(answer)
            # Alice's conversation is refused as POST /v1/ask refuses it, answered here or over HTTP.
            foreign = await bob.call_tool("ask", {"question": "and the code?",
                                                  "conversation_id": kept["conversation_id"]})
            said = json.dumps([c.model_dump() for c in foreign.content])
            assert foreign.isError and "HTTP 403" in said and SECRET not in said
            theirs = await bob.call_tool("get_source", {"source_id": top["source_id"]})
            assert theirs.isError and SECRET not in json.dumps([c.model_dump() for c in theirs.content])
            assert (await call(bob, "timeline", start="2026-04-01", end="2026-05-01"))["total"] == 0
            assert (await call(bob, "agenda", start="2026-04-13", days=14))["days"] == []


async def test_the_same_tools_over_stdio(server: tuple[Service, dict[str, str]]) -> None:
    svc, keys = server
    async with over_stdio(svc, keys["alice"]) as alice:
        assert {t.name for t in (await alice.list_tools()).tools} == TOOLS
        captured = await call(alice, "capture_note", text="---\ntags: [home, '#keys/spare']\n---\n"
                              "The spare bicycle key hangs behind the pantry door.")
        with httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {keys['alice']}"}) as c:
            wait_jobs(c, [captured["job_id"]])
        found = await call(alice, "search", query="spare bicycle key")
        assert "pantry door" in found["results"][0]["text"]
        assert found["results"][0]["tags"] == ["home", "keys/spare"]  # the note's front-matter tags, a list
        # `ask` over stdio reads /v1/ask's server-sent events; over /mcp the process's answerer answers
        # in-process: the same tool output either way.
        over_sse = await call(alice, "ask", question="Where does the spare bicycle key hang?")
    async with over_http(svc, keys["alice"]) as alice_here:
        in_process = await call(alice_here, "ask", question="Where does the spare bicycle key hang?")
    assert "pantry door" in over_sse["answer"] and over_sse["citations"]
    assert over_sse["citations"][0]["tags"] == ["home", "keys/spare"]
    assert in_process == over_sse


def test_mcp_over_http_needs_a_key_and_a_same_site_origin(server: tuple[Service, dict[str, str]]) -> None:
    svc, keys = server
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(svc.url + "/mcp", json=hello, headers=accept).status_code == 401
    assert httpx.post(svc.url + "/mcp", json=hello, headers={**accept, "Authorization": "Bearer nope"}
                      ).status_code == 401
    forged = httpx.post(svc.url + "/mcp", json=hello, headers={**accept, "Authorization": f"Bearer {keys['alice']}",
                                                               "Origin": "http://attacker.example"})
    assert forged.status_code == 403
    ok = httpx.post(svc.url + "/mcp", json=hello, headers={**accept, "Authorization": f"Bearer {keys['alice']}"})
    assert ok.status_code == 200 and ok.json()["result"]["serverInfo"]["name"] == "secondbrain"


def test_without_a_key_secondbrain_mcp_says_how_to_give_one(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "app.cli", "mcp", "--data-dir", str(tmp_path)], env=cli_env({}),
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "SB_API_KEY" in done.stderr and done.stdout == ""


async def test_serverinfo_is_secondbrains_and_stdio_logs_no_question(server: tuple[Service, dict[str, str]],
                                                                     tmp_path: Path) -> None:
    from secondbrain import __version__

    svc, keys = server
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    ok = httpx.post(svc.url + "/mcp", json=hello, headers={"Accept": "application/json, text/event-stream",
                                                           "Authorization": f"Bearer {keys['alice']}"})
    assert ok.json()["result"]["serverInfo"] == {"name": "secondbrain", "version": __version__}
    # Over stdio the same, and what is asked stays out of the log (an assistant keeps that log on disk).
    log = tmp_path / "mcp-stderr.log"
    params = StdioServerParameters(command=sys.executable, args=["-m", "app.cli", "mcp", "--url", svc.url],
                                   env=cli_env({"SB_API_KEY": keys["alice"]}), cwd=str(REPO))
    with log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            started = await session.initialize()
            assert (started.serverInfo.name, started.serverInfo.version) == ("secondbrain", __version__)
            await call(session, "search", query="Zanzibar lighthouse keeper pension")
            await call(session, "ask", question="Who keeps the Zanzibar lighthouse?")
    assert "Zanzibar" not in log.read_text()


def test_secondbrain_mcp_checks_the_server_and_the_key_before_it_serves(server: tuple[Service, dict[str, str]]
                                                                        ) -> None:
    import subprocess

    from secondbrain.infra.ports import free_port

    svc, _ = server

    def start(url: str, key: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "app.cli", "mcp", "--url", url], env=cli_env({"SB_API_KEY": key}),
                              cwd=REPO, input="", capture_output=True, text=True, timeout=60, check=False)

    refused = start(svc.url, "sb_not_a_real_key")
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"secondbrain at {svc.url} did not accept the API key" in refused.stderr
    nobody = start(f"http://127.0.0.1:{free_port()}", "sb_whatever")
    assert nobody.returncode == 2 and "cannot reach secondbrain" in nobody.stderr and "secondbrain up" in nobody.stderr


async def test_an_assistants_one_shot_question_keeps_no_conversation(server: tuple[Service, dict[str, str]]) -> None:
    svc, keys = server
    with httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {keys['bob']}"}) as bob_api:
        before = bob_api.get("/v1/conversations").json()["conversations"]
        async with over_http(svc, keys["bob"]) as bob:
            once = await call(bob, "ask", question="What did I note about the garden?")
            assert once["conversation_id"] is None
            assert bob_api.get("/v1/conversations").json()["conversations"] == before
            kept = await call(bob, "ask", question="What did I note about the garden?", keep=True)
            assert kept["conversation_id"] in [c["conversation_id"]
                                               for c in bob_api.get("/v1/conversations").json()["conversations"]]
