"""Captures that failed, over HTTP on real stores: the reason as a sentence the server writes, whether
trying again may help, each failed file listed once however often it was retried, and removing one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain import keys
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from tests.contracts.metadata.helpers import STAGES, document

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
NAMED = "extract failed: the file is named 'broken.pdf' but its content is a PNG image"


@pytest.fixture()
def api(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, Runtime]]:
    settings = Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                        topic_prefix=f"fc{tmp_path.name[-6:]}.", auth="off")
    rt = build_runtime(settings, vectors=True, models=False)
    rt.metadata.users.ensure_user("local")
    with TestClient(create_app(rt, gateway=True, query=False, relay=None), base_url="http://localhost") as client:
        yield client, rt
    rt.close()


def listed(client: TestClient, **params: str) -> list[dict[str, Any]]:
    r = client.get("/v1/sources", params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["sources"])


def test_a_failed_file_is_listed_once_with_its_reason_and_can_be_removed(api: tuple[TestClient, Runtime]) -> None:
    client, rt = api
    jobs = rt.metadata.jobs
    first = client.post("/v1/artifacts", files={"file": ("broken.pdf", PNG, "application/pdf")}).json()
    jobs.job_failed("local", first["job_id"], "extract", NAMED)  # what the extractor's sniffing reports
    tries = [first["job_id"]]
    for _ in range(2):  # Retry, twice, through the API: each try is a new job of the same file
        again = client.post(f"/v1/jobs/{tries[-1]}/retry")
        assert again.status_code == 202, again.text
        tries.append(again.json()["job_id"])
        jobs.job_failed("local", tries[-1], "extract", NAMED)
    (row,) = [r for r in listed(client) if r["title"] == "broken.pdf"]  # the newest try, however many retries
    assert row["job_id"] == tries[-1] and row["status"] == "failed"
    assert row["reason"] == "The file is named 'broken.pdf' but its content is a PNG image."  # the server's words
    assert row["retryable"] is False  # the same bytes fail the same way: no Retry offered
    assert [r for r in listed(client, status="failed") if r["title"] == "broken.pdf"] == [row]
    job = client.get(f"/v1/jobs/{tries[-1]}").json()
    assert (job["reason"], job["retryable"]) == (row["reason"], False)
    detail = client.get(f"/v1/sources/{row['source_id']}").json()  # every try stays in the source's history
    assert sorted(j["job_id"] for v in detail["versions"] for j in v["jobs"]) == sorted(tries)

    # A failure of the moment (a dependency away until retries ran out) says so, and offers Retry.
    note = client.post("/v1/notes", json={"text": "Call the plumber", "title": "Plumber"}).json()
    jobs.job_failed("local", note["job_id"], "embed", "embed failed: ConnectError: [Errno 111] Connection refused",
                    retryable=True)
    plumber = next(s for s in listed(client) if s["job_id"] == note["job_id"])
    assert plumber["retryable"] is True
    assert plumber["reason"] == ("A service it needs did not answer (ConnectError: [Errno 111] Connection refused). "
                                 "Try again in a while.")

    # Removed: gone from the list, its stored file with it; only a failed capture, only the user's.
    art = rt.metadata.catalog.get_artifact("local", row["artifact_id"])
    assert art is not None and rt.objects.stat(art.object_key) is not None
    assert client.delete("/v1/jobs/no-such-job").status_code == 404
    good = client.post("/v1/notes", json={"text": "Milk, eggs", "title": "Shopping"}).json()
    refused = client.delete(f"/v1/jobs/{good['job_id']}")
    assert refused.status_code == 409 and "only a capture that failed" in refused.json()["detail"]
    assert client.delete(f"/v1/jobs/{tries[-1]}").status_code == 204
    assert [s["job_id"] for s in listed(client)][:2] == [good["job_id"], note["job_id"]]
    assert not [r for r in listed(client) if r["title"] == "broken.pdf"]
    assert rt.objects.stat(art.object_key) is None
    assert rt.metadata.catalog.get_artifact("local", art.artifact_id) is None
    assert client.get(f"/v1/sources/{row['source_id']}").status_code == 404  # nothing of it was ever read: gone
    assert all(client.get(f"/v1/jobs/{j}").status_code == 404 for j in tries)
    assert client.delete(f"/v1/jobs/{tries[-1]}").status_code == 404


def test_a_failed_new_version_is_removed_and_the_version_that_worked_stays(api: tuple[TestClient, Runtime]) -> None:
    client, rt = api
    uri = "file:///notes/plan.md"
    ok = client.post("/v1/artifacts", files={"file": ("plan.md", b"# Plan\n\nv1", "text/markdown")},
                     data={"source_uri": uri}).json()
    art = rt.metadata.catalog.get_artifact("local", ok["artifact_id"])
    assert art is not None
    rt.metadata.catalog.save_document(document(art))  # read, split and indexed, as the stages record it
    for stage in STAGES:
        rt.metadata.jobs.stage_started("local", ok["job_id"], stage, 1)
        rt.metadata.jobs.stage_succeeded("local", ok["job_id"], stage)
    bad = client.post("/v1/artifacts", files={"file": ("plan.md", b"# Plan\n\nv2", "text/markdown")},
                      data={"source_uri": uri}).json()
    rt.metadata.jobs.job_failed("local", bad["job_id"], "extract", "extract failed: boom")
    plan = [r for r in listed(client) if r["source_uri"] == uri]
    assert [(r["job_id"], r["status"]) for r in plan] == [(bad["job_id"], "failed"), (ok["job_id"], "succeeded")]
    assert client.delete(f"/v1/jobs/{bad['job_id']}").status_code == 204
    assert [r["job_id"] for r in listed(client) if r["source_uri"] == uri] == [ok["job_id"]]
    assert client.get(f"/v1/sources/{plan[0]['source_id']}").status_code == 200
    assert rt.objects.stat(art.object_key) is not None  # the version that worked keeps its file
    assert rt.objects.stat(keys.artifact_key("local", bad["artifact_id"])) is None
