"""Temporal understanding of questions: the gold suite at 100 %, plus calendar properties."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.temporal import case_errors
from bench.temporal_suite import CASES
from services.query.temporal import TimeWindow, describe, parse_time, understand

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
REF = datetime(2026, 11, 18, 15, 30, tzinfo=PARIS)  # a Wednesday

# --------------------------------------------------------------------------- the gold suite is the spec


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}:{c.question}" for c in CASES])
def test_gold_case(case):
    assert case_errors(case) == []


def test_gold_suite_is_large_and_varied():
    assert len(CASES) >= 120
    assert sum(not c.has_time for c in CASES) >= 15  # negatives
    assert {c.tz for c in CASES} >= {"Europe/Paris", "America/New_York"}
    assert len({c.family for c in CASES}) >= 12


# --------------------------------------------------------------------------- API details


def test_window_reports_words_and_span_as_written():
    q = "What did I SAVE about the budget Last Tuesday?"
    u = understand(q, REF, PARIS)
    assert u.time is not None
    assert u.time.expression == "Last Tuesday"
    assert q[u.time.span[0]:u.time.span[1]] == "Last Tuesday"
    assert (u.query_class, u.semantic_query, u.time.field) == ("temporal+semantic", "budget", "ingested_at")
    assert u.time.start == datetime(2026, 11, 17, tzinfo=PARIS)
    assert u.time.start.tzinfo is PARIS and u.time.end is not None and u.time.end.tzinfo is PARIS


def test_describe_formats_closed_open_and_vague_windows():
    w = parse_time("last Tuesday", REF, PARIS)
    assert w is not None
    assert describe(w, PARIS) == "Tue 17 Nov 2026, 00:00 \u2013 Wed 18 Nov 2026, 00:00 (Europe/Paris)"
    since = parse_time("since Monday", REF, PARIS)
    assert since is not None
    assert describe(since, PARIS) == "Mon 16 Nov 2026, 00:00 \u2013 Wed 18 Nov 2026, 15:30 (Europe/Paris)"
    before = parse_time("before March 2024", REF, PARIS)
    assert before is not None and describe(before, PARIS) == "before Fri 1 Mar 2024, 00:00 (Europe/Paris)"
    after = parse_time("after 2024-06-30", REF, PARIS)
    assert after is not None and describe(after, PARIS) == "from Mon 1 Jul 2024, 00:00 on (Europe/Paris)"
    vague = parse_time("recently", REF, PARIS)
    assert vague is not None and describe(vague, PARIS).startswith("roughly Mon 19 Oct 2026, 15:30")
    # describe() shows the window in the zone it is asked for
    assert describe(w, NEW_YORK) == "Mon 16 Nov 2026, 18:00 \u2013 Tue 17 Nov 2026, 18:00 (America/New_York)"


def test_every_time_expression_leaves_the_semantic_query():
    u = understand("recently saved notes on kubernetes from last week's workshop", REF, PARIS)
    assert u.time is not None and u.time.expression == "from last week" and not u.time.vague
    assert u.semantic_query == "notes kubernetes workshop"  # "recently" and "'s" are gone too


def test_semantic_question_keeps_its_words():
    u = understand("How does the retry policy work?", REF, PARIS)
    assert (u.query_class, u.time, u.semantic_query) == ("semantic", None, "retry policy work")
    # nothing but scaffolding: keep the question rather than search for nothing
    assert understand("what did I save?", REF, PARIS).semantic_query == "what did I save?"


def test_week_start_is_a_parameter():
    monday = parse_time("this week", REF, PARIS)
    sunday = parse_time("this week", REF, PARIS, week_start=6)
    assert monday is not None and sunday is not None
    assert monday.start == datetime(2026, 11, 16, tzinfo=PARIS)
    assert sunday.start == datetime(2026, 11, 15, tzinfo=PARIS)
    with pytest.raises(ValueError):
        parse_time("this week", REF, PARIS, week_start=7)


def test_now_is_read_in_the_users_zone():
    # 23:30 UTC on 17 Nov is already 18 Nov in Paris: "today" is the 18th there.
    utc_now = datetime(2026, 11, 17, 23, 30, tzinfo=UTC)
    w = parse_time("today", utc_now, PARIS)
    assert w is not None and w.start == datetime(2026, 11, 18, tzinfo=PARIS)
    # a naive "now" is taken as the user's wall clock
    naive = parse_time("today", datetime(2026, 11, 18, 0, 30), PARIS)
    assert naive is not None and naive.start == datetime(2026, 11, 18, tzinfo=PARIS)


def test_earlier_this_week_on_the_first_day_means_earlier_today():
    monday_noon = datetime(2026, 11, 16, 12, 0, tzinfo=PARIS)
    w = parse_time("earlier this week", monday_noon, PARIS)
    assert w is not None and (w.start, w.end) == (datetime(2026, 11, 16, tzinfo=PARIS), monday_noon)


def test_weekday_on_its_own_day_is_the_previous_one_unless_today_is_said():
    wednesday = parse_time("on Wednesday", REF, PARIS)
    assert wednesday is not None and wednesday.start == datetime(2026, 11, 11, tzinfo=PARIS)
    today = parse_time("today", REF, PARIS)
    assert today is not None and today.start == datetime(2026, 11, 18, tzinfo=PARIS)


def test_rolling_hours_are_real_hours_inside_the_repeated_hour():
    # 25 Oct 2026, Paris: clocks go back at 03:00 CEST (01:00 UTC), so 02:00-03:00 happens twice.  At the
    # second 02:30 (01:30 UTC) the past hour began at the first 02:30 (00:30 UTC): same wall clock, not empty.
    second_0230 = datetime(2026, 10, 25, 1, 30, tzinfo=UTC).astimezone(PARIS)
    assert second_0230.fold == 1 and second_0230.hour == 2
    w = parse_time("the past hour", second_0230, PARIS)
    assert w is not None and w.start is not None and w.end is not None
    assert w.start.astimezone(UTC) == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert w.end.astimezone(UTC) == datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    ago = parse_time("an hour ago", second_0230, PARIS)  # the clock hour of the first 02:30
    assert ago is not None and ago.start is not None and ago.end is not None
    assert (ago.start.astimezone(UTC), ago.end.astimezone(UTC)) == (datetime(2026, 10, 25, 0, 0, tzinfo=UTC),
                                                                    datetime(2026, 10, 25, 1, 0, tzinfo=UTC))


# --------------------------------------------------------------------------- properties

# Zones where local midnight always exists (no DST change at 00:00), so day boundaries are exactly 00:00.
MIDNIGHT_ZONES = ["Europe/Paris", "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Tokyo",
                  "Asia/Kolkata", "UTC"]
# Plus awkward ones: DST changes at midnight (Santiago, Havana, Sao Paulo until 2019), a 30-minute DST
# (Lord Howe), +13:45 (Chatham).
ALL_ZONES = [*MIDNIGHT_ZONES, "America/Santiago", "America/Havana", "America/Sao_Paulo", "Australia/Lord_Howe",
             "Pacific/Chatham"]

EXPRESSIONS = sorted({c.question for c in CASES if c.has_time} | {
    "the week after next", "the next few days", "later today", "so far this month", "since the 3rd",
    "between Tuesday and Monday", "from December to January", "H2 2025", "the 20s", "2 hours ago",
    "from March to May", "since Q3", "on 31 March", "the first week of February", "late last year",
})
# Expressions whose window is made of whole local days.
DAY_GRAIN = [
    "today", "yesterday", "tomorrow", "the day before yesterday", "on Tuesday", "last Friday", "next Monday",
    "this Sunday", "Tuesday last week", "this week", "last week", "next week", "the week before last",
    "last weekend", "this weekend", "this month", "last month", "in November", "in March", "last March",
    "on 3 March", "March 3rd", "on the 31st", "on 29 Feb", "Q1 2024", "in Q3", "last quarter", "H2 2025",
    "in 2023", "last year", "the 1990s", "two days ago", "3 weeks ago", "a month ago", "5 years ago",
    "between March and May 2024", "from Monday to Wednesday", "early March", "at the end of last month",
    "the other day", "the week of March 3", "3-5 March", "the last week of October",
]
WEEK_STARTS = st.integers(min_value=0, max_value=6)


@st.composite
def instants(draw: st.DrawFn, zones: list[str] = ALL_ZONES) -> tuple[datetime, ZoneInfo]:
    """A reference instant between 2001 and 2037 in one of ``zones``, often near midnight or a DST change."""
    tz = ZoneInfo(draw(st.sampled_from(zones)))
    moment = draw(st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2037, 12, 31)))
    if draw(st.booleans()):
        moment = moment.replace(hour=draw(st.sampled_from([0, 1, 2, 3, 23])), minute=draw(st.sampled_from([0, 30])))
    return moment.replace(tzinfo=UTC).astimezone(tz), tz


def _local_midnight(dt: datetime, tz: ZoneInfo) -> bool:
    return dt.astimezone(tz).time() == time(0)


def _elapsed(a: datetime, b: datetime) -> timedelta:
    """Real time between two instants (``b - a`` on datetimes sharing a tzinfo would give wall-clock time)."""
    return b.astimezone(UTC) - a.astimezone(UTC)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instants(), st.sampled_from(EXPRESSIONS), WEEK_STARTS)
def test_windows_are_ordered_and_in_the_users_zone(ref, text, week_start):
    now, tz = ref
    w = parse_time(text, now, tz, week_start=week_start)
    assert w is not None, text
    assert w.start is not None or w.end is not None
    if w.start is not None and w.end is not None:
        assert _elapsed(w.start, w.end) > timedelta(0)
    for end in (w.start, w.end):
        assert end is None or end.tzinfo is tz


@settings(max_examples=1000, deadline=None)
@given(instants(MIDNIGHT_ZONES), st.sampled_from(DAY_GRAIN), WEEK_STARTS)
def test_day_granular_windows_start_and_end_at_local_midnight(ref, text, week_start):
    now, tz = ref
    w = parse_time(text, now, tz, week_start=week_start)
    assert w is not None and w.start is not None and w.end is not None, text
    assert _local_midnight(w.start, tz) and _local_midnight(w.end, tz), (text, w.start, w.end)
    days = (w.end.astimezone(tz).date() - w.start.astimezone(tz).date()).days
    # The length follows the calendar, not 24 h multiples: it only differs by the DST offset change.
    assert _elapsed(w.start, w.end) == timedelta(days=days) - (w.end.utcoffset() - w.start.utcoffset())  # type: ignore[operator]


@settings(max_examples=500, deadline=None)
@given(instants(["Europe/Paris", "America/New_York", "Australia/Sydney", "Europe/London"]))
def test_a_day_lasts_23_24_or_25_hours(ref):
    now, tz = ref
    w = parse_time("today", now, tz)
    assert w is not None and w.start is not None and w.end is not None
    hours = _elapsed(w.start, w.end) / timedelta(hours=1)
    changed = w.start.utcoffset() != w.end.utcoffset()
    assert hours in ((23.0, 25.0) if changed else (24.0,))
    assert w.start.timestamp() <= now.timestamp() < w.end.timestamp()


def _dst_days(tz: ZoneInfo, years: range) -> list[date]:
    out = []
    for year in years:
        d = date(year, 1, 1)
        while d.year == year:
            a = datetime.combine(d, time(0), tzinfo=tz).utcoffset()
            b = datetime.combine(d + timedelta(days=1), time(0), tzinfo=tz).utcoffset()
            if a != b:
                out.append(d)
            d += timedelta(days=1)
    return out


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_every_dst_change_day_is_23_or_25_hours(zone):
    tz = ZoneInfo(zone)
    days = _dst_days(tz, range(2020, 2031))
    assert len(days) == 22  # two changes a year
    lengths = set()
    for d in days:
        noon = datetime.combine(d, time(12), tzinfo=tz)
        for text, ref in (("today", noon), ("yesterday", noon + timedelta(days=1))):
            w = parse_time(text, ref, tz)
            assert w is not None and w.start is not None and w.end is not None
            assert w.start.astimezone(tz).date() == d and _local_midnight(w.start, tz) and _local_midnight(w.end, tz)
            lengths.add(_elapsed(w.start, w.end) / timedelta(hours=1))
    assert lengths == {23.0, 25.0}


def test_a_day_without_midnight_starts_when_the_day_does():
    # America/Santiago skips 00:00-01:00 on 6 Sep 2026: the day starts at 01:00 and lasts 23 h.
    tz = ZoneInfo("America/Santiago")
    w = parse_time("today", datetime(2026, 9, 6, 12, tzinfo=tz), tz)
    assert w is not None and w.start is not None and w.end is not None
    assert w.start.astimezone(tz).time() == time(1) and _elapsed(w.start, w.end) == timedelta(hours=23)


@settings(max_examples=300, deadline=None)
@given(instants(), st.sampled_from(EXPRESSIONS))
def test_parsing_is_deterministic(ref, text):
    now, tz = ref
    first = understand(text, now, tz)
    understand("between March and May 2024 since Tuesday", now - timedelta(days=400), ZoneInfo("Asia/Tokyo"))
    assert understand(text, now, tz) == first


# Ordinary words, including traps that look temporal: no month or day names, no time units.
def _words(text: str) -> list[str]:
    return text.split()


PLAIN_WORDS = _words("""
the a an of to in on at by for from with about since before after until between and or but not
last next this past previous early late mid end beginning start first second third half fourth
ago back few several couple other one two three ten twenty version report budget roadmap invoice
meeting notes photo trip contract deck pipeline step merger kubernetes rust python alice bob marc
what did i save show me everything anything stuff show list find upload added imported might
win run march-like weekly daily monthly yearly timeline date data update schedule recency
q h q5 h3 v2 chapter page section figure table ideas plan agenda review draft final
""")


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PLAIN_WORDS) | st.integers(0, 1899).map(str) | st.integers(2100, 99999).map(str),
                min_size=1, max_size=12),
       instants())
def test_text_without_time_words_has_no_window(words, ref):
    now, tz = ref
    text = " ".join(words)
    assert parse_time(text, now, tz) is None, text
    assert understand(text, now, tz).query_class == "semantic"


NOUNS = ["budget", "Alice", "notes", "kubernetes", "report", "the contract", "photos", "roadmap"]


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(EXPRESSIONS), st.lists(st.sampled_from(NOUNS), max_size=3),
       st.lists(st.sampled_from(NOUNS), max_size=3), instants(MIDNIGHT_ZONES))
def test_surrounding_topic_words_do_not_change_the_window(text, before, after, ref):
    now, tz = ref
    alone = parse_time(text, now, tz)
    prefix = " ".join(before) + ". " if before else ""
    question = f"{prefix}{text}. {' '.join(after)}".strip()
    embedded = parse_time(question, now, tz)
    assert alone is not None and embedded is not None
    assert (embedded.start, embedded.end, embedded.vague) == (alone.start, alone.end, alone.vague)
    assert embedded.span == (alone.span[0] + len(prefix), alone.span[1] + len(prefix))
    assert isinstance(embedded, TimeWindow)
