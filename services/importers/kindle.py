"""Kindle's ``My Clippings.txt`` (on the Kindle's own drive, in ``documents/``): every highlight, note and
bookmark made on the device, each as::

    Book Title (Author)
    - Your Highlight on page 12 | Location 180-182 | Added on Tuesday, March 5, 2024 2:32:11 PM

    The highlighted text
    ==========

(older devices write ``- Highlight Loc. 180-82 | Added on ...``; UK devices ``5 March 2024 14:32:11``).  One
record per highlight, with its book, author, page, location and the time it was made (in the import's zone:
the Kindle writes no zone); a note made on a highlight joins it; bookmarks hold no text and are left out.
A highlight clipped twice (Kindle appends, it never replaces) is kept once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import local

NAME = "kindle"
SEPARATOR = "=========="
_META = re.compile(r"^-\s*(?:Your\s+)?(?P<kind>Highlight|Note|Bookmark|Clip\w*)\b(?P<where>.*?)\|\s*Added on\s+"
                   r"(?P<when>.+)$", re.I)
_PAGE = re.compile(r"\bpage\s+(?P<v>[\w-]+)", re.I)
_LOCATION = re.compile(r"\b(?:location|loc\.)\s*(?P<v>[\d-]+)", re.I)
_DATES = ("%A, %B %d, %Y %I:%M:%S %p", "%A, %B %d, %Y, %I:%M:%S %p", "%A, %B %d, %Y, %I:%M %p",
          "%A, %B %d, %Y %I:%M %p", "%A, %d %B %Y %H:%M:%S", "%A, %d %B %Y %H:%M", "%A %d %B %Y %H:%M:%S",
          "%B %d, %Y %I:%M:%S %p", "%d %B %Y %H:%M:%S")


def _files(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".txt", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(8192).decode("utf-8", "replace")
        except (OSError, ExportError):
            continue
        if SEPARATOR in head and _META.search(head.replace("\r", "").split(SEPARATOR)[0].split("\n", 2)[1]
                                              if head.count("\n") > 1 else ""):
            out.append(e)
    return out


@dataclass
class Clip:
    book: str
    author: str | None
    kind: str
    page: str | None
    location: str | None
    at: datetime | None
    text: str
    notes: list[str] = field(default_factory=list)


def _clips(export: Export, entry: Entry, options: Options) -> Iterator[Clip | Skipped]:
    text = export.read(entry).decode("utf-8-sig", "replace").replace("\r\n", "\n").replace("\ufeff", "")
    for n, block in enumerate(text.split(SEPARATOR), 1):
        lines = block.strip("\n").split("\n")
        if not any(ln.strip() for ln in lines):
            continue
        if len(lines) < 2:
            yield Skipped(f"clipping {n}", "it has no book line and no details line", entry.path)
            continue
        head, meta = lines[0].strip(), _META.match(lines[1].strip())
        if meta is None:
            yield Skipped(f"clipping {n} ({head[:50]})", "its details line is not Kindle's "
                          "('- Your Highlight ... | Added on ...')", entry.path)
            continue
        book, author = head, None
        if head.endswith(")") and " (" in head:
            book, _, author = head[:-1].rpartition(" (")
        where = meta["where"]
        page, loc = _PAGE.search(where), _LOCATION.search(where)
        yield Clip(book=book.strip(), author=(author or "").strip() or None, kind=meta["kind"].lower(),
                   page=page["v"] if page else None, location=loc["v"] if loc else None,
                   at=local(meta["when"], _DATES, options.tz), text="\n".join(lines[2:]).strip())


def detect(export: Export) -> str | None:
    files = _files(export)
    if not files:
        return None
    return f"{count(export, Options())} clippings"


def count(export: Export, options: Options) -> int:
    return sum(1 for e in _files(export) for _ in _clips(export, e, options))


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry in _files(export):
        yield from guarded(entry.name, entry.path, _read, export, entry, options)


def _end(location: str | None) -> str | None:
    if not location:
        return None
    first, _, last = location.partition("-")
    if last and len(last) < len(first):  # "180-82" on older devices means 180-182
        last = first[: len(first) - len(last)] + last
    return last or first


def _read(export: Export, entry: Entry, options: Options) -> Iterator[Result]:
    highlights: list[Clip] = []
    for clip in _clips(export, entry, options):
        if isinstance(clip, Skipped):
            yield clip
            continue
        if clip.kind == "bookmark":
            yield Skipped(f"{clip.book}: bookmark at {clip.location or clip.page}", "a bookmark holds no text",
                          entry.path)
            continue
        if clip.kind == "note":
            # A note is made on the highlight that ends where it sits.
            owner = next((h for h in reversed(highlights) if h.book == clip.book
                          and _end(h.location) == _end(clip.location)), None)
            if owner is not None and clip.text:
                owner.notes.append(clip.text)
                continue
        highlights.append(clip)
    seen: set[str] = set()
    for h in highlights:
        label = f"{h.book}, location {h.location or '?'}"
        if not h.text and not h.notes:
            yield Skipped(label, "the clipping is empty (a highlight of a picture, or clipped past the "
                          "publisher's limit)", entry.path)
            continue
        item = hashlib.sha256("\x1f".join([h.book, h.location or h.page or "", h.text]).encode()).hexdigest()[:20]
        if item in seen:
            yield Skipped(label, "the same highlight was clipped again", entry.path, duplicate=True)
            continue
        seen.add(item)
        where = f"location {h.location}" if h.location else (f"page {h.page}" if h.page else "")
        title = f"{h.book} ({where})" if where else h.book
        quote = "\n".join(f"> {ln}" if ln.strip() else ">" for ln in h.text.split("\n")) if h.kind != "note" \
            else h.text
        body = quote + "".join(f"\n\nMy note: {n}" for n in h.notes)
        yield render.note(NAME, item, origin=entry.path, title=title, body=body, created=h.at,
                          tags=["kindle", "highlight" if h.kind != "note" else "note"],
                          details=[("Book", h.book), ("Author", h.author or ""), ("Page", h.page or ""),
                                   ("Location", h.location or "")], label=label, book=h.book)


FORMAT = Format(NAME, "Kindle clippings", "the Kindle's documents/My Clippings.txt (connect it by USB)",
                detect, count, read, aliases=("clippings", "my-clippings"))
