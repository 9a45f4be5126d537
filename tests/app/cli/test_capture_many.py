"""``secondbrain ingest folder/`` with many files, against a served app on real stores (the pipeline run in
process): the files go in batches, each named as one upload names it; sent again, nothing is added; a server
that is away when the command starts (a restart of ``up``) is waited for; a bad file is refused by name."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from app.cli.capture import BATCHED_FILES
from app.cli.parser import main
from app.http import create_app
from secondbrain.infra.ports import free_port
from secondbrain.runtime import Runtime
from tests.services.ingest_gateway.test_sources_api import Pipeline
from tests.serving import serve_in_thread

FILES = BATCHED_FILES + 5


def a_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / "trips").mkdir(parents=True)
    for i in range(FILES):
        where = folder / "trips" if i % 3 == 0 else folder
        (where / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nThe shed key number {1000 + i} is in drawer {i}.\n")
    return folder


def run(capsys: pytest.CaptureFixture[str], url: str, key: str, *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["ingest", *args, "--json", "--url", url, "--api-key", key])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_many_files_go_in_batches_named_as_uploads_and_a_second_run_adds_nothing(
        keyed: tuple[Runtime, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rt, key = keyed
    folder = a_folder(tmp_path)
    (folder / "empty.md").write_bytes(b"")
    pipeline = Pipeline(rt)
    with serve_in_thread(create_app(rt, gateway=True, query=True, relay=None)) as (url, _port):
        code, out, err = run(capsys, url, key, str(folder), "--no-wait")
        # The empty file is refused by name; the others went in, each with its job.
        assert code == 2, err
        assert [(r["item"], r["status"]) for r in out["refused"]] == [(str(folder / "empty.md"), 422)], out
        assert "empty" in out["refused"][0]["reason"] and f"{folder / 'empty.md'}: " in err, err
        assert len(out["jobs"]) == FILES and all(j["status"] == "queued" and not j["unchanged"] for j in out["jobs"])
        jobs = {j["label"]: j["job_id"] for j in out["jobs"]}
        assert sorted(jobs) == sorted(f"note-{i:02d}.md" for i in range(FILES))  # each named as an upload is
        for _ in range(FILES):
            pipeline.drain()
        sources = rt.metadata.catalog.list_sources("carol", limit=100, offset=0)
        assert sorted(s.source_uri for s in sources) == sorted(f"file:note-{i:02d}.md" for i in range(FILES))
        # The same folder again: every file was sent before as it is, so nothing is added.
        (folder / "empty.md").unlink()
        code, again, err = run(capsys, url, key, str(folder), "--no-wait")
        assert code == 0, err
        assert {j["label"]: j["job_id"] for j in again["jobs"]} == jobs and all(j["unchanged"] for j in again["jobs"])
        assert len(rt.metadata.catalog.list_sources("carol", limit=100, offset=0)) == FILES


def test_many_files_wait_for_a_server_that_is_away_then_follow_their_jobs_to_the_end(
        keyed: tuple[Runtime, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rt, key = keyed
    folder = a_folder(tmp_path)
    pipeline = Pipeline(rt)
    port = free_port()
    answer: list[int] = []
    command = threading.Thread(target=lambda: answer.append(main([
        "ingest", str(folder), "--json", "--timeout", "120", "--url", f"http://127.0.0.1:{port}", "--api-key", key])))
    command.start()  # nothing listens yet: `up` is restarting
    threading.Event().wait(1.0)
    with serve_in_thread(create_app(rt, gateway=True, query=True, relay=None), port=port):
        while command.is_alive():
            pipeline.drain()
            command.join(0.2)
    out = capsys.readouterr()
    assert answer == [0], out.err
    assert "not reachable" in out.err and out.err.count("not reachable") == 1, out.err
    jobs = json.loads(out.out)["jobs"]
    # Every file once, each job followed to the end (as GET /v1/jobs/{id} shows it, with its stages).
    assert len(jobs) == FILES and len({j["job_id"] for j in jobs}) == FILES
    assert all(j["status"] == "succeeded" and [s["status"] for s in j["stages"]] == ["succeeded"] * 3 for j in jobs)
    assert sorted(j["title"] for j in jobs) == sorted(f"Note {i}" for i in range(FILES))
