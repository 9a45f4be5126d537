"""The parser passes over words no time expression can start with: what it finds must not change."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.temporal_suite import CASES, MENTION_CASES, conventions
from secondbrain.temporal import grammar
from secondbrain.temporal.calendar import Conventions, Ctx
from secondbrain.temporal.mentions import mentioned_times
from tests.examples import examples

pytestmark = pytest.mark.fast  # no services: in the fast lane

FILLER = ("The plan was reviewed again and the next steps were agreed with everyone who joined the call, while "
          "the open questions went to the list for the following week. Most of the budget is spent.")
# Words next to the edges of the prefilter: letters outside ASCII that case folding matches to ASCII ones
# ("\u017f" is an "s", "\u212a" a "k"), words that only begin like time words, digits of other scripts.
ODD = ["Thi\u017f week we met.", "On \u017funday we met.", "la\u017ft week", "in \u017fpring", "the \u017fecond week",
       "\u212anown since March.", "\u212aWANZAA", "Mayday, the monitor, the marketing plan.",
       "todays notes, Today's notes, _today, o'Monday", "q3 and Q3'24 and h1 2024", "in 2000 words", "\u0663 May",
       "Monday\u00a0morning", "last\u2019s", "3/12-3/14", "2024-03-12T10:00Z", "mid-March", "x-mas", "the 3rd",
       "Sat 3rd", "caf\u00e9 on Friday", "\U0001f389 next Friday \U0001f389", "LAST WEEK", "Last  Week", "in\tJune",
       "twenty-first of May", "the day before yesterday", ""]


def corpus() -> list[tuple[str, datetime, ZoneInfo, Conventions]]:
    """Every gold question and passage at its own time, in its own zone and conventions, and notes built of
    them."""
    out = [(c.question, datetime.fromisoformat(c.now), ZoneInfo(c.tz), conventions(c)) for c in CASES]
    out += [(c.text, datetime.fromisoformat(c.said_at), ZoneInfo(c.tz), Conventions()) for c in MENTION_CASES]
    said = [c.text for c in MENTION_CASES] + [c.question for c in CASES] + ODD
    at = datetime(2024, 2, 29, 21, 30, tzinfo=UTC)
    for i in range(0, len(said), 7):
        note = "\n\n".join(f"## Part {k}\n\n{FILLER} {s} {FILLER}" for k, s in enumerate(said[i:i + 7]))
        out.append((note, at + timedelta(days=37 * i), ZoneInfo("Europe/London"), Conventions()))
    out += [(s, at, ZoneInfo("UTC"), Conventions()) for s in ODD]
    return out


CORPUS = corpus()


@contextmanager
def every_rule_everywhere() -> Iterator[None]:
    """The parser as it is without the prefilters: every pattern tried at every word."""
    rules_at, may_start, unread_of = grammar._rules_at, grammar._may_start, grammar._unread_of
    grammar._rules_at = lambda key: tuple(grammar._ANCHOR_RULES)  # type: ignore[assignment]
    grammar._may_start = lambda text, pos: True
    grammar._unread_of = grammar._UNREAD_OF.finditer
    try:
        yield
    finally:
        grammar._rules_at, grammar._may_start, grammar._unread_of = rules_at, may_start, unread_of


def read(text: str, now: datetime, tz: ZoneInfo, conv: Conventions) -> tuple[object, ...]:
    """What the parser makes of ``text``; a failure is an outcome too (it must not change either)."""
    try:
        return (grammar.scan(text, Ctx(now, tz, 0, conv)), grammar.parse_all(text, now, tz, 0, conv),
                mentioned_times(text, now, tz, conventions=conv))
    except Exception as e:
        return (type(e), str(e))


def test_every_pattern_match_begins_with_a_start_word() -> None:
    for text, *_ in CORPUS:
        for at in grammar._WORD_START.finditer(text):
            pos = at.start()
            key = grammar._start_key(text, pos)
            for rx in [*grammar._EXPR_PATTERNS, grammar._UNREAD_OF]:
                assert not rx.match(text, pos) or grammar._starts_of(rx).admit(key)
                assert not rx.match(text, pos) or rx is grammar._UNREAD_OF or grammar._may_start(text, pos)
            for rule in grammar._ANCHOR_RULES:
                if rule[0].match(text, pos):
                    assert rule in grammar._rules_at(key) and grammar._may_start(text, pos), text[pos:pos + 30]


def test_unread_words_are_found_where_the_pattern_finds_them() -> None:
    for text, *_ in CORPUS:
        want = [m.span() for m in grammar._UNREAD_OF.finditer(text)]
        assert [m.span() for m in grammar._unread_of(text)] == want, text
    assert sum(bool(list(grammar._unread_of(text))) for text, *_ in CORPUS) > 20


def test_the_prefilter_passes_over_most_words() -> None:
    text = FILLER * 3
    starts = [m.start() for m in grammar._WORD_START.finditer(text)]
    assert sum(map(lambda pos: grammar._may_start(text, pos), starts)) < len(starts) / 3


def test_what_is_found_is_what_every_rule_everywhere_finds() -> None:
    fast = [read(*item) for item in CORPUS]
    with every_rule_everywhere():
        slow = [read(*item) for item in CORPUS]
    assert sum(bool(f[0]) for f in fast) > len(CORPUS) / 2  # the corpus speaks of times
    for item, f, s in zip(CORPUS, fast, slow, strict=True):
        assert f == s, item[0]


WORDS = ["the", "last", "next", "this", "on", "in", "of", "before", "after", "between", "and", "to", "-", "a",
         "few", "two", "weeks", "ago", "week", "weekend", "month", "year", "Monday", "Fri", "sun", "may", "May",
         "March", "mar", "3rd", "the 5th", "12", "3/12", "2024", "2023-05-01", "Q3", "H1", "Christmas", "Easter",
         "summer", "morning", "yesterday", "today", "tomorrow", "tonight", "early", "mid", "late", "end",
         "recently", "since", "until", "around", "or so", "first", "second", "day", "every", "standup",
         "\u017f", "thi\u017f", "\u017funday", "\u212a", "\u00e9", ",", ".", "'s", "\u2019", "\n"]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=14), st.sampled_from([" ", "", "  "]),
       st.integers(0, 3 * 365 * 24))
def test_random_word_salad_reads_the_same(words: list[str], sep: str, hours: int) -> None:
    text = sep.join(words)
    now = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(hours=hours)
    item = (text, now, ZoneInfo("America/New_York"), Conventions())
    fast = read(*item)
    with every_rule_everywhere():
        slow = read(*item)
    assert fast == slow
