"""``secondbrain import``'s side: its progress line and summary say what a person needs (how far, how fast,
how long still, what was left out and why), and its sender gets a batch in even when one capture spoils it
(against the real gateway on real Postgres)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.cli.importing import _summary, cmd_import
from app.http import create_app
from connectors.sender import ROOM_POLL_S, Item, Progress, Sender, Tally, clock
from secondbrain.settings import Settings
from services.importers import render
from services.importers.registry import by_name

if TYPE_CHECKING:
    import httpx


@pytest.mark.fast
def test_durations_read_as_people_say_them() -> None:
    assert [clock(s) for s in (4.4, 59.6, 200, 3 * 3600 + 300)] == ["4 s", "1 min 00 s", "3 min 20 s", "3 h 05 min"]


@pytest.mark.fast
def test_the_progress_line_says_how_far_how_fast_and_how_long_still() -> None:
    tally = Tally(total=100, started=time.monotonic() - 20)
    tally.items = [Item(f"n{i}", "note", f"j{i}", status="succeeded") for i in range(38)]
    tally.items += [Item("dup", "note", "jd", status="duplicate"), Item("bad", "file", "jb", status="failed")]
    tally.items += [Item(f"q{i}", "note", f"k{i}", status="queued") for i in range(8)]
    tally.skipped = [("Old idea", "in Keep's trash")] * 2
    line = tally.line("Groceries")
    assert line == "50/100 read · 38 searchable · 1 duplicate · 1 failed · 2.1 items/s, 28 s left · Groceries"


@pytest.mark.fast
def test_the_summary_groups_what_was_left_out_by_reason(capsys: pytest.CaptureFixture[str]) -> None:
    tally = Tally(total=6)
    tally.items = [Item("Bike lock", "note", "j1", status="succeeded"),
                   Item("Groceries", "note", "j2", status="succeeded", earlier=True),
                   Item("Photo", "file", "j3", status="failed", reason="No text found in the image.")]
    tally.skipped = [("Old idea", "in Keep's trash"), ("Older idea", "in Keep's trash"), ("Broken", "not JSON")]
    args = argparse.Namespace(json=False, no_wait=False, retry_failed=False)
    assert _summary(by_name("keep"), tally, args, finished=True) == 1  # something failed
    out = capsys.readouterr().out
    assert "  1 imported and searchable\n  1 already imported by an earlier run (nothing added)\n" in out
    assert "  3 skipped:\n    in Keep's trash (2): Old idea, Older idea\n    not JSON: Broken\n" in out
    assert "  1 failed:\n    No text found in the image.: Photo\n" in out


@pytest.mark.fast
def test_a_bad_zone_or_a_missing_export_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(path=str(tmp_path / "missing.zip"), tz="Mars/Olympus", date_order=None, format=None)
    assert cmd_import(args) == 2
    assert "--tz 'Mars/Olympus' is not a time zone name" in capsys.readouterr().err
    args.tz = "UTC"
    assert cmd_import(args) == 2
    assert "missing.zip does not exist" in capsys.readouterr().err


@pytest.fixture()
def gateway(dsn: str, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), max_upload_bytes=64 * 1024, kafka_bootstrap="127.0.0.1:9",
        topic_prefix="cli.", auth="off", max_pending_jobs=0)
    rt = build_runtime(settings, vectors=False, models=False)
    with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
        yield client
    rt.close()


def test_a_capture_that_spoils_its_batch_is_found_and_the_others_go_in(gateway: TestClient) -> None:
    tally = Tally(total=3)
    sender = Sender(gateway, tally, Progress(tally, quiet=True), "notes", batch_items=10)
    for name in ("one", "two"):
        sender.add(render.note("notes", f"{name}.md", origin=f"{name}.md", title=name, body=f"Note {name}.",
                               created=None))
    huge = render.file("notes", "scan.pdf", origin="scan.pdf", data=b"%PDF-1.4\n" + b"0" * (100 * 1024),
                       filename="scan.pdf", content_type="application/pdf", title="Scan", captured_at=None,
                       label="scan.pdf")
    sender.add(huge)
    sender.flush()  # the whole batch is over the upload limit (413): each capture goes alone
    states = {i.label: (i.status, i.reason) for i in tally.items}
    assert states["one"][0] == states["two"][0] == "queued"
    assert states["scan.pdf"][0] == "refused" and states["scan.pdf"][1].startswith("HTTP 413: the upload is over")


@pytest.mark.fast
def test_a_batch_waits_for_a_server_that_is_away_or_full_and_follows_its_jobs_meanwhile(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    refused = httpx.ConnectError("connection refused")
    answers: list[object] = [refused, refused, httpx.Response(429, headers={"Retry-After": "1"}),
                             httpx.Response(200, json={"results": [{"status": "imported", "job_id": "j2"}]})]
    asked: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/jobs":
            ids = request.url.params.get_list("id")
            asked.extend(f"job {i}" for i in ids)
            return httpx.Response(200, json={"jobs": [{"job_id": i, "status": "succeeded"} for i in ids],
                                             "unknown": []})
        asked.append(request.url.path)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, httpx.Response)
        return answer

    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    tally = Tally(total=2)
    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        sender = Sender(client, tally, Progress(tally, quiet=True), "notes", batch_items=10)
        tally.items.append(Item("earlier.md", "note", "j1", status="queued"))  # sent by an earlier batch
        sender.add(render.note("notes", "two.md", origin="two.md", title="two", body="Note two.", created=None))
        sender.flush()
    assert [i.status for i in tally.items] == ["succeeded", "succeeded"]
    assert slept[:2] == [3.0, 3.0]  # every 3 s while the server is away
    last_send = max(i for i, path in enumerate(asked) if path == "/v1/imports/batch")
    assert "job j1" in asked[:last_send]  # the jobs sent before are followed during the 429's wait
    assert capsys.readouterr().err.count("not reachable") == 1  # said once


def _followed(handle: Callable[[httpx.Request], httpx.Response], jobs: int, monkeypatch: pytest.MonkeyPatch) -> Tally:
    """``jobs`` sent captures followed until they have all finished, against a server that answers with ``handle``."""
    import httpx

    monkeypatch.setattr(time, "sleep", lambda _s: None)
    tally = Tally(total=jobs)
    tally.items += [Item(f"note {i}", "note", f"j{i}", status="queued") for i in range(jobs)]
    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        sender = Sender(client, tally, Progress(tally, quiet=True), "notes", batch_items=10)
        assert sender.wait(timeout_s=None)
    return tally


@pytest.mark.fast
@pytest.mark.parametrize("server", ["this", "older"])
def test_an_import_follows_its_jobs_two_hundred_at_a_time_in_the_order_sent(
        server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    done: set[str] = set()  # the pipeline finishes every job it is asked about
    requests: list[list[str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/jobs" and server == "this":
            ids = request.url.params.get_list("id")
            requests.append(ids)
            done.update(ids)
            return httpx.Response(200, json={"jobs": [{"job_id": i, "status": "succeeded"} for i in ids
                                                      if i != "j3"], "unknown": ["j3"]})
        if request.url.path.startswith("/v1/jobs/"):  # a server from before GET /v1/jobs: one request a job
            job = request.url.path.rsplit("/", 1)[-1]
            requests.append([job])
            done.add(job)
            return httpx.Response(404 if job == "j3" else 200, json={"job_id": job, "status": "succeeded"})
        return httpx.Response(404, json={"detail": "Not Found"})

    tally = _followed(handle, 250, monkeypatch)
    assert tally.items[3].status == "failed" and "deleted" in (tally.items[3].reason or "")
    assert all(i.status == "succeeded" for n, i in enumerate(tally.items) if n != 3)
    if server == "this":
        assert [len(r) for r in requests] == [200, 50]
        assert requests[0][:3] == ["j0", "j1", "j2"]
    else:
        assert len(requests) == 250  # sixteen a round, one request each


@pytest.mark.fast
def test_a_round_asks_about_twice_what_finished_in_the_round_before(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    finished: set[str] = set()
    requests: list[list[str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        ids = request.url.params.get_list("id")
        requests.append(ids)
        finished.update([i for i in ids if i not in finished][:20])  # twenty finish between two rounds
        return httpx.Response(200, json={"jobs": [{"job_id": i, "status": "succeeded" if i in finished else
                                                   "running"} for i in ids], "unknown": []})

    tally = _followed(handle, 300, monkeypatch)
    assert all(i.status == "succeeded" for i in tally.items)
    sizes = [len(r) for r in requests]
    assert sizes[0] == 200 and set(sizes[1:-1]) == {40}  # then twice the twenty that finished
    assert sum(sizes) < 1000  # a full window every round: 200 a round for 15 rounds


@pytest.mark.fast
def test_a_proxy_saying_the_server_behind_it_is_down_is_waited_out_but_a_refusal_is_not(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    answers = [httpx.Response(502, text="<html>502 Bad Gateway</html>"),
               httpx.Response(504, text="<html>504 Gateway Time-out</html>", headers={"Retry-After": "7"}),
               httpx.Response(200, json={"results": [{"status": "imported", "job_id": "j1"}]}),
               httpx.Response(503, json={"detail": "this process has no vector store configured"})]

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/jobs":
            return httpx.Response(200, json={"jobs": [{"job_id": "j1", "status": "succeeded"}], "unknown": []})
        return answers.pop(0)

    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    tally = Tally(total=2)
    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        sender = Sender(client, tally, Progress(tally, quiet=True), "notes", batch_items=10)
        sender.add(render.note("notes", "one.md", origin="one.md", title="one", body="Note one.", created=None))
        sender.flush()  # a 502, then a 504, then taken
        sender.add(render.note("notes", "two.md", origin="two.md", title="two", body="Note two.", created=None))
        sender.flush()  # the server's own 503: said, not waited for
    assert [(i.label, i.status) for i in tally.items] == [("one", "succeeded"), ("two", "refused")]
    assert tally.items[1].reason == "HTTP 503: this process has no vector store configured"
    assert slept[:2] == [5.0, 7.0]  # the default wait, then the one the proxy asked for
    err = capsys.readouterr().err
    assert err.count("not reachable (HTTP 502 from a proxy in front of it)") == 1 and "HTTP 504" not in err


def test_what_the_server_leaves_waiting_for_the_backlog_is_sent_again_and_the_summary_says_so(
        dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A full backlog (SB_MAX_PENDING_JOBS) pauses the import: the captures past it wait and go again once the
    person's earlier ones have finished, none twice, and the summary says it paused."""
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9", topic_prefix="clip.",
        auth="off", max_pending_jobs=2, default_user="cli-pauser")
    rt = build_runtime(settings, vectors=False, models=False)
    finished: list[str] = []
    slept: list[float] = []

    def pipeline_catches_up(seconds: float) -> None:  # while the import waits, the pipeline takes the jobs
        slept.append(seconds)
        for item in sender.tally.items:
            if item.job_id and item.job_id not in finished:
                rt.metadata.jobs.job_failed("cli-pauser", item.job_id, "extract", "taken by the test")
                finished.append(item.job_id)

    monkeypatch.setattr(time, "sleep", pipeline_catches_up)
    tally = Tally(total=5)
    try:
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            sender = Sender(client, tally, Progress(tally, quiet=True), "notes", batch_items=10)
            for i in range(5):
                sender.add(render.note("notes", f"n{i}.md", origin=f"n{i}.md", title=f"n{i}", body=f"Note {i}.",
                                       created=None))
            sender.flush()
            assert sorted(i.label for i in tally.items) == [f"n{i}" for i in range(5)]  # each once
            assert len({i.job_id for i in tally.items}) == 5 and tally.pauses == 2
            # each pause ends at the first look that finds room, not after the server's whole Retry-After
            # (10 s): the pipeline would run dry meanwhile
            assert slept == [ROOM_POLL_S, ROOM_POLL_S]
            args = argparse.Namespace(json=False, no_wait=True, retry_failed=False)
            _summary(by_name("notes"), tally, args, finished=True)
            assert "paused 2 times" in capsys.readouterr().out
    finally:
        rt.close()
