"""Notion's "Markdown & CSV" export (Settings > Export all workspace content, or a page's ... > Export): a zip
(large ones hold ``...-Part-1.zip`` zips) of ``Page Title <32 hex id>.md`` files, with each page's
sub-pages and files in a folder of the same name, and each database as ``Name <id>.csv`` (and
``Name <id>_all.csv``) beside a folder with one ``.md`` per row.

A page becomes a note titled by its place in the hierarchy ("Garden > Seeds > Tomatoes"), named for good by
its Notion id.  Its properties (the ``Name: value`` lines under the title of a database row) give its dates
(``Created``, ``Last edited time``, ``Date``: Notion writes them as "March 5, 2024 2:32 PM", local time)
and tags (``Tags``).  Notion's export says nothing of when an ordinary page was written, so such a page is
dated by the import.  A database row without a page of its own becomes a record of its columns.
Images and files in a page's folder go through the extractors, dated like the page.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import PurePosixPath

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import Options, Result, Skipped, failure, guarded
from services.importers.times import iso, local

NAME = "notion"
_NAMED = re.compile(r"^(?P<title>.*?)\s+(?P<id>[0-9a-f]{32})(?P<all>_all)?$")
_PROPERTY = re.compile(r"^(?P<key>[^:\n]{1,60}):\s+(?P<value>.+)$")
_CREATED = ("created", "created time", "date created", "created at", "created on")
_UPDATED = ("last edited time", "last edited", "updated", "last updated", "edited")
_TAGS = ("tags", "tag", "labels", "label", "category", "categories", "topics")
_DATES = ("%B %d, %Y %I:%M %p", "%B %d, %Y", "%b %d, %Y %I:%M %p", "%b %d, %Y", "%Y/%m/%d %H:%M", "%Y/%m/%d",
          "%d %B %Y %H:%M", "%d %B %Y", "%Y-%m-%d %H:%M", "%Y-%m-%d")


def _named(name: str) -> tuple[str, str | None]:
    m = _NAMED.match(name)
    return (m["title"].strip(), m["id"]) if m else (name, None)


def _path_titles(path: str) -> list[str]:
    """The titles of the folders a file sits in and its own, without Notion's ids (folders without an id,
    such as the export's own folder, are left out)."""
    parts = PurePosixPath(path).parts
    titles = []
    for i, part in enumerate(parts):
        stem = PurePosixPath(part).stem if i == len(parts) - 1 else part
        title, ident = _named(stem)
        if ident or i == len(parts) - 1:
            titles.append(title or "Untitled")
    return titles


def _pages(export: Export) -> list[Entry]:
    return [e for e in export.entries() if e.suffix == ".md" and _named(PurePosixPath(e.path).stem)[1]]


def _databases(export: Export) -> list[Entry]:
    csvs = [e for e in export.entries() if e.suffix == ".csv" and _named(PurePosixPath(e.path).stem)[1]]
    # "Name <id>_all.csv" holds every row; the plain one only the view's: take one per database.
    by_id: dict[str, Entry] = {}
    for e in csvs:
        m = _NAMED.match(PurePosixPath(e.path).stem)
        assert m is not None
        if m["id"] not in by_id or m["all"]:
            by_id[m["id"]] = e
    return list(by_id.values())


def detect(export: Export) -> str | None:
    pages, dbs = _pages(export), _databases(export)
    if not pages and not dbs:
        return None
    return f"{len(pages)} pages" + (f" and {len(dbs)} databases" if dbs else "")


def count(export: Export, options: Options) -> int:
    return len(_pages(export)) + sum(len(_rows(export, d)) for d in _databases(export))


def _rows(export: Export, entry: Entry) -> list[dict[str, str]]:
    text = export.read(entry).decode("utf-8-sig", "replace")
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
            for row in csv.DictReader(io.StringIO(text, newline=""))]


def _norm(title: str) -> str:
    return re.sub(r"\W+", "", title.lower())


def read(export: Export, options: Options) -> Iterator[Result]:
    pages = _pages(export)
    page_times: dict[str, datetime | None] = {}  # folder of a page -> its time, for the files inside it
    page_titles: dict[str, str] = {}
    row_pages: set[tuple[str, str]] = set()  # (folder, normalised title) of pages that are database rows
    for entry in pages:
        try:
            result, when = _page(export, entry, options)
        except Exception as exc:  # one damaged page never stops the rest
            result, when = Skipped(entry.name, failure(exc), entry.path), None
        folder = entry.path[: -len(".md")]
        page_times[folder] = when
        page_titles[folder] = " > ".join(_path_titles(entry.path))
        row_pages.add((entry.parent, _norm(_path_titles(entry.path)[-1])))
        yield result
    for db in _databases(export):
        yield from guarded(db.name, db.path, _database, export, db, options, row_pages)
    for entry in export.entries():
        if entry.suffix in (".md", ".csv"):
            continue
        owner = next((f for f in sorted(page_times, key=len, reverse=True) if entry.path.startswith(f + "/")), None)
        if owner is None:
            continue
        title = page_titles[owner]
        yield from guarded(entry.name, entry.path, _attachment, export, entry, owner, title, page_times[owner])


def _attachment(export: Export, entry: Entry, owner: str, title: str, when: datetime | None) -> Result:
    return render.file(NAME, f"{_named(PurePosixPath(owner).name)[1]}/{entry.name}", origin=entry.path,
                       data=export.read(entry), filename=entry.name, content_type=None,
                       title=f"{title} ({entry.name})", captured_at=when, label=f"{title}: {entry.name}")


def _properties(lines: list[str]) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            if props:
                break
            continue
        m = _PROPERTY.match(line.strip())
        if m is None:
            break
        props[m["key"].strip().lower()] = m["value"].strip()
    return props


def _date(props: dict[str, str], keys: tuple[str, ...], options: Options) -> datetime | None:
    for k in keys:
        if props.get(k):
            value = props[k].split(" → ")[0]  # a date range: its start
            return iso(value, options.tz) or local(value, _DATES, options.tz)
    return None


def _tags(props: dict[str, str]) -> list[str]:
    return [t.strip() for k in _TAGS for t in props.get(k, "").split(",") if t.strip()]


def _page(export: Export, entry: Entry, options: Options) -> tuple[Result, datetime | None]:
    titles = _path_titles(entry.path)
    title = " > ".join(titles)
    ident = _named(PurePosixPath(entry.path).stem)[1] or entry.path
    try:
        text = export.read(entry).decode("utf-8-sig")
    except UnicodeDecodeError:
        return Skipped(title, "the page is not UTF-8 text", entry.path), None
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]  # the title, given apart
    props = _properties(lines)
    created = _date(props, _CREATED, options) or _date(props, ("date",), options)
    updated = _date(props, _UPDATED, options)
    body = "\n".join(lines).strip()
    if not body:
        return Skipped(title, "the page is empty", entry.path), created or updated
    return (render.note(NAME, ident, origin=entry.path, title=title, body=body, created=created or updated,
                        updated=updated, tags=_tags(props), label=title), created or updated)


def _database(export: Export, db: Entry, options: Options, row_pages: set[tuple[str, str]]) -> Iterator[Result]:
    titles = _path_titles(db.path)
    db_title = " > ".join(titles)
    db_id = _named(PurePosixPath(db.path).stem)[1] or db.path
    folder = f"{db.parent}/{titles[-1]} {db_id}".lstrip("/") if db.parent else f"{titles[-1]} {db_id}"
    try:
        rows = _rows(export, db)
    except (UnicodeDecodeError, csv.Error) as exc:
        yield Skipped(db_title, f"the database's CSV cannot be read: {exc}", db.path)
        return
    for n, row in enumerate(rows, 1):
        first = next(iter(row.values()), "") if row else ""
        name = first or f"row {n}"
        if (folder, _norm(first)) in row_pages:
            continue  # the row's own page was imported, properties and all
        cells = [(k, v) for k, v in row.items() if k and v]
        if not cells:
            yield Skipped(f"{db_title} > {name}", "the row is empty", db.path)
            continue
        props = {k.lower(): v for k, v in cells}
        created = _date(props, _CREATED, options) or _date(props, ("date",), options)
        # A row without a page of its own has no id in the export: it is named by its cells (two rows with
        # the same first cell are different rows).
        item = f"{db_id}/row-{hashlib.sha256(json.dumps(cells).encode()).hexdigest()[:16]}"
        body = "\n".join(f"- **{k}**: {v}" for k, v in cells)
        yield render.note(NAME, item, origin=db.path, title=f"{db_title} > {name}", body=body, created=created,
                          updated=_date(props, _UPDATED, options), tags=_tags(props), label=f"{db_title} > {name}")


FORMAT = Format(NAME, "Notion", "Settings > Export all workspace content (or a page's ... > Export), "
                "format Markdown & CSV: the zip", detect, count, read)
