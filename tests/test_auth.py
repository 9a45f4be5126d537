"""Bearer API keys on the HTTP API: who a request acts as, and who gets nothing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from secondbrain.http import create_app
from secondbrain.runtime import Runtime, build_runtime
from secondbrain.settings import Settings


def runtime(dsn: str, tmp_path: Path, **settings: Any) -> Runtime:
    s = Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                 **settings)
    rt = build_runtime(s, vectors=False, models=False)
    for user in ("alice", "bob", "local"):
        rt.metadata.ensure_user(user)
    return rt


@pytest.fixture()
def required(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, Runtime]]:
    rt = runtime(dsn, tmp_path, auth="required")
    with TestClient(create_app(rt, gateway=True, query=False)) as client:
        yield client, rt
    rt.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_every_endpoint_but_health_needs_a_valid_key(required: tuple[TestClient, Runtime]) -> None:
    client, _rt = required
    for method, path in [("GET", "/v1/sources"), ("GET", "/v1/jobs/x"), ("POST", "/v1/notes"),
                         ("POST", "/v1/urls"), ("POST", "/v1/artifacts")]:
        r = client.request(method, path)
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.headers["www-authenticate"] == "Bearer" and "API key" in r.json()["detail"]
    for bad in ("Bearer nope", "Bearer sb_123_fake", "Basic YWxpY2U6eA==", "Bearer "):
        assert client.get("/v1/sources", headers={"Authorization": bad}).status_code == 401
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code in (200, 503)  # open, whatever the dependencies say


def test_a_key_acts_as_its_user_only(required: tuple[TestClient, Runtime]) -> None:
    client, rt = required
    _, alice = rt.metadata.create_api_key("alice", "test")
    _, bob = rt.metadata.create_api_key("bob", "test")
    r = client.post("/v1/notes", json={"text": "Alice's secret plan"}, headers=bearer(alice))
    assert r.status_code == 202
    job = r.json()["job_id"]
    assert client.get(f"/v1/jobs/{job}", headers=bearer(alice)).status_code == 200
    assert client.get(f"/v1/jobs/{job}", headers=bearer(bob)).status_code == 404
    assert [s["job_id"] for s in client.get("/v1/sources", headers=bearer(alice)).json()["sources"]] == [job]
    assert client.get("/v1/sources", headers=bearer(bob)).json()["sources"] == []


def test_a_revoked_key_stops_working(required: tuple[TestClient, Runtime]) -> None:
    client, rt = required
    info, key = rt.metadata.create_api_key("alice", "old phone")
    assert client.get("/v1/sources", headers=bearer(key)).status_code == 200
    rt.metadata.revoke_api_key("alice", info.key_id)
    r = client.get("/v1/sources", headers=bearer(key))
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


def test_auto_mode_on_loopback_lets_the_local_user_in_and_keys_still_count(dsn: str, tmp_path: Path) -> None:
    rt = runtime(dsn, tmp_path, auth="auto", host="127.0.0.1")
    try:
        with TestClient(create_app(rt, gateway=True, query=False)) as client:
            assert client.get("/v1/sources").status_code == 200  # the default local user
            _, bob = rt.metadata.create_api_key("bob", "t")
            assert client.post("/v1/notes", json={"text": "Bob's note"}, headers=bearer(bob)).status_code == 202
            assert [s["source_uri"][:5] for s in client.get("/v1/sources", headers=bearer(bob)).json()["sources"]] \
                == ["note:"]
            assert client.get("/v1/sources", headers=bearer("sb_bad_key")).status_code == 401
    finally:
        rt.close()


@pytest.mark.parametrize(("host", "required_"), [("127.0.0.1", False), ("::1", False), ("localhost", False),
                                                 ("0.0.0.0", True), ("192.168.1.20", True)])
def test_auto_requires_keys_off_loopback(host: str, required_: bool) -> None:
    assert Settings(host=host, auth="auto").auth_required() is required_  # type: ignore[call-arg]
    assert Settings(host=host, auth="required").auth_required() is True  # type: ignore[call-arg]


def test_job_progress_streams_to_its_owner_only(required: tuple[TestClient, Runtime]) -> None:
    client, rt = required
    _, alice = rt.metadata.create_api_key("alice", "stream")
    _, bob = rt.metadata.create_api_key("bob", "stream")
    job = client.post("/v1/notes", json={"text": "progress please"}, headers=bearer(alice)).json()["job_id"]
    assert client.get(f"/v1/jobs/{job}/stream", headers=bearer(bob)).status_code == 404
    assert client.get(f"/v1/jobs/{job}/stream").status_code == 401

    def finish() -> None:  # what the stages do, a moment later
        time.sleep(0.3)
        for stage in ("extract", "chunk", "embed"):
            rt.metadata.stage_started("alice", job, stage, 1)
            rt.metadata.stage_succeeded("alice", job, stage)

    worker = threading.Thread(target=finish)
    worker.start()
    body = client.get(f"/v1/jobs/{job}/stream", params={"poll_s": 0.05}, headers=bearer(alice)).text
    worker.join()
    states = [json.loads(line[6:])["status"] for line in body.splitlines() if line.startswith("data: ")]
    assert states[0] == "queued" and states[-1] == "succeeded" and len(states) >= 2
