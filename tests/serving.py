"""An ASGI app served by uvicorn on a loopback port in a background thread, for HTTP tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from secondbrain.infra.ports import free_port


@contextmanager
def serve_in_thread(app: Any, *, timeout: float = 20.0, access_log: bool = True, port: int | None = None,
                    graceful_s: float | None = None) -> Iterator[tuple[str, int]]:
    """Serve ``app`` on a loopback port (a free one unless given) until the block ends; yields (base URL, port).
    ``graceful_s``: how long the end waits for open requests before it cancels them (like a server stopping)."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                                           access_log=access_log, lifespan="off",
                                           timeout_graceful_shutdown=graceful_s))
    thread = threading.Thread(target=server.run, name=f"uvicorn-test-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", port
    finally:
        server.should_exit = True
        thread.join(15)
