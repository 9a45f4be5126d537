"""Distributed mode: ``secondbrain backup`` of a deployment whose stores are servers (PostgreSQL through its dump,
S3 through the object API, the Qdrant server through its snapshot API, here the suite's Qdrant stand-in), and
``secondbrain restore --into-servers`` into empty ones, which a new query service then serves as before."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.s3 import MotoS3Server
from secondbrain.events.sealing import new_key
from secondbrain.infra.ports import free_port
from secondbrain.infra.tansu import TansuBroker
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.e2e.harness import REPO, Service, run_cli, wait_jobs
from tests.pg import base_dsn, fresh_database

pytestmark = pytest.mark.e2e
USER = "local"
NOTES = ["The lighthouse keeper logs the ferry times in a green notebook.",
         "Grandmother's apricot jam needs two lemons and a slow simmer.",
         "The spare bicycle pump is in the blue crate under the stairs."]


def qdrant_server(log_dir: Path, data: Path) -> Service:
    svc = Service("qdrant", [], {}, log_dir, port=free_port())
    svc.proc = subprocess.Popen([sys.executable, "-m", "devtools.qdrant_edge_server", "--host", "127.0.0.1", "--port",
                                 str(svc.port), "--data", str(data)], cwd=REPO,
                                stdout=(log_dir / f"qdrant-{svc.port}.log").open("wb"), stderr=subprocess.STDOUT)
    return svc.wait_ready(60, path="/")


def env_for(dsn: str, s3: MotoS3Server, bucket: str, qdrant: Service, broker: TansuBroker, key: str) -> dict[str, str]:
    return {"SB_MODE": "distributed", "SB_KAFKA_BOOTSTRAP": broker.bootstrap, "SB_POSTGRES_DSN": dsn,
            "SB_OBJECT_STORE": "s3", "SB_S3_ENDPOINT": s3.endpoint, "SB_S3_ACCESS_KEY": s3.access_key,
            "SB_S3_SECRET_KEY": s3.secret_key, "SB_S3_BUCKET": bucket, "SB_VECTOR_STORE": "qdrant",
            "SB_QDRANT_URL": qdrant.url, "SB_TOPIC_PREFIX": f"b{uuid.uuid4().hex[:6]}.", "SB_PARTITIONS": "1",
            "SB_KAFKA_SESSION_TIMEOUT_MS": "3000", "SB_KAFKA_HEARTBEAT_INTERVAL_MS": "750", "SB_PIPELINE_KEY": key,
            "SB_SECRETS_KEY": new_key()}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    logs = tmp_path_factory.mktemp("dist-backup-logs")
    s3 = MotoS3Server().start()
    broker = TansuBroker().start()
    old_q = qdrant_server(logs, tmp_path_factory.mktemp("qdrant-old"))
    new_q = qdrant_server(logs, tmp_path_factory.mktemp("qdrant-new"))
    try:
        with base_dsn() as base, fresh_database(base) as old_dsn, fresh_database(base) as new_dsn:
            yield {"s3": s3, "broker": broker, "old_q": old_q, "new_q": new_q, "old_dsn": old_dsn,
                   "new_dsn": new_dsn, "logs": logs}
    finally:
        for q in (old_q, new_q):
            assert q.proc is not None
            q.proc.terminate()  # not a process group of its own (see qdrant_server)
            q.proc.wait(10)
        broker.stop()
        s3.stop()


def test_a_deployment_of_servers_is_backed_up_and_restored_into_empty_ones(stores: dict[str, object],
                                                                            tmp_path: Path) -> None:
    s3, broker, logs = stores["s3"], stores["broker"], stores["logs"]
    key = new_key()
    old = env_for(str(stores["old_dsn"]), s3, "sb-old", stores["old_q"], broker, key)  # type: ignore[arg-type]
    store = PostgresMetadataStore(str(stores["old_dsn"]))
    store.database.migrate()
    store.users.ensure_user(USER)
    _, user_key = store.api_keys.create_api_key(USER, "tests", "admin")
    store.close()
    services = [Service(name, args, old, logs / "old") for name, args in
                (("gateway", ["gateway"]), ("query", ["query"]), ("worker", ["worker", "extract", "chunk", "embed"]))]
    for svc in services:
        svc.start()
    try:
        for svc in services:
            svc.wait_ready(180)
        gateway, query = services[0], services[1]
        headers = {"Authorization": f"Bearer {user_key}"}
        import httpx

        with httpx.Client(base_url=gateway.url, headers=headers, timeout=60) as g:
            wait_jobs(g, [g.post("/v1/notes", json={"text": t}).json()["job_id"] for t in NOTES], timeout=300)
        with httpx.Client(base_url=query.url, headers=headers, timeout=60) as q:
            before = q.get("/v1/search", params={"q": "where is the bicycle pump", "k": 3}).json()["hits"]
        archive = tmp_path / "deployment.sbk"
        taken = run_cli(["backup", str(archive), "--json"], old, timeout=600)
        assert taken.returncode == 0, taken.stderr
        assert json.loads(taken.stdout)["users"][USER]["passages"] == len(NOTES)
    finally:
        for svc in services:
            svc.stop()

    new = env_for(str(stores["new_dsn"]), s3, "sb-new", stores["new_q"], broker, key)  # type: ignore[arg-type]
    done = run_cli(["restore", str(archive), "--into-servers", "--json"], new, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["vector_engine"] == "qdrant" and report["collections"] == [f"sb_u_{USER}_v1"]
    assert report["reconciled"]["missing_raw"] == [] and report["reconciled"]["missing_points"] == []
    restored = Service("query-restored", ["query"], new, logs / "new")
    restored.start()
    try:
        restored.wait_ready(180)
        with httpx.Client(base_url=restored.url, headers=headers, timeout=60) as q:
            after = q.get("/v1/search", params={"q": "where is the bicycle pump", "k": 3}).json()["hits"]
            assert [h["chunk_id"] for h in after] == [h["chunk_id"] for h in before]
            assert after[0]["text"] == NOTES[2]
            raw = q.get(f"/v1/artifacts/{after[0]['artifact_id']}/raw")
            assert raw.status_code == 200 and raw.content == NOTES[2].encode()
    finally:
        restored.stop()
