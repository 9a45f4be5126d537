"""A backup taken while a 500-note import runs, restored on a fresh data directory, is the instance as it was
at that instant: every source indexed before it is searchable, the work that was in flight finishes after the
restore (as after a crash), search ranks exactly as the original did, and nothing is left over.  A backup
killed with ``kill -9`` leaves the archives before it intact."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools.loopback import LoopbackSite, QuietHandler
from devtools.processes import cli_env
from tests.e2e.harness import REPO, Service, readable_tmp, run_cli, wait_jobs

pytestmark = pytest.mark.e2e

WORDS = ("harbour", "lantern", "violin", "orchard", "glacier", "saddle", "compass", "meadow", "quarry", "falcon",
         "ember", "velvet", "canyon", "pepper", "marble", "thistle", "beacon", "walnut", "ferry", "cobalt", "spruce",
         "tundra", "jasmine", "anvil", "kettle", "sparrow", "granite", "willow", "mosaic", "lagoon", "parsnip",
         "hammock", "tulip", "bramble", "cedar", "ripple", "oyster", "plank", "saffron", "trolley", "umber",
         "vortex", "wicket", "yarrow", "zephyr", "acorn", "bison", "cactus", "dahlia")
FIRST, TOTAL = 300, 500


def note(n: int) -> bytes:
    rng = random.Random(n)
    words = rng.sample(WORDS, 8)
    body = (f"# Note {n}\n\nCode tok{n:04d}x. The {words[0]} by the {words[1]} near the {words[2]}; "
            f"we talked about {words[3]} and {words[4]}, then {words[5]}. Later: {words[6]} and {words[7]}.\n")
    return body.encode()


def submit(client: httpx.Client, numbers: range) -> list[str]:
    """Import notes through the batch route (as `secondbrain import` does); their job ids."""
    jobs = []
    for start in range(numbers.start, numbers.stop, 100):
        chunk = range(start, min(start + 100, numbers.stop))
        manifest = {"format": "notes", "captures": [
            {"source_uri": f"import:notes:n{n:04d}.md", "kind": "note", "title": f"Note {n}", "part": f"p{n}",
             "content_type": "text/markdown", "attributes": {"kind": "note"}} for n in chunk]}
        files = {f"p{n}": (f"n{n:04d}.md", note(n), "text/markdown") for n in chunk}
        r = client.post("/v1/imports/batch", data={"manifest": json.dumps(manifest)}, files=files, timeout=300)
        assert r.status_code == 200, r.text
        jobs += [x["job_id"] for x in r.json()["results"] if x.get("job_id")]
    return jobs


QUERIES = [" ".join(random.Random(1000 + q).sample(WORDS, 2)) for q in range(50)]


def top5(client: httpx.Client) -> list[list[str]]:
    return [[h["chunk_id"] for h in client.get("/v1/search", params={"q": q, "k": 5}).json()["hits"]]
            for q in QUERIES]


def succeeded(client: httpx.Client) -> dict[str, str]:
    """source id -> title of every source whose job succeeded."""
    found: dict[str, str] = {}
    while True:
        rows = client.get("/v1/sources", params={"limit": 500, "offset": len(found), "status": "succeeded"}
                          ).json()["sources"]
        found.update({r["source_id"]: r["title"] for r in rows})
        if len(rows) < 500:
            return found


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with readable_tmp("sb-backup-") as path:
        yield path


PAGE = (b"<html><head><title>Ferry timetable</title></head><body><p>The first ferry to the lagoon leaves the "
        b"harbour at seven; the last one comes back at dusk.</p></body></html>")


class HeldPage(LoopbackSite):
    """A web page whose answer waits until released: its capture is certainly in flight while it is held."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.release = threading.Event()
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path != "/ferry":
                    self.reply(404, "text/plain", b"")
                    return
                site.requested.set()
                site.release.wait(600)
                self.reply(200, "text/html; charset=utf-8", PAGE)

        super().__init__(Handler)
        self.url = f"{self.base}/ferry"


@pytest.fixture(scope="module")
def held_page() -> Iterator[HeldPage]:
    page = HeldPage()
    yield page
    page.release.set()
    page.close()


def backup_running(client: httpx.Client, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = client.get("/v1/admin/backups").json()["running"]
        if running and running["done"] >= 0.25:  # past the picture: writing the archive
            return dict(running)
        time.sleep(0.05)
    raise AssertionError("the second backup never got under way")


def test_a_backup_during_an_import_restores_the_instance_as_it_was(root: Path, held_page: HeldPage,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    logs = tmp_path_factory.mktemp("backup-logs")
    # The held page is on loopback; its fetch may wait for it as long as the backup takes.
    env = {"SB_FETCH_ALLOW_PRIVATE": "true", "SB_FETCH_TIMEOUT_S": "600"}
    original = Service("up", ["up", "--data-dir", str(root / "data")], {**env, "SB_BACKUP_DIR": str(root / "kept")},
                       logs)
    original.start().wait_ready(timeout=180)
    try:
        with original.client(timeout=120) as client:
            first = submit(client, range(FIRST))
            # Besides the notes the pipeline has not reached yet, one capture is in flight for certain (its
            # page answers only after the backup), whatever the machine's speed.
            page = client.post("/v1/urls", json={"url": held_page.url})
            assert page.status_code == 202, page.text
            first.append(page.json()["job_id"])
            assert held_page.requested.wait(120), "the page was never fetched"
            before = succeeded(client)  # indexed before the backup's snapshot, for certain
            push_key = client.get("/v1/push/key").json()["public_key"]  # browsers subscribe with it
            taken = run_cli(["backup", str(root / "first.sbk"), "--json", "--data-dir", str(root / "data")],
                            {}, timeout=600)
            held_page.release.set()
            assert taken.returncode == 0, taken.stderr
            counts = json.loads(taken.stdout)["users"]["local"]
            # Taken during the import: some jobs had finished, others were in flight.
            assert counts["jobs_succeeded"] >= len(before) and counts["jobs_unfinished"] > 0, counts
            wait_jobs(client, first, timeout=900)
            expected = top5(client)  # the original once the work it had at the backup is done
            rest = submit(client, range(FIRST, TOTAL))
            second = subprocess.Popen([sys.executable, "-m", "app.cli", "backup", str(root / "second.sbk"),
                                       "--data-dir", str(root / "data")], env=cli_env({}), cwd=REPO,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            backup_running(client)
            original.kill()  # kill -9 while the second archive is being written
            second.wait(60)
            assert rest
    finally:
        original.stop()
    # The second backup never became an archive; the first one is whole, in the backup folder too.
    assert second.returncode != 0 and not (root / "second.sbk").exists()
    kept = sorted(p.name for p in (root / "kept").iterdir())
    assert len([k for k in kept if k.endswith(".sbk")]) == 1, kept
    check = run_cli(["restore", str(root / "kept" / next(k for k in kept if k.endswith(".sbk"))), "--check"], {})
    assert check.returncode == 0, check.stderr

    restored_dir = root / "restored"
    done = run_cli(["restore", str(root / "first.sbk"), "--data-dir", str(restored_dir), "--json"], {}, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["reconciled"]["missing_raw"] == [] and report["reconciled"]["missing_points"] == []

    restored = Service("up-restored", ["up", "--data-dir", str(restored_dir)], env, logs)
    restored.start().wait_ready(timeout=180)
    try:
        with restored.client(timeout=120) as client:
            # The work in flight at the backup runs again and finishes: no job is stuck.
            wait_jobs(client, first, timeout=900)
            now = succeeded(client)
            assert set(before) <= set(now)
            assert len(now) == FIRST + 1  # exactly what was submitted before the backup, nothing after
            assert "Ferry timetable" in now.values()  # the page that was being fetched, fetched again
            for source_id, title in before.items():
                token = f"tok{int(title.split()[-1]):04d}x"
                hits = client.get("/v1/search", params={"q": token, "k": 1, "mode": "sparse"}).json()["hits"]
                assert hits and hits[0]["source_id"] == source_id, (title, hits[:1])
            assert top5(client) == expected
            assert client.get("/v1/me").json()["user_id"] == "local"  # the same key opens it
            # The same push key: browsers that turned reminders on still get them.
            assert client.get("/v1/push/key").json()["public_key"] == push_key
    finally:
        restored.stop()
    assert_nothing_orphaned(restored_dir)


def assert_nothing_orphaned(data_dir: Path) -> None:
    """Every object and vector point of the stopped instance is one its database refers to; no job unfinished."""
    import psycopg

    from secondbrain.backup.reconcile import read_picture
    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.stores.objects_fs import FileObjectStore
    from secondbrain.stores.vectors_edge import EdgeVectorStore

    with EmbeddedPostgres(data_dir / "postgres") as pg:
        picture = read_picture(pg.dsn)
        with psycopg.connect(pg.dsn) as conn:
            unfinished = conn.execute("SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')").fetchone()
        assert unfinished is not None and unfinished[0] == 0
    keys = [o.key for o in FileObjectStore(data_dir / "objects").list("users/")]
    stray = [k for k in keys if k not in picture.artifact_keys
             and not (k.split("/")[2] == "documents" and k.split("/")[3] in picture.documents.get(k.split("/")[1], ()))]
    assert stray == []
    vectors = EdgeVectorStore(data_dir / "vectors", index_after=0)
    try:
        for user in picture.users:
            docs: dict[str, int] = {}
            offset = None
            while True:
                page, offset = vectors.scroll(user, limit=1000, offset=offset)
                for hit in page:
                    docs[hit.payload["document_id"]] = docs.get(hit.payload["document_id"], 0) + 1
                if offset is None:
                    break
            assert set(docs) <= picture.live.get(user, set())
            assert docs == picture.indexed.get(user, {})
    finally:
        vectors.close()


