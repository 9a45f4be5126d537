"""The web app as the HTTP layer serves it, and the source list's time filter it relies on.

Real stores (Postgres, files); the browser journey itself is in ``tests/e2e/test_web.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from secondbrain.http import create_app
from secondbrain.runtime import build_runtime
from secondbrain.settings import Settings


@pytest.fixture()
def client(dsn: str, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",
        topic_prefix=f"web{tmp_path.name[-6:]}.",
    )
    rt = build_runtime(settings, vectors=False, models=False)
    with TestClient(create_app(rt, gateway=True, query=False, relay=None)) as c:
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
    assert not {"/", "/web/{name}"} & set(client.get("/openapi.json").json()["paths"])


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
