"""Readwise's CSV export (Export > CSV): one row per highlight, with the columns ``Highlight``, ``Book Title``,
``Book Author``, ``Amazon Book ID``, ``Note``, ``Color``, ``Tags``, ``Location Type``, ``Location``,
``Highlighted at`` (``2024-05-01 10:00:00+00:00``) and ``Document tags``.  One record per highlight with its
book, author, location, note and tags, dated when it was highlighted.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import iso

NAME = "readwise"
_REQUIRED = {"highlight", "book title"}


def _files(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".csv", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(4096).decode("utf-8-sig", "replace")
        except (OSError, ExportError):
            continue
        try:
            first = next(csv.reader(io.StringIO(head.split("\n", 1)[0])), [])
        except csv.Error:  # a lone carriage return, a NUL: not a Readwise export
            continue
        if {c.strip().lower() for c in first} >= _REQUIRED:
            out.append(e)
    return out


def _rows(export: Export, entry: Entry) -> list[dict[str, str]]:
    text = export.read(entry).decode("utf-8-sig", "replace")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return [{(k or "").strip().lower(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
            for row in reader]


def detect(export: Export) -> str | None:
    files = _files(export)
    if not files:
        return None
    return f"{count(export, Options())} highlights"


def count(export: Export, options: Options) -> int:
    return sum(len(_rows(export, e)) for e in _files(export))


def read(export: Export, options: Options) -> Iterator[Result]:
    seen: set[str] = set()
    for entry in _files(export):
        for n, row in enumerate(_rows(export, entry), 2):  # line 1 is the header
            yield from guarded(f"line {n}", entry.path, _highlight, row, n, entry, options, seen)


def _highlight(row: dict[str, str], line: int, entry: Entry, options: Options, seen: set[str]) -> Result:
    book, text = row.get("book title", ""), row.get("highlight", "")
    where = " ".join(x for x in (row.get("location type", ""), row.get("location", "")) if x)
    label = f"{book or 'line ' + str(line)}" + (f", {where}" if where else "")
    if not text and not row.get("note"):
        return Skipped(label, f"line {line} has no highlight text", entry.path)
    item = hashlib.sha256("\x1f".join([book, where, text]).encode()).hexdigest()[:20]
    if item in seen:
        return Skipped(label, "the same highlight appears again", entry.path, duplicate=True)
    seen.add(item)
    when = iso(row.get("highlighted at", ""), options.tz)
    if row.get("highlighted at") and when is None:
        return Skipped(label, f"line {line}: 'Highlighted at' is not a date ({row['highlighted at'][:40]!r})",
                       entry.path)
    tags = [t for col in ("tags", "document tags") for t in row.get(col, "").replace(",", " ").split()]
    body = "\n".join(f"> {ln}" if ln.strip() else ">" for ln in text.split("\n"))
    if row.get("note"):
        body += f"\n\nMy note: {row['note']}"
    return render.note(NAME, item, origin=entry.path, title=f"{book} ({where})" if where else book or None,
                       body=body, created=when, tags=["readwise", "highlight", *tags],
                       details=[("Book", book), ("Author", row.get("book author", "")), ("Location", where),
                                ("Color", row.get("color", ""))], label=label, book=book or None)


FORMAT = Format(NAME, "Readwise highlights", "readwise.io: Export > CSV", detect, count, read)
