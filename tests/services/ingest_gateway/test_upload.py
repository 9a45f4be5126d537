"""Uploads are read as they stream in: hashed and spooled block by block, refused the moment
they pass the size limit, with answers a person can act on.

The first half feeds :func:`read_multipart` / :func:`read_raw` from async generators; the
second half talks HTTP (httpx and a raw socket) to the real gateway app served by uvicorn on
a loopback port, over a throw-away Postgres database.
"""

from __future__ import annotations

import hashlib
import select
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from fastapi import HTTPException
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain import uploads
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.uploads import FIELD_LIMIT, read_multipart, read_raw
from tests.pg import base_dsn, fresh_database
from tests.serving import serve_in_thread

BOUNDARY = "sb-test-boundary-7Hq2"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


# --------------------------------------------------------------------------- helpers


def part(name: str, data: bytes, *, filename: str | None = None, content_type: str | None = None) -> bytes:
    """One multipart/form-data part, with its opening boundary."""
    disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    head = f"--{BOUNDARY}\r\nContent-Disposition: {disp}\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + data + b"\r\n"


def form(*parts: bytes) -> bytes:
    """A complete multipart body: the parts and the closing boundary."""
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


class Blocks:
    """An async source of byte blocks that counts how many were pulled."""

    def __init__(self, body: bytes, size: int) -> None:
        self.blocks = [body[i:i + size] for i in range(0, len(body), size)]
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for block in self.blocks:
            self.pulled += 1
            yield block


class Endless:
    """A body that never ends unless the reader stops: pulls are counted."""

    def __init__(self, first: bytes, block: bytes, most: int) -> None:
        self.first, self.block, self.most, self.pulled = first, block, most, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self.pulled += 1
        yield self.first
        while self.pulled < self.most:
            self.pulled += 1
            yield self.block


@pytest.fixture()
def spooled(monkeypatch: pytest.MonkeyPatch) -> list[IO[bytes]]:
    """Every temporary file the upload reader opens, to check it is closed on refusal."""
    import tempfile as real

    opened: list[IO[bytes]] = []

    class Recording:
        @staticmethod
        def TemporaryFile() -> IO[bytes]:  # the name the module calls
            f = real.TemporaryFile()  # noqa: SIM115 - closed by the code under test
            opened.append(f)
            return f

    monkeypatch.setattr(uploads, "tempfile", Recording)
    return opened


async def refused(coro: Any) -> HTTPException:
    with pytest.raises(HTTPException) as info:
        await coro
    return info.value


# --------------------------------------------------------------------------- read_multipart


@pytest.mark.parametrize("block", [1, 7, 64, 65536])
async def test_the_file_part_is_hashed_and_spooled_with_its_fields(block: int) -> None:
    data = ("# Trip\n\nTrain to Lyon, café at noon.\r\n--not-the-boundary\r\n" * 40).encode()
    body = form(part("title", "Lyon trip — plan".encode()),
                part("file", data, filename="trip plan.md", content_type="text/markdown; charset=utf-8"),
                part("captured_at", b"2026-04-01T09:30:00+02:00"))
    up = await read_multipart(aiter(Blocks(body, block)), MULTIPART, limit=len(data))
    try:
        assert up.size == len(data)
        assert up.sha256 == hashlib.sha256(data).hexdigest()
        assert up.file.read() == data
        assert up.filename == "trip plan.md"
        assert up.content_type == "text/markdown; charset=utf-8"
        assert up.fields == {"title": "Lyon trip — plan", "captured_at": "2026-04-01T09:30:00+02:00"}
    finally:
        up.close()
    assert up.file.closed


async def test_a_quoted_boundary_and_a_part_without_type_or_name() -> None:
    body = form(part("file", b"plain bytes"))
    up = await read_multipart(aiter(Blocks(body, 5)), f'multipart/form-data; boundary="{BOUNDARY}"', limit=100)
    assert (up.filename, up.content_type, up.file.read()) == (None, None, b"plain bytes")
    up.close()


async def test_a_non_ascii_file_name_is_decoded() -> None:
    body = form(part("file", b"x", filename="Résumé 2026.md", content_type="text/markdown"))
    up = await read_multipart(aiter(Blocks(body, 3)), MULTIPART, limit=100)
    assert up.filename == "Résumé 2026.md"
    up.close()


async def test_two_file_parts_are_refused(spooled: list[IO[bytes]]) -> None:
    body = form(part("file", b"one", filename="a.md"), part("file", b"two", filename="b.md"))
    err = await refused(read_multipart(aiter(Blocks(body, 16)), MULTIPART, limit=100))
    assert err.status_code == 400 and "exactly one 'file' part" in err.detail
    assert [f.closed for f in spooled] == [True]


async def test_a_form_without_a_file_part_is_422() -> None:
    body = form(part("title", b"only a title"))
    err = await refused(read_multipart(aiter(Blocks(body, 16)), MULTIPART, limit=100))
    assert err.status_code == 422 and "multipart field 'file'" in err.detail


@pytest.mark.parametrize("cut", [10, 60, -20, -3])
async def test_a_body_cut_before_the_closing_boundary_is_400(cut: int, spooled: list[IO[bytes]]) -> None:
    body = form(part("file", b"0123456789" * 10, filename="a.txt"))
    err = await refused(read_multipart(aiter(Blocks(body[:cut], 8)), MULTIPART, limit=1000))
    assert err.status_code == 400 and "ended before its closing boundary" in err.detail
    assert all(f.closed for f in spooled)


async def test_an_empty_body_is_400() -> None:
    err = await refused(read_multipart(aiter(Blocks(b"", 8)), MULTIPART, limit=1000))
    assert err.status_code == 400 and "closing boundary" in err.detail


@pytest.mark.parametrize("header", ["multipart/form-data", "multipart/form-data; charset=utf-8",
                                    "multipart/form-data; boundary="])
async def test_a_content_type_without_boundary_is_400(header: str) -> None:
    body = form(part("file", b"x", filename="a.txt"))
    err = await refused(read_multipart(aiter(Blocks(body, 8)), header, limit=1000))
    assert err.status_code == 400 and "no boundary" in err.detail


async def test_an_overlong_boundary_is_400_not_a_server_error(spooled: list[IO[bytes]]) -> None:
    err = await refused(read_multipart(aiter(Blocks(b"--x", 8)), "multipart/form-data; boundary=" + "b" * 300,
                                       limit=1000))
    assert err.status_code == 400 and "Boundary length 300" in err.detail
    assert all(f.closed for f in spooled)


@pytest.mark.parametrize(("body", "words"), [
    (f"--{BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n--{BOUNDARY}--\r\n".encode(), "has no form-data name"),
    (f"--{BOUNDARY}\r\nnot a header line\r\n\r\nx\r\n--{BOUNDARY}--\r\n".encode(), "invalid character"),
    (f"--{BOUNDARY}X\r\n".encode(), "malformed multipart body"),
], ids=["no-disposition", "bad-header", "bad-boundary"])
async def test_malformed_parts_are_400_with_the_reason(body: bytes, words: str) -> None:
    err = await refused(read_multipart(aiter(Blocks(body, 4)), MULTIPART, limit=1000))
    assert err.status_code == 400 and err.detail.startswith("malformed multipart body") and words in err.detail


async def test_an_oversized_form_field_is_413() -> None:
    body = form(part("title", b"t" * (FIELD_LIMIT + 1)), part("file", b"x", filename="a.txt"))
    err = await refused(read_multipart(aiter(Blocks(body, 4096)), MULTIPART, limit=1000))
    assert err.status_code == 413 and "form field 'title'" in err.detail


async def test_too_many_fields_are_refused() -> None:
    body = form(*(part(f"f{i}", b"v") for i in range(uploads.MAX_FIELDS + 1)), part("file", b"x"))
    err = await refused(read_multipart(aiter(Blocks(body, 64)), MULTIPART, limit=1000))
    assert err.status_code == 400 and "too many form fields" in err.detail


async def test_a_file_at_the_limit_passes_and_one_byte_more_does_not() -> None:
    ok = await read_multipart(aiter(Blocks(form(part("file", b"a" * 1000)), 100)), MULTIPART, limit=1000)
    assert ok.size == 1000
    ok.close()
    err = await refused(read_multipart(aiter(Blocks(form(part("file", b"a" * 1001)), 100)), MULTIPART, limit=1000))
    assert err.status_code == 413 and "1000-byte limit" in err.detail and "SB_MAX_UPLOAD_BYTES" in err.detail


async def test_an_oversized_file_is_refused_as_soon_as_it_passes_the_limit(spooled: list[IO[bytes]]) -> None:
    head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'.encode()
    source = Endless(head, b"z" * 65536, most=10_000)  # 655 MB if read to the end
    err = await refused(read_multipart(aiter(source), MULTIPART, limit=1_000_000))
    assert err.status_code == 413
    # 1 MB limit / 64 KB blocks: refused on the 17th file block, never reading on
    assert source.pulled == 1 + 16
    assert len(spooled) == 1 and spooled[0].closed


async def test_a_disk_error_is_not_blamed_on_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    class FullDisk:
        @staticmethod
        def TemporaryFile() -> Any:
            class F:
                closed = False

                def write(self, _data: bytes) -> int:
                    raise OSError(28, "No space left on device")

                def close(self) -> None:
                    self.closed = True
            return F()

    monkeypatch.setattr(uploads, "tempfile", FullDisk)
    with pytest.raises(OSError, match="No space left"):
        await read_multipart(aiter(Blocks(form(part("file", b"data")), 8)), MULTIPART, limit=100)


# --------------------------------------------------------------------------- read_raw


async def test_a_raw_body_is_hashed_and_spooled() -> None:
    data = bytes(range(256)) * 300
    up = await read_raw(aiter(Blocks(data, 1000)), limit=len(data), filename="dump.bin",
                        content_type="application/octet-stream")
    assert (up.size, up.sha256, up.filename, up.content_type) == (
        len(data), hashlib.sha256(data).hexdigest(), "dump.bin", "application/octet-stream")
    assert up.file.read() == data and up.fields == {}
    up.close()


async def test_a_raw_body_over_the_limit_stops_reading(spooled: list[IO[bytes]]) -> None:
    source = Endless(b"x" * 65536, b"x" * 65536, most=10_000)
    err = await refused(read_raw(aiter(source), limit=1_000_000, filename=None, content_type=None))
    assert err.status_code == 413
    assert source.pulled == 16  # 16 x 64 KB = 1,048,576 > 1,000,000
    assert len(spooled) == 1 and spooled[0].closed


# --------------------------------------------------------------------------- through HTTP

LIMIT = 1_000_000


@dataclass
class Served:
    url: str
    port: int
    rt: Runtime


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp: Path = tmp_path_factory.mktemp("upload")
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(  # type: ignore[call-arg]
            data_dir=tmp, postgres_dsn=SecretStr(dsn), max_upload_bytes=LIMIT,
            kafka_bootstrap="127.0.0.1:9",  # nothing listens: uploads are accepted all the same
            topic_prefix=f"up{tmp.name[-6:]}.", auth="off",  # keys are tested in test_auth.py
        )
        rt = build_runtime(settings, vectors=False, models=False)
        try:
            with serve_in_thread(create_app(rt, gateway=True, query=False, relay=None), timeout=15,
                                 access_log=False) as (url, port):
                yield Served(url, port, rt)
        finally:
            rt.close()


@pytest.fixture()
def client(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, timeout=20) as c:
        yield c


def test_a_multipart_upload_is_accepted(client: httpx.Client) -> None:
    data = b"# Standup\n\nShip the upload streaming.\n"
    r = client.post("/v1/artifacts", files={"file": ("standup.md", data, "text/markdown")},
                    data={"title": "Standup notes", "captured_at": "2026-04-01T09:30:00"})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status"] == "queued" and body["job_id"] and r.headers["location"] == body["status_url"]
    job = client.get(body["status_url"]).json()
    assert (job["title"], job["source_uri"], job["status"]) == ("Standup notes", "file:standup.md", "queued")


def test_a_raw_body_with_x_filename_is_accepted(client: httpx.Client, served: Served) -> None:
    data = b"# Reading list\n\n- Dune\n"
    r = client.post("/v1/artifacts", content=data,
                    headers={"Content-Type": "text/markdown", "X-Filename": "notes.md"})
    assert r.status_code == 202, r.text
    job = client.get(r.json()["status_url"]).json()
    assert job["source_uri"] == "file:notes.md"
    stored = served.rt.objects.list("users/local/artifacts/")
    assert [o.size for o in stored if o.key.endswith(r.json()["artifact_id"])] == [len(data)]


def _read_response(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """What the server answered, up to its end or the connection's."""
    sock.settimeout(timeout)
    got = b""
    while True:
        try:
            more = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            return got
        if not more:
            return got
        got += more
        head, sep, rest = got.partition(b"\r\n\r\n")
        if sep:
            length = [int(v) for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
                      if k.strip().lower() == b"content-length"]
            if length and len(rest) >= length[0]:
                return got


def test_a_chunked_upload_over_the_limit_is_refused_while_streaming(served: Served) -> None:
    total = 50 * 1024 * 1024
    head = (f"POST /v1/artifacts HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: {MULTIPART}\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode()
    first = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n'.encode()
    block = b"\x5a" * 65536
    frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
    sent = 0
    answered = False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # a small send buffer: what counts as "sent" is what left this process, not what the kernel queued
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        sock.settimeout(10)
        sock.connect(("127.0.0.1", served.port))
        sock.sendall(head + f"{len(first):x}\r\n".encode() + first + b"\r\n")
        sock.setblocking(False)
        pending = memoryview(b"")
        deadline = time.monotonic() + 30
        while sent < total and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 5)
            if readable:
                answered = True  # the server spoke (or hung up) before the body ended
                break
            if not writable:
                continue
            if not pending:
                pending = memoryview(frame)
            try:
                n = sock.send(pending)
            except (BrokenPipeError, ConnectionResetError):
                answered = True
                break
            pending = pending[n:]
            sent += n
        sock.setblocking(True)
        response = _read_response(sock)
    assert answered, f"the server read all {sent} bytes without answering"
    assert response.startswith(b"HTTP/1.1 413 "), response[:300]
    assert b"SB_MAX_UPLOAD_BYTES" in response
    assert sent < 5 * 1024 * 1024, f"{sent} bytes went out before the refusal"  # 1.4 MB measured


def test_a_declared_length_over_the_limit_is_refused_before_the_body(served: Served) -> None:
    head = (f"POST /v1/artifacts HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: {MULTIPART}\r\n"
            f"Content-Length: {50 * 1024 * 1024}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(head)  # and not one byte of the body
        t0 = time.monotonic()
        response = _read_response(sock, timeout=5)
        waited = time.monotonic() - t0
    assert response.startswith(b"HTTP/1.1 413 "), response[:300]
    assert b"1000000-byte limit" in response
    assert waited < 3


def test_an_empty_file_is_422(client: httpx.Client) -> None:
    r = client.post("/v1/artifacts", files={"file": ("empty.md", b"", "text/markdown")})
    assert r.status_code == 422 and "empty" in r.json()["detail"]
    raw = client.post("/v1/artifacts", content=b"", headers={"Content-Type": "text/plain", "X-Filename": "a.txt"})
    assert raw.status_code == 422


def test_a_malformed_multipart_body_is_400_with_a_reason(client: httpx.Client) -> None:
    cut = form(part("file", b"half a file", filename="a.md"))[:-12]
    r = client.post("/v1/artifacts", content=cut, headers={"Content-Type": MULTIPART})
    assert r.status_code == 400
    assert r.json()["detail"] == "malformed multipart body: it ended before its closing boundary"
    nameless = f"--{BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n--{BOUNDARY}--\r\n".encode()
    r = client.post("/v1/artifacts", content=nameless, headers={"Content-Type": MULTIPART})
    assert r.status_code == 400 and "a part has no form-data name" in r.json()["detail"]
    r = client.post("/v1/artifacts", content=b"x", headers={"Content-Type": "multipart/form-data"})
    assert r.status_code == 400 and "no boundary" in r.json()["detail"]


def test_a_bad_captured_at_is_422(client: httpx.Client) -> None:
    r = client.post("/v1/artifacts", files={"file": ("a.md", b"# a", "text/markdown")},
                    data={"captured_at": "last tuesday"})
    assert r.status_code == 422 and "ISO 8601" in r.json()["detail"]


@pytest.mark.parametrize(("sent_name", "kept"), [
    ("../../etc/passwd.md", "passwd.md"),
    ("..\\..\\Windows\\win.ini.txt", "win.ini.txt"),
    ("/var/tmp/./report final.md", "report final.md"),
])
def test_a_path_in_the_file_name_keeps_only_its_last_component(client: httpx.Client, sent_name: str,
                                                               kept: str) -> None:
    data = f"# {kept}\n\nunique {time.time_ns()}\n".encode()
    r = client.post("/v1/artifacts", files={"file": (sent_name, data, "text/markdown")})
    assert r.status_code == 202, r.text
    artifact = r.json()["artifact_id"]
    sources = client.get("/v1/sources", params={"limit": 500}).json()["sources"]
    assert [s["source_uri"] for s in sources if s["artifact_id"] == artifact] == [f"file:{kept}"]
    assert client.get(r.json()["status_url"]).json()["source_uri"] == f"file:{kept}"
