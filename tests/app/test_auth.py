"""Who a request acts as, and who gets nothing: keys, the web page's session, Host and Origin checks.

Loopback is not a trust boundary, so nothing here is special for 127.0.0.1: a key (or a session the
page got with one) on every request but /healthz and /readyz; a DNS name in Host that the server
was not told about is refused (DNS rebinding); a write from another site is refused (cross-site
forms and scripts).  The same checks run against a real `secondbrain up` in tests/e2e/test_security.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr, ValidationError

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.http_security import host_allowed, origin_of, split_host
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.web.session import SESSION_COOKIE
from tests.sse import sse_events


def runtime(dsn: str, tmp_path: Path, **settings: Any) -> Runtime:
    s = Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                 **settings)
    rt = build_runtime(s, vectors=False, models=False)
    for user in ("alice", "bob", "local"):
        rt.metadata.users.ensure_user(user)
    return rt


@pytest.fixture()
def served(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, Runtime]]:
    """The gateway with default settings (keys required), as a browser on this machine reaches it."""
    rt = runtime(dsn, tmp_path, allowed_hosts="notes.example.org")
    with TestClient(create_app(rt, gateway=True, query=False), base_url="http://127.0.0.1:8000") as client:
        yield client, rt
    rt.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --------------------------------------------------------------------------- keys


def test_every_endpoint_but_health_needs_a_key_on_loopback_too(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    for method, path in [("GET", "/v1/me"), ("GET", "/v1/export"), ("POST", "/v1/keys"), ("GET", "/v1/sources"),
                         ("GET", "/v1/jobs/x"), ("POST", "/v1/notes"), ("POST", "/v1/urls"), ("POST", "/v1/pages"),
                         ("POST", "/v1/jobs/x/retry"), ("POST", "/v1/artifacts"), ("DELETE", "/v1/sources/x"),
                         ("GET", "/v1/sources/x/passages"),
                         ("POST", "/v1/login-links"),
                         ("GET", "/v1/status"), ("GET", "/v1/settings/answers"), ("PUT", "/v1/settings/answers"),
                         ("DELETE", "/v1/settings/answers"), ("GET", "/v1/deadletters"), ("POST", "/mcp"),
                         ("GET", "/mcp"), ("POST", "/share")]:
        r = client.request(method, path)
        assert r.status_code == 401, (method, path, r.status_code)
        detail = r.json()["detail"]
        assert r.headers["www-authenticate"] == "Bearer" and "API key is required" in detail
        # The sentence says where this machine's key is and how the page signs in.
        assert str(rt.settings.data_dir / "api-key") in detail and "secondbrain open" in detail
    for bad in ("Bearer nope", "Bearer sb_123_fake", "Basic YWxpY2U6eA==", "Bearer "):
        assert client.get("/v1/sources", headers={"Authorization": bad}).status_code == 401
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code in (200, 503)  # open, whatever the dependencies say
    assert client.get("/").status_code == 200  # the page itself holds no data
    # The phone's share sheet opening the app signed out: to the page, which asks to sign in (nothing kept).
    r = client.post("/share", data={"text": "x"}, headers={"Sec-Fetch-Mode": "navigate"}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, "/?share=signed-out")


def test_a_key_acts_as_its_user_only(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, alice = rt.metadata.api_keys.create_api_key("alice", "test")
    _, bob = rt.metadata.api_keys.create_api_key("bob", "test")
    r = client.post("/v1/notes", json={"text": "Alice's secret plan"}, headers=bearer(alice))
    assert r.status_code == 202
    job = r.json()["job_id"]
    assert client.get(f"/v1/jobs/{job}", headers=bearer(alice)).status_code == 200
    assert client.get(f"/v1/jobs/{job}", headers=bearer(bob)).status_code == 404
    # Asked about with others: Alice's job is Bob's as much as one that never was.
    assert client.get("/v1/jobs", params={"id": [job, "no-such-job"]}, headers=bearer(bob)).json() == {
        "jobs": [], "unknown": [job, "no-such-job"]}
    assert [j["job_id"] for j in client.get("/v1/jobs", params={"id": [job]}, headers=bearer(alice)).json()["jobs"]
            ] == [job]
    assert [s["job_id"] for s in client.get("/v1/sources", headers=bearer(alice)).json()["sources"]] == [job]
    assert client.get("/v1/sources", headers=bearer(bob)).json()["sources"] == []
    # A user key cannot mint admin keys or keys for others.
    assert client.post("/v1/keys", json={"name": "e", "scope": "admin"}, headers=bearer(bob)).status_code == 403
    assert client.post("/v1/admin/users/alice/keys", json={"name": "e"}, headers=bearer(bob)).status_code == 403
    # ...nor see or change where answers come from (the server's, not a user's, setting).
    answers = {"base_url": "http://127.0.0.1:9/v1"}
    for method in ("GET", "PUT", "DELETE"):
        r = client.request(method, "/v1/settings/answers", json=answers if method == "PUT" else None,
                           headers=bearer(bob))
        assert r.status_code == 403, method
    assert client.get("/v1/status", headers=bearer(bob)).status_code == 200


def test_a_revoked_key_stops_working(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    info, key = rt.metadata.api_keys.create_api_key("alice", "old phone")
    assert client.get("/v1/sources", headers=bearer(key)).status_code == 200
    rt.metadata.api_keys.revoke_api_key("alice", info.key_id)
    r = client.get("/v1/sources", headers=bearer(key))
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "0.0.0.0", "192.168.1.20"])
def test_keys_are_required_everywhere_and_auth_off_only_on_loopback(host: str) -> None:
    assert Settings(host=host).auth_required()  # type: ignore[call-arg]
    assert Settings(host=host, auth="auto").auth == "required"  # type: ignore[call-arg]  # the old default
    if host in ("0.0.0.0", "192.168.1.20"):
        with pytest.raises(ValidationError, match="only for tests on loopback"):
            Settings(host=host, auth="off")  # type: ignore[call-arg]
    else:
        assert not Settings(host=host, auth="off").auth_required()  # type: ignore[call-arg]


def test_job_progress_streams_to_its_owner_only(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, alice = rt.metadata.api_keys.create_api_key("alice", "stream")
    _, bob = rt.metadata.api_keys.create_api_key("bob", "stream")
    job = client.post("/v1/notes", json={"text": "progress please"}, headers=bearer(alice)).json()["job_id"]
    assert client.get(f"/v1/jobs/{job}/stream", headers=bearer(bob)).status_code == 404
    assert client.get(f"/v1/jobs/{job}/stream").status_code == 401

    def finish() -> None:  # what the stages do, a moment later
        time.sleep(0.3)
        for stage in ("extract", "chunk", "embed"):
            rt.metadata.jobs.stage_started("alice", job, stage, 1)
            rt.metadata.jobs.stage_succeeded("alice", job, stage)

    worker = threading.Thread(target=finish)
    worker.start()
    events = sse_events(client, "GET", f"/v1/jobs/{job}/stream", params={"poll_s": 0.05}, headers=bearer(alice))
    worker.join()
    states = [data["status"] for _, data in events]
    assert states[0] == "queued" and states[-1] == "succeeded" and len(states) >= 2


# --------------------------------------------------------------------------- the web page's session


def test_a_one_time_link_signs_the_page_in_with_a_strict_cookie(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    info, key = rt.metadata.api_keys.create_api_key("local", "local", "admin")
    token = rt.metadata.sessions.create_login_link(info.key_id, 600)
    r = client.post("/v1/session", json={"token": token})
    assert r.status_code == 200 and r.json() == {"user_id": "local", "key_id": info.key_id, "scope": "admin"}
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "Secure" not in cookie and "Max-Age" not in cookie  # plain http on loopback; until the browser closes
    assert client.get("/v1/me").json()["user_id"] == "local"  # the cookie alone is enough now
    # The link works once.
    client.cookies.clear()
    again = client.post("/v1/session", json={"token": token})
    assert again.status_code == 401 and "secondbrain open" in again.json()["detail"]
    assert client.get("/v1/me").status_code == 401
    # A pasted key opens a session too ("remember me" keeps it); producer keys never do.
    r = client.post("/v1/session", json={"remember": True}, headers=bearer(key))
    assert r.status_code == 200 and f"Max-Age={rt.settings.session_days * 86400}" in r.headers["set-cookie"]
    _, producer = rt.metadata.api_keys.create_api_key("alice", "app", "producer")
    assert client.post("/v1/session", json={}, headers=bearer(producer)).status_code == 401


def test_sign_out_and_revoking_the_key_end_the_session(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    info, key = rt.metadata.api_keys.create_api_key("alice", "laptop")
    assert client.post("/v1/session", json={}, headers=bearer(key)).status_code == 200
    assert client.get("/v1/me").status_code == 200
    signed_out = client.delete("/v1/session")
    assert signed_out.status_code == 204 and f'{SESSION_COOKIE}=""' in signed_out.headers["set-cookie"]
    assert client.get("/v1/me").status_code == 401
    # A session made from a key ends with the key.
    client.post("/v1/session", json={}, headers=bearer(key))
    session = client.cookies.get(SESSION_COOKIE)
    assert session and client.get("/v1/me").status_code == 200
    rt.metadata.api_keys.revoke_api_key("alice", info.key_id)
    r = client.get("/v1/me")
    assert r.status_code == 401 and "sign in again" in r.json()["detail"]


def test_login_links_are_made_with_a_key(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, key = rt.metadata.api_keys.create_api_key("alice", "cli")
    r = client.post("/v1/login-links", headers=bearer(key))
    assert r.status_code == 201 and r.json()["path"].startswith("/?token=")
    opened = client.post("/v1/session", json={"token": r.json()["token"]})
    assert opened.status_code == 200 and opened.json()["user_id"] == "alice"


def test_the_cookie_is_secure_off_loopback(dsn: str, tmp_path: Path) -> None:
    rt = runtime(dsn, tmp_path, allowed_hosts="notes.example.org")
    try:
        _, key = rt.metadata.api_keys.create_api_key("alice", "t")
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://notes.example.org") as client:
            r = client.post("/v1/session", json={}, headers=bearer(key))
            assert r.status_code == 200 and "Secure" in r.headers["set-cookie"]
    finally:
        rt.close()


# --------------------------------------------------------------------------- Host and Origin


def test_a_name_the_server_was_not_told_about_is_refused(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, key = rt.metadata.api_keys.create_api_key("alice", "t")
    for host in ("attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io", "rebind.example:8000"):
        for path in ("/v1/me", "/v1/export", "/healthz", "/"):
            r = client.get(path, headers={"Host": host, **bearer(key)})
            assert r.status_code == 400 and "does not answer to the name" in r.json()["detail"], (host, path)
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "10.0.0.5", "notes.example.org",
                 "NOTES.EXAMPLE.ORG:443"):
        assert client.get("/v1/me", headers={"Host": host, **bearer(key)}).status_code == 200, host


def test_writes_from_another_site_are_refused(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, key = rt.metadata.api_keys.create_api_key("alice", "t")
    note = {"text": "from a page"}
    for headers in ({"Origin": "http://attacker.example"}, {"Origin": "null"},
                    {"Origin": "http://127.0.0.1:3000"},  # another port is another origin
                    {"Referer": "http://attacker.example/form.html"}):
        r = client.post("/v1/notes", json=note, headers={**headers, **bearer(key)})
        assert r.status_code == 403 and "cross-site request refused" in r.json()["detail"], headers
        assert client.delete("/v1/sources/x", headers={**headers, **bearer(key)}).status_code == 403
        assert client.put("/v1/settings/answers", json={"base_url": "http://127.0.0.1:9/v1"},
                          headers={**headers, **bearer(key)}).status_code == 403
        # The share target too: a null Origin passes there only when the browser says it started the share.
        shared = client.post("/share", data={"text": "planted"}, files={"files": ("x.txt", b"planted", "text/plain")},
                             headers={**headers, "Sec-Fetch-Site": "cross-site", **bearer(key)})
        assert shared.status_code == 403 and "cross-site request refused" in shared.json()["detail"], headers
    # The page's own origin, and requests that are not from a page at all, go on to the key check.
    assert client.post("/v1/notes", json=note, headers={"Origin": "http://127.0.0.1:8000", **bearer(key)}) \
        .status_code == 202
    assert client.post("/v1/notes", json=note, headers=bearer(key)).status_code == 202
    # Reads are not refused by origin (a page cannot read the answer without CORS), and no CORS is sent.
    r = client.get("/v1/me", headers={"Origin": "http://attacker.example", **bearer(key)})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_a_browser_extension_writes_with_a_key_in_a_header_only(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, key = rt.metadata.api_keys.create_api_key("alice", "browser extension")
    session = client.post("/v1/session", json={}, headers=bearer(key)).cookies.get(SESSION_COOKIE)
    client.cookies.clear()
    assert session
    page = {"url": "https://intranet.example/wiki/Plans", "title": "Plans", "text": "The kiln is fired on Sunday."}
    extension = {"Origin": "chrome-extension://abcdefghijklmnopabcdefghijklmnop"}
    for origin in ("chrome-extension://abcdefghijklmnopabcdefghijklmnop", "moz-extension://0b6a-4f1c-9e1d"):
        r = client.post("/v1/pages", json=page, headers={"Origin": origin, **bearer(key)})
        assert r.status_code == 202, (origin, r.text)
    # The same extension riding on the page's sign-in cookie is refused: only a key it holds counts.
    client.cookies.set(SESSION_COOKIE, session)
    try:
        r = client.post("/v1/pages", json=page, headers=extension)
        assert r.status_code == 403 and "Authorization: Bearer" in r.json()["detail"]
        # A web page cannot claim an extension's origin, and its own is still refused, cookie or key.
        for origin in ("http://attacker.example", "https://chrome-extension.example"):
            r = client.post("/v1/pages", json=page, headers={"Origin": origin, **bearer(key)})
            assert r.status_code == 403 and "cross-site request refused" in r.json()["detail"], origin
    finally:
        client.cookies.clear()
    # A wrong key from an extension is a 401 like anyone's.
    r = client.post("/v1/pages", json=page, headers={**extension, "Authorization": "Bearer sb_1_nope"})
    assert r.status_code == 401


def test_a_capture_key_adds_and_reads_nothing(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    rt.metadata.users.ensure_user("cora")
    _, user_key = rt.metadata.api_keys.create_api_key("cora", "laptop")
    made = client.post("/v1/keys", json={"name": "browser extension", "scope": "capture"}, headers=bearer(user_key))
    assert made.status_code == 201 and made.json()["scope"] == "capture"
    capture = bearer(made.json()["api_key"])
    assert client.get("/v1/me", headers=capture).json()["scope"] == "capture"
    # It adds a page, a note, a link and a file, and follows each job it started.
    added = [client.post("/v1/pages", json={"url": "https://wiki.example/a", "text": "Page text"}, headers=capture),
             client.post("/v1/notes", json={"text": "A quote"}, headers=capture),
             client.post("/v1/urls", json={"url": "https://example.org/"}, headers=capture),
             client.post("/v1/artifacts", files={"file": ("a.txt", b"a file", "text/plain")}, headers=capture)]
    assert [r.status_code for r in added] == [202] * 4
    assert client.get(added[0].json()["status_url"], headers=capture).status_code == 200
    # Nothing else: not the memory, not the keys, not a web session.
    for method, path in (("GET", "/v1/sources"), ("GET", f"/v1/sources/{added[0].json()['artifact_id']}"),
                         ("GET", "/v1/export"), ("GET", "/v1/keys"), ("POST", "/v1/keys"),
                         ("DELETE", f"/v1/jobs/{added[0].json()['job_id']}"), ("POST", "/v1/login-links"),
                         ("GET", "/v1/status"), ("POST", "/mcp"), ("GET", "/v1/jobs")):
        r = client.request(method, path, headers=capture)
        assert r.status_code in (403, 404, 405), (method, path, r.status_code)
        if r.status_code == 403:
            assert "capture key" in r.json()["detail"], (method, path)
    assert client.post("/v1/session", json={}, headers=capture).status_code == 401
    assert len(client.get("/v1/sources", headers=bearer(user_key)).json()["sources"]) == 4


def test_a_capture_key_follows_only_its_own_jobs_and_never_learns_what_is_stored(
        served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    rt.metadata.users.ensure_user("cora")
    _, user_key = rt.metadata.api_keys.create_api_key("cora", "laptop")
    made = client.post("/v1/keys", json={"name": "extension", "scope": "capture"}, headers=bearer(user_key)).json()
    other = client.post("/v1/keys", json={"name": "phone", "scope": "capture"}, headers=bearer(user_key)).json()
    capture, phone, user = bearer(made["api_key"]), bearer(other["api_key"]), bearer(user_key)
    secret = "The alarm code is 4471; the spare key is under the blue pot."
    earlier = client.post("/v1/notes", json={"text": secret, "title": "House"}, headers=user).json()["job_id"]
    # The first capture is taken in (the pipeline is not running here: the test plays its part).
    for stage in ("extract", "chunk", "embed"):
        rt.metadata.jobs.stage_succeeded("cora", earlier, stage)
    # The same text again from the extension: accepted like anything new, nothing said of the earlier capture.
    again = client.post("/v1/notes", json={"text": secret, "title": "guess"}, headers=capture)
    assert again.status_code == 202 and earlier not in again.text and again.json()["already"] is None
    mine = again.json()["job_id"]
    rt.metadata.jobs.job_duplicate("cora", mine, earlier)  # what the extractor does with the same bytes
    seen = client.get(f"/v1/jobs/{mine}", headers=capture)
    assert seen.status_code == 200, seen.text
    assert seen.json()["status"] == "accepted" and seen.json()["finished"] is True
    assert earlier not in seen.text and "House" not in seen.text and "duplicate" not in seen.text
    stream = client.get(f"/v1/jobs/{mine}/stream", headers=capture)
    assert '"status": "accepted"' in stream.text and earlier not in stream.text and "House" not in stream.text
    # A job the extension did not make is unknown to it, like another user's: the user's, or another key's.
    for job in (earlier, client.post("/v1/notes", json={"text": "From the phone"}, headers=phone).json()["job_id"]):
        for path in (f"/v1/jobs/{job}", f"/v1/jobs/{job}/stream"):
            r = client.get(path, headers=capture)
            assert (r.status_code, r.json()) == (404, {"detail": "no such job"}), path
    # The person's own key still sees everything about it.
    full = client.get(f"/v1/jobs/{mine}", headers=user).json()
    assert full["status"] == "duplicate" and full["duplicate_of"] == earlier


def test_a_page_the_browser_rendered_is_one_source_with_its_url(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    _, key = rt.metadata.api_keys.create_api_key("alice", "t")
    auth = bearer(key)
    page = {"url": "https://intranet.example/wiki/Kiln#budget", "title": "Plans", "text": "The kiln is fired."}
    first = client.post("/v1/pages", json=page, headers=auth)
    assert first.status_code == 202
    job = client.get(first.json()["status_url"], headers=auth).json()
    # The URL without its fragment is the source, as for a page fetched with POST /v1/urls.
    assert job["source_uri"] == "https://intranet.example/wiki/Kiln" and job["title"] == "Plans"
    again = client.post("/v1/pages", json={**page, "text": "The kiln is fired on Sunday."}, headers=auth)
    fetched = client.post("/v1/urls", json={"url": "https://intranet.example/wiki/Kiln"}, headers=auth)
    assert again.status_code == fetched.status_code == 202
    listed = [s for s in client.get("/v1/sources", headers=auth).json()["sources"]
              if s["source_uri"] == "https://intranet.example/wiki/Kiln"]
    # Three captures of one page: tries of one source (the newest supersedes those still queued).
    assert len(listed) == 3 and len({s["source_id"] for s in listed}) == 1
    for bad, why in (({**page, "url": "file:///home/me/a.html"}, "http or https"),
                     ({**page, "url": "chrome://settings/"}, "http or https"),
                     ({**page, "text": "   \n "}, "no text"),
                     ({**page, "text": "nul \x00 here"}, "NUL")):
        r = client.post("/v1/pages", json=bad, headers=auth)
        assert r.status_code == 422 and why in json.dumps(r.json()), (bad, r.text)
    r = client.post("/v1/pages", json={"url": page["url"]}, headers=auth)
    assert r.status_code == 422 and "text" in json.dumps(r.json())


def test_configured_origins_may_call_and_get_cors(dsn: str, tmp_path: Path) -> None:
    rt = runtime(dsn, tmp_path, allowed_origins="https://app.example.org")
    try:
        _, key = rt.metadata.api_keys.create_api_key("alice", "t")
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://127.0.0.1:8000") as client:
            r = client.post("/v1/notes", json={"text": "hi"}, headers={"Origin": "https://app.example.org",
                                                                     **bearer(key)})
            assert r.status_code == 202 and r.headers["access-control-allow-origin"] == "https://app.example.org"
            assert client.post("/v1/notes", json={"text": "hi"}, headers={
                "Origin": "https://evil.example.org", **bearer(key)}).status_code == 403
    finally:
        rt.close()


def test_host_and_origin_helpers() -> None:
    assert split_host("[::1]:8000") == ("::1", 8000) and split_host("Example.ORG.") == ("example.org", None)
    assert host_allowed("10.1.2.3", ()) and host_allowed("localhost", ()) and not host_allowed("evil.com", ())
    assert host_allowed("a.example.org", (".example.org",)) and host_allowed("example.org", (".example.org",))
    assert not host_allowed("badexample.org", (".example.org",))
    assert origin_of("http://127.0.0.1:80/x") == "http://127.0.0.1" and origin_of("nonsense") is None
    assert origin_of("https://[::1]:8443/") == "https://[::1]:8443"


# --------------------------------------------------------------------------- limits and bad input


def test_bad_input_gets_a_4xx_with_a_sentence(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    rt.metadata.users.ensure_user("dora")
    _, key = rt.metadata.api_keys.create_api_key("dora", "t")
    auth = bearer(key)
    r = client.post("/v1/notes", json={"text": "ok", "title": "a\x00b"}, headers=auth)
    assert r.status_code == 422 and "NUL" in json.dumps(r.json())
    r = client.post("/v1/notes", content=b'{"text": "lone \\ud800 surrogate"}',
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 422 and "surrogate" in json.dumps(r.json())
    r = client.post("/v1/notes", content=b"[" * 100_000 + b"]" * 100_000,
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 422 and "nested too deeply" in r.json()["detail"]
    # A 2 MB title is refused without being repeated back.
    r = client.post("/v1/notes", json={"text": "ok", "title": "T" * 2_000_000}, headers=auth)
    assert r.status_code == 422 and len(r.content) < 2000
    # The request line counts towards the head limit; a NUL anywhere in the address is refused.
    r = client.get("/v1/sources?q=" + "x" * 40_000, headers=auth)  # over SB_MAX_HEADER_BYTES (32 KiB)
    assert r.status_code == 431 and "request line and headers" in r.json()["detail"]
    assert client.get("/v1/jobs/abc%00def", headers=auth).status_code == 400
    # Nothing of the refused requests was stored.
    assert client.get("/v1/sources", headers=auth).json()["sources"] == []


def test_an_idempotency_key_reused_with_another_body_is_refused(served: tuple[TestClient, Runtime]) -> None:
    client, rt = served
    rt.metadata.users.ensure_user("erin")
    _, key = rt.metadata.api_keys.create_api_key("erin", "t")
    headers = {**bearer(key), "Idempotency-Key": "retry-42"}
    first = client.post("/v1/artifacts", files={"file": ("a.txt", b"first body", "text/plain")}, headers=headers)
    again = client.post("/v1/artifacts", files={"file": ("a.txt", b"first body", "text/plain")}, headers=headers)
    assert first.status_code == again.status_code == 202 and first.json()["job_id"] == again.json()["job_id"]
    other = client.post("/v1/artifacts", files={"file": ("a.txt", b"a second body", "text/plain")},
                        headers=headers)
    assert other.status_code == 422 and "Idempotency-Key" in other.json()["detail"]
    # The second body's bytes did not stay behind without a row.
    stored = rt.metadata.catalog.get_artifact("erin", first.json()["artifact_id"])
    assert stored is not None and [o.key for o in rt.objects.list("users/erin/")] == [stored.object_key]
    note = {**bearer(key), "Idempotency-Key": "note-1"}
    assert client.post("/v1/notes", json={"text": "one"}, headers=note).status_code == 202
    assert client.post("/v1/notes", json={"text": "two"}, headers=note).status_code == 422
