"""Recurring events: what reading a calendar and expanding a window cost, whatever the rule.

    .venv/bin/python bench/recurrence.py [--repeat 20]

For each rule (the endless hourly rule of the 200-byte calendar that once made 20,000 jobs, an endless rule of
every minute and of every second started ten years ago, a daily COUNT=1000000000, a weekly meeting, a yearly
birthday since 1990, a rule that never gives a date): the time to read the one-event ``.ics`` with the importer
(``services.importers.ics``: what ``POST /v1/imports`` does before it submits), and the time to work out the
occurrences in a day, a fortnight and a year (``secondbrain.temporal.recurrence.between``, what the agenda and
search by time do), with how many occurrences each gave.  Medians of ``--repeat`` runs.  Prints the machine and
its load: the figures belong to them.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from secondbrain.temporal import recurrence  # noqa: E402
from services.importers import ics  # noqa: E402
from services.importers.archive import Export  # noqa: E402
from services.importers.model import Capture, Options  # noqa: E402

RULES = [
    ("endless hourly (the 200-byte calendar)", "20240101T000000Z", "FREQ=HOURLY"),
    ("endless every minute, since 2016", "20160101T000000Z", "FREQ=MINUTELY"),
    ("endless every second, since 2016", "20160101T000000Z", "FREQ=SECONDLY"),
    ("daily, COUNT=1000000000", "20240101T090000Z", "FREQ=DAILY;COUNT=1000000000"),
    ("weekly stand-up, Mon-Fri", "20240101T090000Z", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
    ("yearly birthday since 1990", "19900417T000000Z", "FREQ=YEARLY"),
    ("never gives a date (30 February)", "20240101T090000Z", "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30"),
]
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def calendar(start: str, rule: str) -> bytes:
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:bench@example.org\r\nDTSTART:{start}\r\n"
            f"SUMMARY:Bench\r\nRRULE:{rule}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()


def timed(work: Callable[[], object], repeat: int) -> tuple[float, object]:
    runs, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = work()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), out


def read(data: bytes) -> list[object]:
    with Export.from_file("bench.ics", io.BytesIO(data)) as export:
        return list(ics.read(export, Options(now=NOW)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    charts.docs_option(ap)
    args = ap.parse_args()
    rows: list[list[str]] = []
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    print(f"{'rule':42} {'read .ics':>10} {'day':>16} {'fortnight':>16} {'year':>16}")
    for name, start, rule in RULES:
        data = calendar(start, rule)
        took, results = timed(lambda data=data: read(data), args.repeat)  # type: ignore[misc]
        captures = [r for r in results if isinstance(r, Capture)]  # type: ignore[union-attr]
        try:
            series = recurrence.series(datetime.strptime(start, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC), zone="UTC",
                                       rules=[rule])
        except recurrence.RuleError:
            print(f"{name:42} {took * 1000:8.2f}ms  refused at import ({len(captures)} record, at its first date)")
            rows.append([name, f"{took * 1000:.2f} ms", "refused at import", "", ""])
            continue
        cells, shown = [], []
        for span in (timedelta(days=1), timedelta(days=14), timedelta(days=365)):
            spent, got = timed(lambda s=series, w=span: recurrence.between(s, NOW, NOW + w), args.repeat)  # type: ignore[misc]
            n = len(got.occurrences)  # type: ignore[union-attr]
            cells.append(f"{spent * 1000:7.2f}ms {n:>4}{'+' if got.more else ' '}")  # type: ignore[union-attr]
            shown.append(f"{spent * 1000:.2f} ms, {n}{'+' if got.more else ''}")  # type: ignore[union-attr]
        print(f"{name:42} {took * 1000:8.2f}ms {cells[0]:>16} {cells[1]:>16} {cells[2]:>16}")
        rows.append([name, f"{took * 1000:.2f} ms", *shown])
    print("(+: the window holds more occurrences than one window gives, 500)")
    print(f"load after: {os.getloadavg()}")
    if args.publish:
        charts.publish("recurrence", "Recurring events", [charts.table(
            ["rule", "read the .ics", "a day: time, occurrences", "a fortnight", "a year"], rows)],
            notes=[f"Medians of {args.repeat} runs; '+': the window holds more occurrences than one window gives "
                   "(500)."])


if __name__ == "__main__":
    main()
