"""Honest answers through a real ``secondbrain up`` (no model): the reproductions of a near miss answered as
if it were the thing, repeated events shown as an update, a weekday still to come glossed as the one gone, and
"not found" said of an amount that was found; and what was done, asked with "did", as events."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.harness import Service, run_cli, running_up

pytestmark = pytest.mark.e2e
# fixed date: every note is captured, and every question asked, at a fixed time (--captured-at, --as-of)
NOTES = [
    ("Flights to Porto cost 184 pounds return.", "2026-11-02T09:00:00+00:00"),
    ("Ran 5k in Victoria Park.", "2026-10-04T08:00:00+00:00"),
    ("Ran 5k again, 26 minutes.", "2026-10-11T08:00:00+00:00"),
    ("Easy 5k run along the canal.", "2026-10-25T08:00:00+00:00"),
    ("The electrician can come on Monday to fix the kitchen lights.", "2026-11-19T10:00:00+00:00"),
    ("Gave Priya £20 for the taxi home.", "2026-11-20T23:00:00+00:00"),
]
AS_OF = "2026-11-22T12:00:00+00:00"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_up(tmp_path_factory, "sb-answers-", {}, "--no-llm") as svc:
        yield svc


@pytest.fixture(scope="module")
def env(service: Service) -> dict[str, str]:
    env = {"SB_URL": service.url, "TZ": "UTC"}
    for text, when in NOTES:
        done = run_cli(["ingest", "--note", text, "--captured-at", when], env)
        assert done.returncode == 0, done.stderr
    return env


def ask(env: dict[str, str], question: str) -> dict[str, object]:
    res = run_cli(["ask", question, "--json", "--as-of", AS_OF], env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_near_miss_says_what_it_did_not_find(env: dict[str, str]) -> None:
    body = ask(env, "How much was the hotel in Porto?")
    answer = str(body["answer"])
    assert answer.startswith("I could not find anything about \u201chotel in Porto\u201d"), answer
    assert "The closest I found: Flights to Porto cost 184 pounds return." in answer, answer


def test_repeated_runs_are_counted_and_listed_with_their_dates(env: dict[str, str]) -> None:
    # fixed date: the notes are captured and the question asked at fixed times (--captured-at, --as-of)
    answer = str(ask(env, "How many times did I run in October?")["answer"])
    assert answer.startswith("3 times:"), answer
    assert "earlier" not in answer, answer
    positions = [answer.find(s) for s in ("Victoria Park", "26 minutes", "canal")]
    assert -1 not in positions and positions == sorted(positions), answer
    assert all(d in answer for d in ("October 4, 2026", "October 11, 2026", "October 25, 2026")), answer


def test_a_weekday_still_to_come_is_glossed_as_the_coming_one(env: dict[str, str]) -> None:
    # fixed date: the note is captured on a fixed Thursday and the question asked at a fixed time
    answer = str(ask(env, "When can the electrician come?")["answer"])
    assert "\u201con Monday\u201d = Mon, November 23, 2026" in answer, answer
    assert "November 16" not in answer, answer


def test_an_amount_answers_a_question_about_money(env: dict[str, str]) -> None:
    body = ask(env, "How much money did I give Priya?")
    answer = str(body["answer"])
    assert "\u00a320" in answer and "could not find" not in answer, answer


def test_what_was_done_is_each_event_dated_and_the_last_is_the_newest(env: dict[str, str]) -> None:
    # fixed date: the notes are captured and the question asked at fixed times (--captured-at, --as-of)
    answer = str(ask(env, "When did I run in October?")["answer"])
    assert "earlier" not in answer, answer  # separate runs, not an old and a new value of one fact
    positions = [answer.find(d) for d in ("October 4, 2026", "October 11, 2026", "October 25, 2026")]
    assert -1 not in positions and positions == sorted(positions), answer
    last = str(ask(env, "When did I last run?")["answer"])
    assert "October 25, 2026" in last and "October 4" not in last and "October 11" not in last, last
