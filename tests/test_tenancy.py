"""Users and keys over HTTP, key scopes, per-user limits (429), backpressure and request-head limits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings


def runtime(dsn: str, tmp_path: Path, **settings: Any) -> Runtime:
    s = Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                 **{"auth": "required", **settings})
    rt = build_runtime(s, vectors=False, models=False)
    for user in ("root", "alice", "bob"):
        rt.metadata.users.ensure_user(user)
    return rt


@pytest.fixture()
def served(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, Runtime]]:
    rt = runtime(dsn, tmp_path)
    with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
        yield client, rt
    rt.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_an_admin_manages_users_and_keys_over_http(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, admin = rt.metadata.api_keys.create_api_key("root", "ops", "admin")
    r = client.post("/v1/admin/users", json={"user_id": "carol", "display_name": "Carol"}, headers=bearer(admin))
    assert r.status_code == 201, r.text
    carol_key = r.json()["key"]["api_key"]
    # /v1/me also says how much of the backlog allowance is in use (nothing yet for a new user).
    assert client.get("/v1/me", headers=bearer(carol_key)).json() == {
        "user_id": "carol", "key_id": r.json()["key"]["key_id"], "scope": "user",
        "pending_jobs": 0, "max_pending_jobs": rt.settings.max_pending_jobs}
    listed = {u["user_id"]: u for u in client.get("/v1/admin/users", headers=bearer(admin)).json()["users"]}
    assert listed["carol"]["active_keys"] == 1 and listed["carol"]["display_name"] == "Carol"

    r = client.post("/v1/admin/users/carol/keys", json={"name": "laptop"}, headers=bearer(admin))
    assert r.status_code == 201 and r.json()["user_id"] == "carol"
    second = r.json()
    keys = client.get("/v1/admin/users/carol/keys", headers=bearer(admin)).json()["keys"]
    assert {k["name"] for k in keys} == {"first key", "laptop"}
    assert all("api_key" not in k and "secret" not in str(k) for k in keys)  # secrets are shown once only
    assert client.delete(f"/v1/admin/users/carol/keys/{second['key_id']}", headers=bearer(admin)).status_code == 204
    assert client.get("/v1/me", headers=bearer(second["api_key"])).status_code == 401
    assert client.get("/v1/admin/users/nobody/keys", headers=bearer(admin)).status_code == 404
    assert client.post("/v1/admin/users/nobody/keys", json={}, headers=bearer(admin)).status_code == 404
    bad = client.post("/v1/admin/users", json={"user_id": "../etc"}, headers=bearer(admin))
    assert bad.status_code == 422 and "invalid user id" in bad.json()["detail"]


def test_user_keys_cannot_administer(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, alice = rt.metadata.api_keys.create_api_key("alice", "phone")
    for method, path, body in [("GET", "/v1/admin/users", None), ("POST", "/v1/admin/users", {"user_id": "eve"}),
                               ("GET", "/v1/admin/users/bob/keys", None),
                               ("POST", "/v1/admin/users/bob/keys", {"name": "x"})]:
        r = client.request(method, path, json=body, headers=bearer(alice))
        assert r.status_code == 403 and "admin key" in r.json()["detail"], (method, path)
    assert not rt.metadata.users.user_exists("eve")
    r = client.post("/v1/keys", json={"name": "sneaky", "scope": "admin"}, headers=bearer(alice))
    assert r.status_code == 403


def test_users_manage_their_own_keys_only(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, alice = rt.metadata.api_keys.create_api_key("alice", "phone")
    bob_info, bob = rt.metadata.api_keys.create_api_key("bob", "phone")
    r = client.post("/v1/keys", json={"name": "notes app", "scope": "producer"}, headers=bearer(alice))
    assert r.status_code == 201 and r.json()["scope"] == "producer" and r.json()["api_key"].startswith("sb_")
    names = [k["name"] for k in client.get("/v1/keys", headers=bearer(alice)).json()["keys"]]
    assert "notes app" in names and "phone" in names
    assert all(k["user_id"] == "alice" for k in client.get("/v1/keys", headers=bearer(alice)).json()["keys"])
    # Alice cannot revoke Bob's key, even knowing its id.
    assert client.delete(f"/v1/keys/{bob_info.key_id}", headers=bearer(alice)).status_code == 404
    assert client.get("/v1/me", headers=bearer(bob)).status_code == 200


def test_producer_keys_only_sign_events(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, producer = rt.metadata.api_keys.create_api_key("alice", "mail bridge", "producer")
    r = client.get("/v1/sources", headers=bearer(producer))
    assert r.status_code == 403 and "producer key" in r.json()["detail"]
    assert client.post("/v1/notes", json={"text": "x"}, headers=bearer(producer)).status_code == 403


def test_requests_per_minute_are_limited_per_user(dsn: str, tmp_path: Path) -> None:
    """Captures have a budget of their own (an import sends thousands), deletions, link fetches, searches and
    questions another, reads a third; each past its limit answers 429 naming its setting."""
    rt = runtime(dsn, tmp_path, upload_rate_limit_per_minute=4, rate_limit_per_minute=3, read_rate_limit_per_minute=0,
                 max_pending_jobs=0)
    try:
        rt.metadata.users.ensure_user("hasty")
        rt.metadata.users.ensure_user("patient")
        _, alice = rt.metadata.api_keys.create_api_key("hasty", "t")
        _, bob = rt.metadata.api_keys.create_api_key("patient", "t")
        # Windows are whole minutes: start well inside one so the count does not reset mid-test.
        if time.time() % 60 > 50:
            time.sleep(61 - time.time() % 60)
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            codes = [client.post("/v1/notes", json={"text": f"note {i}"}, headers=bearer(alice)).status_code
                     for i in range(6)]
            assert codes[:4] == [202, 202, 202, 202] and codes[4:] == [429, 429], codes
            r = client.post("/v1/notes", json={"text": "again"}, headers=bearer(alice))
            assert r.status_code == 429
            assert 1 <= int(r.headers["retry-after"]) <= 60
            assert "4 captures" in r.json()["detail"] and "SB_UPLOAD_RATE_LIMIT_PER_MINUTE" in r.json()["detail"]
            # The captures did not use up the budget of deletions and searches: it has its own window.
            gone = [client.delete(f"/v1/sources/nothing-{i}", headers=bearer(alice)).status_code for i in range(5)]
            assert 429 not in gone[:3] and gone[3:] == [429, 429], gone
            r = client.delete("/v1/sources/nothing", headers=bearer(alice))
            assert r.status_code == 429 and "3 deletions" in r.json()["detail"]
            assert "SB_RATE_LIMIT_PER_MINUTE" in r.json()["detail"]
            # Reads have their own (here unlimited) budget, and Bob has his own windows.
            assert client.get("/v1/sources", headers=bearer(alice)).status_code == 200
            assert client.post("/v1/notes", json={"text": "bob's"}, headers=bearer(bob)).status_code == 202
            assert client.delete("/v1/sources/nothing", headers=bearer(bob)).status_code != 429
    finally:
        rt.close()


def test_a_user_flooding_the_queue_gets_429_and_others_do_not(dsn: str, tmp_path: Path) -> None:
    # No workers run here, so every accepted capture stays queued.
    rt = runtime(dsn, tmp_path, max_pending_jobs=2, rate_limit_per_minute=0)
    try:
        rt.metadata.users.ensure_user("flooder")
        rt.metadata.users.ensure_user("calm")
        _, flooder = rt.metadata.api_keys.create_api_key("flooder", "t")
        _, calm = rt.metadata.api_keys.create_api_key("calm", "t")
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            for i in range(2):
                assert client.post("/v1/notes", json={"text": f"n{i}"}, headers=bearer(flooder)).status_code == 202
            r = client.post("/v1/notes", json={"text": "one too many"}, headers=bearer(flooder))
            assert r.status_code == 429 and "2 captures still being processed" in r.json()["detail"]
            assert r.headers["retry-after"] == "10"
            up = client.post("/v1/artifacts", content=b"a file", headers={**bearer(flooder), "X-Filename": "a.txt"})
            assert up.status_code == 429
            url = client.post("/v1/urls", json={"url": "https://example.org/"}, headers=bearer(flooder))
            assert url.status_code == 429
            assert client.post("/v1/notes", json={"text": "fine"}, headers=bearer(calm)).status_code == 202
        assert rt.metadata.jobs.pending_jobs("flooder") == 2
    finally:
        rt.close()


def test_oversized_request_headers_get_431(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, alice = rt.metadata.api_keys.create_api_key("alice", "t")
    r = client.get("/v1/sources", headers={**bearer(alice), "X-Junk": "a" * 40_000})
    assert r.status_code == 431 and "limit is 32768" in r.json()["detail"]
    assert client.get("/v1/sources", headers=bearer(alice)).status_code == 200


def test_an_admin_erases_a_user_only_with_confirmation(dsn: str, tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                 auth="required")
    rt = build_runtime(s, vectors=True, models=False)
    try:
        rt.metadata.users.ensure_user("root")
        rt.metadata.users.ensure_user("dave")
        rt.metadata.users.ensure_user("erin")
        _, admin = rt.metadata.api_keys.create_api_key("root", "ops", "admin")
        _, dave = rt.metadata.api_keys.create_api_key("dave", "phone")
        _, erin = rt.metadata.api_keys.create_api_key("erin", "phone")
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            assert client.post("/v1/notes", json={"text": "dave's diary"}, headers=bearer(dave)).status_code == 202
            assert client.post("/v1/notes", json={"text": "erin's diary"}, headers=bearer(erin)).status_code == 202
            assert client.delete("/v1/admin/users/dave", headers=bearer(erin)).status_code == 403
            r = client.delete("/v1/admin/users/dave", headers=bearer(admin))
            assert r.status_code == 400 and "confirm=dave" in r.json()["detail"]
            assert client.get("/v1/me", headers=bearer(dave)).status_code == 200  # nothing happened yet
            r = client.delete("/v1/admin/users/dave", params={"confirm": "dave"}, headers=bearer(admin))
            assert r.status_code == 200 and r.json()["erased"] == "dave"
            assert not rt.metadata.users.user_exists("dave")
            assert client.get("/v1/me", headers=bearer(dave)).status_code == 401
            assert rt.objects.list("users/dave/") == []
            assert client.delete("/v1/admin/users/dave", params={"confirm": "dave"},
                                 headers=bearer(admin)).status_code == 404
            # Erin is untouched.
            assert len(client.get("/v1/sources", headers=bearer(erin)).json()["sources"]) == 1
    finally:
        rt.close()


def test_the_cli_waits_out_a_429_instead_of_calling_the_job_lost() -> None:
    """Client behaviour only: the server side of 429 is tested above."""
    import httpx

    from app.cli.client import wait_for_jobs

    answers = iter([httpx.Response(429, headers={"Retry-After": "0"}, json={"detail": "slow down"}),
                    httpx.Response(200, json={"job_id": "j", "status": "running", "stages": []}),
                    httpx.Response(200, json={"job_id": "j", "status": "succeeded", "stages": []})])
    transport = httpx.MockTransport(lambda request: next(answers))
    with httpx.Client(transport=transport, base_url="http://sb") as client:
        final = wait_for_jobs(client, [("note", "j")], timeout_s=10)
    assert final["j"]["status"] == "succeeded"
