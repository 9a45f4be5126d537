"""A user's data lifecycle from the terminal, on ``secondbrain up``: list and delete sources,
export everything, expire raw files, erase an account."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import Service, readable_tmp, run_cli, wait_jobs
from tests.e2e.test_distributed import infra  # noqa: F401  (the S3, Qdrant and Postgres fixture)

pytestmark = pytest.mark.e2e

PLAN_V1 = "# Plan\n\nThe quokka enclosure gets a new fence in spring.\n"
PLAN_V2 = "# Plan\n\nThe quokka enclosure gets a new fence; the narwhal tank is repainted in June.\n"
NOTES = "# Notes\n\nThe pangolin sanctuary opens its new wing on the first of October.\n"


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    with readable_tmp("sb-e2e-life-") as path:
        yield path / "data"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[Service]:
    svc = Service("up", ["up", "--data-dir", str(data_dir)], {}, tmp_path_factory.mktemp("logs"))
    svc.start().wait_ready(timeout=120)
    yield svc
    svc.stop()


def cli(args: list[str], env: dict[str, str], ok: int = 0) -> str:
    res = run_cli(args, env)
    assert res.returncode == ok, (args, res.returncode, res.stdout, res.stderr)
    return res.stdout + res.stderr


def test_sources_export_retention_and_erasure_from_the_terminal(server: Service, data_dir: Path,
                                                                tmp_path: Path) -> None:
    me = {"SB_URL": server.url}
    admin = {"SB_DATA_DIR": str(data_dir)}
    (tmp_path / "plan.md").write_text(PLAN_V1)
    (tmp_path / "notes.md").write_text(NOTES)
    cli(["ingest", str(tmp_path / "plan.md"), str(tmp_path / "notes.md"), "--note", "Call the plumber on Monday."],
        me)
    (tmp_path / "plan.md").write_text(PLAN_V2)
    cli(["ingest", str(tmp_path / "plan.md")], me)

    rows = json.loads(cli(["sources", "--json"], me).split("\n", 1)[0])
    plan = {r["source_id"] for r in rows if r["source_uri"] == "file:plan.md"}
    assert len(plan) == 1
    (plan_id,) = plan
    shown = json.loads(cli(["sources", "show", plan_id, "--json"], me))
    assert [v["version"] for v in shown["versions"]] == [2, 1]
    plan_artifacts = [v["artifact_id"] for v in shown["versions"]]
    listing = cli(["sources"], me)
    assert "Notes" in listing and "Plan" in listing and "(older version)" in listing

    # Another user cannot touch it.
    cli(["users", "add", "bob"], admin)
    bob_key = json.loads(cli(["keys", "create", "--user", "bob", "--json"], admin).split("\n", 1)[0])["api_key"]
    bob = {**me, "SB_API_KEY": bob_key}
    assert "no source" in cli(["sources", "delete", plan_id], bob, ok=1)
    cli(["ingest", "--note", "Bob's locker code is 4417."], bob)

    assert "deleted" in cli(["sources", "delete", plan_id], me)
    assert "no source" in cli(["sources", "show", plan_id], me, ok=1)
    found = run_cli(["search", "narwhal tank repainted", "--json"], me)
    assert found.returncode in (0, 1) and not any("narwhal" in h["text"] for h in json.loads(found.stdout)["hits"])
    raw_dir = data_dir / "objects" / "users" / "local" / "artifacts"
    assert not any((raw_dir / a).exists() for a in plan_artifacts)
    assert "pangolin" in cli(["search", "pangolin sanctuary"], me)

    out = tmp_path / "mine.zip"
    said = cli(["export", "-o", str(out)], me)
    assert "saved" in said and "source versions" in said
    with zipfile.ZipFile(out) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert manifest["user_id"] == "local" and manifest["counts"]["sources"] == 2
        (notes_raw,) = [n for n in zf.namelist() if n.endswith("/notes.md")]
        assert zf.read(notes_raw).decode() == NOTES
        assert not any("quokka" in zf.read(n).decode(errors="replace") for n in zf.namelist())
        # bob's note is not in it (his words, or his code as a number of its own: a timestamp's digits may hold it)
        assert not any(re.search(rb"locker|\b4417\b", zf.read(n), re.I) for n in zf.namelist())
    assert "exists" in cli(["export", "-o", str(out)], me, ok=2)

    # Retention, on demand: raw files go, their text stays searchable.
    report = json.loads(cli(["retention", "run", "--days", "0", "--json"], admin).split("\n", 1)[0])
    assert report["artifacts"] >= 2
    notes_artifact = notes_raw.split("/")[1]
    with server.client() as c:
        gone = c.get(f"/v1/artifacts/{notes_artifact}/raw")
        assert gone.status_code == 410 and "retention" in gone.json()["detail"]
        assert {s["raw"] for s in c.get("/v1/sources").json()["sources"]} == {"expired"}
    assert "pangolin" in cli(["search", "pangolin sanctuary"], me)
    assert "retention is off" in cli(["retention", "run"], admin, ok=2)

    # Erasing bob: the running server holds his vectors, so the admin command says how to do it;
    # through the API it works at once, and his key stops working.
    assert "erase" in cli(["users", "erase", "bob"], admin, ok=2)  # without --yes
    refused = cli(["users", "erase", "bob", "--yes"], admin, ok=2)
    assert "Stop `secondbrain up` first" in refused
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob_key}"}) as c:
        assert c.delete("/v1/me").status_code == 400
        assert c.delete("/v1/me", params={"confirm": "bob"}).json()["found"] is True
    cli(["sources"], bob, ok=2)
    assert not (data_dir / "objects" / "users" / "bob").exists()

    # With the server stopped, the admin command erases a user itself.
    server.stop()
    erased = json.loads(cli(["users", "erase", "local", "--yes", "--json"], admin).split("\n", 1)[0])
    assert erased["found"] and erased["rows"]["jobs"] == 2
    assert not (data_dir / "objects" / "users" / "local").exists()
    assert not any(p.name.startswith("u_local") for p in (data_dir / "vectors").iterdir())
    assert "no user" in cli(["users", "erase", "local", "--yes"], admin, ok=1)


# --------------------------------------------------------------------------- distributed mode


def test_delete_export_and_erase_reach_s3_qdrant_and_postgres(infra: dict[str, object]) -> None:  # noqa: F811
    """The same lifecycle with every piece its own process: raw bytes in S3, vectors in a Qdrant
    server (over REST), the gateway doing the deleting and exporting."""
    import io

    import psycopg

    from secondbrain import ids
    from secondbrain.infra.tansu import TansuBroker
    from secondbrain.ports import VectorFilter
    from secondbrain.stores.objects_s3 import S3ObjectStore
    from secondbrain.stores.vectors_qdrant import QdrantVectorStore
    from tests.e2e.harness import wait_jobs
    from tests.e2e.test_distributed import _start_cluster

    broker = TansuBroker().start()
    cluster = _start_cluster(infra, broker, "life")
    env = cluster.env
    s3 = S3ObjectStore(env["SB_S3_ENDPOINT"], env["SB_S3_ACCESS_KEY"], env["SB_S3_SECRET_KEY"], env["SB_S3_BUCKET"])
    qdrant = QdrantVectorStore.from_url(cluster.qdrant_url)
    user = "local"
    try:
        gw = cluster.client(cluster.gateway)
        q = cluster.client(cluster.query)
        jobs = []
        for name, body in (("plan.md", PLAN_V1), ("notes.md", NOTES)):
            r = gw.post("/v1/artifacts", files={"file": (name, body.encode(), "text/markdown")})
            jobs.append(r.json()["job_id"])
        wait_jobs(gw, jobs, timeout=120)
        r = gw.post("/v1/artifacts", files={"file": ("plan.md", PLAN_V2.encode(), "text/markdown")})
        wait_jobs(gw, [r.json()["job_id"]], timeout=120)
        plan = ids.source_id(user, "file:plan.md")
        versions = gw.get(f"/v1/sources/{plan}").json()["versions"]
        arts = [v["artifact_id"] for v in versions]
        assert len(arts) == 2 and all(s3.stat(f"users/{user}/artifacts/{a}") for a in arts)
        assert qdrant.count(user, VectorFilter(source_ids=[plan])) > 0

        assert gw.delete(f"/v1/sources/{plan}").status_code == 204
        assert not any(s3.stat(f"users/{user}/artifacts/{a}") for a in arts)
        assert qdrant.count(user, VectorFilter(source_ids=[plan])) == 0
        with psycopg.connect(str(infra["dsn"])) as conn:
            left = conn.execute("SELECT (SELECT count(*) FROM artifacts WHERE artifact_id = ANY(%(a)s)) + "
                                "(SELECT count(*) FROM documents WHERE source_id = %(s)s) + "
                                "(SELECT count(*) FROM jobs WHERE source_id = %(s)s)",
                                {"a": arts, "s": plan}).fetchone()
        assert left == (0,)
        hits = q.get("/v1/search", params={"q": "narwhal tank repainted"}).json()["hits"]
        assert not any("narwhal" in h["text"] for h in hits)

        with gw.stream("GET", "/v1/export") as resp:
            assert resp.status_code == 200
            data = b"".join(resp.iter_bytes())
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            (raw,) = [n for n in zf.namelist() if n.startswith("raw/")]
            assert zf.read(raw).decode() == NOTES
            assert json.loads(zf.read("manifest.json"))["counts"]["documents"] == 1

        assert gw.delete("/v1/me", params={"confirm": user}).json()["found"] is True
        assert s3.list(f"users/{user}/") == []
        assert qdrant.count(user) == 0
        # The account is gone with everything in it: its key stops working at once, no row is left.
        assert gw.get("/v1/sources").status_code == 401
        with psycopg.connect(env["SB_POSTGRES_DSN"]) as conn:
            assert conn.execute("SELECT count(*) FROM artifacts WHERE user_id = %s", (user,)).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM users WHERE user_id = %s", (user,)).fetchone() == (0,)
    finally:
        qdrant.close()
        for svc in (cluster.gateway, cluster.query, *cluster.workers.values()):
            svc.stop()
        broker.stop()


@pytest.fixture
def fresh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A server of its own: the module's one is stopped (and its user erased) by the test above."""
    with readable_tmp("sb-e2e-retry-") as path:
        svc = Service("up", ["up", "--data-dir", str(path / "data")], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=120)
        try:
            yield svc
        finally:
            svc.stop()


def test_a_failed_capture_is_retried_through_the_pipeline(fresh_server: Service) -> None:
    server = fresh_server
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.key}"}, timeout=60) as me:
        pdf = ("broken.pdf", b"%PDF-1.7\nnot really a PDF", "application/pdf")
        broken = me.post("/v1/artifacts", files={"file": pdf})
        assert broken.status_code == 202, broken.text
        job_id = broken.json()["job_id"]
        assert wait_jobs(me, [job_id])[job_id]["status"] == "failed"
        again = me.post(f"/v1/jobs/{job_id}/retry")
        assert again.status_code == 202, again.text
        retried = again.json()["job_id"]
        assert retried != job_id and again.json()["artifact_id"] == broken.json()["artifact_id"]
        # The stored file went through extraction again (not ended as a duplicate of the failed one).
        final = wait_jobs(me, [retried])[retried]
        assert final["status"] == "failed" and final["stages"][0]["attempts"] >= 1, final
        assert me.post(f"/v1/jobs/{retried}/retry").status_code == 202
        note = me.post("/v1/notes", json={"text": "Not failed."}).json()["job_id"]
        wait_jobs(me, [note])
        assert me.post(f"/v1/jobs/{note}/retry").status_code == 409
