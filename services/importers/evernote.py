"""Evernote's ENEX export (``File > Export Notes...``, one ``.enex`` file per notebook).

An ``<en-export>`` holds ``<note>`` elements: ``<title>``, ``<content>`` (ENML: XHTML in a CDATA section),
``<created>`` and ``<updated>`` (``20240305T143211Z``, UTC), ``<tag>``s, ``<note-attributes>``
(``source-url``, ``author``...) and ``<resource>``s (base64 ``<data>``, ``<mime>``, ``<file-name>``),
which ENML points at by the MD5 of their bytes (``<en-media hash="...">``).  A note becomes Markdown; its
images and PDFs go through the extractors as files of their own, dated like the note.  The file is parsed
as it is read (a notebook of a few GB is fine), with no DTD, entity or network access.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import PurePosixPath

from lxml import etree

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.html_markdown import html_to_markdown
from services.importers.model import ExportError, Options, Result, Skipped, guarded

NAME = "evernote"


def _files(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".enex", ".xml", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(4096)
        except (OSError, ExportError):
            continue
        if b"<en-export" in head:
            out.append(e)
    return out


def detect(export: Export) -> str | None:
    files = _files(export)
    if not files:
        return None
    return f"{count(export, Options())} notes in {len(files)} notebook{'s' if len(files) > 1 else ''}"


def count(export: Export, options: Options) -> int:
    total = 0
    for e in _files(export):
        with export.open_entry(e) as fh:
            tail = b""
            for block in iter(lambda: fh.read(1024 * 1024), b""):
                data = tail + block
                total += data.count(b"</note>")
                tail = data[-7:]
                total -= tail.count(b"</note>")  # counted again with the next block
    return total


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry in _files(export):
        yield from guarded(entry.name, entry.path, _notebook, export, entry)


def _notebook(export: Export, entry: Entry) -> Iterator[Result]:
    notebook = PurePosixPath(entry.path).stem
    seen: dict[str, int] = {}
    n = 0
    try:
        with export.open_entry(entry) as fh:
            parser = etree.iterparse(fh, events=("end",), tag="note", huge_tree=True, resolve_entities=False,
                                     no_network=True, load_dtd=False, recover=False)
            for _event, el in parser:
                n += 1
                try:
                    yield from guarded(f"{notebook}: note {n}", entry.path, _note, el, entry, notebook, n, seen)
                finally:
                    el.clear()  # a notebook's notes are not kept in memory once read
                    while el.getprevious() is not None:
                        del el.getparent()[0]
    except etree.XMLSyntaxError as exc:
        yield Skipped(f"{notebook}: notes after note {n}", f"the rest of the file is not valid ENEX XML "
                      f"({exc.msg}, line {exc.lineno}); export the notebook again", entry.path)


def _text(el: etree._Element, tag: str) -> str:
    found = el.find(tag)
    return (found.text or "").strip() if found is not None else ""


def _when(value: str) -> datetime | None:
    for fmt in ("%Y%m%dT%H%M%SZ", "%Y%m%dT%H%M%S"):
        try:
            return datetime.strptime(value.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _note(el: etree._Element, entry: Entry, notebook: str, n: int, seen: dict[str, int]) -> Iterator[Result]:
    title = _text(el, "title") or None
    label = f"{notebook}: {title or f'note {n}'}"
    created, updated = _when(_text(el, "created")), _when(_text(el, "updated"))
    # ENEX carries no note id: the notebook, the creation time and the title name a note for good.
    key = f"{notebook}/{_text(el, 'created') or 'undated'}/{hashlib.sha256((title or '').encode()).hexdigest()[:12]}"
    seen[key] = seen.get(key, 0) + 1
    item = key if seen[key] == 1 else f"{key}-{seen[key]}"
    resources = []
    for res in el.findall("resource"):
        data_el = res.find("data")
        try:
            data = base64.b64decode("".join((data_el.text or "").split()), validate=True) if data_el is not None \
                else b""
        except (binascii.Error, ValueError):
            yield Skipped(f"{label}: an attachment", "the attachment's data is not valid base64", entry.path)
            continue
        name = _text(res, "resource-attributes/file-name") or None
        mime = _text(res, "mime") or "application/octet-stream"
        resources.append((hashlib.md5(data, usedforsecurity=False).hexdigest(), name, mime, data))
    media = {h: (name or f"attachment {i}") for i, (h, name, _m, _d) in enumerate(resources, 1)}
    content = el.find("content")
    body = html_to_markdown(content.text or "", media=media) if content is not None and content.text else ""
    if not body.strip() and not resources and not title:
        yield Skipped(label, "the note is empty", entry.path)
        return
    tags = [t.text.strip() for t in el.findall("tag") if t.text and t.text.strip()]
    source_url = _text(el, "note-attributes/source-url")
    links = [(source_url, source_url)] if source_url.startswith(("http://", "https://")) else []
    details = [("Notebook", notebook), ("Author", _text(el, "note-attributes/author"))]
    if resources:
        details.append(("Attachments", ", ".join(media.values())))
    yield render.note(NAME, item, origin=entry.path, title=title, body=body, created=created or updated,
                      updated=updated, tags=tags, links=links, details=details, label=label, notebook=notebook)
    for i, (digest, name, mime, data) in enumerate(resources, 1):
        filename = name or f"attachment-{i}{_extension(mime)}"
        yield render.file(NAME, f"{item}/{digest}", origin=entry.path, data=data, filename=filename,
                          content_type=mime, title=f"{title or notebook} ({filename})", captured_at=created or updated,
                          label=f"{label}: {filename}", note=item)


def _extension(mime: str) -> str:
    import mimetypes

    return mimetypes.guess_extension(mime.split(";")[0].strip()) or ""


FORMAT = Format(NAME, "Evernote", "File > Export Notes... as ENEX (.enex), one file per notebook or several",
                detect, count, read, aliases=("enex",))
