"""How many times one capture makes secondbrain wait for PostgreSQL, end to end.

A running `secondbrain up` talks to Postgres through a proxy that counts round trips (tests/pgturns.py).
One note goes in over HTTP and through the relay, the extractor, the chunker and the embedder; the
round trips in that window, minus those of an idle window as long, are the note's.  Nothing polls the
job meanwhile (that would be counted too): the job is read once, after the window.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.harness import Service, readable_tmp, wait_jobs
from tests.pg import base_dsn, fresh_database
from tests.pgturns import TurnCountingProxy

pytestmark = pytest.mark.e2e
WINDOW_S = 6.0  # long enough for a note to be searchable on a loaded 2-core machine
# Where the twenty go: gateway 2 (key check, intake with the outbox row leased to its relay), relay 1 (marks
# the batch with its next claim), the job read once with its stages (1), extract 5 (admission's job lookup,
# which also says whether the bytes were extracted before; the job fence; the document; finishing the stage),
# chunk 4 (admission, the fence, finishing), embed 7 (admission, the index version, the fence, the index
# version again under it, the chunk count, finishing).  The fence (BEGIN with the share lock in one trip, then
# COMMIT) keeps a deletion or an erasure from racing a stage's writes; admission on the internal topics keeps
# a deleted job's backlog from costing model time.  Since the stages take batches, the extractor and the chunker
# hold no fence for a body or chunk list that travels inline (nothing is written outside the ledger then): 14
# measured.
ROUND_TRIP_BUDGET = 20
# Housekeeping that runs by chance (one request in 64 prunes old rate-limit windows) is nobody's note.
HOUSEKEEPING = (b"DELETE FROM request_windows",)


def ours(turns: list[bytes]) -> list[bytes]:
    return [t for t in turns if not any(h in t for h in HOUSEKEEPING)]


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, TurnCountingProxy]]:
    with base_dsn() as base, fresh_database(base) as dsn:
        params = dict(part.split("=", 1) for part in dsn.split() if "=" in part)
        proxy = TurnCountingProxy((params.get("host", "127.0.0.1"), int(params.get("port", "5432"))))
        proxied = " ".join(f"{k}={v}" for k, v in {**params, "host": "127.0.0.1", "port": str(proxy.port)}.items())
        with readable_tmp("sb-rt-") as root:
            svc = Service("up", ["up", "--data-dir", str(root / "data")], {
                "SB_POSTGRES_DSN": proxied,
                "SB_RELAY_POLL_S": "60",  # the gateway wakes the relay; no idle polling inside the windows
            }, tmp_path_factory.mktemp("rt-logs"))
            svc.start().wait_ready(timeout=180)
            try:
                yield svc, proxy
            finally:
                svc.stop()
                proxy.close()


def note(client: httpx.Client, text: str) -> str:
    r = client.post("/v1/notes", json={"text": text})
    assert r.status_code == 202, r.text
    return str(r.json()["job_id"])


def idle_turns(proxy: TurnCountingProxy) -> list[bytes]:
    """The round trips of a window of ``WINDOW_S`` in which nothing is sent (after a second to settle)."""
    time.sleep(1.0)
    start = len(proxy.log)
    time.sleep(WINDOW_S)
    return ours(proxy.log[start:])


def test_one_note_costs_at_most_twenty_round_trips(counted: tuple[Service, TurnCountingProxy]) -> None:
    svc, proxy = counted
    with svc.client() as client:
        # The user's first capture creates their index; the one measured is an ordinary one.
        first = note(client, "Warm-up: the boiler was serviced in October.")
        assert wait_jobs(client, [first])[first]["status"] == "succeeded"
        idle = idle_turns(proxy)
        mark = len(proxy.log)
        job = note(client, "The spare bike key hangs on the hook behind the kitchen door.")
        time.sleep(WINDOW_S)
        busy = proxy.log[mark:len(proxy.log)]
        view = client.get(f"/v1/jobs/{job}").json()
        assert view["status"] == "succeeded", view
        hits = client.get("/v1/search", params={"q": "spare bike key", "mode": "sparse"}).json()["hits"]
        assert any("kitchen door" in h["text"] for h in hits)
    per_note = len(ours(busy)) - len(idle)
    turns = [re.sub(rb"[^ -~]+", b" ", turn).decode()[:160] for turn in busy]
    Path("test-artifacts").mkdir(exist_ok=True)
    Path("test-artifacts/roundtrips.txt").write_text(f"{per_note}\n" + "\n".join(turns) + "\n")
    # The statements are in the message so that a regression says where the new round trips go.
    assert per_note <= ROUND_TRIP_BUDGET, (
        f"{per_note} round trips for one note (budget {ROUND_TRIP_BUDGET}):\n" + "\n".join(turns))


BATCH = 64
# A batch of notes shares the work of every stage: the import route takes them in one request, and each stage
# admits them, holds their fences, saves their rows and records them done together.  Amortised per note.
BATCH_ROUND_TRIP_BUDGET = 3
BATCH_WINDOW_S = 30.0  # long enough for 64 notes to be searchable on a loaded 2-core machine


def send_batch(client: httpx.Client, name: str, text: Callable[[int], str]) -> list[dict[str, Any]]:
    """Import ``BATCH`` notes (``import:notes:<name>-<i>.md``, ``text(i)`` each) in one request; their results."""
    # fixed date: the notes' own past date, as an import brings it; the day the test runs does not change it
    captures = [{"source_uri": f"import:notes:{name}-{i}.md", "kind": "note", "title": f"{name} {i}",
                 "part": f"p{i}", "content_type": "text/markdown", "captured_at": "2023-02-03T04:05:06+00:00",
                 "attributes": {"kind": "note", "import.format": "notes"}} for i in range(BATCH)]
    r = client.post("/v1/imports/batch", data={"manifest": json.dumps({"format": "notes", "captures": captures})},
                    files=[(f"p{i}", (f"p{i}", text(i).encode(), "application/octet-stream")) for i in range(BATCH)])
    assert r.status_code == 200, r.text
    return list(r.json()["results"])


def test_a_batch_of_64_notes_costs_at_most_three_round_trips_a_note(
        counted: tuple[Service, TurnCountingProxy]) -> None:
    svc, proxy = counted
    with svc.client() as client:
        first = note(client, "Warm-up: the gutters were cleared in November.")  # the index exists already
        assert wait_jobs(client, [first])[first]["status"] == "succeeded"
        idle = idle_turns(proxy)
        mark = len(proxy.log)
        results = send_batch(client, "pantry",
                             lambda i: f"Crate {i} holds {i + 2} jars of plum jam and a ledger marked zq{i:04d}x.")
        jobs = [x["job_id"] for x in results]
        assert len(jobs) == BATCH and all(x["status"] == "imported" for x in results)
        time.sleep(BATCH_WINDOW_S)
        busy = ours(proxy.log[mark:len(proxy.log)])
        states = wait_jobs(client, jobs)
        assert all(states[j]["status"] == "succeeded" for j in jobs), states
        hits = client.get("/v1/search", params={"q": "zq0063x", "mode": "sparse"}).json()["hits"]
        assert any("Crate 63 holds" in h["text"] for h in hits)
    per_note = (len(busy) - len(idle) * BATCH_WINDOW_S / WINDOW_S) / BATCH
    turns = [re.sub(rb"[^ -~]+", b" ", turn).decode()[:160] for turn in busy]
    Path("test-artifacts").mkdir(exist_ok=True)
    Path("test-artifacts/roundtrips-batch.txt").write_text(f"{per_note:.2f}\n" + "\n".join(turns) + "\n")
    assert per_note <= BATCH_ROUND_TRIP_BUDGET, (
        f"{per_note:.2f} round trips a note in a batch of {BATCH} (budget {BATCH_ROUND_TRIP_BUDGET}):\n"
        + "\n".join(turns))


# An export sent again (an import run twice, a folder synced tomorrow) files nothing new: the batch's items are
# found unchanged with one statement, then their jobs and whether each is still its source's current version are
# looked up together (they were three look-ups an item: 5,000 unchanged notes took 15-19 s on 2 cores).
RESEND_ROUND_TRIP_BUDGET = 10


def test_a_batch_sent_again_unchanged_costs_a_few_round_trips_in_all(
        counted: tuple[Service, TurnCountingProxy]) -> None:
    svc, proxy = counted

    def shelf(i: int) -> str:
        return f"Shelf {i} holds {i + 3} tins of saffron and a tag marked qv{i:04d}k."

    with svc.client() as client:
        jobs = [str(x["job_id"]) for x in send_batch(client, "shelf", shelf)]
        states = wait_jobs(client, jobs)
        assert all(states[j]["status"] == "succeeded" for j in jobs), states
        idle = idle_turns(proxy)
        mark, t0 = len(proxy.log), time.monotonic()
        again = send_batch(client, "shelf", shelf)
        took = time.monotonic() - t0
        busy = ours(proxy.log[mark:len(proxy.log)])
    assert [(x["status"], x["job_id"], x["job_status"]) for x in again] == [
        ("unchanged", j, "succeeded") for j in jobs]  # each one found with how its job ended
    spent = len(busy) - len(idle) * took / WINDOW_S
    turns = [re.sub(rb"[^ -~]+", b" ", turn).decode()[:160] for turn in busy]
    assert spent <= RESEND_ROUND_TRIP_BUDGET, (
        f"{spent:.1f} round trips for a batch of {BATCH} sent again (budget {RESEND_ROUND_TRIP_BUDGET}):\n"
        + "\n".join(turns))
