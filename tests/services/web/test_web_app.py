"""The web app as the HTTP layer serves it, and the source list's time filter it relies on.

Real stores (Postgres, files); the browser journey itself is in ``tests/e2e/test_web.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.settings import Settings
from tests.paths import REPO

STATIC = REPO / "services" / "web" / "static"
# Static imports (`import {a} from "./x.js"`, `export {a} from`, `import "./x.js"`) and dynamic ones.
IMPORT = re.compile(r'(?:\bimport|\bexport)\b[^;"\'`]*?\bfrom\s*"([^"]+)"|\bimport\s*\(?\s*"([^"]+)"')


@pytest.fixture()
def client(dsn: str, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",
        topic_prefix=f"web{tmp_path.name[-6:]}.", auth="off",  # keys are tested in test_auth.py
    )
    rt = build_runtime(settings, vectors=False, models=False)
    with TestClient(create_app(rt, gateway=True, query=False, relay=None), base_url="http://localhost") as c:
        yield c
    rt.close()


def test_the_page_and_its_files_are_served_with_a_strict_policy(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<title>secondbrain</title>" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    # everything the page links to is served, with a type the browser will run or apply
    linked = re.findall(r'(?:src|href)="(/web/[^"]+)"', page.text)
    assert {"/web/app.js", "/web/app.css", "/web/icon.svg"} <= set(linked)
    types = {"/web/app.js": "text/javascript", "/web/app.css": "text/css", "/web/icon.svg": "image/svg+xml"}
    for path, media_type in types.items():
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith(media_type), path
        again = client.get(path, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
    assert client.get("/web/../secondbrain/settings.py").status_code == 404
    assert client.get("/web/nothing.js").status_code == 404
    # the page is not part of the API description (no user data behind it)
    assert not {"/", "/web/{path}"} & set(client.get("/openapi.json").json()["paths"])


def test_every_module_the_page_imports_is_served_like_the_page(client: TestClient) -> None:
    # Walk the import graph from the entry the page loads, as the browser does.
    entry = re.findall(r'<script type="module" src="(/web/[^"]+)"', client.get("/").text)
    assert entry == ["/web/app.js"]
    seen: set[str] = set()
    todo = list(entry)
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        r = client.get(url)
        assert r.status_code == 200, url
        assert r.headers["content-type"] == "text/javascript; charset=utf-8", url
        assert "script-src 'self'" in r.headers["content-security-policy"], url
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["cache-control"] == "no-cache", url
        assert client.get(url, headers={"If-None-Match": r.headers["etag"]}).status_code == 304, url
        for found in IMPORT.finditer(r.text):
            specifier = found.group(1) or found.group(2)
            # Relative only: a bare name ("lib") would need an import map or a bundler.
            assert specifier.startswith(("./", "../")), f"{url} imports {specifier}"
            todo.append(urljoin(url, specifier))
    # Every module in the folder is part of the page (none shipped but dead), and all are reached.
    on_disk = {"/web/app.js"} | {f"/web/js/{f.name}" for f in (STATIC / "js").glob("*.js")}
    assert seen == on_disk
    # The page asks for every module up front rather than one import level at a time.
    preloaded = set(re.findall(r'<link rel="modulepreload" href="(/web/[^"]+)">', client.get("/").text))
    assert preloaded == on_disk - {"/web/app.js"}
    assert len(seen) > 5  # the page is split into modules, not one file


def test_the_bookmarklet_window_is_a_static_page_that_cannot_be_framed(client: TestClient) -> None:
    before = client.get("/v1/sources").json()["sources"]
    # What to save travels in the fragment; even a query asking to save something saves nothing.
    r = client.get("/save", params={"url": "https://example.org/", "selection": "a quote", "text": "t"})
    assert r.status_code == 200 and "<title>Save to secondbrain</title>" in r.text
    assert r.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert "unsafe" not in r.headers["content-security-policy"]
    assert '<script type="module" src="/web/save.js">' in r.text
    assert client.post("/save").status_code == 405
    assert client.get("/v1/sources").json()["sources"] == before
    script = client.get("/web/save.js")
    assert script.status_code == 200 and script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert '"/v1/pages"' in script.text and "preventDefault" in script.text  # saves on the form's submit only


def test_nothing_but_the_listed_files_is_served_under_web(client: TestClient) -> None:
    assert client.get("/web/js/ask.js").status_code == 200
    for path in ("/web/js/nothing.js", "/web/nothing.js", "/web/index.html", "/web/js/", "/web/js",
                 "/web/static/app.js", "/web/JS/ask.js", "/web/js/ask.js.map", "/web/js/ask",
                 "/web/js/..%2Fapp.js", "/web/js/%2E%2E/app.js",  # (a plain "/../" the client resolves)
                 "/web/..%2F__init__.py", "/web/..%2F..%2F..%2Fpyproject.toml", "/web/%2E%2E/session.py",
                 "/web/js%2F..%2F..%2F__init__.py", "/web//etc/passwd", "/web/%2Fetc%2Fpasswd"):
        r = client.get(path)
        assert r.status_code == 404, (path, r.status_code)
        assert b"import" not in r.content and b"def " not in r.content, path


def test_the_source_list_filters_by_captured_time(client: TestClient) -> None:
    old = client.post("/v1/notes", json={"text": "Ferry timetable 2020", "captured_at": "2020-06-01T10:00:00+02:00"})
    new = client.post("/v1/notes", json={"text": "A note from now"})
    assert old.status_code == new.status_code == 202

    def listed(**params: str) -> list[str]:
        r = client.get("/v1/sources", params=params)
        assert r.status_code == 200, r.text
        return [s["job_id"] for s in r.json()["sources"]]

    assert listed(**{"from": "2020-06-01T00:00:00+02:00", "to": "2020-06-02T00:00:00+02:00"}) == [old.json()["job_id"]]
    assert listed(**{"from": "2020-06-01T08:00:00", "to": "2020-06-01T08:00:01"}) == [old.json()["job_id"]]  # UTC
    assert listed(**{"from": "2024-01-01T00:00:00Z"}) == [new.json()["job_id"]]  # not extracted yet: submitted now
    assert listed(to="2020-06-01T08:00:00Z") == []  # the end is exclusive
    assert len(listed()) == 2
    assert client.get("/v1/sources", params={"from": "last week"}).status_code == 422
