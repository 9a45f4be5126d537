"""Distributed mode: every piece is its own process, on the broker, Postgres, S3 and Qdrant engine.

The vector store is reached with qdrant-client over REST; the server behind it is the
repository's Qdrant-REST server over the in-process engine (no Qdrant binary exists here).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from devtools.s3 import MotoS3Server
from secondbrain import ids
from secondbrain.events import signing
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import ArtifactSubmitted, DeadLetter
from secondbrain.events.sealing import new_key
from secondbrain.infra.ports import free_port
from secondbrain.infra.tansu import TansuBroker
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.e2e.harness import REPO, Service, Site, wait_jobs
from tests.otlp import OtlpReceiver, Span
from tests.pg import base_dsn, fresh_database

pytestmark = pytest.mark.e2e
USER = "local"


@dataclass
class Cluster:
    env: dict[str, str]
    broker: TansuBroker
    gateway: Service
    query: Service
    workers: dict[str, Service]
    qdrant_url: str
    prefix: str
    log_dir: Path
    producer_key: str  # a producer key of USER, for events published straight to Kafka
    mallory_key: str  # another user's producer key
    user_key: str  # USER's key for the HTTP API

    def client(self, svc: Service) -> httpx.Client:
        """An HTTP client for one of the cluster's services, acting as USER."""
        return httpx.Client(base_url=svc.url, timeout=30, headers={"Authorization": f"Bearer {self.user_key}"})


PIPELINE_KEY = new_key()  # one key for every process of the cluster, as a deployment's secret


def _env(*, bootstrap: str, dsn: str, s3: MotoS3Server, bucket: str, qdrant_url: str, prefix: str) -> dict[str, str]:
    return {
        "SB_MODE": "distributed", "SB_KAFKA_BOOTSTRAP": bootstrap, "SB_POSTGRES_DSN": dsn,
        "SB_OBJECT_STORE": "s3", "SB_S3_ENDPOINT": s3.endpoint, "SB_S3_ACCESS_KEY": s3.access_key,
        "SB_S3_SECRET_KEY": s3.secret_key, "SB_S3_BUCKET": bucket, "SB_VECTOR_STORE": "qdrant",
        "SB_QDRANT_URL": qdrant_url, "SB_TOPIC_PREFIX": prefix, "SB_PARTITIONS": "2",
        "SB_KAFKA_SESSION_TIMEOUT_MS": "3000", "SB_KAFKA_HEARTBEAT_INTERVAL_MS": "750",
        "SB_RETRY_BACKOFF_S": "0.1", "SB_MAX_ATTEMPTS": "3", "SB_FETCH_ALLOW_PRIVATE": "true",
        "SB_PIPELINE_KEY": PIPELINE_KEY,
    }


@pytest.fixture(scope="module")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    log_dir = tmp_path_factory.mktemp("dist-logs")
    s3 = MotoS3Server().start()
    qport = free_port()
    qdrant = Service("qdrant", [], {}, log_dir, port=qport)
    qdrant.args = []
    import subprocess
    import sys

    qproc = subprocess.Popen(
        [sys.executable, "-m", "devtools.qdrant_edge_server", "--host", "127.0.0.1", "--port",
         str(qport), "--data", str(tmp_path_factory.mktemp("qdrant"))],
        stdout=(log_dir / "qdrant.log").open("wb"), stderr=subprocess.STDOUT,
        cwd=REPO,  # devtools is not installed: run from the root
    )
    qdrant.proc = qproc
    qdrant.wait_ready(60, path="/")
    with base_dsn() as base, fresh_database(base) as dsn:
        store = PostgresMetadataStore(dsn)
        store.database.migrate()
        store.users.ensure_user(USER)
        store.users.ensure_user("mallory")
        _, producer_key = store.api_keys.create_api_key(USER, "courier app", "producer")
        _, mallory_key = store.api_keys.create_api_key("mallory", "mallory's app", "producer")
        _, user_key = store.api_keys.create_api_key(USER, "tests", "user")
        store.database.close()
        yield {"s3": s3, "dsn": dsn, "base_dsn": base, "qdrant_url": qdrant.url, "log_dir": log_dir,
               "producer_key": producer_key, "mallory_key": mallory_key, "user_key": user_key}
    qproc.terminate()
    qproc.wait(10)
    s3.stop()


def _start_cluster(infra: dict[str, object], broker: TansuBroker, name: str,
                   extra_env: dict[str, str] | None = None) -> Cluster:
    prefix = f"{name}{uuid.uuid4().hex[:6]}."
    env = _env(bootstrap=broker.bootstrap, dsn=str(infra["dsn"]), s3=infra["s3"],  # type: ignore[arg-type]
               bucket=f"sb-{uuid.uuid4().hex[:8]}", qdrant_url=str(infra["qdrant_url"]), prefix=prefix)
    env.update(extra_env or {})
    log_dir = Path(str(infra["log_dir"])) / name
    workers = {stage: Service(f"worker-{stage}", ["worker", stage], env, log_dir)
               for stage in ("fetch", "extract", "chunk", "embed")}
    gateway = Service("gateway", ["gateway"], env, log_dir)
    query = Service("query", ["query"], env, log_dir)
    for svc in (gateway, query, *workers.values()):
        svc.start()
    for svc in (gateway, query, *workers.values()):
        svc.wait_ready(120)
    return Cluster(env, broker, gateway, query, workers, str(infra["qdrant_url"]), prefix, log_dir,
                   str(infra["producer_key"]), str(infra["mallory_key"]), str(infra["user_key"]))


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    """Where the cluster's processes send their traces and metrics (OTLP/HTTP)."""
    receiver = OtlpReceiver()
    yield receiver
    receiver.close()


@pytest.fixture(scope="module")
def cluster(infra: dict[str, object], otlp: OtlpReceiver) -> Iterator[Cluster]:
    broker = TansuBroker().start()
    # Telemetry on, exported often, so the tracing tests below can read what the processes sent.
    c = _start_cluster(infra, broker, "dist", {"SB_OTEL_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200",
                                               "OTEL_METRIC_EXPORT_INTERVAL": "1000"})
    yield c
    for svc in (c.gateway, c.query, *c.workers.values()):
        svc.stop()
    broker.stop()


def test_binary_modalities_and_urls_flow_through_separate_processes(cluster: Cluster) -> None:
    """A scanned PDF, speech and a fetched web page go through the fetch/extract/chunk/embed workers
    with the raw bytes in S3, and come back with their page, time span and URL."""
    from devtools import gen_audio, gen_pdf_image

    site = Site()
    work = Path(tempfile.mkdtemp(prefix="sb-dist-audio-"))
    try:
        gw = cluster.client(cluster.gateway)
        q = cluster.client(cluster.query)
        rec = gen_audio.build_recording(work, gen_audio.SCRIPT[:3])
        ogg = gen_audio.encode(rec.path, work / "memo.ogg", "libopus", rate=48_000)
        jobs = []
        for name, data, ctype in [("log.pdf", gen_pdf_image.scanned_pdf(), "application/pdf"),
                                  ("memo.ogg", ogg.read_bytes(), "audio/ogg")]:
            r = gw.post("/v1/artifacts", files={"file": (name, data, ctype)})
            assert r.status_code == 202, r.text
            jobs.append(r.json()["job_id"])
        r = gw.post("/v1/urls", json={"url": f"{site.base}/article"})
        assert r.status_code == 202, r.text
        jobs.append(r.json()["job_id"])
        final = wait_jobs(gw, jobs, timeout=240)
        assert {j["status"] for j in final.values()} == {"succeeded"}, final

        hit = q.get("/v1/search", params={"q": "brass lanterns polished before the storm", "k": 1}).json()["hits"][0]
        assert (hit["modality"], hit["page"]) == ("pdf", 2)
        hits = q.get("/v1/search", params={"q": "chocolate cake volcano festival grandmother", "k": 5}).json()["hits"]
        hit = next(h for h in hits if h["modality"] == "audio")
        assert hit["t_start"] <= rec.starts[1] + 1.0 and hit["t_end"] >= rec.ends[1] - 1.0
        hits = q.get("/v1/search", params={"q": "concentric rings of glass prisms", "k": 5}).json()["hits"]
        assert any(h["source_uri"] == f"{site.base}/article" and h["modality"] == "web" for h in hits), hits
    finally:
        site.close()
        shutil.rmtree(work, ignore_errors=True)


def _note(client: httpx.Client, text: str, **extra: str) -> str:
    r = client.post("/v1/notes", json={"text": text, **extra})
    assert r.status_code == 202, r.text
    return str(r.json()["job_id"])


def _point_count(qdrant_url: str, user: str = USER) -> int:
    from secondbrain.stores.vectors_qdrant import QdrantVectorStore

    store = QdrantVectorStore.from_url(qdrant_url)
    try:
        return store.count(user)
    finally:
        store.close()


def test_note_and_markdown_flow_through_separate_processes(cluster: Cluster, tmp_path: Path) -> None:
    # fixed date: a capture time in the past, only read back; nothing is asked against today
    gw = cluster.client(cluster.gateway)
    q = cluster.client(cluster.query)
    note_job = _note(gw, "Dentist appointment moved to Thursday 14:30 at the Harbour Street clinic.",
                     title="Dentist")
    md = "# Trip to Lisbon\n\n## Hotel\n\nThe hotel booking reference is LX-55120 for three nights.\n"
    r = gw.post("/v1/artifacts", files={"file": ("lisbon.md", md.encode(), "text/markdown")},
                data={"captured_at": "2026-05-01T08:00:00Z"})
    assert r.status_code == 202, r.text
    md_job = r.json()["job_id"]
    final = wait_jobs(gw, [note_job, md_job], timeout=120)
    assert {j["status"] for j in final.values()} == {"succeeded"}, final

    # fixed date: a capture time in the past, only read back; nothing is asked against today
    hits = q.get("/v1/search", params={"q": "when is the dentist", "k": 3}).json()["hits"]
    assert hits[0]["title"] == "Dentist"
    hits = q.get("/v1/search", params={"q": "LX-55120", "k": 3, "mode": "sparse"}).json()["hits"]
    assert hits and hits[0]["title"] == "Trip to Lisbon"
    assert hits[0]["heading_path"] == ["Trip to Lisbon", "Hotel"]
    assert hits[0]["captured_at"].startswith("2026-05-01T08:00:00")
    # the raw bytes are in S3 under the user's prefix
    from minio import Minio

    s3 = Minio(cluster.env["SB_S3_ENDPOINT"], cluster.env["SB_S3_ACCESS_KEY"], cluster.env["SB_S3_SECRET_KEY"],
               secure=False)
    keys = [o.object_name for o in s3.list_objects(cluster.env["SB_S3_BUCKET"], prefix="users/local/",
                                                   recursive=True)]
    assert any(k.startswith("users/local/artifacts/") for k in keys)
    for svc in (cluster.gateway, cluster.query, *cluster.workers.values()):
        body = httpx.get(svc.url + "/readyz").json()
        assert body["status"] == "ready", (svc.name, body)
        alive = httpx.get(svc.url + "/healthz")
        assert alive.status_code == 200, (svc.name, alive.text)


async def _produce(bootstrap: str, topic: str, messages: list[tuple[bytes, bytes, list[tuple[str, bytes]]]]) -> None:
    from aiokafka import AIOKafkaProducer

    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
    await p.start()
    try:
        for key, value, headers in messages:
            await p.send_and_wait(topic, value, key=key, headers=headers)
    finally:
        await p.stop()


async def _consume(bootstrap: str, topic: str, n: int, timeout: float = 60.0) -> list[object]:
    from aiokafka import AIOKafkaConsumer

    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"test-{uuid.uuid4().hex[:6]}",
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=3000, heartbeat_interval_ms=750)
    await c.start()
    out: list[object] = []
    try:
        deadline = time.monotonic() + timeout
        while len(out) < n and time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=500)
            for msgs in batch.values():
                out.extend(msgs)
    finally:
        await c.stop()
    return out


def test_bad_events_are_dead_lettered_and_good_ones_still_flow(cluster: Cluster) -> None:
    codec = EventCodec()
    topic = f"{cluster.prefix}artifacts.submitted"
    now = datetime.now(UTC)
    content = b"Published straight to Kafka by another app: the parcel tracking code is PZ-771-QX."
    good = ArtifactSubmitted(event_id=str(uuid.uuid4()), job_id=None, user_id=USER, source_uri="app:courier/1",
                             source_id=None, artifact_id=None, content_type="text/plain", filename="parcel.txt",
                             title="Parcel", object_key=None, content=content, size_bytes=len(content),
                             sha256=ids.sha256_hex(content), captured_at=None, submitted_at=now,
                             producer="app:courier", attributes={})
    unsupported = ArtifactSubmitted(event_id=str(uuid.uuid4()), job_id=None, user_id=USER, source_uri="app:x/2",
                                    source_id=None, artifact_id=None, content_type="application/x-msdownload",
                                    filename="setup.exe", title=None, object_key=None, content=b"MZ\x90\x00",
                                    size_bytes=4, sha256=None, captured_at=None, submitted_at=now,
                                    producer="app:x", attributes={})
    stranger = ArtifactSubmitted(event_id=str(uuid.uuid4()), job_id=None, user_id="nobody", source_uri="app:x/3",
                                 source_id=None, artifact_id=None, content_type="text/plain", filename=None,
                                 title=None, object_key=None, content=b"hello", size_bytes=5, sha256=None,
                                 captured_at=None, submitted_at=now, producer="app:x", attributes={})
    evil = b"Unsigned: the tracking code changed to EVIL-1."
    forged = dataclasses.replace(good, event_id=str(uuid.uuid4()), source_uri="app:x/4", title="Forged",
                                 content=evil, size_bytes=len(evil), sha256=None)
    borrowed = dataclasses.replace(forged, event_id=str(uuid.uuid4()), source_uri="app:x/5")
    tampered = dataclasses.replace(forged, event_id=str(uuid.uuid4()), source_uri="app:x/6")

    def signed(ev: ArtifactSubmitted, key: str) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
        value = codec.encode(ev)
        return b"local", value, [*codec.headers(ev), *signing.sign(value, key)]

    tampered_msg = signed(tampered, cluster.producer_key)
    gw = cluster.client(cluster.gateway)
    genuine = _note(gw, "A genuine note from the gateway about the harbour ferry timetable.")
    assert wait_jobs(gw, [genuine], timeout=120)[genuine]["status"] == "succeeded"
    # Reusing a real job id does not vouch for other content: refused, and the job is untouched.
    hijack = dataclasses.replace(forged, event_id=str(uuid.uuid4()), job_id=genuine, source_uri="app:x/7")
    asyncio.run(_produce(cluster.broker.bootstrap, topic, [
        (b"local", b"\x00garbage that is not an event", []),
        signed(unsupported, cluster.producer_key),
        (b"nobody", codec.encode(stranger), codec.headers(stranger)),
        (b"local", codec.encode(forged), codec.headers(forged)),  # not signed at all
        signed(borrowed, cluster.mallory_key),  # signed, but by another user's key
        (b"local", codec.encode(hijack), codec.headers(hijack)),  # unsigned, naming a real job
        (b"local", tampered_msg[1].replace(b"EVIL-1", b"EVIL-2"), tampered_msg[2]),  # changed after signing
        signed(good, cluster.producer_key),
    ]))
    good_job = ids.job_id(USER, f"event:{good.event_id}")
    bad_job = ids.job_id(USER, f"event:{unsupported.event_id}")
    final = wait_jobs(gw, [good_job, bad_job], timeout=120)
    assert final[good_job]["status"] == "succeeded", final[good_job]
    assert final[bad_job]["status"] == "failed"
    assert "unsupported content type" in final[bad_job]["error"]
    hits = cluster.client(cluster.query).get("/v1/search",
                                             params={"q": "parcel tracking code PZ-771-QX"}).json()["hits"]
    assert hits[0]["title"] == "Parcel"

    letters = asyncio.run(_consume(cluster.broker.bootstrap, f"{cluster.prefix}pipeline.deadletter", 7))
    assert len(letters) == 7
    kinds: dict[str, DeadLetter] = {}
    refusals = []
    for msg in letters:
        headers = {k: v.decode() for k, v in msg.headers}  # type: ignore[attr-defined]
        letter = codec.decode(msg.value, expected=DeadLetter)  # type: ignore[attr-defined]
        assert headers["sb-error-kind"] == letter.error_kind
        assert headers["sb-stage"] == "extract"
        assert headers["sb-original-topic"] == topic
        kinds[letter.error_kind] = letter
        if letter.error_kind == "unauthorized":
            refusals.append(letter.error_message)
            assert letter.job_id is None  # a refused event touches no job
    assert set(kinds) == {"malformed", "permanent", "unauthorized"}
    assert kinds["malformed"].original_value == b"\x00garbage that is not an event"
    assert "unsupported content type" in kinds["permanent"].error_message
    assert len(refusals) == 5
    assert sum("unknown user" in m for m in refusals) == 1
    assert sum("is not signed" in m for m in refusals) == 2
    assert sum("not a live key of user 'local'" in m for m in refusals) == 1
    assert sum("signature does not match" in m for m in refusals) == 1
    evil = cluster.client(cluster.query).get("/v1/search", params={"q": "tracking code EVIL"}).json()["hits"]
    assert not any("EVIL" in h["text"] for h in evil)
    titles = [s["title"] for s in gw.get("/v1/sources", params={"limit": 500}).json()["sources"]]
    assert "Forged" not in titles
    after = gw.get(f"/v1/jobs/{genuine}").json()
    assert after["status"] == "succeeded" and after["error"] is None
    assert [e for e in after["events"] if "EVIL" in str(e) or "unauthorized" in str(e)] == []


def test_worker_killed_mid_stream_loses_and_duplicates_nothing(cluster: Cluster) -> None:
    gw = cluster.client(cluster.gateway)
    before = _point_count(cluster.qdrant_url)
    sentences = " ".join(f"Sentence {i} of this long memo talks about item {i} in some detail." for i in range(60))
    jobs = [_note(gw, f"Memo {n}: {sentences}", title=f"Memo {n}") for n in range(16)]
    embed = cluster.workers["embed"]
    # Kill the embedder as soon as it has finished some of the work, so the rest is in flight.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = sum(gw.get(f"/v1/jobs/{j}").json()["status"] == "succeeded" for j in jobs)
        if done >= 2:
            break
        time.sleep(0.1)
    embed.kill()
    statuses = [gw.get(f"/v1/jobs/{j}").json()["status"] for j in jobs]
    assert statuses.count("succeeded") < len(jobs), "the kill came too late to interrupt anything"
    cluster.workers["embed"] = Service("worker-embed-2", ["worker", "embed"], cluster.env, cluster.log_dir)
    cluster.workers["embed"].start().wait_ready(120)
    final = wait_jobs(gw, jobs, timeout=180)
    assert all(j["status"] == "succeeded" for j in final.values()), final
    sources = gw.get("/v1/sources", params={"limit": 500}).json()["sources"]
    chunks = {s["job_id"]: s["chunk_count"] for s in sources}
    assert all(chunks[j] >= 2 for j in jobs)
    assert _point_count(cluster.qdrant_url) - before == sum(chunks[j] for j in jobs)


def test_gateway_accepts_while_the_broker_is_down_and_the_relay_catches_up(infra: dict[str, object]) -> None:
    # Hold the port bound but not listening: connections are refused (Kafka is down) and no other
    # process can take the port before our broker starts on it.
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    broker = TansuBroker(port=port)
    prefix = f"down{uuid.uuid4().hex[:6]}."
    # A deployment of its own, database included: the module's other gateway relays every unpublished
    # outbox row of the database it shares, to its own broker.
    dbs = contextlib.ExitStack()
    dsn = dbs.enter_context(fresh_database(str(infra["base_dsn"])))
    store = PostgresMetadataStore(dsn)
    store.database.migrate()
    store.users.ensure_user(USER)
    _, key = store.api_keys.create_api_key(USER, "tests", "user")
    store.database.close()
    env = _env(bootstrap=f"127.0.0.1:{port}", dsn=dsn, s3=infra["s3"],  # type: ignore[arg-type]
               bucket=f"sb-{uuid.uuid4().hex[:8]}", qdrant_url=str(infra["qdrant_url"]), prefix=prefix)
    log_dir = Path(str(infra["log_dir"])) / "down"
    gateway = Service("gateway", ["gateway"], env, log_dir).start()
    pieces: list[Service] = [gateway]
    try:
        gateway.wait_ready(60, path="/healthz")
        gw = httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": f"Bearer {key}"})
        ready = gw.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["kafka"].startswith("error")
        jobs = [_note(gw, f"Written while Kafka was down, number {i}: the boiler code is B-{i}0{i}.")
                for i in range(3)]
        assert all(gw.get(f"/v1/jobs/{j}").json()["status"] == "queued" for j in jobs)
        holder.close()
        broker.start()
        worker = Service("worker-all", ["worker", "extract", "chunk", "embed"], env, log_dir).start()
        query = Service("query", ["query"], env, log_dir).start()
        pieces += [worker, query]
        worker.wait_ready(120)
        query.wait_ready(120)
        final = wait_jobs(gw, jobs, timeout=120)
        assert all(j["status"] == "succeeded" for j in final.values()), final
        hits = httpx.get(query.url + "/v1/search", params={"q": "boiler code B-101", "mode": "sparse"},
                         headers={"Authorization": f"Bearer {key}"}).json()["hits"]
        assert "B-101" in hits[0]["text"]
        assert gw.get("/readyz").status_code == 200
    finally:
        for svc in pieces:
            svc.stop()
        holder.close()
        broker.stop()
        dbs.close()


# --------------------------------------------------------------------------- telemetry


def _user_with_key(cluster: Cluster) -> tuple[str, str]:
    """A user of its own (a distinctive id, to look for it in every attribute) and a user key."""
    user = f"tracee-{uuid.uuid4().hex[:8]}"
    store = PostgresMetadataStore(cluster.env["SB_POSTGRES_DSN"])
    try:
        store.users.ensure_user(user)
        _, key = store.api_keys.create_api_key(user, "tracing test", "user")
    finally:
        store.database.close()
    return user, key


def _ancestry(span: Span, by_id: dict[str, Span]) -> list[str]:
    """The names from ``span`` up to its root."""
    names = [span.name]
    while span.parent_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names


def test_one_connected_trace_from_upload_to_vector_write(cluster: Cluster, otlp: OtlpReceiver) -> None:
    """An upload is one trace across the gateway, the relay and three worker processes, down to the
    Qdrant write; users appear only hashed; the workers' JSON logs carry the trace and span ids."""
    user, key = _user_with_key(cluster)
    hashed = hashlib.sha256(user.encode()).hexdigest()[:16]
    gw = httpx.Client(base_url=cluster.gateway.url, timeout=30, headers={"Authorization": f"Bearer {key}"})
    md = "# Observatory\n\nThe telescope dome opens at 21:40 when the sky over the ridge is clear.\n"
    r = gw.post("/v1/artifacts", files={"file": ("dome.md", md.encode(), "text/markdown")})
    assert r.status_code == 202, r.text
    job = r.json()["job_id"]
    assert wait_jobs(gw, [job], timeout=120)[job]["status"] == "succeeded"

    (upload,) = otlp.wait_for(lambda: otlp.spans(lambda s: s.name == "POST /v1/artifacts"
                                                  and s.attributes.get("sb.user.hash") == hashed), "the upload span")
    assert upload.service == "secondbrain-gateway" and upload.parent_id == ""

    def complete() -> list[Span] | None:
        spans = otlp.trace(upload.trace_id)
        ids_ = {s.span_id for s in spans}
        names = {s.name for s in spans}
        wanted = {"qdrant upsert", "embed process", "chunk process", "extract process", "ingest submit"}
        if wanted <= names and all(s.parent_id in ids_ for s in spans if s.parent_id):
            return spans
        return None

    spans = otlp.wait_for(complete, "every span of the upload's trace, connected", timeout=60)
    by_id = {s.span_id: s for s in spans}
    assert [s for s in spans if not s.parent_id] == [upload]  # one root: the HTTP request
    (upsert,) = [s for s in spans if s.name == "qdrant upsert"]
    assert upsert.service == "secondbrain-embed" and upsert.attributes["sb.points"] >= 1
    submitted, extracted, chunked = (f"{cluster.prefix}{t}" for t in
                                     ("artifacts.submitted", "documents.extracted", "chunks.created"))
    assert _ancestry(upsert, by_id) == [
        "qdrant upsert", "embed process", f"{chunked} publish", "chunk process", f"{extracted} publish",
        "extract process", f"{submitted} publish", "ingest submit", "POST /v1/artifacts"]
    services = {s.service for s in spans}
    assert {"secondbrain-gateway", "secondbrain-extract", "secondbrain-chunk", "secondbrain-embed"} <= services
    relay = by_id[by_id[next(s.span_id for s in spans if s.name == "extract process")].parent_id]
    assert relay.service == "secondbrain-gateway" and relay.kind == 4  # the outbox relay's PRODUCER span
    for name in ("extract process", "chunk process", "embed process"):
        (process,) = [s for s in spans if s.name == name]
        assert process.kind == 5  # CONSUMER
        assert process.attributes["sb.job.id"] == job and process.attributes["sb.user.hash"] == hashed
        assert process.attributes["sb.attempt"] == 1 and process.attributes["messaging.kafka.offset"] >= 0
    extract = next(s for s in spans if s.name == "extract process")
    assert extract.attributes["sb.size_bytes"] == len(md.encode())
    assert extract.attributes["sb.modality"] == "markdown"
    # The database calls are traced (psycopg), inside the request and the stages.
    assert any(s.attributes.get("db.system") == "postgresql" or s.attributes.get("db.system.name") == "postgresql"
               for s in spans)
    # The user id never appears in clear: not in this trace, not anywhere.
    for s in otlp.spans():
        assert user not in repr(s.attributes) and user not in repr(s.events), (s.name, s.attributes)

    # The JSON log line of each stage's work carries the ids of its span.
    for stage in ("extract", "chunk", "embed"):
        (process,) = [s for s in spans if s.name == f"{stage} process"]
        lines = [json.loads(line) for line in cluster.workers[stage].log_path.read_text().splitlines()
                 if line.startswith("{") and job in line]
        done = [x for x in lines if x["msg"] == "stage done" and x.get("job_id") == job]
        assert done and done[0]["trace_id"] == upload.trace_id and done[0]["span_id"] == process.span_id


def test_metrics_move_as_events_flow(cluster: Cluster, otlp: OtlpReceiver) -> None:
    """Stage counters, durations, end-to-end latency, consumer lag, query and HTTP metrics reach the
    collector, and move when work flows (processed, then dead-lettered for a malformed event)."""
    def events(stage: str, outcome: str) -> float:
        return otlp.metric("secondbrain.stage.events", stage=stage, outcome=outcome)

    processed = {s: events(s, "processed") for s in ("extract", "chunk", "embed")}
    latency = otlp.metric("secondbrain.ingest.latency", modality="note")
    gw = cluster.client(cluster.gateway)
    job = _note(gw, "The greenhouse thermostat is set to 18 degrees overnight in March.")
    assert wait_jobs(gw, [job], timeout=120)[job]["status"] == "succeeded"
    for stage, before in processed.items():
        otlp.wait_for(lambda s=stage, b=before: events(s, "processed") > b, f"{stage} processed to grow")
    # Submission to searchable, by the modality the sources list shows.
    assert [x["modality"] for x in gw.get("/v1/sources").json()["sources"] if x["job_id"] == job] == ["note"]
    otlp.wait_for(lambda: otlp.metric("secondbrain.ingest.latency", modality="note") > latency,
                  "an end-to-end latency for the note")
    assert otlp.metric("secondbrain.stage.duration", stage="embed") > 0
    assert all(p[2]["unit"] == "s" for p in otlp.metric_points("secondbrain.stage.duration"))

    lags = otlp.wait_for(lambda: [p for p in otlp.metric_points("secondbrain.consumer.lag")
                                  if p[1]["topic"] == f"{cluster.prefix}artifacts.submitted"], "consumer lag")
    assert {p[1]["stage"] for p in lags} == {"extract"} and all(p[2]["value"] >= 0 for p in lags)

    dead = events("extract", "dead_lettered")
    asyncio.run(_produce(cluster.broker.bootstrap, f"{cluster.prefix}artifacts.submitted",
                         [(b"local", b"\x01not an event at all", [])]))
    otlp.wait_for(lambda: events("extract", "dead_lettered") > dead, "dead_lettered to grow")

    searches = otlp.metric("secondbrain.query.duration", route="search")
    q = cluster.client(cluster.query)
    assert q.get("/v1/search", params={"q": "greenhouse thermostat"}).status_code == 200
    otlp.wait_for(lambda: otlp.metric("secondbrain.query.duration", route="search", query_class="semantic")
                  > searches, "a search in the query duration")
    otlp.wait_for(lambda: otlp.metric("http.server.request.duration", **{"http.route": "/v1/search"}),
                  "the HTTP server duration of the search route")
    (point,) = [p for p in otlp.metric_points("http.server.request.duration") if p[1].get("http.route") == "/v1/search"
                and p[1].get("http.response.status_code") == 200]
    assert point[0] == "secondbrain-query" and point[2]["unit"] == "s"
    # What was searched for stays out of the traces: the query keeps its parameter names only.
    otlp.wait_for(lambda: [s for s in otlp.spans(lambda s: s.name == "GET /v1/search")
                           if s.attributes.get("url.query") == "q="], "the search span")
    assert "greenhouse" not in repr(otlp.spans())


def test_a_question_is_one_trace_through_retrieval(cluster: Cluster, otlp: OtlpReceiver) -> None:
    """/v1/ask (extractive here; the model's span is tested against a real server in test_telemetry)."""
    gw = cluster.client(cluster.gateway)
    job = _note(gw, "The piano tuner comes on Wednesday morning to tune the upright piano.")
    assert wait_jobs(gw, [job], timeout=120)[job]["status"] == "succeeded"
    asks = otlp.metric("secondbrain.query.duration", route="ask")
    question = {"question": "when does the piano tuner come?"}
    with cluster.client(cluster.query) as q, q.stream("POST", "/v1/ask", json=question, timeout=60) as r:
        assert r.status_code == 200
        body = "".join(r.iter_text())
    assert "event: done" in body
    (root,) = otlp.wait_for(lambda: otlp.spans(lambda s: s.name == "POST /v1/ask"), "the ask span")
    assert root.attributes["sb.answer.mode"] in ("extractive", "listing")
    spans = otlp.wait_for(lambda: (lambda t: t if {"query plan", "query retrieve", "qdrant query"}
                                   <= {s.name for s in t} else None)(otlp.trace(root.trace_id)), "the ask's spans")
    by_id = {s.span_id: s for s in spans}
    (query,) = [s for s in spans if s.name == "qdrant query"]
    assert _ancestry(query, by_id) == ["qdrant query", "query retrieve", "POST /v1/ask"]
    otlp.wait_for(lambda: otlp.metric("secondbrain.query.duration", route="ask") > asks, "the ask's duration")
