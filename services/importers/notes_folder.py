"""A folder of notes as Markdown, text or HTML files: what Bear (File > Export Notes, Markdown or HTML),
Apple Notes (through an exporter app, or Notes' own "Export as" one note at a time), Obsidian, Joplin and
most note apps leave behind.  A folder zipped is the same.

Each file is a note titled by its front matter, its first heading or its name, dated by its front matter
(``date``, ``created``) or else by the file's own time (Bear and the Apple Notes exporters set the file's
time to the note's).  Bear's inline ``#tags`` (``#garden``, ``#work/plans``, ``#multi word#``) and the
folders a note sits in become its tags.  Pictures and PDFs beside the notes go through the extractors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import PurePosixPath

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.html_markdown import html_to_markdown
from services.importers.model import Options, Result, Skipped, failure, guarded
from services.importers.times import iso

NAME = "notes"
NOTE_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".html", ".htm")
_FRONT = re.compile(r"\A---\n(.*?)\n---\n?", re.S)
_BEAR_TAG = re.compile(r"(?<![\w#/&])#(?P<multi>[^\s#][^#\n]{0,80}?[^\s#])#|(?<![\w#/&])#(?P<tag>[^\s#\d\W][\w/-]*)",
                       re.U)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def _root(export: Export) -> str:
    """The single top folder every file sits in (a zipped folder), left out of the notes' names."""
    tops = {PurePosixPath(e.path).parts[0] for e in export.entries()}
    if len(tops) == 1 and all(len(PurePosixPath(e.path).parts) > 1 for e in export.entries()):
        return tops.pop() + "/"
    return ""


def _notes(export: Export) -> list[Entry]:
    return [e for e in export.entries() if e.suffix in NOTE_SUFFIXES]


def detect(export: Export) -> str | None:
    notes = _notes(export)
    if not notes:
        return None
    return f"{len(notes)} notes"


def count(export: Export, options: Options) -> int:
    return len(export.entries())


def read(export: Export, options: Options) -> Iterator[Result]:
    root = _root(export)
    times: dict[str, datetime | None] = {}
    for entry in _notes(export):
        try:
            result, when = _note(export, entry, root, options)
        except Exception as exc:  # one damaged note never stops the rest
            result, when = Skipped(entry.name, failure(exc), entry.path), None
        times[entry.path.rsplit(".", 1)[0]] = when
        yield result
    for entry in export.entries():
        if entry.suffix in NOTE_SUFFIXES:
            continue
        rel = entry.path[len(root):]
        # Bear puts a note's pictures in a folder named after it: they take the note's time.
        owner = next((times[k] for k in times if entry.path.startswith(k + "/")), None)
        when = owner or export.modified(entry, options.tz)
        yield from guarded(rel, entry.path, _attachment, export, entry, rel, when)


def _attachment(export: Export, entry: Entry, rel: str, when: datetime | None) -> Result:
    return render.file(NAME, rel, origin=entry.path, data=export.read(entry), filename=entry.name,
                       content_type=None, title=None, captured_at=when, label=rel)


def bear_tags(text: str) -> list[str]:
    """Bear's inline tags: ``#tag``, ``#nested/tag`` and ``#multi word tag#`` (not headings, not ``#1``)."""
    out = []
    for m in _BEAR_TAG.finditer(text):
        name = (m["multi"] or m["tag"] or "").strip()
        if name and name not in out:
            out.append(name)
    return out


def _note(export: Export, entry: Entry, root: str, options: Options) -> tuple[Result, datetime | None]:
    rel = entry.path[len(root):]
    label = rel
    try:
        text = export.read(entry, limit=64 * 1024 * 1024).decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = export.read(entry, limit=64 * 1024 * 1024).decode("cp1252")
        except UnicodeDecodeError:
            return Skipped(label, "the file is not text in a known encoding", entry.path), None
    text = text.replace("\r\n", "\n")
    title: str | None = None
    front: dict[str, str] = {}
    if entry.suffix in (".html", ".htm"):
        found = _HTML_TITLE.search(text)
        title = " ".join(found.group(1).split()) if found else None
        text = html_to_markdown(text)
    else:
        m = _FRONT.match(text)
        if m:
            for line in m.group(1).split("\n"):
                key, sep, value = line.partition(":")
                if sep and not key.startswith((" ", "\t")):
                    front[key.strip().lower()] = value.strip().strip("'\"")
            text = text[m.end():]
    heading = re.match(r"\s*#\s+(.+)", text)
    if heading and not title:
        title = heading.group(1).strip()
        if front.get("title") in (None, title):
            text = text[heading.end():]  # the title, given apart
    title = front.get("title") or title or PurePosixPath(entry.path).stem
    if not text.strip():
        return Skipped(label, "the note is empty", entry.path), None
    when = None
    for key in ("date", "created", "created_at", "creation date"):
        if front.get(key):
            when = iso(front[key], options.tz)
            if when:
                break
    updated = iso(front.get("updated") or front.get("modified") or "", options.tz)
    file_time = export.modified(entry, options.tz)
    folders = [p for p in PurePosixPath(rel).parts[:-1]]
    tags = [*folders, *bear_tags(text)]
    if front.get("tags"):
        tags += [t.strip("#[]' \"") for t in re.split(r"[,\s]+", front["tags"]) if t.strip("#[]' \"")]
    created = when or file_time
    return (render.note(NAME, rel, origin=entry.path, title=title, body=text, created=created,
                        updated=updated or (file_time if when else None), tags=tags, label=label,
                        folder="/".join(folders) or None), created)


FORMAT = Format(NAME, "notes folder (Bear, Apple Notes, Obsidian...)", "Bear: File > Export Notes (Markdown "
                "or HTML); Apple Notes: an exporter app's Markdown or HTML folder; any folder of .md, .txt or "
                ".html notes, or its zip", detect, count, read, aliases=("bear", "apple-notes", "obsidian",
                                                                         "markdown", "folder"))
