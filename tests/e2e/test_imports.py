"""Every export format imported through a running ``secondbrain up`` with the real CLI: searchable, dated when
the note was written or the message said, with its speakers, its broken items reported and skipped, and a
second run adding nothing; an import stopped with Ctrl-C goes on where it stopped; the web page's upload
route reads an export too."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from devtools import gen_exports as gen
from devtools.processes import cli_env
from tests.e2e.harness import REPO, Service, Site, readable_tmp, run_cli, wait_jobs

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    env = {"SB_FETCH_ALLOW_PRIVATE": "true",  # the test site listens on loopback
           "SB_FETCH_TIMEOUT_S": "2", "SB_MAX_ATTEMPTS": "2", "SB_RETRY_BACKOFF_S": "0.2",
           "SB_TIMEZONE": "Europe/Paris"}
    with readable_tmp("sb-import-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data")], env, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        yield svc
        svc.stop()


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=120) as c:
        yield c


def run_import(service: Service, path: Path, *args: str) -> dict[str, Any]:
    done = run_cli(["import", str(path), "--json", *args], {"SB_URL": service.url}, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return dict(json.loads(done.stdout))


def hits(client: httpx.Client, query: str, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": query, "k": 5, **params})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def top(client: httpx.Client, query: str) -> dict[str, Any]:
    found = hits(client, query)
    assert found, query
    return found[0]


def source_count(client: httpx.Client) -> int:
    """Every source row (the route gives at most 500 a page)."""
    total = 0
    while True:
        page = client.get("/v1/sources", params={"limit": 500, "offset": total}).json()["sources"]
        total += len(page)
        if len(page) < 500:
            return total


# (export, CLI options, a question, the title that must answer it, when it was written, expected speakers)
# fixed date: each export's own past times, read as written
CASES: dict[str, tuple[str, tuple[str, ...], str, str, datetime, str | None]] = {
    "keep": ("keep", (), "combination of the blue bike lock", "Bike lock", gen.KEEP_CREATED["bike"], None),
    "evernote": ("evernote", (), "pastel de nata at Manteigaria price", "Pastry receipt",
                 datetime(2023, 5, 15, 10, 15, tzinfo=UTC), None),
    "notion": ("notion", ("--tz", "Europe/Athens"), "hedgerow of hazel after the chestnut chapter",
               "Reading list > The Overstory", datetime(2024, 3, 5, 12, 32, tzinfo=UTC), None),
    "notes": ("notes", (), "rye flour to feed the starter", "Sourdough starter", gen.BEAR_TIME, None),
    "kindle": ("kindle", ("--tz", "Europe/Athens"), "hardest thing of all to see",
               "The Peregrine (location 201-203)", datetime(2024, 3, 5, 19, 41, 7, tzinfo=UTC), None),
    "readwise": ("readwise", (), "walnut tree first full crop", "The Orchard Handbook (page 88)",
                 datetime(2023, 10, 8, 15, 45, tzinfo=UTC), None),
    "whatsapp": ("wa_android", ("--tz", "Asia/Tokyo"), "ferry to Naxos from Piraeus",
                 "WhatsApp chat with Priya, Tuesday 12 March 2024", datetime(2024, 3, 11, 23, 56, tzinfo=UTC),
                 "Priya, Sam"),
    "whatsapp-iphone": ("wa_ios", ("--tz", "Europe/Rome"), "the violin teacher moved the lesson",
                        "WhatsApp chat with Marco, Thursday 14 March 2024",
                        datetime(2024, 3, 14, 18, 5, 12, tzinfo=UTC), "Marco, Sam"),
    "telegram": ("telegram", (), "apricot jam sugar per kilo of fruit", "Telegram chat: Aunt Rosa, Sunday 2 July 2023",
                 gen.TELEGRAM_START, "Aunt Rosa, Sam"),
    "openmemory": ("openmemory", (), "allergic to hazelnuts antihistamine",
                   "Is allergic to hazelnuts; carries an antihistamine on hikes",
                   datetime(2024, 2, 3, 8, 20, tzinfo=UTC), None),
    "mem0": ("mem0", (), "training for a half marathon", "Training for the Lisbon half marathon in October",
             datetime(2024, 5, 20, 14, 30, tzinfo=UTC), None),
    "khoj": ("khoj", ("--tz", "Europe/Paris"), "paraffin heater for the greenhouse",
             "Khoj: Greenhouse heater, Saturday 20 January 2024", datetime(2024, 1, 20, 17, 2, tzinfo=UTC),
             "You, Khoj"),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory, site: Site) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exports")
    return {
        "keep": gen.write_keep(root / "keep"), "evernote": gen.write_evernote(root / "evernote"),
        "notion": gen.write_notion(root / "notion"), "notes": gen.write_notes_folder(root / "notes"),
        "bookmarks": gen.write_bookmarks(root / "bookmarks", site.base), "kindle": gen.write_kindle(root / "kindle"),
        "readwise": gen.write_readwise(root / "readwise"), "wa_android": gen.write_whatsapp_android(root / "wa1"),
        "wa_ios": gen.write_whatsapp_ios(root / "wa2"), "telegram": gen.write_telegram(root / "telegram"),
        "openmemory": gen.write_openmemory(root / "om"), "mem0": gen.write_mem0_get_all(root / "mem0"),
        "khoj": gen.write_khoj(root / "khoj"),
    }


@pytest.fixture(scope="module")
def first_runs(service: Service, exports: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Each format imported once (the CLI waits until everything is searchable)."""
    return {name: run_import(service, exports[key], *opts) for name, (key, opts, *_rest) in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_each_format_is_searchable_with_its_own_time_and_speakers(name: str, client: httpx.Client,
                                                                  first_runs: dict[str, dict[str, Any]]) -> None:
    _key, _opts, question, title, written, speakers = CASES[name]
    summary = first_runs[name]
    assert summary["imported"] > 0 and summary["pending"] == 0, summary
    hit = top(client, question)
    assert hit["title"] == title, [h["title"] for h in hits(client, question)]
    assert at(hit["captured_at"]) == written
    if speakers:
        assert hit["kind"] == "chat" and hit["attributes"]["speakers"] == speakers


def test_what_each_format_skipped_or_failed_says_why(first_runs: dict[str, dict[str, Any]]) -> None:
    reasons = {name: {(s["label"], s["reason"]) for s in run["skipped"]} for name, run in first_runs.items()}
    assert reasons["keep"] == {("Old idea", "in Keep's trash"), (
        "Broken", "not a readable Keep note: Unterminated string starting at: line 1 column 36 (char 35)")}
    assert ("clipping 6 (Broken book)", "its details line is not Kindle's ('- Your Highlight ... | Added on ...')") \
        in reasons["kindle"]
    assert reasons["openmemory"] == {("An old phone number", "deleted in OpenMemory")}
    assert first_runs["kindle"]["duplicates"] == 1  # the highlight clipped twice
    (zip_skip,) = reasons["evernote"]
    assert zip_skip[0] == "Travel: Boarding pass and logbook: photos.zip"
    assert all(not run["failed"] for run in first_runs.values()), {n: r["failed"] for n, r in first_runs.items()}


def test_labels_tags_and_properties_of_the_exports_are_tags(client: httpx.Client, first_runs: dict[str, Any]) -> None:
    """Keep's labels, Evernote's tags, a Notion row's Tags and a Bear note's #tags are the sources' tags (listed,
    counted and filtered on), not words added to their text."""
    tags = {t["tag"]: t["sources"] for t in client.get("/v1/tags").json()["tags"]}
    assert {"shopping-list", "pinned", "travel", "portugal", "fiction", "trees", "baking", "kitchen/bread"} <= set(tags)
    for tag, title in (("shopping-list", "Groceries"), ("portugal", "Lisbon trip"),
                       ("fiction", "Reading list > The Overstory"), ("kitchen/bread", "Sourdough starter")):
        found = client.get("/v1/sources", params={"tags": tag, "limit": 500}).json()["sources"]
        assert title in {s["title"] for s in found}, (tag, [s["title"] for s in found])
        assert all(tag in s["tags"] for s in found)
    lisbon = [h for h in hits(client, "Lisbon trip travel") if h["title"] == "Lisbon trip"]
    assert lisbon and not any("Tags:" in h["text"] for h in lisbon)


def test_attachments_go_through_the_extractors_dated_like_their_note(client: httpx.Client,
                                                                     first_runs: dict[str, Any]) -> None:
    # fixed date: each export's own past times, read as written
    boarding = top(client, "boarding pass TP1352 Lisbon gate 14")
    assert boarding["modality"] == "image" and boarding["title"] == "Boarding pass and logbook (boarding-pass.png)"
    assert at(boarding["captured_at"]) == datetime(2023, 5, 21, 6, 10, tzinfo=UTC)
    # The chat's own words ("the new timetable from the music school") rank with the photo's: the photo is
    # asked for as a picture, as the page's modality filter does.
    (timetable, *_) = hits(client, "music school timetable for the violin", modality="image")
    assert "VIOLIN THURSDAY" in timetable["text"].upper()
    assert at(timetable["captured_at"]) == datetime(2024, 3, 14, 18, 6, 40, tzinfo=UTC)


def test_times_spoken_of_in_a_chat_are_read_against_its_day(client: httpx.Client, first_runs: dict[str, Any]) -> None:
    # fixed date: each export's own past times, read as written
    hit = top(client, "passport numbers for the hostel in Naxos")
    assert hit["title"] == "WhatsApp chat with Priya, Wednesday 13 March 2024"
    assert hit["attributes"]["turn_ids"] == "19:20" and hit["text"].startswith("Sam: We'll send the hostel")
    assert [m["expression"] for m in hit["mentions"]] == ["on Friday"]
    said = at(hit["mentions"][0]["start"]).astimezone(ZoneInfo("Europe/Paris"))  # the server's zone (SB_TIMEZONE)
    assert said.date().isoformat() == "2024-03-15"  # the Friday after that Wednesday, not one after today


def test_bookmarks_are_fetched_dated_by_when_they_were_saved(service: Service, client: httpx.Client,
                                                             exports: dict[str, Path]) -> None:
    summary = run_import(service, exports["bookmarks"])
    assert (summary["imported"], summary["duplicates"]) == (1, 1)
    hit = top(client, "keeper wound the clockwork of the lens")
    assert hit["title"] == "Lighthouses and their clocks" and hit["modality"] == "web"
    assert at(hit["captured_at"]) == gen.BOOKMARK_ADDED
    failed = {f["label"]: f["reason"] for f in summary["failed"]}
    assert set(failed) == {"Keeper's diary", "A page that is gone"}  # robots.txt forbids one, the other is gone
    assert "robots.txt" in failed["Keeper's diary"] and "404" in failed["A page that is gone"]
    assert [s["reason"] for s in summary["skipped"]] == [
        "not a web page (javascript: bookmarks, such as bookmarklets, are not fetched)"]


def test_a_second_run_adds_nothing(service: Service, client: httpx.Client, exports: dict[str, Path],
                                   first_runs: dict[str, dict[str, Any]]) -> None:
    before = source_count(client)
    for name, (key, opts, *_rest) in CASES.items():
        again = run_import(service, exports[key], *opts)
        assert again["imported"] == 0, (name, again)
        assert again["already_imported"] == first_runs[name]["imported"], (name, again)
    assert source_count(client) == before


class HeldAfterFirstBatch:
    """A forwarding proxy in front of ``up`` that lets the first import batch through and holds every later one, so
    Ctrl-C lands in the middle of an import however fast the machine (batches go in at once now)."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.batches, self.release = upstream, 0, threading.Event()
        gate = self

        class Forward(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST" and self.path.startswith("/v1/imports/batch"):
                    gate.batches += 1
                    if gate.batches > 1:  # held until the test ends; never forwarded
                        gate.release.wait(120)
                        self.send_error(503)
                        return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                r = httpx.request(self.command, gate.upstream + self.path, headers=headers, content=body, timeout=120)
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "content-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_an_import_stopped_with_ctrl_c_goes_on_where_it_stopped(service: Service, client: httpx.Client,
                                                                tmp_path: Path) -> None:
    notes = 120
    export = gen.write_many_keep_notes(tmp_path, notes)
    before = source_count(client)
    gate = HeldAfterFirstBatch(service.url)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "import", str(export), "--batch", "20", "--json"],
                                env=cli_env({"SB_URL": gate.url, "SB_API_KEY": service.key}), cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                # Ctrl-C as a terminal sends it, even when the suite runs in the background
                                # (a background job starts with SIGINT ignored, and so would the CLI)
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while gate.batches < 2 or source_count(client) < before + 20:  # the first batch is in, the next held
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        gate.close()
    assert proc.returncode == 130, (out, err)
    assert "run the same command again to go on: nothing sent is sent twice" in err
    assert source_count(client) - before == 20
    summary = run_import(service, export)
    assert (summary["already_imported"], summary["imported"]) == (20, notes - 20)
    assert source_count(client) == before + notes
    assert top(client, "crate numbered 710 plum jam")["title"] == "Pantry crate 101"


def test_the_upload_route_reads_an_export_like_the_cli(client: httpx.Client, tmp_path: Path) -> None:
    # fixed date: each export's own past times, read as written
    clippings = gen.write_kindle(tmp_path)
    r = client.post("/v1/imports", data={"tz": "America/New_York"},
                    files={"file": ("My Clippings.txt", clippings.read_bytes(), "text/plain")})
    assert r.status_code == 202, r.text
    body = r.json()
    # Another zone than the CLI's run: other times, so new versions of the same highlights.
    assert (body["format"], body["imported"], body["duplicates"]) == ("kindle", 2, 1)
    wait_jobs(client, [j["job_id"] for j in body["jobs"]])
    hit = top(client, "hare sat in her form like a stone")
    assert at(hit["captured_at"]) == datetime(2024, 6, 15, 11, 12, 45, tzinfo=UTC)
    again = client.post("/v1/imports", data={"tz": "America/New_York"},
                        files={"file": ("My Clippings.txt", clippings.read_bytes(), "text/plain")}).json()
    assert (again["imported"], again["unchanged"]) == (0, 2)


def test_five_hundred_keep_notes_made_in_the_same_microsecond_are_five_hundred_sources(
        service: Service, client: httpx.Client, tmp_path: Path) -> None:
    """Keep gives a note no id; its creation time names it no better (a script, a sync, a restore makes many in one
    microsecond): each note is named by its file, so none is merged into another and none ends 'superseded'."""
    def pantry_labels() -> set[str]:
        ids: set[str] = set()
        for offset in range(0, 5000, 500):
            page = client.get("/v1/sources", params={"limit": 500, "offset": offset}).json()["sources"]
            ids |= {s["source_id"] for s in page if s["title"] == "Pantry label"}
            if len(page) < 500:
                return ids
        return ids

    summary = run_import(service, gen.write_same_time_keep_notes(tmp_path / "same-time", 500))
    assert (summary["imported"], summary["superseded"], summary["duplicates"], summary["failed"]) == (500, 0, 0, []), \
        {k: v for k, v in summary.items() if k != "skipped"}
    assert len(pantry_labels()) == 500
    assert any("the 300th jar" in h["text"] for h in hits(client, "300th quince jelly", mode="sparse"))
