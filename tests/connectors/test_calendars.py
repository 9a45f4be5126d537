"""Refreshing a subscribed calendar from a real HTTP server on loopback, the gateway replaced by a record of
what was sent and deleted: an unchanged feed costs one 304, what the calendar no longer has is deleted, a
recurring event is one source (the records an earlier version made per occurrence are deleted), a failing feed
changes nothing, the secret address is never shown, and no calendar is fetched from a link-local, unspecified or
multicast address, nor through a redirect to one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from connectors.calendars import FeedError, State, feed_key, normalize, refresh, shown
from secondbrain import ids
from tests.e2e.feedserver import Event, Feed, ics, serving

pytestmark = pytest.mark.fast

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
USER = "user-1"
DENTIST = Event("dentist@test", "Dentist", NOW + timedelta(days=3))
DINNER = Event("dinner@test", "Dinner with Ana", NOW - timedelta(days=5))
YOGA_START = NOW - timedelta(weeks=2)
YOGA = Event("yoga@test", "Yoga", YOGA_START, weekly=4)


class Gateway:
    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.deleted: list[str] = []
        self.refuse_deletes = False
        self.refuse: set[str] = set()  # the titles of the events refused (a server error, a limit)

    def send(self, captures: list[Any]) -> list[str]:
        self.sent += captures
        return ["refused" if c.title in self.refuse else "imported" for c in captures]

    def delete(self, source_id: str) -> bool:
        if self.refuse_deletes:
            return False
        self.deleted.append(source_id)
        return True


@pytest.fixture
def feed() -> Iterator[Feed]:
    with serving(Feed()) as f:
        yield f


def run(feed: Feed, state: State, gw: Gateway, now: datetime = NOW) -> Any:
    return refresh(feed.url, state, USER, gw.send, gw.delete, tz=UTC, now=now)


def sid(uri: str) -> str:
    return ids.source_id(USER, uri)


def test_an_unchanged_feed_costs_one_304_and_sends_nothing(feed: Feed, tmp_path: Path) -> None:
    feed.serve(ics([DENTIST, DINNER, YOGA]))
    state, gw = State(tmp_path / "s.json"), Gateway()
    first = run(feed, state, gw)
    assert (first.events, first.removed, len(gw.sent)) == (3, 0, 3)  # two events and one weekly series
    again = run(feed, State(tmp_path / "s.json"), gw)  # read back from the file
    assert again.unchanged and len(gw.sent) == 3 and feed.not_modified == 1


def test_what_the_calendar_no_longer_has_is_deleted(feed: Feed, tmp_path: Path) -> None:
    feed.serve(ics([DENTIST, DINNER, YOGA]))
    state, gw = State(tmp_path / "s.json"), Gateway()
    run(feed, state, gw)
    third = YOGA_START + timedelta(weeks=2)
    feed.serve(ics([Event(DENTIST.uid, DENTIST.summary, DENTIST.start, status="CANCELLED"),
                    Event(YOGA.uid, YOGA.summary, YOGA.start, weekly=4, exdates=(third,))]))  # dinner deleted
    second = run(feed, state, gw)
    assert second.removed == 2
    assert sorted(gw.deleted) == sorted([sid("import:ics:dentist@test"), sid("import:ics:dinner@test")])
    # The series is still one source: an occurrence taken out is a new version of it, not a deletion.
    (yoga,) = [c for c in gw.sent[3:] if c.title == "Yoga"]
    assert yoga.source_uri == "import:ics:yoga@test" and "Not on:" in yoga.data().decode()


def test_the_records_an_earlier_version_made_per_occurrence_give_way_to_the_series(feed: Feed,
                                                                                 tmp_path: Path) -> None:
    feed.serve(ics([YOGA]))
    path = tmp_path / "s.json"
    old = [f"import:ics:yoga@test/{(YOGA_START + timedelta(weeks=n)).isoformat()}" for n in range(4)]
    path.write_text(json.dumps({"version": 1, "feeds": {feed_key(feed.url): {"sources": {
        uri: {"at": None, "series": True} for uri in old}}}}))  # what the state file held before
    gw = Gateway()
    done = run(feed, State(path), gw)
    assert done.removed == 4 and sorted(gw.deleted) == sorted(sid(u) for u in old)
    assert [c.source_uri for c in gw.sent] == ["import:ics:yoga@test"]


def test_a_refused_delete_is_tried_again_next_time(feed: Feed, tmp_path: Path) -> None:
    feed.serve(ics([DENTIST, DINNER]))
    state, gw = State(tmp_path / "s.json"), Gateway()
    run(feed, state, gw)
    feed.serve(ics([DINNER]))
    gw.refuse_deletes = True
    assert run(feed, state, gw).failed
    gw.refuse_deletes = False
    assert run(feed, state, gw).removed == 1  # read again (no 304): the validators were not kept
    assert gw.deleted == [sid("import:ics:dentist@test")]


def test_a_refused_event_is_sent_again_next_time(feed: Feed, tmp_path: Path) -> None:
    feed.serve(ics([DENTIST, DINNER]))
    state, gw = State(tmp_path / "s.json"), Gateway()
    gw.refuse = {"Dentist"}
    assert run(feed, state, gw).refused == 1
    gw.refuse = set()
    again = run(feed, state, gw)  # read again (no 304): the validators were not kept
    assert not again.unchanged and again.refused == 0 and feed.not_modified == 0
    assert [c.title for c in gw.sent].count("Dentist") == 2
    assert run(feed, state, gw).unchanged  # all taken: the next refresh costs a 304


@pytest.mark.parametrize(("status", "body", "said"), [
    (404, b"", r"answered HTTP 404 \(the address may have been reset"),
    (200, b"<html>Sign in</html>", "did not send a calendar"),
    (500, b"", "answered HTTP 500"),
])
def test_a_failing_feed_changes_nothing(feed: Feed, tmp_path: Path, status: int, body: bytes, said: str) -> None:
    feed.serve(ics([DENTIST, DINNER]))
    state, gw = State(tmp_path / "s.json"), Gateway()
    run(feed, state, gw)
    feed.serve(body)
    feed.status = status
    with pytest.raises(FeedError, match=said) as err:
        run(feed, state, gw)
    assert "secret-8c1f" not in str(err.value) and not gw.deleted and len(gw.sent) == 2


def test_addresses(tmp_path: Path) -> None:
    assert normalize("webcal://p01-caldav.icloud.com/published/2/abc") == "https://p01-caldav.icloud.com/published/2/abc"
    assert normalize("http://192.168.1.20/cal.ics").startswith("http://")
    for bad in ("http://calendar.google.com/calendar/ical/x/private-abc/basic.ics", "ftp://x/y", "file:///etc/x"):
        with pytest.raises(ValueError) as err:
            normalize(bad)
        assert "private-abc" not in str(err.value)
    assert shown("https://calendar.google.com/calendar/ical/me/private-abc/basic.ics") == "https://calendar.google.com/…"


def test_a_server_that_does_not_answer_is_reported(tmp_path: Path) -> None:
    import socket

    with socket.socket() as quiet:  # accepts the connection, never answers
        quiet.bind(("127.0.0.1", 0))
        quiet.listen()
        url = f"http://127.0.0.1:{quiet.getsockname()[1]}/secret.ics"
        from connectors.calendars import fetch

        with pytest.raises(FeedError, match="did not answer within 1 s"):
            fetch(url, etag=None, last_modified=None, timeout_s=1)


# --------------------------------------------------------------------------- where a calendar may be fetched from


@pytest.mark.parametrize(("address", "says"), [
    ("http://169.254.169.254/latest/meta-data/cal.ics", "link-local"),
    ("https://169.254.169.254/latest/meta-data/cal.ics", "link-local"),
    ("webcal://169.254.169.254/cal.ics", "link-local"),
    ("http://[fe80::1]/cal.ics", "link-local"),
    ("https://[fe80::1]:8443/cal.ics", "link-local"),
    ("http://0.0.0.0:8000/cal.ics", "unspecified"),
    ("https://[::]/cal.ics", "unspecified"),
    ("http://0x0/cal.ics", "unspecified"),
    ("https://224.0.0.251/cal.ics", "multicast"),
    ("https://[ff02::1]/cal.ics", "multicast"),
    ("https://[::ffff:169.254.169.254]/cal.ics", "link-local"),
])
def test_link_local_unspecified_and_multicast_addresses_are_refused_whatever_the_scheme(address: str,
                                                                                        says: str) -> None:
    with pytest.raises(ValueError, match=says) as err:
        normalize(address)
    assert "SB_CALENDAR_ALLOW_HOSTS" in str(err.value) and "meta-data" not in str(err.value)
    host = address.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[0] if "]" not in address else \
        address.split("[", 1)[1].split("]", 1)[0]
    assert normalize(address, [host]).startswith(("http://", "https://"))  # the operator allows it by name
    assert normalize("http://127.0.0.1:8080/cal.ics") and normalize("http://10.0.0.5/cal.ics")  # a NAS, a test


def test_a_name_that_leads_to_a_link_local_address_is_refused_when_it_is_looked_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from connectors.calendars import fetch

    real = socket.getaddrinfo

    def lookup(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "calendar.attacker.example":  # a name the attacker points wherever they like
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 443))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    with pytest.raises(FeedError, match=r"calendar\.attacker\.example is at a link-local address"):
        fetch("https://calendar.attacker.example/cal.ics", etag=None, last_modified=None, timeout_s=2)


def test_every_redirect_is_checked_before_it_is_followed(tmp_path: Path) -> None:
    from connectors.calendars import fetch
    from devtools.loopback import LoopbackSite, QuietHandler

    asked: list[str] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            hops = {"/first": "/second", "/second": "/third",
                    "/third": "http://169.254.169.254/latest/meta-data/iam/cal.ics",
                    "/plain": "http://calendar.example.org/cal.ics", "/good": "/cal.ics"}
            if self.path in hops:
                self.reply(302, "text/plain", b"", {"Location": hops[self.path]})
                return
            self.reply(200, "text/calendar", ics([DENTIST]))

    site = LoopbackSite(Handler)
    try:
        with pytest.raises(FeedError, match=r"sent the request on to http://169\.254\.169\.254/…; refused") as err:
            fetch(f"{site.base}/first", etag=None, last_modified=None)
        assert "meta-data" not in str(err.value) and asked == ["/first", "/second", "/third"]
        with pytest.raises(FeedError, match="HTTPS only"):
            fetch(f"{site.base}/plain", etag=None, last_modified=None)  # a public host over plain HTTP
        assert fetch(f"{site.base}/good", etag=None, last_modified=None).body == ics([DENTIST])
    finally:
        site.close()
