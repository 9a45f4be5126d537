"""The memory's state while work is in flight, through ``secondbrain up``, one test per reproduction of the
issue that found it broken: an erased user's text coming back, a replaced file settling on older bytes after
a restart, deleted text left in conversations and exports, forged events on the internal topics, and a stop
that hung.  (The stage-level race of "running" writes is in tests/secondbrain/pipeline/test_runner_state.py;
all of it at once, with restarts, is tests/e2e/test_torture.py.)"""

from __future__ import annotations

import asyncio
import io
import os
import random
import signal
import subprocess
import time
import uuid
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from secondbrain import ids
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import Chunk, ChunksCreated, DocumentExtracted, Segment
from tests.e2e.harness import Service, readable_tmp, wait_jobs
from tests.sse import sse_events

pytestmark = pytest.mark.e2e

CODEC = EventCodec()
WORDS = ("lantern", "harbour", "orchard", "meadow", "violin", "glacier", "saffron", "quarry", "tundra", "pylon")


def journal(n_lines: int, seed: int) -> bytes:
    """A long plain-text journal (several hundred passages: seconds to minutes of embedding here)."""
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(14)) + "." for _ in range(n_lines)]
    return "\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, len(lines), 8)).encode()


def admin_of(svc: Service) -> httpx.Client:
    return svc.client(timeout=60)


def as_user(svc: Service, key: str) -> httpx.Client:
    return httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def new_user(admin: httpx.Client, user: str) -> str:
    r = admin.post("/v1/admin/users", json={"user_id": user})
    assert r.status_code == 201, r.text
    return str(r.json()["key"]["api_key"])


def eventually(probe: Any, what: str, timeout: float = 120.0, every: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(every)


def stage_of(job: dict[str, Any], name: str) -> str:
    return str(next(s["status"] for s in job["stages"] if s["stage"] == name))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with readable_tmp("sb-e2e-state-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {},
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        yield svc
        svc.stop()


# --------------------------------------------------------------------------- 2. erase fences work in flight


def test_an_erased_users_text_does_not_come_back(server: Service) -> None:
    admin = admin_of(server)
    gina = as_user(server, new_user(admin, "gina"))
    job = gina.post("/v1/artifacts", files={"file": ("journal.txt", journal(5000, 2), "text/plain")}).json()["job_id"]

    def chunked() -> dict[str, Any] | None:
        view = gina.get(f"/v1/jobs/{job}").json()
        return view if stage_of(view, "chunk") == "succeeded" else None

    view = eventually(chunked, "the journal to be chunked", timeout=300, every=0.1)
    assert view["status"] == "running" and stage_of(view, "embed") != "succeeded", \
        "the embedder finished before the erasure: the test lost its race"
    erased = admin.delete("/v1/admin/users/gina", params={"confirm": "gina"})
    assert erased.status_code == 200, erased.text
    # The embedder's work in flight ends (dropped, not written, not dead-lettered).
    eventually(lambda: job in server.log_path.read_text() and "work of a deleted source or erased user dropped"
               in server.log_path.read_text(), "the in-flight embed to be dropped", timeout=300)
    time.sleep(2)
    data = server.data_dir
    assert data is not None
    assert not [p.name for p in (data / "vectors").iterdir() if "gina" in p.name], "a collection came back"
    assert not (data / "objects" / "users" / "gina").exists()
    letters = admin.get("/v1/deadletters", params={"limit": 500}).json()["deadletters"]
    assert not [d for d in letters if d.get("user_id") == "gina"]
    # The same id created again starts empty.
    gina_again = as_user(server, new_user(admin, "gina"))
    hits = gina_again.get("/v1/search", params={"q": "lantern harbour orchard meadow"}).json()["hits"]
    assert hits == []  # not one passage: the new gina has nothing
    assert gina_again.get("/v1/sources").json()["sources"] == []


# --------------------------------------------------------------------------- 4. deleted text leaves answers


def test_deleting_a_source_removes_its_text_from_conversations_and_exports(server: Service) -> None:
    admin = admin_of(server)
    hana = as_user(server, new_user(admin, "hana"))
    secret = "The storage unit alarm code is 8264 and the unit number is 77B."
    up = hana.post("/v1/artifacts", files={"file": ("secret.md", f"# Storage\n\n{secret}\n".encode(),
                                                      "text/markdown")}).json()
    other = hana.post("/v1/notes", json={"text": "The garden hose is in the blue shed.", "title": "Garden"}).json()
    wait_jobs(hana, [up["job_id"], other["job_id"]])
    done = sse_events(hana, "POST", "/v1/ask", json={"question": "What is the storage unit alarm code?"})[-1][1]
    conversation = done["conversation_id"]
    before = hana.get(f"/v1/conversations/{conversation}").text
    assert "8264" in before  # the answer quoted it
    source = next(s for s in hana.get("/v1/sources").json()["sources"] if s["job_id"] == up["job_id"])
    assert hana.delete(f"/v1/sources/{source['source_id']}").status_code == 204

    shown = hana.get(f"/v1/conversations/{conversation}")
    assert shown.status_code == 200
    assert "8264" not in shown.text and "77B" not in shown.text and "secret.md" not in shown.text
    exchange = shown.json()["turns"][0]
    assert exchange["question"] == "What is the storage unit alarm code?"  # the turn stays
    assert "deleted" in exchange["answer"]
    with hana.stream("GET", "/v1/export") as r:
        archive = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        everything = b"".join(zf.read(n) for n in zf.namelist())
    assert b"8264" not in everything and b"77B" not in everything
    assert b"blue shed" in everything  # the rest is still exported


# --------------------------------------------------------------------------- 5. internal topics


def test_forged_events_on_the_internal_topics_are_not_indexed_and_nothing_there_is_readable(
        server: Service) -> None:
    admin = admin_of(server)
    ines = as_user(server, new_user(admin, "ines"))
    plain = "Ines keeps the spare bicycle key under the third flowerpot."
    job = ines.post("/v1/notes", json={"text": plain, "title": "Bike"}).json()["job_id"]
    wait_jobs(ines, [job])
    bootstrap = ines.get("/v1/status").json()["kafka"]["bootstrap"]
    forged = "Forged pelican manifesto injected into the memory."

    async def forge_and_read() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
        await producer.start()
        try:
            now = datetime.now(UTC)
            doc_id = ids.document_id(ids.artifact_id("ines", ids.sha256_hex(forged.encode())))
            chunk = Chunk(chunk_id=ids.chunk_id(doc_id, 0), index=0, text=forged, char_start=0,
                          char_end=len(forged), token_count=9, heading_path=[], kind="paragraph")
            for job_id in ("", str(uuid.uuid4()), job):  # none, unknown, and a real one of hers
                ev = ChunksCreated(
                    event_id=str(uuid.uuid4()), job_id=job_id, user_id="ines", artifact_id="a", source_id="s",
                    document_id=doc_id, title="Pelicans", modality="note", content_type="text/plain",
                    captured_at=now, ingested_at=now, chunks=[chunk], chunk_count=1)
                await producer.send_and_wait("chunks.created", CODEC.encode(ev), key=b"ines",
                                             headers=list(CODEC.headers(ev)))
            doc = DocumentExtracted(
                event_id=str(uuid.uuid4()), job_id=job, user_id="ines", artifact_id="a", source_id="s",
                document_id=doc_id, title="Pelicans", modality="note", content_type="text/plain",
                captured_at=now, captured_at_source="user", ingested_at=now, text_length=len(forged),
                segments=[Segment(index=0, kind="paragraph", text="", char_start=0, char_end=len(forged))],
                text=forged)
            await producer.send_and_wait("documents.extracted", CODEC.encode(doc), key=b"ines",
                                         headers=list(CODEC.headers(doc)))
        finally:
            await producer.stop()
        # A consumer without the pipeline key reads the internal topics from the start.
        consumer = AIOKafkaConsumer("documents.extracted", "chunks.created", bootstrap_servers=bootstrap,
                                    group_id=None, auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            got = await consumer.getmany(timeout_ms=3000, max_records=10_000)
            return [m.value for batch in got.values() for m in batch]
        finally:
            await consumer.stop()

    values = asyncio.run(forge_and_read())
    assert values, "the internal topics were empty"
    assert not [v for v in values if b"spare bicycle key" in v], "a stage's event was readable without the key"

    def refused() -> list[dict[str, Any]]:
        letters = ines.get("/v1/deadletters").json()["deadletters"]
        return [d for d in letters if d["topic"] in ("chunks.created", "documents.extracted")
                and d["error_kind"] == "unauthorized"]

    assert len(eventually(lambda: len(refused()) >= 4 and refused(), "the forged events' letters")) >= 4
    time.sleep(2)
    hits = ines.get("/v1/search", params={"q": "pelican manifesto"}).json()["hits"]
    assert not [h for h in hits if "pelican" in h["text"].lower()]
    view = ines.get(f"/v1/jobs/{job}").json()
    assert view["status"] == "succeeded"  # the real job was not touched by the forgeries


# --------------------------------------------------------------------------- 3. replace while processing, restart


def test_a_source_replaced_while_processed_settles_on_the_last_upload_across_a_restart(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-e2e-replace-") as root:
        svc = Service("up-replace", ["up", "--data-dir", str(root / "data"), "--no-llm"], {},
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            with svc.client() as c:
                jobs = []
                for n in range(1, 6):
                    body = journal(600, n) + f"\n\nThis is upload number {n}.".encode()
                    jobs.append(c.post("/v1/artifacts", files={"file": ("same-name.txt", body,
                                                                         "text/plain")}).json()["job_id"])
                    time.sleep(0.3)
            # Stopped while the uploads are in flight, then started again.
            os.kill(svc.proc.pid, signal.SIGTERM)  # type: ignore[union-attr]
            assert svc.proc is not None and svc.proc.wait(30) == 0
            svc.restart().wait_ready(timeout=180)
            with svc.client() as c:
                views = wait_jobs(c, jobs, timeout=300)
                assert views[jobs[-1]]["status"] == "succeeded"
                assert all(v["status"] in ("succeeded", "superseded") for v in views.values()), views
                for j in jobs[:-1]:
                    assert views[j]["status"] != "running"
                (source,) = {s["source_id"] for s in c.get("/v1/sources").json()["sources"]}
                hits = c.get("/v1/search", params={"q": "This is upload number"}).json()["hits"]
                assert hits and {h["source_id"] for h in hits} == {source}
                said = {n for n in range(1, 6) for h in hits if f"upload number {n}." in h["text"]}
                assert said == {5}, f"the current version is not the last upload: {said}"
                assert c.get("/v1/status").json()  # still healthy
        finally:
            svc.stop()


# --------------------------------------------------------------------------- 6. a stop is bounded


def test_sigterm_with_work_in_flight_stops_within_15_seconds_and_cleanly(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-e2e-stop-") as root:
        data = root / "data"
        svc = Service("up-stop", ["up", "--data-dir", str(data), "--no-llm"], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        try:
            with svc.client() as c:
                big = c.post("/v1/artifacts", files={"file": ("journal.txt", journal(5000, 9),
                                                              "text/plain")}).json()["job_id"]
                notes = [c.post("/v1/notes", json={"text": f"Note {n}: the {WORDS[n]} is ready."}).json()["job_id"]
                         for n in range(8)]
                eventually(lambda: stage_of(c.get(f"/v1/jobs/{big}").json(), "extract") == "succeeded",
                           "the journal to reach the chunker", timeout=120, every=0.1)
            assert svc.proc is not None
            started = time.monotonic()
            os.kill(svc.proc.pid, signal.SIGTERM)
            rc = svc.proc.wait(20)
            took = time.monotonic() - started
            assert rc == 0 and took < 15.0, f"stopping took {took:.1f}s (rc {rc})\n{svc.tail()}"
            log = svc.log_path.read_text()
            assert not [line for line in log.splitlines() if line.startswith(("ERROR", "CRITICAL"))
                        or "Traceback" in line], svc.tail(80)
            # The embedded PostgreSQL and the broker were stopped, not orphaned.
            assert not (data / "postgres" / "postmaster.pid").exists()
            assert subprocess.run(["pgrep", "-f", str(data / "postgres")], capture_output=True).returncode == 1
            # Nothing was lost: the next start finishes the work.
            svc.restart().wait_ready(timeout=180)
            with svc.client() as c:
                views = wait_jobs(c, [big, *notes], timeout=300)
                assert {v["status"] for v in views.values()} == {"succeeded"}
        finally:
            svc.stop()


def test_the_data_dir_holds_the_pipeline_key_only_for_its_owner(server: Service) -> None:
    data = server.data_dir
    assert data is not None
    key = Path(data) / "pipeline.key"
    assert key.exists() and (key.stat().st_mode & 0o077) == 0
