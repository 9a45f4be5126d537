"""Data in its own place, with real ``secondbrain up`` processes: an earlier version's ``./.secondbrain`` in the
folder ``up`` runs in (a git clone, for ``make up``) is refused while a server runs on it, then moved to the
platform's user data directory at the next start, with everything in it still there."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.harness import Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

NOTE = "The spare key to the allotment shed hangs behind the rain barrel."


def test_an_earlier_versions_folder_moves_to_the_platforms_place(tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-home-") as root:
        clone = root / "clone"
        clone.mkdir()
        data_home = root / "share"  # the platform's user data directory, as XDG_DATA_HOME names it on Linux
        old = clone / ".secondbrain"
        env = {"XDG_DATA_HOME": str(data_home)}
        logs = tmp_path_factory.mktemp("logs")
        # What an earlier version did: everything in ./.secondbrain of the folder it ran in.
        before = Service("up", ["up", "--data-dir", str(old), "--no-llm"], env, logs, cwd=clone)
        before.start().wait_ready(timeout=180)
        try:
            key = before.key
            with before.client() as c:
                job = c.post("/v1/notes", json={"title": "Shed", "text": NOTE}).json()["job_id"]
                assert wait_jobs(c, [job])[job]["status"] == "succeeded"
            # A second start there without a data directory would move it: not while it is in use.
            refused = Service("up-refused", ["up", "--no-llm"], env, logs, cwd=clone).start()
            assert refused.proc is not None and refused.proc.wait(120) == 2, refused.tail()
            said = refused.tail()
            assert f"error: a secondbrain is still running on {old} at {before.url}" in said
            assert "Stop it (Ctrl-C where it runs), then start again to move it" in said
            assert old.is_dir() and not (data_home / "secondbrain").exists()
            # Nor is a second server started on data a running one keeps.
            twice = Service("up-twice", ["up", "--data-dir", str(old), "--no-llm"], env, logs, cwd=clone).start()
            assert twice.proc is not None and twice.proc.wait(120) == 2, twice.tail()
            assert f"error: secondbrain is already running on {old} at {before.url}" in twice.tail()
        finally:
            assert before.stop() == 0

        after = Service("up-after", ["up", "--no-llm"], env, logs, cwd=clone)
        after.start().wait_ready(timeout=180)
        try:
            new = data_home / "secondbrain"
            said = after.tail(200)
            assert f"secondbrain: moving your data from {old} to {new}" in said
            assert f"secondbrain: starting in {new}" in said
            assert not old.exists() and (new / "api-key").read_text().strip() == key
            # Everything came along: the key still signs in, the note is still found.
            with httpx.Client(base_url=after.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
                hits = c.get("/v1/search", params={"q": "where is the spare key to the shed"}).json()["hits"]
                assert hits and NOTE in hits[0]["text"]
        finally:
            assert after.stop() == 0
        # The next start finds the data in its new place and moves nothing.
        again = Service("up-again", ["up", "--no-llm"], env, logs, cwd=clone)
        again.start().wait_ready(timeout=180)
        try:
            assert "moving your data" not in again.tail(200)
        finally:
            again.stop()
