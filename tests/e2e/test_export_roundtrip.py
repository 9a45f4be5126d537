"""One person's export, read back into a fresh account on another server (``secondbrain import`` and the
upload route ``POST /v1/imports``): the sources with their raw files, times, titles, tags and versions, and
the conversations, as they were; a second import adds nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.harness import Service, readable_tmp, run_cli, wait_jobs
from tests.sse import sse_events

pytestmark = pytest.mark.e2e

NOTE = ("---\ntags: [garden, tools]\n---\n# Shed\n\nThe hedge trimmer hangs on the left wall of the shed, "
        "above the green watering can.\n")
PLAN_V1 = "# Trip plan\n\nWe take the night train to Vienna and stay two nights.\n"
PLAN_V2 = "# Trip plan\n\nWe take the morning train to Vienna and stay three nights near the opera.\n"
WHEN = "2023-05-14T09:30:00+02:00"  # fixed date: a capture time given by the person, kept by the round trip


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Service]]:
    logs = tmp_path_factory.mktemp("roundtrip-logs")
    with readable_tmp("sb-roundtrip-") as root:
        old = Service("up", ["up", "--data-dir", str(root / "old")], {}, logs)
        new = Service("up-new", ["up", "--data-dir", str(root / "new")], {}, logs)
        old.start()
        new.start()
        try:
            old.wait_ready(timeout=180)
            new.wait_ready(timeout=180)
            yield old, new
        finally:
            old.stop()
            new.stop()


def sources(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """The current sources by title."""
    rows = client.get("/v1/sources", params={"limit": 500}).json()["sources"]
    newest: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["status"] == "succeeded" and (r["title"] not in newest or
                                           (r.get("version") or 0) > (newest[r["title"]].get("version") or 0)):
            newest[r["title"]] = r
    return newest


def versions(client: httpx.Client, source_id: str) -> list[dict[str, Any]]:
    return [v for v in client.get(f"/v1/sources/{source_id}").json()["versions"] if v["version"]]


def wait_sources(client: httpx.Client, titles: set[str], timeout: float = 300) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sources(client)
        if titles <= set(found):
            return found
        time.sleep(0.5)
    raise AssertionError(f"not searchable after {timeout}s: {titles - set(sources(client))}")


def conversations(client: httpx.Client) -> list[dict[str, Any]]:
    out = []
    for c in client.get("/v1/conversations").json()["conversations"]:
        out.append(client.get(f"/v1/conversations/{c['conversation_id']}").json())
    return out


def comparable(conv: dict[str, Any]) -> dict[str, Any]:
    return {"title": conv["title"], "created_at": conv.get("created_at"),
            "turns": [{k: t.get(k) for k in ("question", "answer", "asked_at", "answered_at")} for t in conv["turns"]]}


def test_an_export_read_back_into_a_fresh_account_is_the_same_memory(servers: tuple[Service, Service],
                                                                     tmp_path: Path) -> None:
    old, new = servers
    with old.client(timeout=120) as a:
        jobs = [a.post("/v1/notes", json={"text": NOTE, "title": "Shed", "captured_at": WHEN}).json()["job_id"]]
        first = a.post("/v1/artifacts", files={"file": ("trip-plan.md", PLAN_V1.encode(), "text/markdown")}).json()
        wait_jobs(a, [*jobs, first["job_id"]])
        second = a.post("/v1/artifacts", files={"file": ("trip-plan.md", PLAN_V2.encode(), "text/markdown")}).json()
        wait_jobs(a, [second["job_id"]])
        done = sse_events(a, "POST", "/v1/ask", json={"question": "Where is the hedge trimmer?"})[-1][1]
        assert done["conversation_id"]
        before = sources(a)
        plan_versions = versions(a, before["Trip plan"]["source_id"])
        hit = a.get("/v1/search", params={"q": "hedge trimmer shed", "k": 1}).json()["hits"][0]
        talks = [comparable(c) for c in conversations(a)]
        assert cited(conversations(a))[0]["source_id"] == before["Shed"]["source_id"]
    export = tmp_path / "memory.zip"
    got = run_cli(["export", "-o", str(export), "--url", old.url, "--api-key", old.key], {})
    assert got.returncode == 0, got.stderr

    imported = run_cli(["import", str(export), "--json", "--url", new.url, "--api-key", new.key], {}, timeout=600)
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    assert summary["format"] == "secondbrain" and summary["failed"] == [] and summary["imported"] == 4
    with new.client(timeout=120) as b:
        after = wait_sources(b, set(before))
        assert_same(b, before, after, plan_versions, hit, talks)
        # Again: nothing is added.
        again = run_cli(["import", str(export), "--json", "--url", new.url, "--api-key", new.key], {}, timeout=600)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["imported"] == 0
        assert len(conversations(b)) == len(talks)
        assert sources(b) == after and versions(b, after["Trip plan"]["source_id"])[0]["version"] == 2

        # The web page's upload route reads it too, into another fresh account (other ids: another user).
        made = b.post("/v1/admin/users", json={"user_id": "mover"}).json()["key"]["api_key"]
    with httpx.Client(base_url=new.url, headers={"Authorization": f"Bearer {made}"}, timeout=600) as m:
        r = m.post("/v1/imports", files={"file": ("memory.zip", export.read_bytes(), "application/zip")})
        assert r.status_code == 202, r.text
        assert r.json()["format"] == "secondbrain" and r.json()["refused"] == 0 and r.json()["imported"] == 4
        # The answer comes once every item is submitted (each version once the one before it is indexed); the
        # newest versions are still in the pipeline then: the page follows the jobs it names, as here.
        finished = wait_jobs(m, [j["job_id"] for j in r.json()["jobs"]], timeout=300)
        assert {j["status"] for j in finished.values()} == {"succeeded"}
        after = wait_sources(m, set(before))
        assert after["Shed"]["artifact_id"] != before["Shed"]["artifact_id"]  # another user's copy
        assert_same(m, before, after, plan_versions, hit, talks)


def cited(convs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sources the answers of these conversations cite."""
    return [s for c in convs for t in c["turns"] for s in t.get("sources") or ()]


def assert_same(client: httpx.Client, before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
                plan_versions: list[dict[str, Any]], hit: dict[str, Any], talks: list[dict[str, Any]]) -> None:
    for title, was in before.items():
        now = after[title]
        assert now["size_bytes"] == was["size_bytes"], title  # the raw file, byte for byte
        assert (now["captured_at"], now["modality"], now["version"]) == \
            (was["captured_at"], was["modality"], was["version"]), title
    # A time the person gave comes back as it was.
    assert after["Shed"]["captured_at"].startswith("2023-05-14T07:30")  # fixed date: WHEN, in UTC
    moved = versions(client, after["Trip plan"]["source_id"])
    assert [v["version"] for v in moved] == [v["version"] for v in plan_versions] == [2, 1]
    for key in ("size_bytes", "captured_at", "title", "superseded"):
        assert [v[key] for v in moved] == [v[key] for v in plan_versions], key
    raw = client.get(f"/v1/artifacts/{moved[1]['artifact_id']}/raw")
    assert raw.status_code == 200 and raw.content == PLAN_V1.encode()  # the first version's own file
    passages = client.get(f"/v1/sources/{after['Trip plan']['source_id']}/passages").json()["passages"]
    assert "morning train" in " ".join(p["text"] for p in passages)
    found = client.get("/v1/search", params={"q": "hedge trimmer shed", "k": 1}).json()["hits"][0]
    assert found["text"] == hit["text"] and found["attributes"].get("tags") == hit["attributes"].get("tags")
    assert "garden" in (found["attributes"].get("tags") or "")
    assert found["source_uri"].startswith("import:secondbrain:note:")
    convs = conversations(client)
    assert [comparable(c) for c in convs] == talks
    # What the answer cites is the imported copies: their sources, files, passages and links here.
    sources_cited = cited(convs)
    assert "Shed" in {s["title"] for s in sources_cited}
    for source in sources_cited:
        here = after[source["title"]]
        assert (source["source_id"], source["artifact_id"], source["source_uri"]) == \
            (here["source_id"], here["artifact_id"], here["source_uri"])
        assert client.get(source["link"]).status_code == 200
        if source["title"] == "Shed":
            assert source["chunk_id"] == found["chunk_id"] and client.get(source["link"]).content == NOTE.encode()
