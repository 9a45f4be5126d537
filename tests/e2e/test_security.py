"""Hostile and broken input against a running `secondbrain up`: a 4xx or a failed job with a sentence,
never a 500, a stalled pipeline or bytes left behind.

Every kind of bad input in ``CASES`` is sent the way a client (or a web page) would send it.  For each:
the status and the reason a person reads (at the door, or on the job when the problem is inside the
file); then the server still answers ``/healthz``, a good note sent right after becomes searchable,
and the object store and Postgres agree (no object without its row, no row without its object).
Then the DNS-rebinding, cross-site and key-less requests of the threat model, each refused.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from devtools import gen_audio, gen_office, gen_pdf_image
from devtools.gen_exports import damaged_zip
from secondbrain.stores.objects_fs import FileObjectStore
from tests.e2e.harness import Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

UPLOAD_LIMIT = 4 * 1024 * 1024
NOTE_LIMIT = 200_000


# --------------------------------------------------------------------------- a site that redirects inward


class Redirector:
    """A web server on 127.0.0.2 (opened to the fetcher on purpose) whose page redirects to 127.0.0.1."""

    def __init__(self, target: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/robots.txt":
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(302)
                self.send_header("Location", target)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.2:{self.server.server_address[1]}/article"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Running:
    svc: Service
    data: Path
    redirector: Redirector

    def client(self) -> httpx.Client:
        return self.svc.client(timeout=60)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    redirector = Redirector("http://127.0.0.1:1/admin")  # the port does not matter: it is never reached
    with readable_tmp("sb-sec-") as root:
        data = root / "data"
        svc = Service("up", ["up", "--data-dir", str(data)], {
            "SB_MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT), "SB_MAX_NOTE_CHARS": str(NOTE_LIMIT),
            "SB_FETCH_ALLOW_NETWORKS": "127.0.0.2/32", "SB_FETCH_RESPECT_ROBOTS": "false",
        }, tmp_path_factory.mktemp("sec-logs"))
        svc.start().wait_ready(timeout=180)
        try:
            yield Running(svc, data, redirector)
        finally:
            svc.stop()
            redirector.close()


# --------------------------------------------------------------------------- the checks after every case


def postgres(data: Path) -> psycopg.Connection[Any]:
    """A connection to the embedded Postgres of ``up`` (its socket and port from postmaster.pid)."""
    lines = (data / "postgres" / "postmaster.pid").read_text().splitlines()
    return psycopg.connect(host=lines[4], port=lines[3], user="postgres", dbname="postgres", autocommit=True)


def orphans(data: Path) -> list[str]:
    """Objects without their row and rows without their object (raw files and extracted documents)."""
    keys = {o.key for o in FileObjectStore(data / "objects").list("users/")}
    with postgres(data) as conn:
        raw = {r[0] for r in conn.execute("SELECT object_key FROM artifacts WHERE raw_purged_at IS NULL")}
        docs = {r[0] for r in conn.execute("SELECT document_id FROM documents")}
    stored_raw = {k for k in keys if "/artifacts/" in k}
    stored_docs = {k.split("/documents/")[1].split("/")[0] for k in keys if "/documents/" in k}
    return sorted({f"object without row: {k}" for k in stored_raw - raw}
                  | {f"row without object: {k}" for k in raw - stored_raw}
                  | {f"document object without row: {d}" for d in stored_docs - docs})


_canary = itertools.count(1)


def still_works(running: Running, client: httpx.Client) -> None:
    """Healthy, a good note becomes searchable, and nothing is orphaned."""
    assert client.get("/healthz").status_code == 200
    word = f"zephyrcanary{next(_canary)}"
    job = client.post("/v1/notes", json={"text": f"The {word} note was written after a bad request."})
    assert job.status_code == 202, job.text
    assert wait_jobs(client, [job.json()["job_id"]], timeout=90)[job.json()["job_id"]]["status"] == "succeeded"
    hits = client.get("/v1/search", params={"q": word, "mode": "sparse"}).json()["hits"]
    assert any(word in h["text"] for h in hits)
    assert orphans(running.data) == []


# --------------------------------------------------------------------------- the bad-input matrix


Send = Callable[[httpx.Client, Running], httpx.Response]


@dataclass(frozen=True)
class Case:
    name: str
    send: Send
    status: int
    reason: str  # in the answer's detail (4xx), or in the failed job's error (202)
    job: bool = False  # accepted at the door; the job must end failed with ``reason``


def upload(name: str, data: bytes | Callable[[], bytes], ctype: str = "application/octet-stream",
           **fields: str) -> Send:
    def send(c: httpx.Client, _r: Running) -> httpx.Response:
        raw = data() if callable(data) else data
        return c.post("/v1/artifacts", files={"file": (name, raw, ctype)}, data=fields)
    return send


def import_upload(name: str, data: bytes) -> Send:
    return lambda c, _r: c.post("/v1/imports", files={"file": (name, data, "application/octet-stream")})


def batch_note(text: bytes) -> Send:
    manifest = {"format": "notes", "captures": [{"source_uri": "import:notes:big.md", "kind": "note", "title": "Big",
                                                 "part": "p0", "content_type": "text/markdown",
                                                 "attributes": {"kind": "note"}}]}
    return lambda c, _r: c.post("/v1/imports/batch", files=[("manifest", (None, json.dumps(manifest),
                                                                          "application/json")),
                                                            ("p0", ("big.md", text, "text/markdown"))])


ENDLESS_HOURLY = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:pump@example.org\r\n"
                  b"DTSTART:20240101T000000Z\r\nSUMMARY:Pump\r\nRRULE:FREQ=HOURLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def raw_post(path: str, body: bytes, ctype: str, **headers: str) -> Send:
    return lambda c, _r: c.post(path, content=body, headers={"Content-Type": ctype, **headers})


def note(**body: Any) -> Send:
    return lambda c, _r: c.post("/v1/notes", json=body)


def url(target: str | Callable[[Running], str]) -> Send:
    return lambda c, r: c.post("/v1/urls", json={"url": target(r) if callable(target) else target})


def raw_request(line: bytes) -> Send:
    """A request written on the socket (a request line no HTTP library would send)."""
    def send(c: httpx.Client, r: Running) -> httpx.Response:
        with socket.create_connection(("127.0.0.1", r.svc.port), timeout=30) as sock:
            sock.sendall(line + b"\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head and (chunk := sock.recv(65536)):
                head += chunk
            rest = head.split(b"\r\n\r\n", 1)[1]
            while chunk := sock.recv(65536):
                rest += chunk
        status = int(head.split(b" ", 2)[1])
        return httpx.Response(status, content=rest, headers={"content-type": "application/json"})
    return send


def twice_with(key: str, first: bytes, second: bytes) -> Send:
    def send(c: httpx.Client, _r: Running) -> httpx.Response:
        headers = {"Idempotency-Key": key}
        assert c.post("/v1/artifacts", files={"file": ("same.txt", first, "text/plain")}, headers=headers) \
            .status_code == 202
        return c.post("/v1/artifacts", files={"file": ("same.txt", second, "text/plain")}, headers=headers)
    return send


def silent_wav() -> bytes:
    with readable_tmp("sb-sec-audio-") as d:
        return gen_audio.silence(d / "quiet.wav", 4.0).read_bytes()


def corrupt_mp3() -> bytes:
    with readable_tmp("sb-sec-audio-") as d:
        return b"ID3\x03\x00\x00\x00\x00\x00\x00" + gen_audio.corrupt_file(d / "x.mp3").read_bytes()


MULTIPART = "multipart/form-data; boundary=XyZ"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
CASES: list[Case] = [
    # Notes and JSON bodies
    Case("NUL in a title", note(text="ok", title="a\x00b"), 422, "NUL"),
    Case("lone surrogate in JSON", raw_post("/v1/notes", b'{"text": "bad \\ud800 text"}', "application/json"),
         422, "surrogate"),
    Case("empty note", note(text="   "), 422, "empty"),
    Case("2 MB title", note(text="ok", title="T" * 2_000_000), 422, "at most 500 characters"),
    Case("note over the limit", note(text="n" * (NOTE_LIMIT + 1)), 413, "Upload it as a file"),
    Case("deeply nested JSON", raw_post("/v1/notes", b"[" * 200_000 + b"]" * 200_000, "application/json"), 422,
         "nested too deeply"),
    Case("invalid JSON", raw_post("/v1/notes", b'{"text": "unterminated', "application/json"), 422, "JSON"),
    Case("wrong content type", raw_post("/v1/notes", b"just text", "text/plain"), 422, "valid dictionary"),
    Case("Idempotency-Key reused with another body", twice_with("k-1", b"first version", b"other content"),
         422, "Idempotency-Key"),
    # Uploads
    Case("empty file", upload("empty.md", b"", "text/markdown"), 422, "empty"),
    Case("upload over the limit", upload("big.bin", b"\0" * (UPLOAD_LIMIT + 1024 * 1024), "application/pdf"),
         413, "SB_MAX_UPLOAD_BYTES"),
    Case("multipart without a boundary", raw_post("/v1/artifacts", b"--x\r\n", "multipart/form-data"), 400,
         "no boundary"),
    Case("multipart cut short", raw_post("/v1/artifacts", b'--XyZ\r\nContent-Disposition: form-data; name="file"; '
                                         b'filename="a.txt"\r\n\r\nhello', MULTIPART), 400, "closing boundary"),
    Case("two file parts", raw_post("/v1/artifacts", b'--XyZ\r\nContent-Disposition: form-data; name="file"; '
                                    b'filename="a"\r\n\r\na\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; '
                                    b'filename="b"\r\n\r\nb\r\n--XyZ--\r\n', MULTIPART), 400, "exactly one"),
    Case("NUL in a form field", upload("n.txt", b"hello there", "text/plain", title="x\x00y"), 422, "NUL"),
    Case("captured_at that is not a time", upload("t.txt", b"some text", "text/plain", captured_at="yesterday-ish"),
         422, "ISO 8601"),
    # Addresses
    Case("NUL in the path", lambda c, _r: c.get("/v1/jobs/abc%00def"), 400, "NUL"),
    Case("path traversal in an artifact id", lambda c, _r: c.get("/v1/artifacts/..%2F..%2Fetc%2Fpasswd/raw"), 404,
         "not found"),
    Case("dots for an artifact id", lambda c, _r: c.get("/v1/artifacts/../raw"), 404, "not found"),
    Case("70 KB request line", raw_request(b"GET /v1/sources?q=" + b"x" * 70_000 + b" HTTP/1.1"), 431,
         "request line and headers"),
    Case("40 KB of headers", lambda c, _r: c.get("/v1/sources", headers={"X-Junk": "j" * 40_000}), 431, "limit"),
    # Web pages: refused at the door when the address says it all, by the fetcher otherwise
    Case("file:// URL", url("file:///etc/passwd"), 422, "only http and https"),
    Case("loopback URL", url(lambda r: f"http://127.0.0.1:{r.svc.port}/v1/export"), 422, "loopback"),
    Case("decimal loopback", url("http://2130706433/"), 422, "loopback"),
    Case("hex loopback", url("http://0x7f000001/"), 422, "loopback"),
    Case("short-form loopback", url("http://127.1/"), 422, "loopback"),
    Case("IPv6-mapped loopback", url("http://[::ffff:127.0.0.1]/"), 422, "loopback"),
    Case("localhost by name", url(lambda r: f"http://localhost:{r.svc.port}/"), 422, "loopback"),
    Case("private network", url("http://10.0.0.1/router"), 422, "private network"),
    Case("link-local metadata address", url("http://169.254.169.254/latest/meta-data/"), 422, "link-local"),
    Case("redirect to loopback", url(lambda r: r.redirector.url), 202, "loopback", job=True),
    # Imports: a broken archive names what is wrong; the batch keeps the note limit; an endless rule is one event
    Case("zip with a wrong CRC", import_upload("notes.zip", damaged_zip("crc")), 422, "checksum is wrong"),
    Case("encrypted zip", import_upload("notes.zip", damaged_zip("encrypted")), 422, "encrypted"),
    Case("zip cut short", import_upload("notes.zip", damaged_zip("truncated")), 422, "incomplete"),
    Case("a batch note over the note limit", batch_note(b"# Big\n\n" + b"x" * (NOTE_LIMIT + 1)), 200,
         "SB_MAX_NOTE_CHARS"),
    Case("an endless hourly calendar rule", import_upload("pump.ics", ENDLESS_HOURLY), 202, '"imported": 1'),
    # Files whose problem is inside: accepted, then the job fails with a reason
    Case("truncated PDF", upload("broken.pdf", gen_pdf_image.truncated_pdf, "application/pdf"), 202, "damaged",
         job=True),
    Case("encrypted PDF", upload("locked.pdf", gen_pdf_image.encrypted_pdf, "application/pdf"), 202, "password",
         job=True),
    Case("a PNG named .pdf", upload("report.pdf", lambda: gen_pdf_image.text_photo("PNG"), "application/pdf"), 202,
         "PNG image", job=True),
    Case("a program", upload("setup.exe", b"MZ\x90\x00" + bytes(range(256)) * 8, "application/x-msdownload"),
         202, "unsupported", job=True),
    Case("zip bomb (.docx of 1 MB unpacking to 1 GiB)", upload("bomb.docx", gen_office.make_docx_bomb, DOCX), 202,
         "zip bomb", job=True),
    Case("25,000 empty paragraphs", upload("empty-paras.docx",
                                           lambda: gen_office.make_docx_with_empty_paragraphs(25_000), DOCX),
         202, "paragraphs", job=True),
    Case("damaged .docx", upload("broken.docx", gen_office.make_corrupt_docx, DOCX), 202, "damaged", job=True),
    Case("pixel bomb", upload("bomb.png", lambda: gen_pdf_image.bomb_png(30_000, 30_000), "image/png"), 202,
         "decompression bomb", job=True),
    Case("silent audio", upload("quiet.wav", silent_wav, "audio/wav"), 202, "no speech", job=True),
    Case("corrupt audio", upload("noise.mp3", corrupt_mp3, "audio/mpeg"), 202, "not audio", job=True),
    Case("text in no known encoding", upload("garbage.txt", b"Notes \x81\x8d\x8f\x90\x9d " * 40, "text/plain"), 202,
         "encoding", job=True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_refused_with_a_reason_and_leaves_nothing_behind(running: Running, case: Case) -> None:
    with running.client() as client:
        r = case.send(client, running)
        assert r.status_code == case.status, (case.name, r.status_code, r.text[:300])
        if case.job:
            job = wait_jobs(client, [r.json()["job_id"]], timeout=180)[r.json()["job_id"]]
            assert job["status"] == "failed", (case.name, job)
            assert case.reason.lower() in (job["error"] or "").lower(), (case.name, job["error"])
        else:
            assert len(r.content) < 4000, "the answer repeats too much of the input"
            assert case.reason.lower() in json.dumps(r.json()).lower(), (case.name, r.text[:300])
        still_works(running, client)


def test_a_file_name_with_a_path_is_kept_as_its_last_part(running: Running) -> None:
    with running.client() as client:
        r = client.post("/v1/artifacts", files={"file": ("../../../../etc/cron.d/evil", b"a harmless line of text",
                                                         "text/plain")})
        assert r.status_code == 202
        wait_jobs(client, [r.json()["job_id"]])
        (source,) = [s for s in client.get("/v1/sources").json()["sources"] if s["job_id"] == r.json()["job_id"]]
        assert source["source_uri"] == "file:evil"
    assert not Path("/etc/cron.d/evil").exists()
    assert all(".." not in o.key for o in FileObjectStore(running.data / "objects").list("users/"))


# --------------------------------------------------------------------------- the threat model's requests


def test_rebinding_cross_site_and_keyless_requests_are_refused(running: Running) -> None:
    base, key = running.svc.url, running.svc.key
    with httpx.Client(base_url=base, timeout=30) as anyone:
        # DNS rebinding: a page on attacker.example whose name now resolves to 127.0.0.1.
        for path in ("/v1/me", "/v1/export", "/v1/sources", "/"):
            r = anyone.get(path, headers={"Host": "attacker.example", "Authorization": f"Bearer {key}"})
            assert r.status_code == 400 and "does not answer to the name" in r.json()["detail"]
        # No key: nothing, and a sentence saying where the key is.
        for method, path in (("GET", "/v1/me"), ("GET", "/v1/export"), ("POST", "/v1/keys"),
                             ("POST", "/v1/jobs/x/retry"), ("DELETE", "/v1/jobs/x"), ("GET", "/v1/status"),
                             ("GET", "/v1/settings/answers"), ("GET", "/v1/conversations?q=safe"),
                             ("GET", "/v1/deadletters"), ("POST", "/share"), ("GET", "/v1/settings/answers/found"),
                             ("POST", "/v1/settings/answers/test"), ("GET", "/v1/admin/backups"),
                             ("POST", "/v1/admin/backups")):
            r = anyone.request(method, path, json={"name": "e", "scope": "admin"} if method == "POST" else None)
            assert r.status_code == 401 and str(running.data / "api-key") in r.json()["detail"]
        # A cross-site form (the browser adds Origin), even when a key would be there.
        r = anyone.post("/v1/artifacts", files={"file": ("x.txt", b"planted", "text/plain")},
                        headers={"Origin": "http://attacker.example", "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        r = anyone.post("/v1/jobs/anything/retry", headers={"Origin": "http://attacker.example",
                                                            "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        # A share posted from another site to the installed app's share target.
        r = anyone.post("/share", data={"text": "planted"}, files={"files": ("x.txt", b"planted", "text/plain")},
                        headers={"Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site",
                                 "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        r = anyone.delete("/v1/sources/anything", headers={"Referer": "http://attacker.example/page",
                                                          "Authorization": f"Bearer {key}"})
        assert r.status_code == 403
        r = anyone.delete("/v1/jobs/anything", headers={"Origin": "http://attacker.example",
                                                        "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        # A page elsewhere cannot make the server write a backup of everyone's data.
        r = anyone.post("/v1/admin/backups", headers={"Origin": "http://attacker.example",
                                                      "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        # A page elsewhere cannot point this server's answers at a model of its choosing.
        r = anyone.put("/v1/settings/answers", json={"base_url": "http://attacker.example/v1"},
                       headers={"Origin": "http://attacker.example", "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        # Nor make it ask the answer model a question (it costs the model's time).
        r = anyone.post("/v1/settings/answers/test", json={},
                        headers={"Origin": "http://attacker.example", "Authorization": f"Bearer {key}"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        # A browser extension's origin writes with a key in a header; riding on the page's session it is refused.
        cookie = anyone.post("/v1/session", json={}, headers={"Authorization": f"Bearer {key}"}).cookies
        assert cookie
        planted = {"url": "https://bank.example/statement", "text": "planted page"}
        r = anyone.post("/v1/pages", json=planted, headers={"Origin": "chrome-extension://abcdefghijklmnop"})
        assert r.status_code == 403 and "Authorization: Bearer" in r.json()["detail"]
        r = anyone.post("/v1/pages", json=planted, headers={"Origin": "http://attacker.example"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"]
        anyone.cookies.clear()
    with running.client() as client:
        assert not any("planted" in h["text"] for h in client.get("/v1/search", params={"q": "planted"}).json()["hits"])
        sources = client.get("/v1/sources", params={"limit": 500}).json()["sources"]
        assert all(s["source_uri"] != "https://bank.example/statement" for s in sources)

