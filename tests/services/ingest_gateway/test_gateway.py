"""The gateway's HTTP contract on real stores (Postgres, files); Kafka is not needed to accept work."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.settings import Settings


@pytest.fixture()
def gateway(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, object]]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), max_upload_bytes=64 * 1024,
        kafka_bootstrap="127.0.0.1:9",  # nothing listens: the gateway must still accept work
        topic_prefix=f"gw{tmp_path.name[-6:]}.", auth="off",  # keys are tested in test_auth.py
    )
    rt = build_runtime(settings, vectors=False, models=False)
    app = create_app(rt, gateway=True, query=False, relay=None)
    with TestClient(app, base_url="http://localhost") as client:
        yield client, rt
    rt.close()


def test_note_is_accepted_with_job_and_outbox_row(gateway: tuple[TestClient, object]) -> None:
    client, rt = gateway
    r = client.post("/v1/notes", json={"text": "Buy oat milk", "title": "Shopping",
                                       "captured_at": "2026-04-01T10:00:00"})
    assert r.status_code == 202
    body = r.json()
    assert r.headers["location"] == f"/v1/jobs/{body['job_id']}"
    job = client.get(body["status_url"]).json()
    assert job["status"] == "queued"
    assert [s["stage"] for s in job["stages"]] == ["extract", "chunk", "embed"]
    assert job["events"][0]["status"] == "queued"
    rows = rt.metadata.outbox.claim_outbox(100)  # type: ignore[attr-defined]
    (row,) = [r for r in rows if r.message.topic.endswith("artifacts.submitted")]
    event = EventCodec().decode(row.message.value, expected=ArtifactSubmitted)
    assert event.job_id == body["job_id"] and event.user_id == "local" and row.message.key == b"local"
    assert event.captured_at is not None and event.captured_at.isoformat() == "2026-04-01T10:00:00+00:00"
    assert rt.objects.get(event.object_key) == b"Buy oat milk"  # type: ignore[attr-defined]
    assert event.sha256 == hashlib.sha256(b"Buy oat milk").hexdigest()


def test_many_jobs_are_followed_with_one_request(gateway: tuple[TestClient, object]) -> None:
    client, rt = gateway
    jobs = [client.post("/v1/notes", json={"text": f"Note {i}"}).json()["job_id"] for i in range(3)]
    rt.metadata.jobs.job_failed("local", jobs[1], "extract", "unreadable")  # type: ignore[attr-defined]
    r = client.get("/v1/jobs", params={"id": [jobs[2], "not-a-job", jobs[1], jobs[2], jobs[0]]})
    assert r.status_code == 200
    body = r.json()
    # In the order asked, each once, as GET /v1/jobs/{id} shows it (without its event log).
    assert [j["job_id"] for j in body["jobs"]] == [jobs[2], jobs[1], jobs[0]]
    assert [j["status"] for j in body["jobs"]] == ["queued", "failed", "queued"]
    assert body["jobs"][1]["reason"] and body["jobs"][0]["stages"][0]["stage"] == "extract"
    assert body["unknown"] == ["not-a-job"]
    assert client.get("/v1/jobs").status_code == 422  # nothing asked
    too_many = client.get("/v1/jobs", params={"id": [f"j{i}" for i in range(201)]})
    assert too_many.status_code == 422 and "200" in too_many.text


def test_upload_keeps_only_the_base_name_and_stores_bytes_once(gateway: tuple[TestClient, object]) -> None:
    client, rt = gateway
    data = b"# Plan\n\nSame bytes twice.\n"
    first = client.post("/v1/artifacts", files={"file": ("../../etc/passwd/../plan.md", data, "text/markdown")})
    second = client.post("/v1/artifacts", files={"file": ("C:\\Users\\me\\plan.md", data, "text/markdown")})
    assert first.status_code == second.status_code == 202
    assert first.json()["artifact_id"] == second.json()["artifact_id"]
    assert first.json()["job_id"] != second.json()["job_id"]
    stored = rt.objects.list("users/local/artifacts/")  # type: ignore[attr-defined]
    assert [o.size for o in stored if o.key.endswith(first.json()["artifact_id"])] == [len(data)]
    sources = client.get("/v1/sources").json()["sources"]
    assert {s["source_uri"] for s in sources if s["artifact_id"] == first.json()["artifact_id"]} == {"file:plan.md"}


def test_an_upload_may_name_its_source_for_good(gateway: tuple[TestClient, object]) -> None:
    client, _rt = gateway
    uri = "file:///home/me/notes/plan%20B.md"
    one = client.post("/v1/artifacts", data={"source_uri": uri},
                      files={"file": ("plan B.md", b"# Plan B\n\nFirst draft.\n", "text/markdown")})
    two = client.post("/v1/artifacts", headers={"X-Source-URI": uri, "X-Filename": "renamed.md",
                                                "Content-Type": "text/markdown"}, content=b"# Plan B\n\nSecond.\n")
    assert one.status_code == two.status_code == 202
    rows = [s for s in client.get("/v1/sources").json()["sources"] if s["source_uri"] == uri]
    assert {s["job_id"] for s in rows} == {one.json()["job_id"], two.json()["job_id"]}
    assert len({s["source_id"] for s in rows}) == 1  # one source, two versions
    for bad in ("note:1234", "https://example.org/page", "no scheme here", "file:" + "x" * 2001):
        r = client.post("/v1/artifacts", data={"source_uri": bad}, files={"file": ("a.md", b"text", "text/markdown")})
        assert r.status_code == 422 and "source_uri" in r.json()["detail"], bad


def test_idempotency_key_makes_a_retry_safe(gateway: tuple[TestClient, object]) -> None:
    client, _rt = gateway
    h = {"Idempotency-Key": "retry-me-123"}
    a = client.post("/v1/notes", json={"text": "only once"}, headers=h)
    b = client.post("/v1/notes", json={"text": "only once"}, headers=h)
    assert a.status_code == b.status_code == 202
    assert a.json()["job_id"] == b.json()["job_id"]


def test_bad_submissions_get_clear_answers(gateway: tuple[TestClient, object]) -> None:
    client, _rt = gateway
    too_big = client.post("/v1/artifacts", files={"file": ("big.txt", b"x" * (64 * 1024 + 1), "text/plain")})
    assert too_big.status_code == 413 and "SB_MAX_UPLOAD_BYTES" in too_big.json()["detail"]
    empty = client.post("/v1/artifacts", files={"file": ("empty.txt", b"", "text/plain")})
    assert empty.status_code == 422 and "empty" in empty.json()["detail"]
    blank = client.post("/v1/notes", json={"text": "   \n"})
    assert blank.status_code == 422
    assert client.post("/v1/notes", json={}).status_code == 422
    assert client.post("/v1/notes", content=b"not json", headers={"content-type": "application/json"}
                       ).status_code == 422
    assert client.post("/v1/artifacts", content=b"--x\r\nbroken", headers={
        "content-type": "multipart/form-data; boundary=x"}).status_code in (400, 422)
    assert client.get("/v1/jobs/not-a-job").status_code == 404


def test_readiness_reports_each_dependency(gateway: tuple[TestClient, object]) -> None:
    client, _rt = gateway
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 503
    checks = r.json()["checks"]
    assert checks["postgres"] == "ok" and checks["object_store"] == "ok"
    assert checks["kafka"].startswith("error")


def test_a_failed_capture_is_submitted_again_from_its_stored_file(gateway: tuple[TestClient, object]) -> None:
    client, rt = gateway
    data = b"# Minutes\n\nThe retry test's file.\n"
    first = client.post("/v1/artifacts", files={"file": ("minutes.md", data, "text/markdown")}).json()
    # Only a failed capture can be retried.
    refused = client.post(f"/v1/jobs/{first['job_id']}/retry")
    assert refused.status_code == 409 and "only a failed capture" in refused.json()["detail"]
    rt.metadata.jobs.job_failed("local", first["job_id"], "extract", "the extractor crashed")  # type: ignore[attr-defined]
    rt.metadata.outbox.claim_outbox(100)  # type: ignore[attr-defined]  # the first submission's message
    again = client.post(f"/v1/jobs/{first['job_id']}/retry")
    assert again.status_code == 202, again.text
    body = again.json()
    assert body["artifact_id"] == first["artifact_id"] and body["job_id"] != first["job_id"]
    assert client.get(body["status_url"]).json()["status"] == "queued"
    (row,) = [r for r in rt.metadata.outbox.claim_outbox(100)  # type: ignore[attr-defined]
              if r.message.topic.endswith("artifacts.submitted")]
    event = EventCodec().decode(row.message.value, expected=ArtifactSubmitted)
    assert event.job_id == body["job_id"] and event.filename == "minutes.md"
    assert event.source_uri == "file:minutes.md" and rt.objects.get(event.object_key) == data  # type: ignore[attr-defined]
    # The source now shows the new attempt first, under its file name.
    (newest, *_older) = [s for s in client.get("/v1/sources").json()["sources"]
                         if s["artifact_id"] == first["artifact_id"]]
    assert newest["job_id"] == body["job_id"] and newest["title"] == "minutes.md"
    assert client.post("/v1/jobs/not-a-job/retry").status_code == 404


def test_a_resent_copy_is_said_at_once_and_listed_once(gateway: tuple[TestClient, object]) -> None:
    """The same bytes sent again: the answer names what they are kept as, and Sources keeps one row."""
    from secondbrain import topic_names
    from secondbrain.pipeline import core
    from secondbrain.runtime import Runtime
    from services.extractors.registry import ExtractorSet
    from services.extractors.stage import ExtractorStage
    from services.extractors.text import TextExtractor

    client, runtime = gateway
    assert isinstance(runtime, Runtime)
    md = runtime.metadata
    extract = ExtractorStage(runtime.objects, users=md.users, api_keys=md.api_keys, intake=md.intake, jobs=md.jobs,
                             fence=md.fence, catalog=md.catalog, lifecycle=md.lifecycle,
                             extractors=ExtractorSet({"text": TextExtractor()}), max_bytes=1 << 20)

    def extracted() -> None:  # the extractor takes in what the gateway queued
        for row in md.outbox.claim_outbox(100):
            if row.message.topic.endswith(topic_names.ARTIFACTS_SUBMITTED):
                core.run(extract, EventCodec().decode(row.message.value, expected=ArtifactSubmitted), md.jobs,
                         trusted=True)

    data = b"Receipt: a drill, wall plugs and screws, 64 pounds."
    first = client.post("/v1/artifacts", files={"file": ("receipt.txt", data, "text/plain")})
    assert first.status_code == 202 and first.json()["already"] is None
    extracted()
    again = client.post("/v1/artifacts", files={"file": ("receipt.txt", data, "text/plain")})
    assert again.status_code == 202
    already = again.json()["already"]
    assert already["job_id"] == first.json()["job_id"] and already["title"] == "receipt.txt"
    assert already["message"].startswith("Already in your memory as receipt.txt, ")
    note = client.post("/v1/notes", json={"text": data.decode()}).json()  # the same words typed: the same bytes
    assert note["already"]["job_id"] == first.json()["job_id"]
    extracted()
    assert client.get(f"/v1/jobs/{again.json()['job_id']}").json()["status"] == "duplicate"
    listed = [s["job_id"] for s in client.get("/v1/sources").json()["sources"] if s["artifact_id"] ==
              first.json()["artifact_id"]]
    assert listed == [first.json()["job_id"]]  # one row, the copies are not kept as rows of their own
    copies = client.get("/v1/sources", params={"status": "duplicate"}).json()["sources"]
    assert {s["job_id"] for s in copies} == {again.json()["job_id"], note["job_id"]}  # asked for: there
    everything = client.get("/v1/sources", params={"copies": "true"}).json()["sources"]
    assert {s["job_id"] for s in everything} >= {first.json()["job_id"], again.json()["job_id"], note["job_id"]}


def test_the_day_a_copy_was_first_added_is_said_as_people_say_it() -> None:
    from datetime import datetime

    from services.ingest_gateway.api import already_sentence

    today = datetime.fromisoformat("2026-11-29T12:00:00+00:00")  # fixed clock
    added = datetime.fromisoformat("2026-11-21T23:30:00+00:00")
    assert already_sentence("receipt.jpg", added, "UTC", today) == "Already in your memory as receipt.jpg, 21 Nov."
    assert already_sentence("receipt.jpg", added, "Europe/Paris", today).endswith(", 22 Nov.")
    assert already_sentence(None, added.replace(year=2025), "UTC", today) == \
        "Already in your memory as an earlier capture, 21 Nov 2025."
