"""The second a quoted passage's words are said at: from its words' times, else its span spread over it."""

from __future__ import annotations

import math

import pytest

from secondbrain.events.models import WordTime, read_word_times
from secondbrain.word_times import quoted_second

pytestmark = pytest.mark.fast  # no services: in the fast lane


def times(*pairs: tuple[int, float]) -> list[WordTime]:
    return [WordTime(offset=o, second=s) for o, s in pairs]


TIMES = times((0, 60.0), (6, 60.4), (30, 75.2), (41, 75.6))


def test_the_last_word_starting_at_or_before_the_offset() -> None:
    assert quoted_second(TIMES, 60.0, 90.0, 100, 0) == 60.0
    assert quoted_second(TIMES, 60.0, 90.0, 100, 5) == 60.0
    assert quoted_second(TIMES, 60.0, 90.0, 100, 6) == 60.4
    assert quoted_second(TIMES, 60.0, 90.0, 100, 30) == 75.2
    assert quoted_second(TIMES, 60.0, 90.0, 100, 99) == 75.6
    assert quoted_second(TIMES, 60.0, 90.0, 100, 500) == 75.6  # past the end: the last word
    assert quoted_second(TIMES, 60.0, 90.0, 100, -3) == 60.0


def test_unsorted_entries_are_read_in_order_of_offset() -> None:
    assert quoted_second(times((30, 75.2), (0, 60.0)), 60.0, 90.0, 100, 40) == 75.2


def test_without_word_times_the_span_is_spread_over_the_text() -> None:
    assert quoted_second((), 60.0, 90.0, 100, 50) == 75.0
    assert quoted_second((), 60.0, 90.0, 300, 100) == 70.0
    assert quoted_second((), 60.0, 90.0, 100, 0) == 60.0
    assert quoted_second((), 60.0, 90.0, 100, 250) == 90.0  # never past the end


def test_without_an_end_or_text_the_start() -> None:
    assert quoted_second((), 12.5, None, 100, 50) == 12.5
    assert quoted_second((), 12.5, 12.5, 100, 50) == 12.5
    assert quoted_second((), 12.5, 30.0, 0, 0) == 12.5


def test_no_time_at_all() -> None:
    assert quoted_second((), None, None, 100, 10) is None
    assert quoted_second((), None, 30.0, 100, 10) is None


def test_negative_or_endless_seconds_are_not_read() -> None:
    assert quoted_second(times((0, -1.0), (10, math.inf), (20, math.nan)), 60.0, 90.0, 100, 50) == 75.0


@pytest.mark.parametrize("raw", [
    "", "[[0", "null", "42", "{}", '{"a": 1}', "[[\"x\", 1]]", "[[0]]", "[[0, \"nan\"]]", "[[0, -1]]", "[1, 2]",
    "[[0, 1e999]]", "[" * 5000,
])
def test_word_times_kept_as_json_before_and_malformed_fall_back_to_the_span(raw: str) -> None:
    assert quoted_second(read_word_times(raw), 60.0, 90.0, 100, 50) == 75.0


def test_an_offset_before_the_first_word_falls_back_to_the_span() -> None:
    assert quoted_second(times((20, 70.0), (40, 80.0)), 60.0, 90.0, 100, 10) == 63.0
    assert quoted_second(read_word_times("[[20,70.0],[40,80.0]]"), 60.0, 90.0, 100, 30) == 70.0
