"""Request bodies are refused past their route's limit before they are read whole or parsed.

One 300 MB note once raised the server's memory by a gigabyte before the 413.  Now a Content-Length
over the limit is refused before a byte of the body is read, and a chunked body (no Content-Length)
is read only up to the limit.  The counts below are of what the server pulled from the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from tests.serving import serve_in_thread

JSON_LIMIT = 64 * 1024
NOTE_CHARS = 100_000
NOTE_LIMIT = 6 * NOTE_CHARS + 64 * 1024
UPLOAD_LIMIT = 256 * 1024
BLOCK = 16 * 1024
HUGE = 300 * 1024 * 1024  # what the client would send if nothing stopped it


@pytest.fixture(scope="module")
def rt(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("limits"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off", max_json_bytes=JSON_LIMIT,
                        max_note_chars=NOTE_CHARS, max_upload_bytes=UPLOAD_LIMIT)
    runtime = build_runtime(settings, vectors=False, models=False)
    yield runtime
    runtime.close()


class Body:
    """A request body made block by block as the server asks for it; ``pulled`` counts what it took."""

    def __init__(self, total: int, head: bytes = b'{"text": "', fill: bytes = b"x") -> None:
        self.total, self.head, self.fill, self.pulled = total, head, fill, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        self.pulled += len(self.head)
        while self.pulled < self.total:
            block = self.fill * min(BLOCK, self.total - self.pulled)
            self.pulled += len(block)
            yield block


def post(rt: Runtime, path: str, body: Body, headers: dict[str, str] | None = None) -> httpx.Response:
    async def go() -> httpx.Response:
        app = create_app(rt, gateway=True, query=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            return await c.post(path, content=body, headers={"Content-Type": "application/json", **(headers or {})})

    return asyncio.run(go())


def test_a_declared_length_over_the_limit_is_refused_before_reading(rt: Runtime) -> None:
    body = Body(HUGE)
    r = post(rt, "/v1/notes", body, {"Content-Length": str(HUGE)})
    assert r.status_code == 413 and body.pulled == 0
    assert r.json()["detail"] == (f"the request body is over the {NOTE_LIMIT}-byte limit for notes (room for "
                                  f"{NOTE_CHARS} characters, SB_MAX_NOTE_CHARS); upload long text as a file "
                                  "(POST /v1/artifacts) instead.")
    body = Body(HUGE)
    r = post(rt, "/v1/pages", body, {"Content-Length": str(HUGE)})
    assert r.status_code == 413 and body.pulled == 0
    assert r.json()["detail"] == (f"the request body is over the {NOTE_LIMIT}-byte limit for a page's text (room "
                                  f"for {NOTE_CHARS} characters, SB_MAX_NOTE_CHARS); save a selection of it instead.")
    body = Body(HUGE)
    r = post(rt, "/v1/urls", body, {"Content-Length": str(HUGE)})
    assert r.status_code == 413 and body.pulled == 0 and "SB_MAX_JSON_BYTES" in r.json()["detail"]
    body = Body(HUGE, head=b"", fill=b"\0")
    r = post(rt, "/v1/artifacts", body, {"Content-Length": str(HUGE), "Content-Type": "application/pdf",
                                         "X-Filename": "big.pdf"})
    assert r.status_code == 413 and body.pulled == 0 and "SB_MAX_UPLOAD_BYTES" in r.json()["detail"]


def test_a_chunked_body_is_read_only_up_to_the_limit(rt: Runtime) -> None:
    body = Body(HUGE)
    r = post(rt, "/v1/notes", body)  # a generator without a length goes out chunked
    assert r.status_code == 413 and "SB_MAX_NOTE_CHARS" in r.json()["detail"]
    assert NOTE_LIMIT < body.pulled <= NOTE_LIMIT + BLOCK + 10  # 300 MB offered, a few hundred KB read
    for path in ("/v1/urls", "/v1/keys", "/v1/session", "/v1/ask", "/v1/settings/answers"):
        body = Body(HUGE)
        r = post(rt, path, body)
        assert r.status_code == 413, path
        assert r.json()["detail"] == (f"the request body is over the {JSON_LIMIT}-byte limit (SB_MAX_JSON_BYTES); "
                                      "send less, or upload long text as a file (POST /v1/artifacts).")
        assert body.pulled <= JSON_LIMIT + BLOCK + 10
    body = Body(HUGE, head=b"", fill=b"\0")  # an upload is counted as its route reads it, never gathered
    r = post(rt, "/v1/artifacts", body, {"Content-Type": "application/pdf", "X-Filename": "big.pdf"})
    assert r.status_code == 413 and "SB_MAX_UPLOAD_BYTES" in r.json()["detail"]
    assert body.pulled <= UPLOAD_LIMIT + 64 * 1024 + BLOCK


def test_bodies_within_their_limits_go_through(rt: Runtime) -> None:
    async def chunked_json() -> AsyncIterator[bytes]:
        yield b'{"text": "'
        for _ in range(18):
            yield b"word " * 1000  # 90 KB in all: over SB_MAX_JSON_BYTES, within the note limit
        yield b'", "title": "long"}'

    async def go() -> list[httpx.Response]:
        app = create_app(rt, gateway=True, query=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            note = await c.post("/v1/notes", content=chunked_json(), headers={"Content-Type": "application/json"})
            small = await c.post("/v1/notes", json={"text": "a short note"})
            upload = await c.post("/v1/artifacts", content=Body(100_000, head=b"", fill=b"a").__aiter__(),
                                  headers={"X-Filename": "a.txt", "Content-Type": "text/plain"})
            # an edit of a note's words has the note's room (read whole, then answered: no such source here)
            edit = await c.patch("/v1/sources/none", content=chunked_json(),
                                 headers={"Content-Type": "application/json"})
            return [note, small, upload, edit]

    note, small, upload, edit = asyncio.run(go())
    assert note.status_code == small.status_code == upload.status_code == 202, (note.text, small.text, upload.text)
    assert edit.status_code == 404, edit.text


# --------------------------------------------------------------------------- on the wire (uvicorn)


def read_response(sock: socket.socket, timeout: float = 10.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


@pytest.fixture(scope="module")
def server(rt: Runtime) -> Iterator[int]:
    with serve_in_thread(create_app(rt, gateway=True, query=False), access_log=False) as (_url, port):
        yield port


def test_on_the_wire_a_huge_declared_note_gets_413_at_once(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.sendall(b"POST /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 314572800\r\n\r\n" + b'{"text": "' + b"x" * 1000)
        t0 = time.monotonic()
        answer = read_response(sock)
        assert answer.startswith(b"HTTP/1.1 413 ") and time.monotonic() - t0 < 5
        assert b"SB_MAX_NOTE_CHARS" in answer and b"connection: close" in answer.lower()


def test_on_the_wire_a_chunked_note_is_cut_off_at_the_limit(server: int) -> None:
    sent = 0
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        sock.sendall(b"POST /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        block = b"x" * BLOCK
        chunk = f"{len(block):x}\r\n".encode() + block + b"\r\n"
        sock.settimeout(0.5)
        answer = b""
        try:
            while sent < HUGE:
                sock.sendall(chunk)
                sent += len(block)
                if sent % (64 * BLOCK) == 0:  # every MB: has the server answered?
                    sock.setblocking(False)
                    with contextlib.suppress(BlockingIOError):
                        answer = sock.recv(65536)
                    sock.settimeout(0.5)
                    if answer:
                        break
        except OSError:  # the server closed the connection after its answer
            pass
        answer += read_response(sock)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"SB_MAX_NOTE_CHARS" in answer
    # The client got to send the limit plus what the sockets buffer, not 300 MB.
    assert sent < NOTE_LIMIT + 16 * 1024 * 1024, sent
