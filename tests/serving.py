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
def serve_in_thread(app: Any, *, timeout: float = 20.0, access_log: bool = True) -> Iterator[tuple[str, int]]:
    """Serve ``app`` on a free loopback port until the block ends; yields (base URL, port)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                                           access_log=access_log, lifespan="off"))
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
