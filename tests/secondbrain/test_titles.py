"""Titles: a generator's placeholder gives way to the file name."""

from __future__ import annotations

import pytest

from secondbrain.titles import display_title, meaningful

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("stored", [None, "", "  ", "untitled", "Untitled", "untitled.pdf", "Document1",
                                    "Presentation2", "Microsoft Word", "Untitled document", "title"])
def test_placeholders_give_way_to_the_file_name(stored: str | None) -> None:
    assert meaningful(stored) is None
    assert display_title(stored, "file:report.pdf") == "report.pdf"


def test_real_titles_stay_and_generator_prefixes_go() -> None:
    assert display_title("Budget 2026", "file:report.pdf") == "Budget 2026"
    assert display_title("Microsoft Word - minutes.docx", "file:x.docx") == "minutes.docx"
    assert display_title(None, "note:1234") is None  # a note without a title: the page says so in words
    assert display_title("untitled", "https://example.org/post") == "untitled"  # nothing better known
    assert display_title(None, None, filename="scan.png") == "scan.png"
