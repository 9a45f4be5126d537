"""Upgrading: a data directory written by the previous release (its own ``secondbrain up``, taken out of this
repository's history by devtools/previous_release.py and filled through its HTTP API) is started by this
version, which migrates it in place and says so; then everything is still there: each source with its id,
title and passages (a PDF's pages too), search, the kept and renamed conversation, every key, the other
user's data kept apart, and a deleted source still gone; new captures and deletions work on the upgraded
data.  The archive ``up`` took before it migrated goes back to the earlier release (restored as it was, and
served by that release's own ``up``).  Data a newer version wrote is refused by this one (``up`` and the admin
commands) with what to do."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from devtools.previous_release import (
    BOILER,
    DELETED,
    GARDEN,
    MAYA,
    PREVIOUS_SCHEMA,
    Seeded,
    running_release,
    write_data_dir,
)
from devtools.processes import run_cli
from secondbrain.backup.folder import SUFFIX
from secondbrain.infra.postgres import EmbeddedPostgres
from secondbrain.stores.migrations import load_migrations
from tests.e2e.harness import Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

SHIPPED = max(m.version for m in load_migrations())


@dataclass
class Upgraded:
    svc: Service
    seeded: Seeded
    data_dir: Path

    def client(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=self.svc.url, headers={"Authorization": f"Bearer {key or self.seeded.admin_key}"},
                            timeout=60)


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upgraded]:
    logs = tmp_path_factory.mktemp("logs")
    with readable_tmp("sb-upgrade-") as root:
        seeded = write_data_dir(root / "data", logs)
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {}, logs)
        svc.start().wait_ready(timeout=240)
        try:
            yield Upgraded(svc, seeded, root / "data")
        finally:
            svc.stop()


def search(client: httpx.Client, q: str) -> list[dict[str, object]]:
    r = client.get("/v1/search", params={"q": q, "k": 5})
    assert r.status_code == 200, r.text
    hits: list[dict[str, object]] = r.json()["hits"]
    return hits


def test_the_upgrade_is_made_in_place_and_said(upgraded: Upgraded) -> None:
    said = upgraded.svc.tail(400)
    assert (f"secondbrain: upgrading the data in {upgraded.data_dir} to this version (database schema "
            f"{PREVIOUS_SCHEMA} -> {SHIPPED}: 0012 ") in said
    assert f"secondbrain: upgraded the data in {upgraded.data_dir} to database schema {SHIPPED}" in said
    # The admin key the previous release saved still signs this one in.
    assert (upgraded.data_dir / "api-key").read_text().strip() == upgraded.seeded.admin_key


def test_the_data_was_backed_up_before_the_upgrade_and_that_archive_goes_back(
        upgraded: Upgraded, tmp_path_factory: pytest.TempPathFactory) -> None:
    said = upgraded.svc.tail(400)
    archives = sorted((upgraded.data_dir.parent / f"{upgraded.data_dir.name}-backups").glob(f"*{SUFFIX}"))
    assert len(archives) == 1, archives  # the one taken before migrating (scheduled backups are off here)
    assert f"secondbrain: backed up the data as it was to {archives[0]}" in said
    assert said.index("backed up the data as it was") < said.index("secondbrain: upgraded the data")
    # Going back: the archive restored as it was, and served by the earlier release itself.
    back = tmp_path_factory.mktemp("back") / "data"
    restored = run_cli(["restore", str(archives[0]), "--data-dir", str(back), "--as-it-was"], {}, timeout=300)
    assert restored.returncode == 0, restored.stderr
    assert f"database schema {PREVIOUS_SCHEMA}" in restored.stderr
    with running_release(back, tmp_path_factory.mktemp("logs")) as old, old.client(timeout=60) as c:
        assert old.key == upgraded.seeded.admin_key
        listed = {s["source_id"] for s in c.get("/v1/sources", params={"limit": 100}).json()["sources"]}
        assert listed == set(upgraded.seeded.sources.values())
        assert BOILER in str(search(c, "who serviced the boiler at Alder Street")[0]["text"])


def test_every_source_and_passage_is_still_there(upgraded: Upgraded) -> None:
    seeded = upgraded.seeded
    with upgraded.client() as c:
        listed = {s["source_id"]: s for s in c.get("/v1/sources", params={"limit": 100}).json()["sources"]}
        assert set(listed) == set(seeded.sources.values())
        assert {listed[seeded.sources[n]]["title"] for n in ("boiler", "garden", "logbook")} == {
            "Boiler service", "Garden plan", "Harbour Logbook"}
        assert all(s["status"] == "succeeded" for s in listed.values())
        assert c.get(f"/v1/sources/{seeded.deleted_source}").status_code == 404  # deleted stays deleted
        assert not any(DELETED in str(h["text"]) for h in search(c, "locker code at the swimming pool"))
        assert BOILER in str(search(c, "who serviced the boiler at Alder Street")[0]["text"])
        garden = search(c, "where do the raspberry canes go")[0]
        assert "raspberry canes go in the north bed" in str(garden["text"]) and "raspberry" in GARDEN
        pages = c.get(f"/v1/sources/{seeded.sources['logbook']}/passages").json()["passages"]
        assert {p["page"] for p in pages} >= {1, 2, 3}
        hit = search(c, "how many ships passed the northern breakwater")[0]
        assert hit["source_id"] == seeded.sources["logbook"] and hit["page"] == 1


def test_conversations_keys_and_users_are_still_there(upgraded: Upgraded) -> None:
    seeded = upgraded.seeded
    with upgraded.client() as c:
        conv = c.get(f"/v1/conversations/{seeded.conversation}").json()
        assert conv["title"] == seeded.conversation_title
        assert [t["question"] for t in conv["turns"]] == [seeded.question] and conv["turns"][0]["answer"]
    with upgraded.client(seeded.laptop_key) as laptop:
        me = laptop.get("/v1/me").json()
        assert (me["user_id"], me["scope"]) == ("local", "user")
        assert BOILER in str(search(laptop, "boiler service Alder Street")[0]["text"])
    with upgraded.client(seeded.maya_key) as maya:
        assert maya.get("/v1/me").json()["user_id"] == "maya"
        mine = search(maya, "bicycle lock combination at the station")
        assert mine and MAYA in str(mine[0]["text"]) and mine[0]["source_id"] == seeded.maya_source
        assert not any(BOILER in str(h["text"]) for h in search(maya, "boiler service"))
    with upgraded.client() as c:  # the local user still does not see Maya's note
        assert not any(MAYA in str(h["text"]) for h in search(c, "bicycle lock combination at the station"))


def test_the_upgraded_data_takes_new_work(upgraded: Upgraded) -> None:
    seeded = upgraded.seeded
    with upgraded.client() as c:
        job = c.post("/v1/notes", json={"title": "Chimney", "text": "The chimney sweep comes on the first "
                                                                   "Monday of October."}).json()["job_id"]
        assert wait_jobs(c, [job])[job]["status"] == "succeeded"
        assert "chimney sweep" in str(search(c, "when does the chimney sweep come")[0]["text"])
        # A source written by the previous release is deleted everywhere, its passages too.
        assert c.delete(f"/v1/sources/{seeded.sources['garden']}").status_code == 204
        assert not any("raspberry" in str(h["text"]) for h in search(c, "where do the raspberry canes go"))


def test_an_older_version_refuses_data_a_newer_one_wrote(upgraded: Upgraded,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    assert upgraded.svc.stop() == 0
    with EmbeddedPostgres(upgraded.data_dir / "postgres") as pg, psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (9001, 'from_the_future')")
    older = Service("up-older", ["up", "--data-dir", str(upgraded.data_dir), "--no-llm"], {},
                    tmp_path_factory.mktemp("logs")).start()
    assert older.proc is not None and older.proc.wait(120) == 2, older.tail()
    said = older.tail()
    assert f"error: {upgraded.data_dir}: this data was written by a newer secondbrain: its database has " \
           "migration 9001 (from_the_future)" in said
    assert "Start the newer version again (in a git clone: `git pull`, then `make up`)" in said
    assert "Traceback" not in said
    # The admin commands that open the database refuse it the same way.
    listed = run_cli(["users", "list", "--data-dir", str(upgraded.data_dir)], {})
    assert listed.returncode == 2 and "written by a newer secondbrain" in listed.stderr, listed.stderr
    with EmbeddedPostgres(upgraded.data_dir / "postgres") as pg, psycopg.connect(pg.dsn) as conn:
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (9001,)  # untouched
