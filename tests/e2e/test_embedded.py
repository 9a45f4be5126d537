"""Embedded mode as a user runs it: ``secondbrain up`` then the CLI clients."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import Service, readable_tmp, run_cli, wait_jobs

pytestmark = pytest.mark.e2e

def _filler(topic: str, n: int) -> str:
    return " ".join(f"Observation {i} about the {topic} was written down in the notebook on day {i}."
                    for i in range(n))


MARKDOWN = f"""# Garden plan 2026

Notes for the allotment.

## Tomatoes

Plant the San Marzano tomatoes against the south fence in early May, after the last frost.
Water them deeply twice a week; never wet the leaves.

{_filler("tomatoes", 14)}

## Compost

The compost bin by the shed needs turning every three weeks.

{_filler("compost", 14)}

```bash
echo "turn compost" >> chores.txt
```
"""


@pytest.fixture()
def data_dir():
    with readable_tmp("sb-e2e-") as path:
        yield path / "data"


@pytest.fixture()
def embedded(tmp_path: Path, data_dir: Path):
    svc = Service("up", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs")
    svc.start().wait_ready(timeout=120)
    yield svc
    svc.stop()


def test_note_and_markdown_file_become_search_hits(embedded: Service, tmp_path: Path) -> None:
    env = {"SB_URL": embedded.url}
    # fixed date: a capture time in the past, only read back (here and below)
    note = run_cli(["ingest", "--note", "Invoice 8391 from Acme Ltd is due on Friday; pay it from the "
                    "business account.", "--title", "Acme invoice", "--captured-at", "2026-03-02T09:00:00+00:00"],
                   env)
    assert note.returncode == 0, note.stderr
    job_id = note.stdout.strip()
    assert len(job_id) == 36
    assert "succeeded" in note.stderr  # the progress display ended with the job done

    md = tmp_path / "garden.md"
    md.write_text(MARKDOWN)
    res = run_cli(["ingest", str(md), "--json"], env)
    assert res.returncode == 0, res.stderr
    (job,) = json.loads(res.stdout)["jobs"]
    assert job["status"] == "succeeded"
    assert [s["status"] for s in job["stages"]] == ["succeeded"] * 3

    # fixed date: the capture time above, read back
    found = run_cli(["search", "invoice 8391", "--json"], env)
    assert found.returncode == 0, found.stderr
    top = json.loads(found.stdout)["hits"][0]
    assert top["title"] == "Acme invoice"
    assert top["captured_at"].startswith("2026-03-02T09:00:00")
    assert top["modality"] == "note"

    found = run_cli(["search", "when should I put the tomato plants in the ground", "--json"], env)
    top = json.loads(found.stdout)["hits"][0]
    assert top["title"] == "Garden plan 2026"
    assert top["heading_path"] == ["Garden plan 2026", "Tomatoes"]
    assert "San Marzano" in top["text"]
    assert MARKDOWN.find("Plant the San Marzano") >= 0

    human = run_cli(["search", "compost"], env)
    assert human.returncode == 0 and "Garden plan 2026" in human.stdout

    folder = tmp_path / "journal"
    (folder / "2026").mkdir(parents=True)
    (folder / "2026" / "march.md").write_text("# March\n\nStarted pottery classes on Wednesdays.\n")
    (folder / "april.txt").write_text("Booked the ferry to the islands for the long weekend.\n")
    (folder / ".hidden.md").write_text("# Not this one\n")
    res = run_cli(["ingest", str(folder), "--json"], env)
    assert res.returncode == 0, res.stderr
    assert sorted(j["title"] for j in json.loads(res.stdout)["jobs"]) == ["March", "april.txt"]

    # fixed date: the capture time above, read back
    asked = run_cli(["ask", "when is the invoice from Acme due?"], env)
    assert asked.returncode == 0, asked.stderr
    assert "quotes your sources" in asked.stderr  # labelled as extractive: no language model configured
    assert "due on Friday" in asked.stdout and "[1]" in asked.stdout
    assert "[1] Acme invoice (2026-03-02" in asked.stdout
    asked = json.loads(run_cli(["ask", "when is the invoice from Acme due?", "--json"], env).stdout)
    assert asked["grounded"] and asked["citations"] == [1]
    assert asked["sources"][0]["title"] == "Acme invoice"
    unknown = run_cli(["ask", "what is the capital of Mongolia?"], env)
    assert unknown.returncode == 1
    assert "could not find anything about that in your data" in unknown.stdout

    with embedded.client() as c:
        sources = c.get("/v1/sources").json()["sources"]
        assert {s["title"] for s in sources} == {"Acme invoice", "Garden plan 2026", "March", "april.txt"}
        assert all(s["status"] == "succeeded" and s["chunk_count"] >= 1 for s in sources)
        assert c.get(f"/v1/jobs/{job_id}").json()["status"] == "succeeded"
        assert c.get("/v1/jobs/00000000-0000-0000-0000-000000000000").status_code == 404


def test_cli_errors_are_clear(embedded: Service, tmp_path: Path) -> None:
    env = {"SB_URL": embedded.url}
    missing = run_cli(["ingest", str(tmp_path / "nope.md")], env)
    assert missing.returncode == 2 and "not found" in missing.stderr
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    res = run_cli(["ingest", str(empty)], env)
    assert res.returncode == 2 and "empty" in res.stderr
    # In a folder, the empty file is said (by name) and the others still go in.
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a-empty.md").write_bytes(b"")
    (folder / "b-boat.md").write_text("# Boat\n\nThe Vindolanda-skiff is moored at jetty 3 until October.\n")
    mixed = run_cli(["ingest", str(folder), "--json"], env)
    assert mixed.returncode == 2 and f"{folder / 'a-empty.md'}: HTTP 422" in mixed.stderr, mixed.stderr
    out = json.loads(mixed.stdout)
    assert [j["title"] for j in out["jobs"]] == ["Boat"] and out["jobs"][0]["status"] == "succeeded", out
    assert [(r["item"], r["status"]) for r in out["refused"]] == [(str(folder / "a-empty.md"), 422)], out
    assert "1 of 2 refused" in mixed.stderr, mixed.stderr
    nothing = run_cli(["search", "zzzqqq xylophone"], {"SB_URL": embedded.url})
    assert nothing.returncode in (0, 1)
    busy = run_cli(["up", "--data-dir", str(tmp_path / "second"), "--port", str(embedded.port)], {}, timeout=60)
    assert busy.returncode == 2 and "already in use" in busy.stderr and "--port" in busy.stderr
    # Nothing answers at the address: with no server recorded on the machine, say how to start one ...
    down = run_cli(["search", "x"], {"SB_URL": "http://127.0.0.1:9", "XDG_STATE_HOME": str(tmp_path / "no-state")})
    assert down.returncode == 2 and "No `secondbrain up` is running" in down.stderr, down.stderr
    # ... and with this one running, name it (the others the suite runs may be listed beside it).
    elsewhere = run_cli(["search", "x"], {"SB_URL": "http://127.0.0.1:9"})
    assert elsewhere.returncode == 2 and "runs here at another address" in elsewhere.stderr, elsewhere.stderr
    assert embedded.url in elsewhere.stderr and "--url URL" in elsewhere.stderr, elsewhere.stderr
    binary = tmp_path / "photo.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)
    failed = run_cli(["ingest", str(binary)], env)
    assert failed.returncode == 1
    assert "its content is a PNG image" in failed.stderr


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "crash"])
def test_restart_keeps_data_and_resumes_work_in_flight(tmp_path: Path, data_dir: Path, stop_signal: int) -> None:
    data = data_dir
    first = Service("up1", ["up", "--data-dir", str(data)], {}, tmp_path / "logs").start().wait_ready(120)
    env = {"SB_URL": first.url}
    done = run_cli(["ingest", "--note", "The spare house key is under the blue flower pot."], env)
    assert done.returncode == 0, done.stderr
    # Submit a burst and stop at once (Ctrl-C, or a crash) while the pipeline is still working on it.
    queued = [run_cli(["ingest", "--no-wait", "--note", f"Reading list item {i}: a book about topic {i}."], env)
              for i in range(12)]
    first.signal(stop_signal)
    first.proc.wait(60)  # type: ignore[union-attr]
    job_ids = [q.stdout.strip() for q in queued]
    assert all(len(j) == 36 for j in job_ids)

    second = Service("up2", ["up", "--data-dir", str(data)], {}, tmp_path / "logs").start().wait_ready(120)
    try:
        with second.client(timeout=10) as c:
            final = wait_jobs(c, job_ids, timeout=120)
            assert all(j["status"] == "succeeded" for j in final.values()), final
            hits = c.get("/v1/search", params={"q": "where is the spare key", "k": 3}).json()["hits"]
            assert "blue flower pot" in hits[0]["text"]
            sources = c.get("/v1/sources", params={"limit": 100}).json()["sources"]
            assert len(sources) == 13
            total_chunks = sum(s["chunk_count"] for s in sources)
    finally:
        second.stop()
    # Nothing was indexed twice: the engine holds exactly one point per chunk.
    from secondbrain.stores.vectors_edge import EdgeVectorStore

    store = EdgeVectorStore(data / "vectors")
    try:
        assert store.count("local") == total_chunks
    finally:
        store.close()


def test_ask_about_last_week_in_the_terminal(embedded: Service) -> None:
    from datetime import UTC, datetime, timedelta

    env = {"SB_URL": embedded.url, "TZ": "UTC"}
    # Asked as of a fixed Wednesday (--as-of), so the day the suite runs on cannot move "last week"; the
    # module's other notes are captured at the real time, long after it.
    # fixed date: the question's "now" is fixed with --as-of
    as_of = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)
    last_week = datetime(2026, 3, 12, 10, 0, tzinfo=UTC)  # Thursday of the week before
    older = last_week - timedelta(days=45)
    for text, when in [("Budget sync: the offsite budget is capped at 12,000 euros.", last_week),
                       ("Budget sync: the offsite budget was first set at 20,000 euros.", older)]:
        res = run_cli(["ingest", "--note", text, "--title", "Budget sync", "--captured-at", when.isoformat()], env)
        assert res.returncode == 0, res.stderr
    asked = run_cli(["ask", "what did I note about the budget last week?", "--as-of", as_of.isoformat()], env)
    assert asked.returncode == 0, asked.stderr
    assert "time: " in asked.stderr and "Mon 9 Mar 2026" in asked.stderr  # the range understood is shown
    assert "12,000" in asked.stdout and "20,000" not in asked.stdout
    assert "[1] Budget sync (2026-03-12 10:00" in asked.stdout
    listing = run_cli(["ask", "what happened last week?", "--json", "--as-of", as_of.isoformat()], env)
    body = json.loads(listing.stdout)
    assert body["answer_mode"] == "listing" and [s["title"] for s in body["sources"]] == ["Budget sync"]


def test_a_second_user_with_an_api_key_sees_only_their_data(embedded: Service, data_dir: Path) -> None:
    admin = {"SB_DATA_DIR": str(data_dir)}
    assert run_cli(["users", "add", "bob"], admin).returncode == 0
    created = run_cli(["keys", "create", "--user", "bob", "--name", "phone", "--json"], admin)
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["api_key"]
    bob = {"SB_URL": embedded.url, "SB_API_KEY": key}
    local = {"SB_URL": embedded.url}
    res = run_cli(["ingest", "--note", "Bob's locker code is 4417 at the Harbour Street gym."], bob)
    assert res.returncode == 0, res.stderr
    found = run_cli(["search", "locker code gym", "--json"], bob)
    assert [h["title"] for h in json.loads(found.stdout)["hits"]][:1] != []
    assert any("4417" in h["text"] for h in json.loads(found.stdout)["hits"])
    hidden = run_cli(["search", "locker code gym", "--json"], local)
    assert not any("4417" in h["text"] for h in json.loads(hidden.stdout)["hits"])
    listed = run_cli(["keys", "list", "--user", "bob", "--json"], admin)
    (entry,) = json.loads(listed.stdout)
    assert entry["name"] == "phone" and not entry["revoked"] and entry["last_used_at"]
    assert run_cli(["keys", "revoke", entry["key_id"], "--user", "bob"], admin).returncode == 0
    refused = run_cli(["search", "locker"], bob)
    assert refused.returncode == 2 and "revoked" in refused.stderr


def wait_for_log(svc: Service, text: str, timeout: float = 30.0) -> str:
    """The service's log once ``text`` appears in it (the ready banner follows readiness closely)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in (log := svc.tail(400)):
            return log
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{svc.tail()}")


def test_first_start_creates_a_local_admin_key_and_prints_how_to_use_it(embedded: Service, data_dir: Path) -> None:
    key_file = data_dir / "api-key"
    assert key_file.stat().st_mode & 0o777 == 0o600  # readable only by its owner
    key = key_file.read_text().strip()
    printed = wait_for_log(embedded, "the key is saved in")
    # Where the key is, never the key itself: the output of `up` ends up in logs.
    assert key not in printed and str(key_file) in printed and "created an admin API key" in printed
    # A one-time sign-in link for the web page.
    link = re.search(rf"web app: open ({re.escape(embedded.url)}/\?token=\S+)", printed)
    assert link, printed
    with httpx.Client(base_url=embedded.url) as browser:
        assert browser.get("/v1/me").status_code == 401  # nothing without the key, on loopback too
        token = link.group(1).split("token=", 1)[1]
        assert browser.post("/v1/session", json={"token": token}).status_code == 200
        me = browser.get("/v1/me").json()  # the session cookie alone
        assert me["user_id"] == "local" and me["scope"] == "admin"
    with httpx.Client(base_url=embedded.url, headers={"Authorization": f"Bearer {key}"}) as client:
        me = client.get("/v1/me").json()
        assert me["user_id"] == "local" and me["scope"] == "admin"
        assert "local" in [u["user_id"] for u in client.get("/v1/admin/users").json()["users"]]
        # Request heads past the limit: a sentence for moderately large ones; the protocol layer
        # drops huge ones; either way the server keeps serving.
        big = client.get("/v1/sources", headers={"X-Junk": "a" * 40_000})
        assert big.status_code == 431 and "headers" in big.json()["detail"]
        # The protocol layer answers 400, or resets the connection while the head still streams in.
        with contextlib.suppress(httpx.TransportError):
            assert client.get("/v1/sources", headers={"X-Junk": "a" * 300_000}).status_code == 400
        assert client.get("/v1/sources").status_code == 200
    # `secondbrain open` makes a new link with the key the CLI finds by itself.
    opened = run_cli(["open", "--print"], {"SB_URL": embedded.url})
    assert opened.returncode == 0 and opened.stdout.strip().startswith(f"{embedded.url}/?token="), opened.stderr


def test_a_restart_keeps_the_key_and_does_not_print_it_again(tmp_path: Path, data_dir: Path) -> None:
    first = Service("up", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs1")
    first.start().wait_ready(timeout=120)
    key = (data_dir / "api-key").read_text().strip()
    first.stop()
    again = Service("up", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs2")
    again.start().wait_ready(timeout=120)
    try:
        assert (data_dir / "api-key").read_text().strip() == key
        printed = wait_for_log(again, "the key is saved in")
        assert key not in printed and str(data_dir / "api-key") in printed
        with httpx.Client(base_url=again.url, headers={"Authorization": f"Bearer {key}"}) as client:
            assert client.get("/v1/me").json()["scope"] == "admin"
    finally:
        again.stop()


def postgres_pid(data_dir: Path) -> int | None:
    """The embedded Postgres's postmaster pid while it runs (its postmaster.pid file), else None."""
    try:
        pid = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_nothing_outlives_up(tmp_path: Path, data_dir: Path, stop_signal: int) -> None:
    svc = Service("up", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs").start().wait_ready(120)
    assert postgres_pid(data_dir) is not None
    svc.signal(stop_signal)
    assert svc.proc is not None and svc.proc.wait(60) == 0
    assert postgres_pid(data_dir) is None, svc.tail()


def test_after_a_crash_the_next_up_takes_postgres_over_and_stops_it(tmp_path: Path, data_dir: Path) -> None:
    first = Service("up1", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs").start().wait_ready(120)
    first.kill()  # kill -9: no chance to stop anything
    left = postgres_pid(data_dir)
    assert left is not None  # the server the crashed process started is still there
    second = Service("up2", ["up", "--data-dir", str(data_dir)], {}, tmp_path / "logs").start().wait_ready(120)
    with second.client() as c:
        assert c.get("/v1/me").status_code == 200
    assert postgres_pid(data_dir) == left  # taken over, not a second server
    second.stop()
    assert postgres_pid(data_dir) is None, second.tail()
