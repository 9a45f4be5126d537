"""Google Keep, from Google Takeout: one JSON file per note in ``Takeout/Keep/`` (with an HTML twin we leave
aside), and its attachments beside it.

A note holds ``title``, ``textContent`` or a checklist (``listContent``: ``text`` and ``isChecked``),
``labels``, ``annotations`` (links Keep found in it), ``attachments`` (``filePath``, ``mimetype``),
``createdTimestampUsec`` and ``userEditedTimestampUsec`` (microseconds since 1970), and ``isTrashed`` /
``isArchived`` / ``isPinned``.  A note is dated when it was created (older exports only say when it was last
edited); notes in Keep's trash are skipped.  Keep gives a note no id: it is named by its file in the Keep
folder (Takeout names each note's file apart), never by its time alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import from_epoch

NAME = "keep"
_MARKERS = (b'"userEditedTimestampUsec"', b'"createdTimestampUsec"')


def _looks_like_note(export: Export, entry: Entry) -> bool:
    try:
        with export.open_entry(entry) as fh:
            head = fh.read(65536)
    except (OSError, ExportError):
        return False
    return head.lstrip().startswith(b"{") and any(m in head for m in _MARKERS) and \
        (b'"textContent"' in head or b'"listContent"' in head or b'"title"' in head)


def _notes(export: Export) -> list[Entry]:
    candidates = export.candidates(".json")
    # Takeout keeps them in a Keep folder; a folder of them alone is fine too.
    in_keep = [e for e in candidates if "keep" in (p.lower() for p in PurePosixPath(e.path).parts[:-1])]
    pool = in_keep or candidates
    sample = pool[:5]
    if not sample or not any(_looks_like_note(export, e) for e in sample):
        return []
    return pool


def detect(export: Export) -> str | None:
    notes = _notes(export)
    if not notes:
        return None
    folders = sorted({e.parent or "." for e in notes})
    return f"{len(notes)} notes in {', '.join(folders[:3])}"


def count(export: Export, options: Options) -> int:
    return len(_notes(export))


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry in _notes(export):
        yield from guarded(entry.name, entry.path, _note, export, entry)


def _note(export: Export, entry: Entry) -> Iterator[Result]:
    label = PurePosixPath(entry.path).stem
    try:
        raw = json.loads(export.read(entry, limit=64 * 1024 * 1024))
    except (ValueError, UnicodeDecodeError) as exc:
        yield Skipped(label, f"not a readable Keep note: {exc}", entry.path)
        return
    except ExportError as exc:
        yield Skipped(label, str(exc), entry.path)
        return
    if not isinstance(raw, dict) or not any(k in raw for k in ("textContent", "listContent", "title")):
        yield Skipped(label, "not a Keep note (no text, checklist or title in it)", entry.path)
        return
    note: dict[str, Any] = raw
    title = str(note.get("title") or "").strip() or None
    label = title or label
    if note.get("isTrashed"):
        yield Skipped(label, "in Keep's trash", entry.path)
        return
    created = from_epoch(note.get("createdTimestampUsec"))
    edited = from_epoch(note.get("userEditedTimestampUsec"))
    body = _body(note)
    attachments = [a for a in note.get("attachments") or [] if isinstance(a, dict) and a.get("filePath")]
    if not body.strip() and not attachments and not title:
        yield Skipped(label, "the note is empty", entry.path)
        return
    # Keep writes no id of its own: a note is named by its file in the export (unique there, and the same in
    # the next export while its title is), never by its creation time alone (notes made in the same
    # microsecond, as a script or a sync makes them, are still different notes).
    item = _identity(entry)
    tags = [str(lb.get("name")) for lb in note.get("labels") or [] if isinstance(lb, dict) and lb.get("name")]
    tags += [flag for flag, key in (("archived", "isArchived"), ("pinned", "isPinned")) if note.get(key)]
    links = [(str(a.get("title") or a.get("url")), str(a.get("url"))) for a in note.get("annotations") or []
             if isinstance(a, dict) and str(a.get("url") or "").startswith(("http://", "https://"))]
    details = [("Attachments", ", ".join(str(a["filePath"]) for a in attachments))] if attachments else []
    yield render.note(NAME, item, origin=entry.path, title=title, body=body, created=created or edited,
                      updated=edited, tags=tags, links=links, details=details, label=label)
    for att in attachments:
        yield _attachment(export, entry, att, item, title or label, created or edited)


def _identity(entry: Entry) -> str:
    """The note's file, from the Keep folder on (``Keep/Groceries.json``): the same whatever the Takeout zip
    or folder around it is called."""
    parts = PurePosixPath(entry.path).parts
    lowered = [p.lower() for p in parts]
    start = len(lowered) - 1 - lowered[::-1].index("keep") if "keep" in lowered[:-1] else len(parts) - 1
    return "/".join(parts[start:])


def _body(note: dict[str, Any]) -> str:
    if isinstance(note.get("listContent"), list):
        lines = []
        for it in note["listContent"]:
            if isinstance(it, dict) and str(it.get("text") or "").strip():
                mark = "x" if it.get("isChecked") else " "
                lines.append(f"- [{mark}] {' '.join(str(it['text']).split())}")
        text = str(note.get("textContent") or "").strip()
        return "\n".join(lines) + (f"\n\n{text}" if text else "")
    return str(note.get("textContent") or "")


def _attachment(export: Export, entry: Entry, att: dict[str, Any], item: str, note_title: str,
                when: Any) -> Result:
    path = str(att["filePath"])
    folder = entry.parent
    found = export.get(f"{folder}/{path}" if folder else path)
    if found is None:  # Takeout sometimes writes .jpeg in the note and .jpg on disk
        stem = PurePosixPath(path).stem
        found = next((e for e in export.entries() if e.parent == folder and PurePosixPath(e.path).stem == stem
                      and e.suffix != ".json"), None)
    label = f"{note_title}: {path}"
    if found is None:
        return Skipped(label, "the attachment is not in the export", entry.path)
    target = found

    def data() -> bytes:
        return export.read(target)

    return render.file(NAME, f"{item}/{path}", origin=found.path, data=data, filename=found.name,
                       content_type=att.get("mimetype"), title=f"{note_title} ({found.name})", captured_at=when,
                       label=label, note=item)


FORMAT = Format(NAME, "Google Keep", "Google Takeout: choose Keep, download the zip", detect, count, read,
                aliases=("google-keep", "takeout"))
