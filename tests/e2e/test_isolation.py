"""Two users on one running secondbrain: Bob tries every endpoint on Alice's data and gets nothing.

The endpoint list comes from the server's own OpenAPI document, and the test fails when an
endpoint appears that it does not try, so a new route cannot skip the isolation check.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools.gen_exports import damaged_zip
from tests.e2e.harness import Service, readable_tmp, wait_jobs
from tests.sse import sse_events

pytestmark = pytest.mark.e2e

SECRET = "Zanzibar-4471"
NOTE = f"The combination of the blue safe in the attic is {SECRET}; only Alice knows it."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Path]]:
    with readable_tmp("sb-iso-") as root:
        data = root / "data"
        svc = Service("up", ["up", "--data-dir", str(data)], {}, tmp_path_factory.mktemp("iso-logs"))
        svc.start().wait_ready(timeout=120)
        yield svc, data
        svc.stop()


def refused_event(bootstrap: str, user_id: str, *, producer: str) -> str:
    """Publish an unsigned event naming ``user_id`` (refused as unauthorized); return its event id."""
    from aiokafka import AIOKafkaProducer

    from secondbrain.events import ArtifactSubmitted, EventCodec

    codec = EventCodec()
    body = b"unsigned"
    event = ArtifactSubmitted(event_id=str(uuid.uuid4()), user_id=user_id, source_uri="app:diary/1",
                              content_type="text/plain", content=body, size_bytes=len(body),
                              sha256=hashlib.sha256(body).hexdigest(), submitted_at=datetime.now(UTC),
                              producer=producer)

    async def send() -> None:
        kafka = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await kafka.start()
        try:
            value = codec.encode(event)
            await kafka.send_and_wait("artifacts.submitted", value, key=user_id.encode(),
                                      headers=codec.headers(event))
        finally:
            await kafka.stop()

    asyncio.run(send())
    return event.event_id


BOB_FILES = {"Notes/shed.md": b"# Shed\n\nBob's shed holds a ladder.", "Notes/gate.md": b"# Gate\n\nBob's gate code."}
BOB_ENEX = (b'<?xml version="1.0" encoding="UTF-8"?>\n<en-export><note><title>Bob\'s list</title><created>'
            b'20240101T100000Z</created><content><![CDATA[<en-note><div>Bob buys rope.</div></en-note>]]></content>'
            b'</note></en-export>\n')

# A browser's push subscription (PushSubscription.toJSON()): where its push service takes pushes for it.
PHONE = {"endpoint": "https://push.example.invalid/send/phone-1", "keys": {"p256dh": "B" + "A" * 86,
                                                                          "auth": "c2VjcmV0LWF1dGgtMTIz"}}

# Routes outside the OpenAPI document: MCP's streamable HTTP transport (services/mcp).
MOUNTED = {("get", "/mcp"), ("post", "/mcp"), ("delete", "/mcp")}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


def mcp_call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def client(svc: Service, key: str) -> httpx.Client:
    return httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def test_bob_gets_nothing_of_alices_through_any_endpoint(server: tuple[Service, Path]) -> None:
    svc, data = server
    admin = client(svc, (data / "api-key").read_text().strip())
    keys = {}
    for user in ("alice", "bob"):
        r = admin.post("/v1/admin/users", json={"user_id": user})
        assert r.status_code == 201, r.text
        keys[user] = r.json()["key"]["api_key"]
    alice, bob = client(svc, keys["alice"]), client(svc, keys["bob"])

    # Alice's data: a note, a file, a finished question in a conversation, a second key.
    note = alice.post("/v1/notes", json={"text": NOTE, "title": "Safe"}).json()["job_id"]
    upload = alice.post("/v1/artifacts", files={"file": ("attic.md", f"# Attic\n\nSafe code {SECRET}.".encode(),
                                                          "text/markdown")}).json()
    # A dated note: on Alice's agenda and in her calendar feed, never on Bob's.
    dated = alice.post("/v1/notes", json={"text": f"Locksmith appointment tomorrow at 10:00 to reset the safe code "
                                                  f"{SECRET}.", "title": "Locksmith"}).json()["job_id"]
    # A page Alice's browser rendered (behind her sign-in somewhere); Bob saves one at the same address.
    page = alice.post("/v1/pages", json={"url": "https://example.invalid/wiki/safe", "title": "Wiki",
                                         "text": f"The safe's code is {SECRET}."}).json()["job_id"]
    wait_jobs(alice, [note, upload["job_id"], dated, page])
    feed = alice.post("/v1/feeds", json={"name": "Alice's phone"}).json()
    (locksmith,) = [e for d in alice.get("/v1/agenda").json()["days"] for e in d["events"] if SECRET in e["quote"]]
    reminder = alice.post("/v1/reminders", json={"event_id": locksmith["id"]})
    assert reminder.status_code == 201, reminder.text
    # Alice's phone gets her reminders by web push.
    phone = alice.post("/v1/push/subscriptions", json=PHONE)
    assert phone.status_code == 201, phone.text
    assert SECRET in httpx.get(svc.url + feed["path"]).text
    done = sse_events(alice, "POST", "/v1/ask", json={"question": "What is the safe combination?"})[-1][1]
    conversation = done["conversation_id"]
    source = next(s for s in alice.get("/v1/sources").json()["sources"] if s["job_id"] == note)
    alice_key_id = alice.get("/v1/me").json()["key_id"]
    # Alice's tag on her note: Bob neither sees it, counts it, filters by it nor changes it.
    tagged = alice.post("/v1/tags/attic-safe/sources", json={"source_ids": [source["source_id"]]})
    assert tagged.status_code == 200, tagged.text
    ids = {"job_id": note, "source_id": source["source_id"], "artifact_id": upload["artifact_id"], "tag": "attic-safe",
           "key_id": alice_key_id, "user_id": "alice", "conversation_id": conversation, "feed_id": feed["feed_id"],
           "reminder_id": reminder.json()["reminder_id"], "subscription_id": phone.json()["subscription_id"],
           "name": admin.post("/v1/admin/backups").json()["archive"]["name"]}  # a backup holding Alice's data
    alice_link = alice.post("/v1/login-links").json()["token"]
    assert alice_link
    # A refusal of Alice's: an unsigned event naming her, from an app called after her.
    kafka = alice.get("/v1/status").json()["kafka"]["bootstrap"]
    refused = refused_event(kafka, "alice", producer="app:Alice-diary")
    deadline = time.monotonic() + 60
    while refused not in [d["event_id"] for d in alice.get("/v1/deadletters").json()["deadletters"]]:
        assert time.monotonic() < deadline, "Alice's refused event never reached her dead letters"
        time.sleep(0.25)

    # What Bob tries, per endpoint; every endpoint the server has must be here.
    # fixed date: a window in the past and MCP's protocol version, for access checks only
    tries: dict[tuple[str, str], list[dict[str, Any]]] = {
        ("get", "/v1/jobs/{job_id}"): [{}],
        ("get", "/v1/jobs"): [{"params": {"id": [ids["job_id"], "no-such-job"]}}],
        ("get", "/v1/jobs/{job_id}/stream"): [{}],
        ("post", "/v1/jobs/{job_id}/retry"): [{}],
        ("delete", "/v1/jobs/{job_id}"): [{}],
        ("get", "/v1/sources"): [{}, {"params": {"source_id": ids["source_id"]}}, {"params": {"tags": ids["tag"]}}],
        ("get", "/v1/sources/{source_id}"): [{}],
        # Editing Alice's note: its words, title or tags; each as unknown to Bob as a source that never was.
        ("patch", "/v1/sources/{source_id}"): [{"json": {"text": "Bob's words now"}}, {"json": {"title": "Bob's"}},
                                               {"json": {"tags": ["bobs"]}}],
        ("get", "/v1/tags"): [{}],
        ("post", "/v1/tags/{tag}/sources"): [{"json": {"source_ids": [ids["source_id"]]}}],
        ("delete", "/v1/tags/{tag}/sources"): [{"json": {"source_ids": [ids["source_id"]]}}],
        ("get", "/v1/sources/{source_id}/passages"): [{}],
        ("delete", "/v1/sources/{source_id}"): [{}],
        ("get", "/v1/artifacts/{artifact_id}/raw"): [{}],
        ("get", "/v1/search"): [{"params": {"q": "safe combination attic code"}},
                                {"params": {"q": "safe", "source_id": ids["source_id"]}},
                                {"params": {"q": "safe combination", "tags": ids["tag"]}},
                                {"params": {"q": f"safe combination tag:{ids['tag']}"}}],
        ("post", "/v1/ask"): [{"json": {"question": "What is the safe combination?"}},
                              {"json": {"question": f"What is the safe combination? tag:{ids['tag']}"}},
                              {"json": {"question": "and the code?", "conversation_id": conversation}},
                              {"json": {"question": "safe code", "source_ids": [ids["source_id"]]}},
                              # answered from the agenda: Bob's, which has no locksmith
                              {"json": {"question": "Anything on tomorrow?"}}],
        ("get", "/v1/timeline"): [{}],
        ("get", "/v1/agenda"): [{}, {"params": {"from": "2020-01-01T00:00:00Z", "to": "2021-12-31T00:00:00Z"}}],
        ("get", "/v1/agenda/on-this-day"): [{}, {"params": {"years": 50}}],
        ("get", "/v1/digest"): [{}],
        # The feed opens by its token alone; Bob has no token of Alice's, and a key does not open it.
        ("get", "/v1/agenda.ics"): [{}, {"params": {"token": "sbf_000000000000_guess"}}],
        ("get", "/v1/feeds"): [{}],
        ("post", "/v1/feeds"): [{"json": {"name": "Bob's calendar"}}],
        ("delete", "/v1/feeds/{feed_id}"): [{}],
        # "Remind me" on a line of Alice's agenda: not a line of Bob's; Alice's reminders are not his to see or remove.
        ("get", "/v1/reminders"): [{}],
        ("post", "/v1/reminders"): [{"json": {"event_id": locksmith["id"]}}],
        ("delete", "/v1/reminders/{reminder_id}"): [{}],
        # Reminders by web push: Bob's browser at the address of Alice's phone is his own subscription; hers are not
        # his to see or remove.
        ("get", "/v1/push/key"): [{}],
        ("get", "/v1/push/subscriptions"): [{}],
        ("post", "/v1/push/subscriptions"): [{"json": PHONE}],
        ("delete", "/v1/push/subscriptions/{subscription_id}"): [{}],
        ("get", "/v1/conversations"): [{}, {"params": {"q": "safe combination"}}],
        ("get", "/v1/conversations/{conversation_id}"): [{}],
        ("patch", "/v1/conversations/{conversation_id}"): [{"json": {"title": "Bob's now"}}],
        ("delete", "/v1/conversations/{conversation_id}"): [{}],
        ("get", "/v1/export"): [{}],
        ("get", "/v1/me"): [{}],
        ("delete", "/v1/me"): [{"params": {"confirm": "alice"}}],
        ("get", "/v1/keys"): [{}],
        ("post", "/v1/keys"): [{"json": {"name": "mine"}}],
        ("delete", "/v1/keys/{key_id}"): [{}],
        ("post", "/v1/notes"): [{"json": {"text": "Bob's own note"}}],
        ("post", "/v1/artifacts"): [{"files": {"file": ("b.txt", b"Bob's file", "text/plain")}}],
        ("post", "/v1/urls"): [{"json": {"url": "https://example.invalid/bob"}}],
        # A page Bob's browser rendered, at the address of a page Alice saved: his own source, not hers.
        ("post", "/v1/pages"): [{"json": {"url": "https://example.invalid/wiki/safe", "title": "Bob's page",
                                          "text": "Bob's rendered page"}}],
        # What Bob shares from his phone lands in Bob's memory.
        ("post", "/share"): [{"data": {"title": "Safe", "text": "Bob's shared note about his shed"},
                              "files": {"files": ("safe.txt", b"Bob's shed list", "text/plain")}}],
        # Bob's imports land in Bob's memory, whatever sources they name.
        # (first, followed in lines as the web page does: the refusals below are checked with that header too)
        ("post", "/v1/imports"): [{"files": {"file": ("Bob.enex", BOB_ENEX, "application/xml")},
                                   "headers": {"Accept": "application/x-ndjson"}},
                                  {"files": {"file": ("Bob.enex", BOB_ENEX, "application/xml")}},
                                  # a zip with a damaged file: 422 naming Bob's file, nothing of Alice's
                                  {"files": {"file": ("bob.zip", damaged_zip("crc", BOB_FILES), "application/zip")}},
                                  # going on from where an import of Bob's paused
                                  {"files": {"file": ("Bob.enex", BOB_ENEX, "application/xml")},
                                   "data": {"resume_from": "1"}}],
        ("post", "/v1/imports/batch"): [{"data": {"manifest": json.dumps({"format": "notes", "captures": [
            {"source_uri": "import:notes:attic.md", "kind": "note", "title": "Attic", "part": "p0",
             "content_type": "text/markdown", "attributes": {"kind": "note"}}]})},
            "files": {"p0": ("attic.md", b"# Attic\n\nBob's attic holds bicycles.", "text/markdown")}},
            # a note over the note limit: refused in the batch like POST /v1/notes refuses it
            {"data": {"manifest": json.dumps({"format": "notes", "captures": [
                {"source_uri": "import:notes:long.md", "kind": "note", "title": "Long", "part": "p0",
                 "content_type": "text/markdown", "attributes": {"kind": "note"}}]})},
             "files": {"p0": ("long.md", b"# Long\n\n" + b"b" * 1_000_001, "text/markdown")}}],
        # A backup holds every user's data: an administrator's alone, to take, list or download.
        ("get", "/v1/admin/backups"): [{}],
        ("post", "/v1/admin/backups"): [{}],
        ("get", "/v1/admin/backups/{name}"): [{}],
        ("get", "/v1/admin/users"): [{}],
        ("post", "/v1/admin/users"): [{"json": {"user_id": "mallory"}}],
        ("delete", "/v1/admin/users/{user_id}"): [{"params": {"confirm": "alice"}}],
        ("get", "/v1/admin/users/{user_id}/keys"): [{}],
        ("post", "/v1/admin/users/{user_id}/keys"): [{"json": {"name": "backdoor"}}],
        ("delete", "/v1/admin/users/{user_id}/keys/{key_id}"): [{}],
        ("post", "/v1/session"): [{"json": {}}, {"json": {"token": alice_link}}],
        ("delete", "/v1/session"): [{}],
        ("post", "/v1/login-links"): [{}],
        ("get", "/v1/deadletters"): [{}],
        ("get", "/v1/status"): [{}],
        # The server's answer endpoint is an administrator's to see and change, never a user's.
        ("get", "/v1/settings/answers"): [{}],
        ("put", "/v1/settings/answers"): [{"json": {"base_url": "http://127.0.0.1:9/v1", "model": "x"}}],
        ("delete", "/v1/settings/answers"): [{}],
        # Looking for local model servers and asking the answer model a test question: an administrator's.
        ("get", "/v1/settings/answers/found"): [{}],
        ("post", "/v1/settings/answers/test"): [{"json": {}}],
        ("get", "/healthz"): [{}],
        ("get", "/readyz"): [{}],
        # MCP's streamable HTTP transport: Bob's own session, and a search through it.
        ("post", "/mcp"): [{"json": mcp_call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                            "clientInfo": {"name": "bob", "version": "1"}}),
                            "headers": MCP_ACCEPT},
                           {"json": mcp_call("tools/call", {"name": "search", "arguments": {
                               "query": "safe combination attic code"}}), "headers": MCP_ACCEPT},
                           {"json": mcp_call("tools/call", {"name": "get_source", "arguments": {
                               "source_id": ids["source_id"]}}), "headers": MCP_ACCEPT}],
        ("get", "/mcp"): [{"headers": MCP_ACCEPT}],
        ("delete", "/mcp"): [{"headers": MCP_ACCEPT}],
    }
    served = {(m, p) for p, item in httpx.get(svc.url + "/openapi.json").json()["paths"].items() for m in item}
    served |= MOUNTED  # not REST, so not in the OpenAPI document
    assert served == set(tries), f"endpoints without an isolation check: {served - set(tries)}"

    # Alice's job asked about among others: unknown to Bob, like one that never was.
    assert bob.get("/v1/jobs", params={"id": [ids["job_id"], "no-such-job"]}).json() == {
        "jobs": [], "unknown": [ids["job_id"], "no-such-job"]}
    for (method, path), variants in tries.items():
        url = path.format(**ids)
        for kwargs in variants:
            r = bob.request(method.upper(), url, **kwargs)
            body = r.text
            assert SECRET not in body, (method, path, kwargs)
            assert "Alice" not in body and ids["artifact_id"] not in body, (method, path, kwargs)
            assert refused not in body, (method, path, kwargs)
            if "{" in path and path not in ("/v1/me",):
                # Alice's ids: unknown to Bob (404) or not his to manage (403).
                assert r.status_code in (403, 404), (method, path, r.status_code, body[:200])
            if path.startswith(("/v1/admin", "/v1/settings")):
                assert r.status_code == 403, (method, path, r.status_code)
            if (method, path) == ("delete", "/v1/me"):
                assert r.status_code == 400  # Bob's confirmation must name Bob, not Alice
            if kwargs.get("json", {}).get("conversation_id"):
                assert r.status_code == 403
            if "{conversation_id}" in path:  # exactly as for a conversation that does not exist
                missing = bob.request(method.upper(), path.format(conversation_id="no-such-one"), **kwargs)
                assert (r.status_code, r.json()) == (missing.status_code, missing.json()) == (
                    404, {"detail": "no such conversation (it was deleted, or it is not yours)"})

    # Without a key, from another site, or under a name the server was not told about: nothing, on every
    # endpoint (health checks aside), before any route runs.
    public = {("get", "/healthz"), ("get", "/readyz")}
    with httpx.Client(base_url=svc.url, timeout=60) as nobody:
        for (method, path), variants in tries.items():
            url, kwargs = path.format(**ids), dict(variants[0])
            sent = kwargs.pop("headers", {})
            keyless = nobody.request(method.upper(), url, headers=sent, **kwargs)
            if (method, path) not in public | {("post", "/v1/session"), ("delete", "/v1/session")}:
                assert keyless.status_code == 401, (method, path, keyless.status_code)
            assert SECRET not in keyless.text
            as_alice = {"Authorization": f"Bearer {keys['alice']}"}
            rebound = nobody.request(method.upper(), url,
                                     headers={"Host": "rebind.attacker.example", **as_alice, **sent}, **kwargs)
            assert rebound.status_code == 400 and SECRET not in rebound.text, (method, path, rebound.status_code)
            if method in ("post", "put", "patch", "delete"):
                forged = nobody.request(method.upper(), url, headers={**sent, "Origin": "http://attacker.example",
                                                                      "Authorization": f"Bearer {keys['alice']}"},
                                        **kwargs)
                assert forged.status_code == 403, (method, path, forged.status_code)

    # Alice's own capture key (the kind a browser extension keeps) adds to her memory and reads none of it.
    made = alice.post("/v1/keys", json={"name": "browser extension", "scope": "capture"})
    assert made.status_code == 201, made.text
    extension = client(svc, made.json()["api_key"])
    adds = {("post", "/v1/notes"), ("post", "/v1/artifacts"), ("post", "/v1/urls"), ("post", "/v1/pages")}
    follows = {("get", "/v1/me"), ("get", "/v1/jobs/{job_id}"), ("get", "/v1/jobs/{job_id}/stream")}
    for (method, path), variants in tries.items():
        sent = variants[0]
        if (method, path) == ("post", "/v1/pages"):
            # Another address: Alice saving Bob's text at her page's address would rightly make it her page's
            # next version, and the check below is that Bob's page did not.
            sent = {"json": {**sent["json"], "url": "https://example.invalid/wiki/extension"}}
        r = extension.request(method.upper(), path.format(**ids), **sent)
        assert SECRET not in r.text, (method, path)
        if (method, path) in adds:
            assert r.status_code == 202, (method, path, r.status_code)
        elif (method, path) not in public | follows | {("delete", "/v1/session")}:
            assert r.status_code in (401, 403), (method, path, r.status_code)

    # The extension follows only the jobs it made: Alice's other captures are unknown to it, and its own capture of
    # a text she already has is just 'accepted' (no earlier job's id, no title, no 'duplicate').
    for path in (f"/v1/jobs/{ids['job_id']}", f"/v1/jobs/{ids['job_id']}/stream"):
        r = extension.get(path)
        assert (r.status_code, r.json()) == (404, {"detail": "no such job"}), path
    again = extension.post("/v1/notes", json={"text": NOTE, "title": "guess"})
    assert again.status_code == 202 and ids["job_id"] not in again.text
    mine = again.json()["job_id"]
    seen = wait_jobs(extension, [mine], done=("accepted", "failed"))[mine]
    assert seen["status"] == "accepted" and ids["job_id"] not in json.dumps(seen) and "Safe" not in json.dumps(seen)
    assert "duplicate" not in json.dumps(seen) and SECRET not in json.dumps(seen)
    assert alice.get(f"/v1/jobs/{mine}").json()["duplicate_of"] == note  # Alice's own key sees what it was

    # Alice still has everything.
    assert alice.get("/v1/me").status_code == 200
    assert alice.get(f"/v1/sources/{ids['source_id']}").status_code == 200
    kept_source = alice.get(f"/v1/sources/{ids['source_id']}").json()
    assert (kept_source["title"], kept_source["tags"], kept_source["current_version"]) == ("Safe", ["attic-safe"], 1)
    assert alice.get("/v1/tags").json()["tags"] == [{"tag": "attic-safe", "sources": 1}]
    hits = alice.get("/v1/search", params={"q": "safe combination"}).json()["hits"]
    assert any(SECRET in h["text"] for h in hits)
    # Bob's page at the same address is his own source: Alice's is still hers, not a version of his.
    pages = [h for h in alice.get("/v1/search", params={"q": "safe code wiki"}).json()["hits"]
             if h["source_uri"] == "https://example.invalid/wiki/safe"]
    assert pages and all(SECRET in h["text"] for h in pages)
    assert alice.get(f"/v1/artifacts/{ids['artifact_id']}/raw").status_code == 200
    assert SECRET in httpx.get(svc.url + feed["path"]).text  # Bob could not revoke Alice's feed
    assert alice.delete(f"/v1/feeds/{feed['feed_id']}").status_code == 204
    assert [r["reminder_id"] for r in alice.get("/v1/reminders").json()["reminders"]] == [ids["reminder_id"]]
    assert [s["subscription_id"] for s in alice.get("/v1/push/subscriptions").json()["subscriptions"]] == [
        ids["subscription_id"]]
    assert httpx.get(svc.url + feed["path"]).status_code == 401  # revoked: refused
    kept = alice.get(f"/v1/conversations/{conversation}").json()
    assert kept["title"] == "What is the safe combination?" and kept["turns"][0]["answer"]
    assert conversation not in [c["conversation_id"] for c in bob.get("/v1/conversations").json()["conversations"]]
    assert not any(u == "mallory" for u in [x["user_id"] for x in admin.get("/v1/admin/users").json()["users"]])
