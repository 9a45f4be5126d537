"""One module parses dates for every extractor, and it never guesses."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from services.extractors import dates

EXTRACTORS = Path(dates.__file__).parent
# Calls and imports that parse dates; only dates.py may use them, so the "never guess" rule lives in one place.
DATE_PARSING_CALLS = {"strptime", "fromisoformat", "parsedate", "parsedate_tz", "parsedate_to_datetime",
                      "find_date", "fromtimestamp"}
DATE_PARSING_MODULES = ("dateparser", "dateutil", "htmldate", "email.utils")


def _offences(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in DATE_PARSING_CALLS:
                found.append(f"{path.name}:{node.lineno} calls {name}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [f"{path.name}:{node.lineno} imports {n}" for n in names if n.startswith(DATE_PARSING_MODULES)]
    return found


def test_only_dates_py_parses_dates() -> None:
    modules = [p for p in EXTRACTORS.rglob("*.py") if p.name != "dates.py"]
    assert len(modules) > 10  # the walk really sees the extractors, the office package included
    assert [o for p in modules for o in _offences(p)] == []


def test_the_check_sees_a_hand_written_parser(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("import email.utils\nfrom datetime import datetime\n"
                      "def f(v):\n    return datetime.fromisoformat(v)\n")
    assert _offences(sneaky) == ["sneaky.py:1 imports email.utils", "sneaky.py:4 calls fromisoformat"]


@pytest.mark.parametrize("value", [None, "", "2021", "2021-09", "June 3, 2021", "2021-02-30", "yesterday"])
def test_iso_refuses_vague_or_invalid_values(value: str | None) -> None:
    assert dates.iso_datetime(value) is None


def test_iso_keeps_the_offset_and_reads_no_zone_as_utc() -> None:
    assert dates.iso_datetime("2023-04-05T06:07:08+02:00") == datetime(2023, 4, 5, 4, 7, 8, tzinfo=UTC)
    assert dates.iso_datetime("2023-04-05T06:07:08+02:00").utcoffset() == timedelta(hours=2)  # type: ignore[union-attr]
    assert dates.iso_datetime("2023-04-05") == datetime(2023, 4, 5, tzinfo=UTC)
    assert dates.iso_datetime("2023-04-05T06:07:08.123456789Z") == datetime(2023, 4, 5, 6, 7, 8, 123456, tzinfo=UTC)


def test_rfc2822_and_web_dates() -> None:
    assert dates.rfc2822_datetime("Thu, 03 Jun 2021 09:15:00 +0200") == datetime(
        2021, 6, 3, 9, 15, tzinfo=timezone(timedelta(hours=2)))
    assert dates.rfc2822_datetime("not a date") is None
    assert dates.web_datetime("2016/02/29") == datetime(2016, 2, 29, tzinfo=UTC)
    assert dates.web_datetime("2021-06-03T09:15:00-05:00") == datetime(2021, 6, 3, 14, 15, tzinfo=UTC)
    for vague in ("June 3, 2021", "03/04/2021", "2021", "2021-02-30", "sometime last spring"):
        assert dates.web_datetime(vague) is None, vague


def test_org_timestamps_become_iso_text() -> None:
    assert dates.org_timestamp("<2023-03-14 Tue 10:00>") == "2023-03-14T10:00:00"
    assert dates.org_timestamp("[2023-03-14 Tue]") == "2023-03-14"
    assert dates.org_timestamp("someday") == "someday"
