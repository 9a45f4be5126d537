"""Temporal understanding of questions: the gold suite at 100 %, plus calendar properties."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.temporal_suite import CASES, case_errors
from secondbrain.temporal import Conventions, TimeWindow, describe, parse_time, understand
from secondbrain.temporal.calendar import easter, feast_days, nth_in, nth_weekday, orthodox_easter, season_days
from services.query.engine import QueryEngine
from tests.examples import examples

pytestmark = pytest.mark.fast  # no services: in the fast lane

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
REF = datetime(2026, 11, 18, 15, 30, tzinfo=PARIS)  # a Wednesday

# --------------------------------------------------------------------------- the gold suite is the spec


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}:{c.question}" for c in CASES])
def test_gold_case(case):
    assert case_errors(case) == []


def test_gold_suite_is_large_and_varied():
    assert len(CASES) >= 300
    assert sum(not c.has_time for c in CASES) >= 40  # negatives
    assert {c.tz for c in CASES} >= {"Europe/Paris", "America/New_York", "Europe/London", "Australia/Sydney"}
    assert len({c.family for c in CASES}) >= 15
    new = [c for c in CASES if c.family in ("holiday", "season", "numeric")]
    assert len(new) >= 80 and all(sum(not c.has_time for c in new if c.family == f) >= 5
                                  for f in ("holiday", "season", "numeric"))
    assert {c.locale for c in new} >= {"en_US", "en_GB", "en_AU", "de_DE"}  # both date orders, both hemispheres


# The families where a new user's past-leaning questions were read wrongly with confidence.
FAMILIES = ("weeks-back", "weekday-of", "day-of-month", "quarter-half", "decade", "recurring-event")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_is_read_whole_in_part_and_as_no_time_at_several_moments(family):
    cases = [c for c in CASES if c.family == family]
    assert len(cases) >= 19
    # read whole (a filter), read in part (a preference), and, where the words can be no time, no time
    assert sum(c.has_time and not c.partial for c in cases) >= 10 and sum(c.partial for c in cases) >= 1
    assert sum(not c.has_time for c in cases) >= 1
    # just before and after month, quarter and year ends, in more than one zone and date order
    assert len({c.now for c in cases}) >= 3 and len({c.tz for c in cases}) >= 2
    assert {c.locale for c in cases} >= {"en_US", "en_GB"}


def test_the_misreads_reported_are_read_as_asked():
    monday = datetime(2026, 11, 23, 10, tzinfo=PARIS)
    thursday = understand("notes from the last Thursday of September", monday, PARIS).time
    assert thursday is not None and (thursday.start, thursday.partial) == (datetime(2026, 9, 24, tzinfo=PARIS), False)
    fifth = understand("what did I save on the 5th of last month?", monday, PARIS).time
    assert fifth is not None and fifth.start == datetime(2026, 10, 5, tzinfo=PARIS)
    retro = understand("what's the usual agenda of the Friday retro?", monday, PARIS)
    assert retro.time is None and retro.semantic_query == "usual agenda Friday retro"
    for question in ("a fortnight ago", "two weekends ago"):
        assert understand(question, monday, PARIS).time is not None, question


def test_nth_in_counts_weekdays_of_a_month_as_the_holiday_rules_do():
    for y in (2024, 2025, 2026):
        for month in range(1, 13):
            first, after = date(y, month, 1), date(y + (month == 12), month % 12 + 1, 1)
            for wd in range(7):
                for n in (1, 2, 3, 4, -1):
                    assert nth_in(first, after, wd, n) == nth_weekday(y, month, wd, n)
                assert nth_in(first, after, wd, -2) == nth_weekday(y, month, wd, -1) - timedelta(weeks=1)
                fifth = nth_weekday(y, month, wd, 1) + timedelta(weeks=4)
                assert nth_in(first, after, wd, 5) == (fifth if fifth < after else None)
            assert nth_in(first, after, None, -1) == after - timedelta(days=1)


def test_a_window_read_in_part_is_a_preference_and_says_so():
    engine = QueryEngine(None, None, None, None)  # type: ignore[arg-type]  # planning touches no store
    monday = datetime(2026, 11, 23, 10, tzinfo=PARIS)
    partly = engine.plan("the budget on the last working day of September", tz=PARIS, now=monday)
    meta = partly.meta()
    assert (meta["time_range"], meta["time_filter"], meta["query_class"]) == (None, "preference", "semantic")
    assert meta["understood"] == {
        "expression": "the last working day of September", "vague": False, "partial": True,
        "description": "partly understood: Tue 1 Sep 2026, 00:00 \u2013 Thu 1 Oct 2026, 00:00 (Europe/Paris)"}
    whole = engine.plan("the budget on the last Friday of September", tz=PARIS, now=monday).meta()
    assert whole["time_filter"] == "soft" and whole["time_range"] is not None  # a filter, open to later reports
    assert isinstance(whole["understood"], dict) and whole["understood"]["partial"] is False
    # A question with nothing but partly read time words is searched, not listed as a window.
    alone = engine.plan("what happened the first half of last quarter?", tz=PARIS, now=monday)
    assert alone.query_class == "semantic" and alone.start is None and alone.end is None


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


# --------------------------------------------------------------------------- holidays, seasons, numeric dates

US, GB, AU = Conventions.for_locale("en_US"), Conventions.for_locale("en_GB"), Conventions.for_locale("en_AU")


def test_conventions_follow_the_locale_unless_said_otherwise():
    assert US == Conventions("US", "north", "mdy") == Conventions() == Conventions.for_locale(None)
    assert GB == Conventions.for_locale("en_GB.UTF-8") == Conventions("GB", "north", "dmy")
    assert Conventions.for_locale("de-DE") == Conventions("DE", "north", "dmy")
    assert Conventions("AU", "south", "dmy") == AU
    assert Conventions.for_locale("ja_JP") == Conventions("JP", "north", "ymd")
    assert Conventions.for_locale("fr") == Conventions("FR", "north", "dmy")  # no territory: the language's country
    assert Conventions.for_locale("C.UTF-8") == Conventions.for_locale("POSIX") == US  # says nothing about the user
    # explicit values win; the date order stays the locale's (an American in New Zealand writes 3/12 for March)
    assert Conventions.for_locale("en_US", country="nz") == Conventions("NZ", "south", "mdy")
    assert Conventions.for_locale("en_GB", hemisphere="south", date_order="mdy") == Conventions("GB", "south", "mdy")
    for bad in ({"country": "U1"}, {"hemisphere": "east"}, {"date_order": "dym"}):
        with pytest.raises(ValueError):
            Conventions.for_locale("en_US", **bad)


def test_easter_by_the_computus_matches_dateutil():
    from dateutil.easter import EASTER_ORTHODOX
    from dateutil.easter import easter as reference

    for y in range(1900, 2200):
        assert easter(y) == reference(y) and orthodox_easter(y) == reference(y, EASTER_ORTHODOX), y


def test_movable_holidays_follow_their_rules_every_year():
    for y in range(2000, 2041):
        def day(key, country="US", year=y):
            got = feast_days(key, year, country)
            assert got is not None and got[1] - got[0] == timedelta(days=1), (key, country, year)
            return got[0]

        assert day("thanksgiving_day").weekday() == 3 and 22 <= day("thanksgiving_day").day <= 28
        assert day("thanksgiving_day", "CA") == nth_weekday(y, 10, 0, 2)
        assert day("memorial_day") == nth_weekday(y, 5, 0, -1) and day("memorial_day").day >= 25
        assert day("labor_day") == nth_weekday(y, 9, 0, 1)
        assert day("mothers_day") == nth_weekday(y, 5, 6, 2)
        assert day("mothers_day", "GB") == easter(y) - timedelta(days=21)  # Mothering Sunday
        assert day("fathers_day") == nth_weekday(y, 6, 6, 3) and day("fathers_day", "AU") == nth_weekday(y, 9, 6, 1)
        assert day("good_friday") == easter(y) - timedelta(days=2)
        assert day("easter_sunday", "GR") == orthodox_easter(y) and day("easter_sunday", "RU") == orthodox_easter(y)
        assert feast_days("easter_weekend", y, "US") == (easter(y) - timedelta(days=2), easter(y) + timedelta(days=2))
        assert feast_days("christmas_holidays", y, "US") == (date(y, 12, 24), date(y + 1, 1, 2))


# One way of writing each feast name the grammar knows.
FEAST_SAMPLES = {
    "christmas_eve": "Xmas Eve", "christmas_day": "Christmas Day", "christmas_holidays": "the festive season",
    "christmas": "christmas", "boxing_day": "St Stephen's Day", "new_years_eve": "New Years Eve",
    "new_years_day": "New Year\u2019s Day", "lunar_new_year": "Lunar New Year", "new_year": "the New Year",
    "valentines_day": "Valentines Day", "st_patricks_day": "Paddy's Day", "halloween": "Hallowe'en",
    "bonfire_night": "Guy Fawkes Night", "ash_wednesday": "Ash Wednesday", "palm_sunday": "Palm Sunday",
    "maundy_thursday": "Holy Thursday", "good_friday": "Good Friday", "easter_weekend": "the Easter weekend",
    "easter_sunday": "Easter Day", "easter_monday": "Easter Monday", "easter": "Easter",
    "ascension_day": "Ascension Day", "whit_monday": "Whit Monday", "pentecost": "Whitsunday",
    "thanksgiving_weekend": "Thanksgiving break", "thanksgiving_day": "Thanksgiving Day",
    "thanksgiving": "Thanksgiving", "black_friday": "Black Friday", "cyber_monday": "Cyber Monday",
    "mothering_sunday": "Mothering Sunday", "mothers_day": "Mothers' Day", "fathers_day": "Fathers Day",
    "mlk_day": "Martin Luther King Jr. Day", "presidents_day": "Presidents' Day",
    "memorial_day_weekend": "Memorial Day weekend", "memorial_day": "Memorial Day", "juneteenth": "Juneteenth",
    "fourth_of_july": "July Fourth", "independence_day": "Independence Day",
    "labor_day_weekend": "Labour Day weekend", "labor_day": "Labor Day", "columbus_day": "Indigenous Peoples' Day",
    "veterans_day": "Armistice Day", "canada_day": "Canada Day", "australia_day": "Australia Day",
    "bastille_day": "Bastille Day", "diwali": "Deepavali", "hanukkah": "Chanukah", "passover": "Pesach",
    "rosh_hashanah": "Rosh Hashanah", "yom_kippur": "Yom Kippur", "eid_al_adha": "Eid al-Adha", "eid_al_fitr": "Eid",
}


def test_every_feast_name_is_read():
    from secondbrain.temporal.calendar import FEASTS
    from secondbrain.temporal.grammar import _FEAST_NAMES, _PLAIN_DAY

    assert set(FEAST_SAMPLES) == {key for key, _ in _FEAST_NAMES}
    for key, name in FEAST_SAMPLES.items():
        assert key in FEASTS or key in _PLAIN_DAY, key
        w = parse_time(f"what did I write on {name}?", REF, PARIS)
        assert w is not None and w.expression == f"on {name}", (key, name)


def test_a_feast_outside_the_calendars_years_is_no_window():
    assert feast_days("lunar_new_year", 1500, "US") is None
    w = parse_time("on Chinese New Year", datetime(1800, 6, 1, tzinfo=UTC), ZoneInfo("UTC"))
    assert w is None


def test_seasons_swap_with_the_hemisphere_and_the_year_end_season_is_named_by_its_january():
    assert season_days("summer", 2026, "north") == (date(2026, 6, 1), date(2026, 9, 1))
    assert season_days("winter", 2026, "north") == (date(2025, 12, 1), date(2026, 3, 1))
    assert season_days("summer", 2026, "south") == (date(2025, 12, 1), date(2026, 3, 1))
    assert season_days("fall", 2026, "south") == season_days("autumn", 2026, "south") == (date(2026, 3, 1),
                                                                                           date(2026, 6, 1))
    north = parse_time("last summer", REF, PARIS)
    south = parse_time("last summer", REF, PARIS, conventions=Conventions(hemisphere="south"))
    assert north is not None and south is not None
    assert (north.start, south.start) == (datetime(2026, 6, 1, tzinfo=PARIS), datetime(2025, 12, 1, tzinfo=PARIS))


def test_an_ambiguous_numeric_date_keeps_both_readings():
    us = parse_time("what did I save on 3/12?", REF, PARIS, conventions=US)
    gb = parse_time("what did I save on 3/12?", REF, PARIS, conventions=GB)
    assert us is not None and us.reading is not None and gb is not None and gb.reading is not None
    assert (us.reading.chosen, us.reading.other, us.reading.order) == (date(2026, 3, 12), date(2025, 12, 3), "mdy")
    assert (gb.reading.chosen, gb.reading.other, gb.reading.order) == (date(2025, 12, 3), date(2026, 3, 12), "dmy")
    assert us.start == datetime(2026, 3, 12, tzinfo=PARIS) and gb.start == datetime(2025, 12, 3, tzinfo=PARIS)
    only = parse_time("on 13/3", REF, PARIS, conventions=US)  # one reading only: no ambiguity, whatever the locale
    assert only is not None and only.reading is None and only.start == datetime(2026, 3, 13, tzinfo=PARIS)
    # year-first locales write a day and a month without a year month first
    jp = parse_time("on 3/12", REF, PARIS, conventions=Conventions.for_locale("ja_JP"))
    assert jp is not None and jp.start == datetime(2026, 3, 12, tzinfo=PARIS)


NEW_YORK_NOW = datetime(2026, 11, 18, 15, 30, tzinfo=NEW_YORK)


@pytest.mark.parametrize(("question", "locale", "start", "end", "ambiguous"), [
    ("What did I note on Christmas Eve?", "en_US", "2025-12-24T00:00:00-05:00", "2025-12-25T00:00:00-05:00", None),
    ("what did I write last summer?", "en_US", "2026-06-01T00:00:00-04:00", "2026-09-01T00:00:00-04:00", None),
    ("what did I save on 3/12?", "en_US", "2026-03-12T00:00:00-04:00", "2026-03-13T00:00:00-04:00",
     {"text": "3/12", "chosen": "2026-03-12", "other": "2025-12-03", "order": "mdy"}),
    ("what did I save on 3/12?", "en_GB", "2025-12-03T00:00:00-05:00", "2025-12-04T00:00:00-05:00",
     {"text": "3/12", "chosen": "2025-12-03", "other": "2026-03-12", "order": "dmy"}),
    ("what did I write last summer?", "en_AU", "2025-12-01T00:00:00-05:00", "2026-03-01T00:00:00-05:00", None),
])
def test_the_plan_meta_shows_the_window_in_the_users_zone_and_locale(question, locale, start, end, ambiguous):
    engine = QueryEngine(None, None, None, None)  # type: ignore[arg-type]  # planning touches no store
    calendar = Conventions.for_locale(locale)
    meta = engine.plan(question, tz=NEW_YORK, now=NEW_YORK_NOW, conventions=calendar).meta()
    assert meta["time_range"] == {"start": start, "end": end, "field": "ingested_at" if "save" in question
                                  else "captured_at", "source": "question"}
    understood = meta["understood"]
    assert isinstance(understood, dict) and understood.get("ambiguous") == ambiguous
    assert understood["description"].endswith("(America/New_York)")
    assert meta["calendar"] == {"country": calendar.country, "hemisphere": calendar.hemisphere,
                                "date_order": calendar.date_order}
    assert meta["query_class"] == "temporal"


# --------------------------------------------------------------------------- properties

# Zones where local midnight always exists (no DST change at 00:00), so day boundaries are exactly 00:00.
MIDNIGHT_ZONES = ["Europe/Paris", "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Tokyo",
                  "Asia/Kolkata", "UTC"]
# Plus awkward ones: DST changes at midnight (Santiago, Havana, Sao Paulo until 2019), a 30-minute DST
# (Lord Howe), +13:45 (Chatham).
ALL_ZONES = [*MIDNIGHT_ZONES, "America/Santiago", "America/Havana", "America/Sao_Paulo", "Australia/Lord_Howe",
             "Pacific/Chatham"]

# (the gold questions read with the default conventions: US holidays, north, month first; lunar feasts only
# have dates within the holiday calendars' years)
LUNAR = ("Diwali", "Hanukkah", "Chinese New Year")
EXPRESSIONS = sorted({c.question for c in CASES
                      if c.has_time and (c.locale, c.country, c.hemisphere) == ("en_US", None, None)
                      and not any(name in c.question for name in LUNAR)} | {
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
    "on Christmas Eve", "over the holidays", "on Good Friday", "over Easter", "at Thanksgiving", "on Mother's Day",
    "last summer", "this winter", "in spring 2024", "winter 2023-24", "on 3/12", "on 12/03/2025", "on 13/3",
    "a fortnight ago", "two weekends ago", "Tuesday two weeks ago", "the Saturday before last", "last fortnight",
    "the second Tuesday of March", "the last Friday of last month", "the first Monday of the year",
    "the first day of last month", "the 5th of last month", "the 20th of this month", "the first of the month",
    "two quarters ago", "the quarter before last", "the first half of the year", "last year's Q3",
    "at the end of last quarter", "the late 90s", "last decade", "Friday 13th", "three days before Christmas",
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


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=examples(1000), deadline=None)
@given(instants(MIDNIGHT_ZONES), st.sampled_from(DAY_GRAIN), WEEK_STARTS)
def test_day_granular_windows_start_and_end_at_local_midnight(ref, text, week_start):
    now, tz = ref
    w = parse_time(text, now, tz, week_start=week_start)
    assert w is not None and w.start is not None and w.end is not None, text
    assert _local_midnight(w.start, tz) and _local_midnight(w.end, tz), (text, w.start, w.end)
    days = (w.end.astimezone(tz).date() - w.start.astimezone(tz).date()).days
    # The length follows the calendar, not 24 h multiples: it only differs by the DST offset change.
    assert _elapsed(w.start, w.end) == timedelta(days=days) - (w.end.utcoffset() - w.start.utcoffset())  # type: ignore[operator]


@settings(max_examples=examples(500), deadline=None)
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


@settings(max_examples=examples(300), deadline=None)
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


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(PLAIN_WORDS) | st.integers(0, 1899).map(str) | st.integers(2100, 99999).map(str),
                min_size=1, max_size=12),
       instants())
def test_text_without_time_words_has_no_window(words, ref):
    now, tz = ref
    text = " ".join(words)
    assert parse_time(text, now, tz) is None, text
    assert understand(text, now, tz).query_class == "semantic"


NOUNS = ["budget", "Alice", "notes", "kubernetes", "report", "the contract", "photos", "roadmap"]


@settings(max_examples=examples(800), deadline=None)
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
