"""Request heads have a deadline: slow or silent connections are closed, normal requests are served.

Each process serves HTTP with ``app.serve.http_config`` (uvicorn, h11); these tests use that config
on a loopback port with a one-second SB_HEADER_TIMEOUT_S and talk to it over raw sockets.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from app.serve import http_config
from secondbrain.infra.ports import free_port
from secondbrain.settings import Settings

pytestmark = pytest.mark.fast  # no services: in the fast lane

TIMEOUT_S = 1.0
MARGIN_S = 1.5


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    body = b"hello"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def serving(**settings: Any) -> Iterator[int]:
    """The test app served with ``http_config`` on a free loopback port, with these settings; the port."""
    config = Settings(host="127.0.0.1", port=free_port(), **settings)
    server = uvicorn.Server(http_config(hello, config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)
        yield config.port
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with serving(header_timeout_s=TIMEOUT_S) as port:
        yield port


def closed_within(sock: socket.socket, seconds: float) -> tuple[float, bytes]:
    """Seconds until the server closed the connection, and what it sent before."""
    t0 = time.monotonic()
    sock.settimeout(seconds)
    got = b""
    while True:
        chunk = sock.recv(4096)  # raises TimeoutError if the server keeps it open
        if not chunk:
            return time.monotonic() - t0, got
        got += chunk


def reply(conn: socket.socket) -> bytes:
    """One whole response of the test app (its body ends the response)."""
    conn.settimeout(5)
    got = b""
    while not got.endswith(b"hello"):
        chunk = conn.recv(4096)
        assert chunk, got
        got += chunk
    return got


def test_a_partial_head_is_closed_with_408_and_others_are_still_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert httpx.get(f"http://127.0.0.1:{port}/").text == "hello"  # meanwhile, a normal request
        took, got = closed_within(slow, TIMEOUT_S + MARGIN_S)
    assert took <= TIMEOUT_S + MARGIN_S
    assert got.startswith(b"HTTP/1.1 408 ") and got.endswith(b"send it whole\n")


def test_a_head_trickling_in_does_not_extend_the_deadline(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as slow:
        t0 = time.monotonic()
        slow.sendall(b"GET / HTTP/1.1\r\n")
        with pytest.raises(OSError):  # broken pipe or reset once the server closed it
            for _ in range(40):
                slow.sendall(b"X-A: b\r\n")
                time.sleep(0.1)
        assert time.monotonic() - t0 <= TIMEOUT_S + MARGIN_S


def test_a_silent_connection_is_closed(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as silent:
        took, got = closed_within(silent, TIMEOUT_S + MARGIN_S)
    assert got == b"" and took <= TIMEOUT_S + MARGIN_S


def test_many_slow_sockets_are_all_closed(port: int) -> None:
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
    try:
        for s in socks:
            s.sendall(b"POST /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(TIMEOUT_S + MARGIN_S)
        still_open = 0
        for s in socks:
            s.settimeout(0.5)
            try:
                while s.recv(4096):
                    pass
            except TimeoutError:
                still_open += 1
        assert still_open == 0
    finally:
        for s in socks:
            s.close()


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_head(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert reply(conn).startswith(b"HTTP/1.1 200 ")
        time.sleep(TIMEOUT_S * 0.6)  # within keep-alive: the connection stays usable
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert reply(conn).startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 1")  # ...and a second head that stops halfway
        took, got = closed_within(conn, TIMEOUT_S + MARGIN_S)
    assert got.startswith(b"HTTP/1.1 408 ") and took <= TIMEOUT_S + MARGIN_S


def test_a_complete_head_sent_slowly_within_the_deadline_is_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        for piece in (b"GET / HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
            conn.sendall(piece)
            time.sleep(TIMEOUT_S / 4)
        assert reply(conn).startswith(b"HTTP/1.1 200 ")


def test_an_idle_kept_alive_connection_outlasts_a_clients_own_expiry(port: int) -> None:
    """httpx drops an idle connection after 5 s; a server that closed at the same 5 s (uvicorn's default)
    reset the request a client sent at that instant (seen as ``Connection reset by peer`` on a job poll).
    With SB_KEEP_ALIVE_S at its default, a connection idle past the client's expiry is still served."""
    client_expiry_s = httpx.Limits().keepalive_expiry
    assert client_expiry_s is not None
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert reply(conn).startswith(b"HTTP/1.1 200 ")
        time.sleep(client_expiry_s + 1)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert reply(conn).startswith(b"HTTP/1.1 200 ")


def test_an_idle_kept_alive_connection_is_closed_after_the_keep_alive_setting() -> None:
    with serving(keep_alive_s=1) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert reply(conn).startswith(b"HTTP/1.1 200 ")
        took, got = closed_within(conn, 1 + MARGIN_S)
    assert got == b"" and took <= 1 + MARGIN_S
