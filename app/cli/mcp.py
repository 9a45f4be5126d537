"""``secondbrain mcp``: the memory as MCP tools over stdio, for an AI assistant that starts it
(Claude Desktop, Cursor...).  It talks to a running secondbrain over HTTP with the user's key."""

from __future__ import annotations

import argparse
import contextlib
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

    @contextlib.asynccontextmanager
    async def client_for(_ctx: Any) -> Any:
        async with httpx.AsyncClient(base_url=args.url, headers=headers,
                                     timeout=httpx.Timeout(300.0, connect=5.0)) as client:
            yield client

    build(client_for).run("stdio")
    return EXIT_OK
