"""A Google Calendar export imported through a running ``secondbrain up`` with the real CLI: each event is
searchable and dated when it happens (its own zone, all-day events on their day), a recurring event is one
source whose occurrences the agenda shows (the moved one moved, the cancelled ones absent), and a second run
adds nothing."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools import gen_exports as gen
from tests.e2e.harness import Service, run_cli, running_up

pytestmark = pytest.mark.e2e

NOW = datetime.now(UTC)  # the calendar is written around today: recurring events are expanded around the import
TIMES = gen.calendar_times(gen.calendar_anchor(NOW))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_up(tmp_path_factory, "sb-ics-", {"SB_TIMEZONE": "Europe/London"}) as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gen.write_calendar(tmp_path_factory.mktemp("calendar"), NOW)


def run_import(service: Service, path: Path) -> dict[str, Any]:
    done = run_cli(["import", str(path), "--json"], {"SB_URL": service.url}, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def first_run(service: Service, export: Path) -> dict[str, Any]:
    return run_import(service, export)


def hits(client: httpx.Client, query: str) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": query, "k": 10})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_the_calendar_is_imported_and_what_was_cancelled_is_said(first_run: dict[str, Any]) -> None:
    assert (first_run["format"], first_run["imported"], first_run["pending"]) == ("ics", 6, 0), first_run
    assert not first_run["failed"]
    assert [s["reason"] for s in first_run["skipped"]] == ["cancelled in the calendar"]  # the dinner


@pytest.mark.parametrize(("question", "title", "when"), [
    ("when did I last see Dr. Osei?", "Check-up with Dr. Osei", TIMES["osei"]),
    ("Lena's birthday picnic on Primrose Hill", "Lena's birthday picnic", TIMES["picnic"]),
    ("call with Kenji about the Kyoto print run paper stock", "Call with Kenji about the Kyoto print run",
     TIMES["kenji"]),
    ("graduation ceremony at Senate House", "Graduation ceremony", TIMES["graduation"]),
])
def test_each_event_is_found_at_the_time_it_happens(client: httpx.Client, first_run: dict[str, Any], question: str,
                                                    title: str, when: datetime) -> None:
    top = hits(client, question)[0]
    assert top["title"] == title
    assert at(top["captured_at"]) == when


def test_a_weekly_event_is_one_source_and_the_agenda_has_each_occurrence_the_moved_one_moved(
        client: httpx.Client, first_run: dict[str, Any]) -> None:
    found = [h for h in hits(client, "physio with Marta at the physio hub") if h["title"] == "Physio with Marta"]
    assert len({h["source_id"] for h in found}) == 1
    moved = hits(client, "physio at Camden while Marta is at a course")[0]
    assert moved["title"] == "Physio with Marta" and "Camden Physio Hub" in moved["text"]
    week = timedelta(weeks=1)
    r = client.get("/v1/agenda", params={"from": (TIMES["physio"] - timedelta(days=1)).isoformat(),
                                         "to": (TIMES["physio"] + 9 * week).isoformat(), "tz": "Europe/London"})
    starts = [at(e["start"]) for d in r.json()["days"] for e in d["events"] if e["quote"] == "Physio with Marta"]
    assert starts == [TIMES["physio"], TIMES["physio"] + week, TIMES["physio_moved"], TIMES["physio"] + 3 * week,
                      TIMES["physio"] + 6 * week, TIMES["physio"] + 7 * week]


def test_a_second_run_adds_nothing(service: Service, client: httpx.Client, export: Path,
                                   first_run: dict[str, Any]) -> None:
    before = len(client.get("/v1/sources", params={"limit": 500}).json()["sources"])
    again = run_import(service, export)
    assert (again["imported"], again["already_imported"]) == (0, 6), again
    assert len(client.get("/v1/sources", params={"limit": 500}).json()["sources"]) == before


def test_the_web_page_s_upload_reads_the_same_calendar(client: httpx.Client, export: Path,
                                                         first_run: dict[str, Any]) -> None:
    """An .ics dropped on the page goes to POST /v1/imports: the same events, nothing new."""
    with zipfile.ZipFile(export) as z:
        ics = z.read("sam.rivera@example.org.ics")
    r = client.post("/v1/imports", data={"tz": "Europe/London"},
                    files={"file": ("sam.rivera@example.org.ics", ics, "text/calendar")})
    assert r.status_code == 202, r.text
    body = r.json()
    assert (body["format"], body["imported"], body["unchanged"]) == ("ics", 0, 6), body
