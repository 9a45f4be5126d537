"""``secondbrain agenda`` prints a line as the Upcoming panel shows it: its time with its end, its name and the
quoted sentence, what moved or how it repeats, and where it is said."""

from __future__ import annotations

import pytest

from app.cli.agenda import line

pytestmark = pytest.mark.fast

SOURCE = {"title": "Exams", "page": None, "position": None, "section": ""}


def test_a_line_says_its_end_name_and_rhythm() -> None:
    printed = line({"time": "09:00", "end_time": "11:20", "precision": "time", "when": "Thu 10 December 2026",
                    "title": "Mock exam", "quote": "Mock exam on Thursday, 09:00 until 11:20.", "status": "confirmed",
                    "recurs": "every other Thursday", "source": SOURCE})
    assert printed.startswith("09:00\u201311:20  Mock exam: \u201cMock exam on Thursday, 09:00 until 11:20.\u201d "
                              "(every other Thursday)")
    assert printed.endswith("\u2014 Exams")


def test_an_untimed_line_says_the_part_of_the_day() -> None:
    printed = line({"time": None, "part": "afternoon", "precision": "day", "when": "Wed 2 December 2026",
                    "title": "Gas safety check", "quote": "The gas safety check is booked for next Wednesday "
                    "afternoon.", "status": "confirmed", "source": SOURCE})
    assert printed.startswith("afternoon  Gas safety check: ")
