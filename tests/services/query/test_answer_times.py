"""Answers to "when" questions show the date a relative time word stood for, worked out from when the
source was said; the model's source list says which times each passage speaks of."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from secondbrain.events.models import TimeMention
from secondbrain.search_hits import SearchHit
from secondbrain.temporal import Conventions
from services.query.answer import format_sources
from services.query.engine import Source
from services.query.extractive import extractive_answer

pytestmark = pytest.mark.fast  # no services: in the fast lane

UTC = ZoneInfo("UTC")
PARIS = ZoneInfo("Europe/Paris")


def hit(text: str, at: str, **extra: object) -> SearchHit:
    return SearchHit(chunk_id="c", score=1.0, text=text, title="Chat", document_id="d", artifact_id="a",
                     source_id="s", modality="text", captured_at=at, ingested_at=at, char_start=0,
                     char_end=len(text), heading_path=[], page=None, t_start=None, t_end=None, kind="chat",
                     **extra)  # type: ignore[arg-type]


SUPPORT = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\nMelanie: Wow!"


def test_a_when_answer_shows_the_day_yesterday_was() -> None:
    ans = extractive_answer("When did Caroline go to the LGBTQ support group?", [hit(SUPPORT, "2023-05-08T13:56:00Z")],
                            tz=UTC)
    assert ans.text == ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful. [1] "
                        "(\u201cyesterday\u201d = Sun, May 7, 2023)")  # en_US by default: month first
    assert ans.quotes and ans.quotes[0].note == " (\u201cyesterday\u201d = Sun, May 7, 2023)"
    british = extractive_answer("When did Caroline go to the LGBTQ support group?",
                                [hit(SUPPORT, "2023-05-08T13:56:00Z")], tz=UTC,
                                conventions=Conventions.for_locale("en_GB"))
    assert british.text.endswith("(\u201cyesterday\u201d = Sun 7 May 2023)")


def test_a_span_and_the_zone_of_the_person() -> None:
    camping = hit("Melanie: Last week we went camping with the kids.", "2023-05-07T23:30:00Z")  # Monday in Paris
    utc = extractive_answer("When did Melanie go camping?", [camping], tz=UTC).text
    paris = extractive_answer("When did Melanie go camping?", [camping], tz=PARIS).text
    # still Sunday 7 May in UTC; already Monday 8 May in Paris
    assert utc.endswith("(\u201cLast week\u201d = the week before May 7, 2023, April 24\u201330)")
    assert paris.endswith("(\u201cLast week\u201d = the week before May 8, 2023, May 1\u20137)")


def test_only_when_the_question_asks_when_and_never_for_a_stated_date() -> None:
    source = [hit(SUPPORT, "2023-05-08T13:56:00Z")]
    assert "=" not in extractive_answer("What did Caroline go to?", source, tz=UTC).text
    assert "=" not in extractive_answer("When did Caroline go to the support group?", source).text  # no zone given
    for said in ("Jon: On 3 May 2023 I lost my job.", "Jon: On 3 May I lost my job."):  # his own words suffice
        assert "=" not in extractive_answer("When did Jon lose his job?", [hit(said, "2023-05-08T13:56:00Z")],
                                            tz=UTC).text


def test_the_model_reads_the_times_a_source_speaks_of() -> None:
    h = hit(SUPPORT, "2023-05-08T13:56:00Z", mentions=[
        TimeMention(start=datetime(2023, 5, 7, tzinfo=UTC), end=datetime(2023, 5, 8, tzinfo=UTC),
                    expression="yesterday")])
    src = Source(h, h.text, 0, len(h.text), None, None, 20)
    assert "speaks of \u201cyesterday\u201d = Sun, May 7, 2023)" in format_sources([src], UTC)
