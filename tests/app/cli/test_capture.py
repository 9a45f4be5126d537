"""The CLI's side of a big capture: it waits out the server's 429s and asks about jobs sparingly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli.capture import _send_file
from app.cli.client import MANY_JOBS, wait_for_jobs

pytestmark = pytest.mark.fast  # client behaviour only (the server side of 429 is in tests/test_tenancy.py)


def test_an_upload_told_to_slow_down_waits_and_goes_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "note.md"
    path.write_text("# A note\n\nThe boiler was serviced.")
    answers = iter([httpx.Response(429, headers={"Retry-After": "0"}, json={"detail": "you have 1000 captures "
                                                                                       "still being processed"}),
                    httpx.Response(202, json={"job_id": "j", "status": "queued"})])
    sent: list[bytes] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request.read())
        return next(answers)

    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        resp = _send_file(client, path, {})
    assert resp.status_code == 202
    assert len(sent) == 2 and all(b"The boiler was serviced." in body for body in sent)  # the file, both times
    assert "slow down" in capsys.readouterr().err


def test_many_jobs_are_followed_without_asking_about_each_every_time() -> None:
    """One user's captures finish in order: the CLI asks about the first unfinished ones only."""
    import app.cli.client as cli_client

    jobs = [(f"note-{i}.md", f"j{i}") for i in range(MANY_JOBS * 3)]
    rounds = [0]  # the pipeline finishes two captures per pause of the CLI
    asked: dict[str, int] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        job = request.url.path.rsplit("/", 1)[-1]
        asked[job] = asked.get(job, 0) + 1
        status = "succeeded" if rounds[0] >= int(job[1:]) // 2 else "running"
        return httpx.Response(200, json={"job_id": job, "status": status, "stages": []})

    def pause(_seconds: float) -> None:
        rounds[0] += 1

    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        sleep, cli_client.time.sleep = cli_client.time.sleep, pause  # type: ignore[assignment]
        try:
            final = wait_for_jobs(client, jobs, timeout_s=30)
        finally:
            cli_client.time.sleep = sleep  # type: ignore[assignment]
    assert len(final) == len(jobs) and all(v["status"] == "succeeded" for v in final.values())
    # Asking about every unfinished job in every round would be about 900 requests here.
    assert sum(asked.values()) <= 3 * len(jobs), sum(asked.values())


def test_a_job_poll_told_to_slow_down_waits_as_told_and_asks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.cli.client as cli_client

    answers = iter([httpx.Response(429, headers={"Retry-After": "3"}), httpx.Response(429),
                    httpx.Response(200, json={"job_id": "j", "status": "succeeded", "stages": []})])
    slept: list[float] = []
    monkeypatch.setattr(cli_client.time, "sleep", slept.append)
    with httpx.Client(transport=httpx.MockTransport(lambda _r: next(answers)), base_url="http://sb") as client:
        final = wait_for_jobs(client, [("note.md", "j")], timeout_s=30)
    assert final["j"]["status"] == "succeeded"  # a 429 is waited out, never taken for a lost job
    assert [s for s in slept if s >= 1] == [3.0, 1.0]  # what the server asked for, else a second


def test_a_folder_sync_waits_for_a_server_that_is_away_or_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from connectors.folders import FolderSync

    refused = httpx.ConnectError("connection refused")
    answers: list[Any] = [refused, refused, httpx.Response(503, headers={"Retry-After": "90"}),
                          httpx.Response(200, json={"user_id": "u"})]

    def handle(_request: httpx.Request) -> httpx.Response:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    said: list[str] = []
    with httpx.Client(transport=httpx.MockTransport(handle), base_url="http://sb") as client:
        sync = FolderSync(client, [tmp_path], tmp_path / "state.json", say=said.append)
    assert sync.user_id == "u"
    assert slept == [2.0, 2.0, 30.0]  # every 2 s while away; a busy server's ask, at most 30 s
    assert len(said) == 1 and "not reachable" in said[0]  # said once
