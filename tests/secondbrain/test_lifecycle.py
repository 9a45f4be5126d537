"""A user's data over its life, through the HTTP API, checked by looking into every store.

Real components: PostgreSQL (a fresh database), files for objects, the qdrant-edge vector
store, the MiniLM embedder and BM25.  The broker is played by hand: outbox rows are taken as
the relay would publish them and run through the extract -> chunk -> embed stages with the
runner's job bookkeeping, so in-flight work can be held back and released after a deletion.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import random
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from app.serve import retention_loop
from secondbrain import ids, keys, lifecycle, topic_names
from secondbrain.events.models import (
    ArtifactSubmitted,
    ChunksCreated,
    ChunksIndexed,
    DocumentExtracted,
    UrlRequested,
)
from secondbrain.pipeline import claimcheck, core
from secondbrain.ports import VectorFilter
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.html import HtmlExtractor
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from services.fetcher.fetch import FetchPolicy
from services.fetcher.stage import FetcherStage
from tests.e2e.harness import Site
from tests.pg import base_dsn, fresh_database

# --------------------------------------------------------------------------- fixtures


@dataclass
class Env:
    rt: Runtime
    client: TestClient
    dsn: str
    keys: dict[str, str]
    stages: dict[type, Any]

    def h(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[user]}"}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(data_dir=tmp_path_factory.mktemp("lifecycle"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            kafka_bootstrap="127.0.0.1:9", auth="required", raw_retention_days=7,
                            fetch_allow_private=True)  # the pages are served on loopback by the test
        rt = build_runtime(settings, vectors=True, models=True)
        assert rt.vectors is not None and rt.embedder is not None and rt.sparse is not None
        api_keys = {}
        for user in ("alice", "bob"):
            rt.metadata.users.ensure_user(user)
            api_keys[user] = rt.metadata.api_keys.create_api_key(user, "test")[1]
        m = rt.metadata
        roles = {"users": m.users, "api_keys": m.api_keys, "intake": m.intake, "jobs": m.jobs, "fence": m.fence,
                 "catalog": m.catalog,
                 "lifecycle": m.lifecycle}
        stages = {
            ArtifactSubmitted: ExtractorStage(rt.objects, **roles, extractors=ExtractorSet(
                {"text": TextExtractor(), "html": HtmlExtractor()}), max_bytes=settings.max_upload_bytes),
            DocumentExtracted: ChunkerStage(rt.objects, ChunkingConfig(), fence=m.fence),
            ChunksCreated: EmbedderStage(rt.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                                         vectors=rt.vectors, embedder=rt.embedder, sparse=rt.sparse),
            UrlRequested: FetcherStage(rt.objects, **roles, policy=FetchPolicy(
                timeout_s=5, connect_timeout_s=5, max_bytes=10**6, max_redirects=3, respect_robots=True,
                allow_private=True)),
        }
        try:
            with TestClient(create_app(rt, gateway=True, query=True), base_url="http://localhost") as client:
                yield Env(rt, client, dsn, api_keys, stages)
        finally:
            rt.close()


@pytest.fixture
def small_claim_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every document and chunk list travel by claim check, so their objects exist to be deleted."""
    whole = claimcheck.oversized  # the stages that work in batches size their lists with it before any write
    monkeypatch.setattr(claimcheck, "oversized", lambda records, limit=16: whole(records, 16))
    monkeypatch.setattr(claimcheck, "offload", functools.partial(claimcheck.offload, limit=16))


# --------------------------------------------------------------------------- helpers


def run_stage(env: Env, event: Any) -> list[Any]:
    """One stage on one event, as the runner does it: admission, the work, the "still wanted?" write (and
    the discard of work for a source deleted meanwhile); the events the next stage would get."""
    stage = env.stages[type(event)]
    outputs = core.run(stage, event, env.rt.metadata.jobs, value=env.rt.codec.encode(event),
                        headers={k: v.decode() for k, v in env.rt.codec.headers(event)})
    return [o for o in outputs if not isinstance(o, ChunksIndexed)]


def run_all(env: Env, event: Any) -> None:
    pending = [event]
    while pending:
        pending += run_stage(env, pending.pop(0))


def published(env: Env) -> list[Any]:
    """What the relay would publish now (marked published)."""
    rows = env.rt.metadata.outbox.claim_outbox(1000)
    env.rt.metadata.outbox.mark_published([r.id for r in rows])
    kinds = {topic_names.ARTIFACTS_SUBMITTED: ArtifactSubmitted, topic_names.URLS_REQUESTED: UrlRequested}
    return [env.rt.codec.decode(r.message.value, expected=kind) for r in rows
            for topic, kind in kinds.items() if r.message.topic.endswith(topic)]


def drain(env: Env) -> None:
    while events := published(env):
        for ev in events:
            run_all(env, ev)


def upload(env: Env, user: str, name: str, data: bytes, content_type: str = "text/markdown") -> str:
    r = env.client.post("/v1/artifacts", files={"file": (name, data, content_type)}, headers=env.h(user))
    assert r.status_code == 202, r.text
    return str(r.json()["job_id"])


def sources(env: Env, user: str, **params: Any) -> list[dict[str, Any]]:
    r = env.client.get("/v1/sources", params={"limit": 500, **params}, headers=env.h(user))
    assert r.status_code == 200, r.text
    return list(r.json()["sources"])


def source_of(env: Env, user: str, uri: str) -> str:
    return ids.source_id(user, uri)


def search(env: Env, user: str, q: str) -> list[dict[str, Any]]:
    r = env.client.get("/v1/search", params={"q": q, "k": 20}, headers=env.h(user))
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def sql(env: Env, query: str, *params: Any) -> Any:
    with psycopg.connect(env.dsn) as conn:
        row = conn.execute(query.encode(), params or None).fetchone()
        return row[0] if row else None


def rows_for(env: Env, *, jobs: list[str], documents: list[str], artifacts: list[str]) -> dict[str, int]:
    """Rows anywhere in Postgres that mention these jobs, documents or artifacts."""
    return {
        "jobs": sql(env, "SELECT count(*) FROM jobs WHERE job_id = ANY(%s) OR artifact_id = ANY(%s)", jobs, artifacts),
        "job_stages": sql(env, "SELECT count(*) FROM job_stages WHERE job_id = ANY(%s)", jobs),
        "job_events": sql(env, "SELECT count(*) FROM job_events WHERE job_id = ANY(%s)", jobs),
        "outbox": sql(env, "SELECT count(*) FROM outbox WHERE job_id = ANY(%s)", jobs),
        "documents": sql(env, "SELECT count(*) FROM documents WHERE document_id = ANY(%s) OR artifact_id = ANY(%s)",
                         documents, artifacts),
        "artifacts": sql(env, "SELECT count(*) FROM artifacts WHERE artifact_id = ANY(%s)", artifacts),
    }


def objects_of(env: Env, user: str, *, documents: list[str], artifacts: list[str]) -> list[str]:
    found = [k for a in artifacts if env.rt.objects.stat(k := keys.artifact_key(user, a)) is not None]
    for d in documents:
        found += [o.key for o in env.rt.objects.list(lifecycle.document_prefix(user, d))]
    return found


def points(env: Env, user: str, **flt: Any) -> int:
    assert env.rt.vectors is not None
    return env.rt.vectors.count(user, VectorFilter(**flt))


# --------------------------------------------------------------------------- deleting a source

PLAN_V1 = b"# Plan\n\nThe quokka enclosure gets a new fence in spring.\n"
PLAN_V2 = b"# Plan\n\nThe quokka enclosure gets a new fence in spring; the narwhal tank is repainted.\n"
GARDEN = b"# Garden\n\nPlant the San Marzano tomatoes against the south fence in early May.\n"


def test_deleting_a_source_removes_every_version_from_every_store(env: Env, small_claim_checks: None) -> None:
    c = env.client
    note = c.post("/v1/notes", json={"text": "Invoice 8391 from Acme is due on Friday.", "title": "Acme"},
                  headers=env.h("alice"))
    assert note.status_code == 202
    upload(env, "alice", "garden.md", GARDEN)
    upload(env, "alice", "plan.md", PLAN_V1)
    drain(env)
    upload(env, "alice", "plan.md", PLAN_V2)
    upload(env, "bob", "plan.md", PLAN_V1)
    drain(env)

    plan = source_of(env, "alice", "file:plan.md")
    rows = [s for s in sources(env, "alice") if s["source_id"] == plan]
    assert sorted(s["version"] for s in rows) == [1, 2] and {s["status"] for s in rows} == {"succeeded"}
    detail = c.get(f"/v1/sources/{plan}", headers=env.h("alice")).json()
    assert detail["current_version"] == 2 and [v["version"] for v in detail["versions"]] == [2, 1]
    assert all(v["jobs"][0]["status"] == "succeeded" and v["raw"] == "kept" for v in detail["versions"])
    job_ids = [s["job_id"] for s in rows]
    doc_ids = [s["document_id"] for s in rows]
    art_ids = [s["artifact_id"] for s in rows]
    assert rows_for(env, jobs=job_ids, documents=doc_ids, artifacts=art_ids)["job_events"] > 0
    assert objects_of(env, "alice", documents=doc_ids, artifacts=art_ids)  # raw files and claim checks
    assert points(env, "alice", source_ids=[plan]) > 0
    assert any("narwhal" in h["text"] for h in search(env, "alice", "narwhal tank repainted"))
    others_before = points(env, "alice") - points(env, "alice", source_ids=[plan])
    bob_before = points(env, "bob")

    # Another user's source is not found, whoever asks.
    assert c.get(f"/v1/sources/{plan}", headers=env.h("bob")).status_code == 404
    assert c.delete(f"/v1/sources/{plan}", headers=env.h("bob")).status_code == 404
    assert c.delete("/v1/sources/not-a-source", headers=env.h("alice")).status_code == 404

    assert c.delete(f"/v1/sources/{plan}", headers=env.h("alice")).status_code == 204

    assert rows_for(env, jobs=job_ids, documents=doc_ids, artifacts=art_ids) == {
        "jobs": 0, "job_stages": 0, "job_events": 0, "outbox": 0, "documents": 0, "artifacts": 0}
    assert sql(env, "SELECT count(*) FROM documents WHERE user_id = 'alice' AND source_id = %s", plan) == 0
    assert points(env, "alice", source_ids=[plan]) == 0
    assert points(env, "alice", document_ids=doc_ids) == 0
    assert not any("narwhal" in h["text"] or h["source_id"] == plan
                   for h in search(env, "alice", "narwhal tank repainted"))
    assert objects_of(env, "alice", documents=doc_ids, artifacts=art_ids) == []
    assert c.get(f"/v1/sources/{plan}", headers=env.h("alice")).status_code == 404
    assert c.delete(f"/v1/sources/{plan}", headers=env.h("alice")).status_code == 404
    # Everything else stays: the other sources, and bob's file of the same name.
    assert points(env, "alice") == others_before > 0
    assert {s["title"] for s in sources(env, "alice")} == {"Acme", "Garden"}
    assert any("San Marzano" in h["text"] for h in search(env, "alice", "when to plant tomatoes"))
    assert points(env, "bob") == bob_before > 0
    assert any("quokka" in h["text"] for h in search(env, "bob", "quokka fence"))

    # The same name submitted again is new work, and runs normally.
    upload(env, "alice", "plan.md", PLAN_V2)
    drain(env)
    (again,) = [s for s in sources(env, "alice") if s["source_id"] == plan]
    assert (again["status"], again["version"]) == ("succeeded", 1)
    assert any("narwhal" in h["text"] for h in search(env, "alice", "narwhal tank repainted"))


def test_work_in_flight_for_a_deleted_source_is_dropped(env: Env, small_claim_checks: None) -> None:
    c = env.client
    # An upload already published to the extractor when its source is deleted.
    upload(env, "alice", "inflight.md", b"# Inflight\n\nThe axolotl aquarium needs a chiller.\n")
    (event,) = published(env)
    inflight = source_of(env, "alice", "file:inflight.md")
    assert c.delete(f"/v1/sources/{inflight}", headers=env.h("alice")).status_code == 204
    run_all(env, event)  # the extractor drops it: nothing is registered, read or written again
    art = [event.artifact_id or ""]
    doc = [ids.document_id(event.artifact_id or "")]
    assert rows_for(env, jobs=[event.job_id or ""], documents=doc, artifacts=art) == {
        "jobs": 0, "job_stages": 0, "job_events": 0, "outbox": 0, "documents": 0, "artifacts": 0}
    assert objects_of(env, "alice", documents=doc, artifacts=art) == []
    assert points(env, "alice", source_ids=[inflight]) == 0

    # Chunks on their way to the embedder when the source is deleted.
    upload(env, "alice", "late.md", b"# Late\n\nThe capybara pool is cleaned on Sundays.\n")
    (event,) = published(env)
    (extracted,) = run_stage(env, event)
    (chunks,) = run_stage(env, extracted)
    assert chunks.chunks_ref is not None and env.rt.objects.stat(chunks.chunks_ref) is not None
    late = source_of(env, "alice", "file:late.md")
    assert c.delete(f"/v1/sources/{late}", headers=env.h("alice")).status_code == 204
    assert run_stage(env, chunks) == []
    assert points(env, "alice", source_ids=[late]) == 0
    assert not any("capybara" in h["text"] for h in search(env, "alice", "capybara pool"))
    assert env.rt.objects.stat(chunks.chunks_ref) is None
    assert objects_of(env, "alice", documents=[chunks.document_id], artifacts=[chunks.artifact_id]) == []
    assert rows_for(env, jobs=[chunks.job_id], documents=[chunks.document_id], artifacts=[chunks.artifact_id]) == {
        "jobs": 0, "job_stages": 0, "job_events": 0, "outbox": 0, "documents": 0, "artifacts": 0}

    # A submission still waiting in the outbox is never published.
    upload(env, "alice", "queued.md", b"# Queued\n\nWaiting in line.\n")
    queued = source_of(env, "alice", "file:queued.md")
    assert c.delete(f"/v1/sources/{queued}", headers=env.h("alice")).status_code == 204
    assert published(env) == []

    # After the deletion, the same file is new work.
    upload(env, "alice", "inflight.md", b"# Inflight\n\nThe axolotl aquarium needs a chiller.\n")
    drain(env)
    (row,) = [s for s in sources(env, "alice") if s["source_id"] == inflight]
    assert row["status"] == "succeeded"
    assert any("axolotl" in h["text"] for h in search(env, "alice", "axolotl chiller"))


def test_a_web_page_deleted_before_it_is_fetched_is_never_fetched(env: Env) -> None:
    c = env.client
    url = f"{Site().base}/article"
    page = ids.source_id("alice", url)
    assert c.post("/v1/urls", json={"url": url}, headers=env.h("alice")).status_code == 202
    (request,) = published(env)
    assert c.get(f"/v1/sources/{page}", headers=env.h("alice")).json()["versions"][0]["raw"] is None
    assert c.delete(f"/v1/sources/{page}", headers=env.h("alice")).status_code == 204
    assert run_stage(env, request) == []  # dropped before fetching
    assert sql(env, "SELECT count(*) FROM jobs WHERE job_id = %s", request.job_id) == 0
    assert sql(env, "SELECT count(*) FROM artifacts WHERE user_id = 'alice' AND source_uri = %s", url) == 0

    # Fetched and indexed, then deleted: the stored snapshot goes too.
    assert c.post("/v1/urls", json={"url": url}, headers=env.h("alice")).status_code == 202
    drain(env)
    (row,) = [s for s in sources(env, "alice") if s["source_id"] == page]
    assert row["status"] == "succeeded" and env.rt.objects.stat(keys.artifact_key("alice", row["artifact_id"]))
    assert c.delete(f"/v1/sources/{page}", headers=env.h("alice")).status_code == 204
    assert env.rt.objects.stat(keys.artifact_key("alice", row["artifact_id"])) is None
    assert points(env, "alice", source_ids=[page]) == 0


def test_a_copy_under_another_name_keeps_its_bytes_and_is_indexed_in_its_own_name(env: Env) -> None:
    c = env.client
    same = b"# Recipe\n\nKnead the focaccia dough with rosemary and coarse salt.\n"
    upload(env, "alice", "recipe.md", same)
    drain(env)
    upload(env, "alice", "recipe-copy.md", same)
    drain(env)
    original, copy = source_of(env, "alice", "file:recipe.md"), source_of(env, "alice", "file:recipe-copy.md")
    # one row for the bytes: the copy is listed only when copies are asked for
    assert not [s for s in sources(env, "alice") if s["source_id"] == copy]
    (dup,) = [s for s in sources(env, "alice", status="duplicate") if s["source_id"] == copy]
    assert dup["status"] == "duplicate"
    raw_key = keys.artifact_key("alice", dup["artifact_id"])

    assert c.delete(f"/v1/sources/{original}", headers=env.h("alice")).status_code == 204
    assert env.rt.objects.stat(raw_key) is not None  # the copy still needs the bytes
    drain(env)  # the copy was queued again
    (row,) = [s for s in sources(env, "alice") if s["source_id"] == copy]
    assert (row["status"], row["source_uri"]) == ("succeeded", "file:recipe-copy.md")
    hits = [h for h in search(env, "alice", "focaccia rosemary") if "focaccia" in h["text"]]
    assert hits and {h["source_id"] for h in hits} == {copy}
    assert c.get(f"/v1/sources/{original}", headers=env.h("alice")).status_code == 404

    assert c.delete(f"/v1/sources/{copy}", headers=env.h("alice")).status_code == 204
    assert env.rt.objects.stat(raw_key) is None  # nobody uses it any more
    assert not any("focaccia" in h["text"] for h in search(env, "alice", "focaccia rosemary"))


def test_an_interrupted_deletion_is_finished_by_asking_again(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    upload(env, "alice", "draft.md", b"# Draft\n\nThe okapi paddock plan, first draft.\n")
    drain(env)
    draft = source_of(env, "alice", "file:draft.md")
    (row,) = [s for s in sources(env, "alice") if s["source_id"] == draft]
    assert env.rt.vectors is not None
    real = env.rt.vectors.delete_where

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("the vector store does not answer")

    monkeypatch.setattr(env.rt.vectors, "delete_where", unreachable)
    with pytest.raises(ConnectionError):
        lifecycle.delete_source(env.rt.metadata, env.rt.objects, env.rt.vectors, "alice", draft)
    # The metadata is gone already (nothing in flight can bring it back), the rest is remembered.
    assert [s for s in sources(env, "alice") if s["source_id"] == draft] == []
    assert points(env, "alice", source_ids=[draft]) > 0
    monkeypatch.setattr(env.rt.vectors, "delete_where", real)
    assert env.client.delete(f"/v1/sources/{draft}", headers=env.h("alice")).status_code == 204
    assert points(env, "alice", source_ids=[draft]) == 0
    assert objects_of(env, "alice", documents=[row["document_id"]], artifacts=[row["artifact_id"]]) == []
    assert env.client.delete(f"/v1/sources/{draft}", headers=env.h("alice")).status_code == 404


def test_sources_can_be_filtered(env: Env) -> None:
    c = env.client
    c.post("/v1/notes", json={"text": "Call the plumber about the boiler."}, headers=env.h("alice"))
    drain(env)
    notes = sources(env, "alice", modality="note")
    assert notes and {s["modality"] for s in notes} == {"note"}
    assert {s["status"] for s in sources(env, "alice", status="succeeded")} == {"succeeded"}
    assert c.get("/v1/sources", params={"status": "nonsense"}, headers=env.h("alice")).status_code == 422


# --------------------------------------------------------------------------- export


def test_export_holds_everything_of_its_user_and_nothing_of_others(env: Env) -> None:
    c = env.client
    report = b"# Quarterly report\n\nRevenue of the pangolin sanctuary grew by twelve percent.\n"
    job = upload(env, "alice", "report.md", report)
    drain(env)
    asked = c.post("/v1/ask", json={"question": "how did the pangolin sanctuary revenue change?"},
                   headers=env.h("alice"))
    assert asked.status_code == 200 and "event: done" in asked.text
    big = random.Random(7).randbytes(3_000_000)  # still queued: raw files are exported whatever their job's state
    big_job = upload(env, "alice", "scan.bin", big, "application/octet-stream")

    r = c.get("/v1/export", headers=env.h("alice"))
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    assert r.headers["content-disposition"].startswith('attachment; filename="secondbrain-export-alice-')
    zf = zipfile.ZipFile(io.BytesIO(r.content))
    assert zf.testzip() is None
    manifest = json.loads(zf.read("manifest.json"))
    assert (manifest["format"], manifest["format_version"], manifest["user_id"]) == ("secondbrain-export", 1, "alice")
    listed = sources(env, "alice")
    lines = [json.loads(x) for x in zf.read("sources.jsonl").splitlines()]
    assert manifest["counts"]["sources"] == len(lines) == len(listed)
    assert {x["job_id"] for x in lines} == {s["job_id"] for s in listed}
    n_docs = sql(env, "SELECT count(*) FROM documents WHERE user_id = 'alice'")
    doc_files = [n for n in zf.namelist() if n.startswith("documents/")]
    assert manifest["counts"]["documents"] == len(doc_files) == n_docs
    raw_files = [n for n in zf.namelist() if n.startswith("raw/")]
    assert manifest["counts"]["raw_files"] == len(raw_files) == sql(
        env, "SELECT count(*) FROM artifacts WHERE user_id = 'alice' AND raw_purged_at IS NULL")
    row = next(s for s in listed if s["job_id"] == job)
    assert zf.read(f"raw/{row['artifact_id']}/report.md") == report
    big_row = next(s for s in listed if s["job_id"] == big_job)
    assert zf.read(f"raw/{big_row['artifact_id']}/scan.bin") == big
    doc = json.loads(zf.read(f"documents/{row['document_id']}.json"))
    assert "pangolin sanctuary grew by twelve percent" in doc["text"]
    assert doc["chunks"] and doc["chunks"][0]["text"] in doc["text"] and "char_start" in doc["chunks"][0]
    assert doc["title"] == "Quarterly report" and doc["version"] == 1
    conversations = [json.loads(x) for x in zf.read("conversations.jsonl").splitlines()]
    assert any(t["content"].startswith("how did the pangolin") for cv in conversations for t in cv["turns"])

    # Streamed in pieces of about a block, never the whole archive at once.
    assert env.rt.vectors is not None
    pieces = [len(p) for p in lifecycle.export_user(env.rt.metadata, env.rt.objects, env.rt.vectors, "alice")]
    assert sum(pieces) > len(big) and max(pieces) < 1.5 * 2**20

    theirs = zipfile.ZipFile(io.BytesIO(c.get("/v1/export", headers=env.h("bob")).content))
    text = b"".join(theirs.read(n) for n in theirs.namelist())
    assert b"pangolin" not in text and row["artifact_id"].encode() not in text
    assert json.loads(theirs.read("manifest.json"))["user_id"] == "bob"
    big_source = source_of(env, "alice", "file:scan.bin")
    assert c.delete(f"/v1/sources/{big_source}", headers=env.h("alice")).status_code == 204


# --------------------------------------------------------------------------- raw-file retention


def test_retention_removes_old_raw_files_and_keeps_their_text_searchable(env: Env) -> None:
    c = env.client
    receipt = b"# Receipt\n\nBought a kumquat tree at the Saturday market for 34 euros.\n"
    upload(env, "alice", "receipt.md", receipt)
    upload(env, "alice", "fresh.md", b"# Fresh\n\nThe persimmon is ripe.\n")
    drain(env)
    (row,) = [s for s in sources(env, "alice") if s["source_uri"] == "file:receipt.md"]
    raw_url = f"/v1/artifacts/{row['artifact_id']}/raw"
    assert c.get(raw_url, headers=env.h("alice")).content == receipt
    with psycopg.connect(env.dsn) as conn:  # as if it had been done ten days ago
        conn.execute("UPDATE jobs SET created_at = now() - interval '10 days', finished_at = now() - "
                     "interval '10 days' WHERE job_id = %s", (row["job_id"],))
        conn.execute("UPDATE artifacts SET submitted_at = now() - interval '10 days' WHERE artifact_id = %s",
                     (row["artifact_id"],))

    report = lifecycle.purge_expired_raw(env.rt.metadata, env.rt.objects, 7, gate=env.rt.gate)
    assert report.artifacts == 1 and report.bytes == len(receipt)
    assert env.rt.objects.stat(keys.artifact_key("alice", row["artifact_id"])) is None
    gone = c.get(raw_url, headers=env.h("alice"))
    assert gone.status_code == 410
    assert "removed" in gone.json()["detail"] and "retention" in gone.json()["detail"]
    assert c.get(raw_url, headers=env.h("bob")).status_code == 404  # not theirs: no hint it existed
    by_uri = {s["source_uri"]: s for s in sources(env, "alice")}
    assert by_uri["file:receipt.md"]["raw"] == "expired" and by_uri["file:fresh.md"]["raw"] == "kept"
    detail = c.get(f"/v1/sources/{row['source_id']}", headers=env.h("alice")).json()
    assert detail["versions"][0]["raw"] == "expired" and detail["versions"][0]["raw_url"] is None
    assert any("kumquat" in h["text"] for h in search(env, "alice", "kumquat tree market"))
    exported = zipfile.ZipFile(io.BytesIO(c.get("/v1/export", headers=env.h("alice")).content))
    assert not any(n.startswith(f"raw/{row['artifact_id']}/") for n in exported.namelist())
    assert json.loads(exported.read("manifest.json"))["counts"]["raw_expired"] >= 1

    # The same file uploaded again is kept again.
    upload(env, "alice", "receipt.md", receipt)
    drain(env)
    assert c.get(raw_url, headers=env.h("alice")).content == receipt


def test_the_gateway_runs_retention_in_the_background(env: Env) -> None:
    upload(env, "alice", "old-note.md", b"# Old\n\nThe wombat burrow was mapped.\n")
    drain(env)
    (row,) = [s for s in sources(env, "alice") if s["source_uri"] == "file:old-note.md"]
    with psycopg.connect(env.dsn) as conn:
        conn.execute("UPDATE jobs SET finished_at = now() - interval '30 days' WHERE job_id = %s", (row["job_id"],))
        conn.execute("UPDATE artifacts SET submitted_at = now() - interval '30 days' WHERE artifact_id = %s",
                     (row["artifact_id"],))

    async def until_expired() -> None:
        task = asyncio.create_task(retention_loop(env.rt, 7, interval_s=0.05))
        try:
            for _ in range(400):
                if env.rt.metadata.catalog.get_artifact("alice", row["artifact_id"]).raw_purged_at:  # type: ignore[union-attr]
                    return
                await asyncio.sleep(0.05)
        finally:
            task.cancel()

    asyncio.run(until_expired())
    assert [s["raw"] for s in sources(env, "alice") if s["job_id"] == row["job_id"]] == ["expired"]


# --------------------------------------------------------------------------- erasing an account


def test_erasing_an_account_leaves_nothing_and_touches_no_one_else(env: Env) -> None:
    c = env.client
    c.post("/v1/notes", json={"text": "Bob's locker code is 4417."}, headers=env.h("bob"))
    drain(env)
    assert c.post("/v1/ask", json={"question": "what is my locker code?"}, headers=env.h("bob")).status_code == 200
    bob_jobs = [s["job_id"] for s in sources(env, "bob")]
    assert bob_jobs and env.rt.objects.list("users/bob/") and points(env, "bob") > 0
    alice_sources, alice_points = sources(env, "alice"), points(env, "alice")

    refused = c.delete("/v1/me", headers=env.h("bob"))
    assert refused.status_code == 400 and "confirm=bob" in refused.json()["detail"]
    assert c.delete("/v1/me", params={"confirm": "alice"}, headers=env.h("bob")).status_code == 400
    r = c.delete("/v1/me", params={"confirm": "bob"}, headers=env.h("bob"))
    assert r.status_code == 200 and r.json()["found"] and r.json()["rows"]["users"] == 1

    with psycopg.connect(env.dsn) as conn:
        tables = [t for (t,) in conn.execute("SELECT table_name FROM information_schema.columns WHERE "
                                             "column_name = 'user_id' AND table_schema = current_schema() "
                                             "AND table_name <> 'erased_users'")]
    assert {"users", "jobs", "documents", "artifacts", "api_keys", "conversations", "deleted_sources"} <= set(tables)
    for table in tables:
        assert sql(env, f"SELECT count(*) FROM {table} WHERE user_id = 'bob'") == 0, table
    # only the id's tombstone is left, so that work still in flight creates nothing for it
    assert sql(env, "SELECT count(*) FROM erased_users WHERE user_id = 'bob'") == 1
    for table in ("job_stages", "job_events", "outbox"):
        assert sql(env, f"SELECT count(*) FROM {table} WHERE job_id = ANY(%s)", bob_jobs) == 0, table
    assert sql(env, "SELECT count(*) FROM conversation_turns t WHERE NOT EXISTS "
                    "(SELECT 1 FROM conversations c WHERE c.conversation_id = t.conversation_id)") == 0
    assert env.rt.objects.list("users/bob/") == []
    assert points(env, "bob") == 0
    vectors_dir = env.rt.settings.vectors_dir
    assert not any("bob" in p.name for p in vectors_dir.iterdir())  # no collection of any version left
    assert c.get("/v1/sources", headers=env.h("bob")).status_code == 401  # the key is gone with the user
    assert sources(env, "alice") == alice_sources and points(env, "alice") == alice_points

    # The id can be used again, and starts empty.
    env.rt.metadata.users.ensure_user("bob")
    env.keys["bob"] = env.rt.metadata.api_keys.create_api_key("bob", "new")[1]
    assert sources(env, "bob") == [] and search(env, "bob", "locker code") == []
    fresh = zipfile.ZipFile(io.BytesIO(c.get("/v1/export", headers=env.h("bob")).content))
    counts = json.loads(fresh.read("manifest.json"))["counts"]
    assert counts["sources"] == counts["documents"] == counts["conversations"] == 0


def test_erase_user_is_an_admin_function_too(env: Env, tmp_path: Path) -> None:
    env.rt.metadata.users.ensure_user("carol")
    carol_key = env.rt.metadata.api_keys.create_api_key("carol", "t")[1]
    env.client.post("/v1/notes", json={"text": "Carol's bike is blue."},
                    headers={"Authorization": f"Bearer {carol_key}"})
    drain(env)
    assert env.rt.vectors is not None
    report = lifecycle.erase_user(env.rt.metadata, env.rt.objects, env.rt.vectors, "carol")
    assert report.found and report.objects >= 1 and report.rows["jobs"] == 1
    assert not env.rt.metadata.users.user_exists("carol") and points(env, "carol") == 0
    again = lifecycle.erase_user(env.rt.metadata, env.rt.objects, env.rt.vectors, "carol")
    assert not again.found and again.objects == 0
