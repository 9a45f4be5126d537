"""``secondbrain mcp``: the memory as MCP tools over stdio, for an AI assistant that starts it
(Claude Desktop, Cursor...).  It talks to a running secondbrain over HTTP with the user's key."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import Any

from app.cli.client import _find_key
from app.cli.common import EXIT_OK, EXIT_USAGE


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the tools on stdin/stdout until the assistant closes them (stdout carries only MCP)."""
    import httpx

    from services.mcp.server import build

    key = _find_key(args)
    if not key:
        print("error: no API key: pass --api-key, set SB_API_KEY, or run this where `secondbrain up` keeps its "
              "data (--data-dir)", file=sys.stderr)
        return EXIT_USAGE
    headers = {"Authorization": f"Bearer {key}"}
    # The server and the key are checked now: an assistant that starts this learns at once what is wrong
    # (its log shows this sentence), rather than from every tool call failing later.
    problem = _check_server(args.url, headers)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    # Requests are logged with their address, which carries the question (GET /v1/search?q=...): not at INFO.
    logging.getLogger("httpx").setLevel(logging.WARNING)

    @contextlib.asynccontextmanager
    async def client_for(_ctx: Any) -> Any:
        async with httpx.AsyncClient(base_url=args.url, headers=headers,
                                     timeout=httpx.Timeout(300.0, connect=5.0)) as client:
            yield client

    build(client_for, log_level="WARNING").run("stdio")
    return EXIT_OK


def _check_server(url: str, headers: dict[str, str]) -> str | None:
    """Why the tools could not work (secondbrain not reachable, the key refused), or None."""
    import httpx

    try:
        resp = httpx.get(f"{url.rstrip('/')}/v1/me", headers=headers, timeout=httpx.Timeout(10.0, connect=5.0))
    except httpx.TransportError as exc:
        return (f"cannot reach secondbrain at {url} ({exc}). Start it with `secondbrain up`, or give its "
                "address with --url (or SB_URL).")
    if resp.status_code in (401, 403):
        return (f"secondbrain at {url} did not accept the API key (HTTP {resp.status_code}). Give a key it "
                "knows with --api-key or SB_API_KEY (`secondbrain up` keeps this machine's in its data "
                "directory; the web page's Settings makes new ones).")
    if resp.status_code != 200:
        return f"secondbrain at {url} answered HTTP {resp.status_code} to a check of the key; try again shortly."
    return None


def add_parser(sub: Any, client_opts: Any) -> None:
    """``mcp``."""
    mc = sub.add_parser("mcp", help="serve your memory as MCP tools on stdin/stdout, for AI assistants "
                                     "(Claude Desktop, Cursor...)")
    client_opts(mc)
    mc.set_defaults(func=cmd_mcp)
