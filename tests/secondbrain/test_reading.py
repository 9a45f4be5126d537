"""The plain words of a statement: Markdown's marks go, what only looks like them stays."""

from __future__ import annotations

import pytest

from secondbrain.reading import plain, read

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(("written", "words"), [
    ("**12 December**", "12 December"),
    ("***bold italic*** and _this_", "bold italic and this"),
    ("[the form](https://example.org/form) ~~old~~", "the form old"),
    ("Card ****1234", "Card ****1234"),  # a masked card number on a receipt, not emphasis
    ("3 * 4 * 5", "3 * 4 * 5"),
])
def test_markdown_marks_go_and_look_alikes_stay(written: str, words: str) -> None:
    assert plain(written) == words


def test_a_table_row_keeps_its_column_names_though_its_text_names_them_only_past_two() -> None:
    rows = [s for s in read("| Week | Church flowers |\n|---|---|\n| 13 Dec | Martin |") if s.kind == "row"]
    assert [(s.text, s.columns) for s in rows] == [("13 Dec: Martin", ("Week", "Church flowers"))]
