"""Holidays, seasons and numeric dates in questions over HTTP: /v1/search and /v1/ask show the window
read in the user's zone and locale (the request's, else the server's settings) in their plan meta."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.settings import Settings
from tests.pg import base_dsn, fresh_database
from tests.query_corpus import ask
from tests.serving import serve_in_thread

NOW = "2026-11-18T15:30:00-05:00"  # a Wednesday in New York


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with base_dsn() as base, fresh_database(base) as dsn:
        # The server's own settings: a Londoner (day first, UK holidays) unless a request says otherwise.
        settings = Settings(data_dir=tmp_path_factory.mktemp("time-words"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                            timezone="Europe/London", locale="en_GB", kafka_bootstrap="127.0.0.1:9",
                            default_user="dana", auth="off")  # keys are tested in test_auth.py
        rt = build_runtime(settings, vectors=True, models=True)
        try:
            with serve_in_thread(create_app(rt, gateway=False, query=True)) as (url, _port):
                yield url
        finally:
            rt.close()


def search(server: str, q: str, **params: str) -> dict[str, Any]:
    r = httpx.get(f"{server}/v1/search", params={"q": q, "now": NOW, **params}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize(("question", "start", "end", "description"), [
    ("What did I note on Christmas Eve?", "2025-12-24T00:00:00-05:00", "2025-12-25T00:00:00-05:00",
     "Wed 24 Dec 2025, 00:00 \u2013 Thu 25 Dec 2025, 00:00 (America/New_York)"),
    ("what did I write last summer?", "2026-06-01T00:00:00-04:00", "2026-09-01T00:00:00-04:00",
     "Mon 1 Jun 2026, 00:00 \u2013 Tue 1 Sep 2026, 00:00 (America/New_York)"),
    ("what did I save on 3/12?", "2026-03-12T00:00:00-04:00", "2026-03-13T00:00:00-04:00",
     "Thu 12 Mar 2026, 00:00 \u2013 Fri 13 Mar 2026, 00:00 (America/New_York)"),
])
def test_search_reads_the_question_in_the_requests_zone_and_locale(server: str, question: str, start: str, end: str,
                                                                  description: str) -> None:
    meta = search(server, question, tz="America/New_York", locale="en_US")
    assert meta["time_range"]["start"] == start and meta["time_range"]["end"] == end
    assert meta["understood"]["description"] == description
    assert meta["calendar"] == {"country": "US", "hemisphere": "north", "date_order": "mdy"}
    if "3/12" in question:
        assert meta["time_range"]["field"] == "ingested_at"
        assert meta["understood"]["ambiguous"] == {"text": "3/12", "chosen": "2026-03-12", "other": "2025-12-03",
                                                   "order": "mdy"}
    else:
        assert "ambiguous" not in meta["understood"]


def test_without_a_locale_the_servers_settings_read_the_date(server: str) -> None:
    meta = search(server, "what did I save on 3/12?")  # Europe/London, en_GB: 3 December
    assert meta["time_range"]["start"] == "2025-12-03T00:00:00+00:00"
    assert meta["understood"]["ambiguous"]["order"] == "dmy"
    assert meta["calendar"] == {"country": "GB", "hemisphere": "north", "date_order": "dmy"}
    mothers = search(server, "what did I write on Mother's Day?")  # Mothering Sunday in the UK
    assert mothers["time_range"]["start"] == "2026-03-15T00:00:00+00:00"


def test_a_request_may_name_its_country_hemisphere_and_date_order(server: str) -> None:
    south = search(server, "what did I write last summer?", tz="Australia/Sydney", locale="en-AU")
    assert (south["time_range"]["start"], south["time_range"]["end"]) == ("2025-12-01T00:00:00+11:00",
                                                                          "2026-03-01T00:00:00+11:00")
    us_order = search(server, "what did I save on 3/12?", date_order="mdy")  # a London setting, month first
    assert us_order["time_range"]["start"] == "2026-03-12T00:00:00+00:00"
    canada = search(server, "notes from Thanksgiving", country="CA")
    assert canada["time_range"]["start"] == "2026-10-12T00:00:00+01:00"  # 2nd Monday of October
    for bad in ({"country": "U1"}, {"hemisphere": "east"}, {"date_order": "dym"}):
        assert httpx.get(f"{server}/v1/search", params={"q": "x", **bad}).status_code == 422


def test_ask_streams_the_same_reading_in_its_meta(server: str) -> None:
    events = ask(server, "what did I save on 3/12?", tz="America/New_York", now=NOW, locale="en_US")
    name, meta = events[0]
    assert name == "meta"
    assert meta["time_range"]["start"] == "2026-03-12T00:00:00-04:00"
    assert meta["understood"]["ambiguous"]["chosen"] == "2026-03-12"
    assert httpx.post(f"{server}/v1/ask", json={"question": "x", "hemisphere": "up"}).status_code == 422


def test_the_cli_sends_the_machines_date_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli.asking import _local_locale

    for var in ("LC_ALL", "LC_TIME", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert _local_locale() is None
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("LC_TIME", "en_GB.UTF-8")  # dates are written the British way on this machine
    assert _local_locale() == "en_GB"
    monkeypatch.setenv("LC_ALL", "C.UTF-8")  # overrides everything and says nothing about the user
    assert _local_locale() is None
