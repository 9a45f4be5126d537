"""No end-to-end test depends on the day it runs.

A calendar date written into an end-to-end test (``"12 December"``, ``"2026-05-01T08:00:00Z"``,
``datetime(2024, 3, 11, ...)``) means one thing before it enters the agenda's window, another inside it,
and another once it has passed: a test built on one was green when it landed and red two weeks later.
So an end-to-end test counts its dates from the day it runs (``today + timedelta(days=10)``), or fixes
the clock (Playwright's ``page.clock`` and the server's ``now``), or says on the line, after
``# fixed date:``, why the day cannot matter there (an import's own past dates, a protocol version).
This test finds every literal date in ``tests/e2e`` and fails on one that does none of these.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import pytest

from tests.paths import REPO

pytestmark = pytest.mark.fast

MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December"
          "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec")
DATE = re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})\b"
                  rf"|\b(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
                  r"|\b(?:19|20)\d\d-[01]\d-[0-3]\d(?!\d)")
REASON = re.compile(r"#\s*fixed date:\s*\S")
#: A module that fixes the browser's clock (Playwright's clock API) fixes it for every date it writes.
FIXES_CLOCK = re.compile(r"\.clock\.(?:install|set_fixed_time|set_system_time)\(")


@dataclass(frozen=True)
class Literal:
    path: str
    line: int
    text: str


def literal_dates(source: str, path: str = "<test>") -> list[Literal]:
    """Every literal calendar date in ``source``: in a string (f-strings' fixed parts too), or a
    ``date(...)``/``datetime(...)`` call whose year, month and day are numbers."""
    found: list[Literal] = []
    tree = ast.parse(source)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)  # words about a test, not data it uses
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for m in DATE.finditer(node.value):
                found.append(Literal(path, node.lineno, m.group(0)))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            numbers = node.args[:3]
            if name in ("date", "datetime") and len(numbers) == 3 \
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in numbers):
                found.append(Literal(path, node.lineno, ast.unparse(node)[:40]))
    return found


def unexplained(source: str, path: str = "<test>") -> list[Literal]:
    """The literal dates of ``source`` that neither a fixed clock nor a ``# fixed date:`` reason covers.  A
    reason covers the statement it is written in, and the statements of the same block below it up to the next
    blank line (one reason above a table of an export's own dates covers the table)."""
    if FIXES_CLOCK.search(source):
        return []
    lines = source.splitlines()
    tree = ast.parse(source)
    block_of = {id(st): body for n in ast.walk(tree) for field in ("body", "orelse", "finalbody")
                if isinstance(body := getattr(n, field, None), list) for st in body if isinstance(st, ast.stmt)}

    def end(st: ast.stmt) -> int:
        return st.end_lineno or st.lineno

    def explained(line: int) -> bool:
        holders = [st for n in ast.walk(tree) if isinstance(st := n, ast.stmt) and st.lineno <= line <= end(st)]
        if not holders:
            return bool(REASON.search(lines[line - 1]))
        here = max(holders, key=lambda st: st.lineno)  # the innermost statement
        body = block_of[id(here)]
        at = next(i for i, st in enumerate(body) if st is here)
        said = lines[here.lineno - 1:end(here)]  # the statement itself
        i = at
        while True:  # the comments above it, and above each statement of its paragraph
            top = body[i].lineno
            while top > 1 and lines[top - 2].strip().startswith("#"):
                top -= 1
                said.append(lines[top - 1])
            if i == 0 or top - 1 != end(body[i - 1]):
                break  # a blank line (or the block's start) ends the paragraph
            i -= 1
        return any(REASON.search(text) for text in said)

    return [lit for lit in literal_dates(source, path) if not explained(lit.line)]


def test_no_end_to_end_test_depends_on_the_day_it_runs() -> None:
    bad = [lit for f in sorted((REPO / "tests" / "e2e").glob("*.py"))
           for lit in unexplained(f.read_text(), str(f.relative_to(REPO)))]
    assert not bad, ("literal dates in end-to-end tests, with no fixed clock and no '# fixed date:' reason "
                     "(count them from today instead):\n" + "\n".join(f"{b.path}:{b.line}: {b.text}" for b in bad))


@pytest.mark.parametrize("source", [
    'TRIP = "The night train leaves on **12 December** at 7:40."\n',
    'NOTE = f"Dentist on the 3rd of December at {hour}."\n',
    'body = {"captured_at": "2026-05-01T08:00:00Z"}\n',
    "when = datetime(2024, 3, 11, 23, 56, tzinfo=UTC)\n",
    'ASK = "what did I write on March 9?"\n',
    '# fixed date: covers only its paragraph\nA = 1\n\nB = "due 12 December"\n',
    'def f():\n    # fixed date: covers only its own block\n    a = 1\nB = "due 12 December"\n',
])
def test_the_guard_finds_a_literal_date(source: str) -> None:
    assert len(unexplained(source)) == 1


@pytest.mark.parametrize("source", [
    'body = {"captured_at": "2026-05-01T08:00:00Z"}  # fixed date: an import\'s own past time\n',
    '# fixed date: the export\'s own messages, read as written\nwhen = datetime(2024, 3, 11, 23, 56)\n',
    '# fixed date: an export\'s own times\nROWS = [\n    ("a", datetime(2024, 3, 11)),\n    ("b", "12 March"),\n]\n',
    'day = today + timedelta(days=10)\nTRIP = f"The train leaves on {day:%d %B}."\n',
    'page.clock.set_fixed_time("2026-11-26T12:00:00")\nTRIP = "leaves on 12 December"\n',
    'VERSION = "protocol 3"\n',
    'def test_x():\n    """Asked on 12 December, as the person did."""\n',
])
def test_the_guard_lets_an_explained_or_counted_date_pass(source: str) -> None:
    assert unexplained(source) == []
