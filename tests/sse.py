"""Reading a server-sent event stream in tests (``POST /v1/ask``, ``/v1/jobs/{id}/stream``) with httpx-sse."""

from __future__ import annotations

from typing import Any

import httpx
from httpx_sse import connect_sse


def sse_events(client: httpx.Client, method: str, url: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """The stream's events as (name, decoded JSON data), read to its end; the response must be 200."""
    with connect_sse(client, method, url, **kwargs) as stream:
        assert stream.response.status_code == 200, stream.response.read()
        return [(sse.event, sse.json()) for sse in stream.iter_sse()]
