"""Mem0 and OpenMemory memories.

* OpenMemory's export (its API's ``POST /api/v1/backup/export``, the app's Export): a zip with
  ``memories.json`` (``memories`` with ``id``, ``content``, ``metadata``, ``state``, ``created_at``,
  ``updated_at``, ``category_ids``; ``categories``; ``apps``) and ``memories.jsonl.gz`` (one memory a
  line: ``id``, ``content``, ``metadata``, ``created_at``, ``updated_at``, ``state``, ``app``,
  ``categories``).
* Mem0's own ``get_all()`` (the library, or the platform API) saved as JSON: a list, or ``{"results": [...]}``,
  of ``{"id", "memory", "hash", "metadata", "categories", "created_at", "updated_at", "user_id"}``.

Each memory becomes a note dated when it was made, with its categories as tags and its app and metadata
beside it; deleted memories are left out, archived and paused ones are kept (tagged so).
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator
from typing import Any

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import iso

NAME = "mem0"


MAX_UNPACKED = 256 * 1024 * 1024


def _gunzip(raw: bytes, name: str) -> bytes:
    """A ``.gz`` file's content, read no further than :data:`MAX_UNPACKED` (a small file may unpack to
    gigabytes); ExportError when it is damaged."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            data = fh.read(MAX_UNPACKED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ExportError(f"{name} is not a readable gzip file ({exc})") from None
    if len(data) > MAX_UNPACKED:
        raise ExportError(f"{name} unpacks to more than {MAX_UNPACKED // (1024 * 1024)} MB")
    return data


def _load(export: Export, entry: Entry) -> Any:
    raw = export.read(entry, limit=MAX_UNPACKED)
    if entry.path.endswith(".gz"):
        raw = _gunzip(raw, entry.path)
        return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    if entry.suffix == ".jsonl":
        return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    return json.loads(raw)


def _memories(export: Export) -> list[tuple[Entry, list[dict[str, Any]], dict[str, str]]]:
    """(file, memories, category names by id) of each file of memories; OpenMemory's JSON is preferred to its
    JSON lines (the same memories) when both are there."""
    found = []
    for e in export.candidates(".json", ".jsonl", ".gz", ""):
        if e.suffix == ".gz" and not e.path.endswith(".jsonl.gz"):
            continue
        try:
            with export.open_entry(e) as fh:
                head = fh.read(4096)
            if not e.path.endswith(".gz") and b'"memory"' not in head and b'"content"' not in head:
                continue
            data = _load(export, e)
        except (OSError, ValueError, ExportError, EOFError, UnicodeDecodeError):
            continue
        categories: dict[str, str] = {}
        if isinstance(data, dict) and isinstance(data.get("memories"), list):
            # OpenMemory names categories and apps by id; their names are listed beside the memories.
            categories = {str(c.get("id")): str(c.get("name")) for c in data.get("categories") or []
                          if isinstance(c, dict) and c.get("name")}
            categories.update({f"app:{a.get('id')}": str(a.get("name")) for a in data.get("apps") or []
                               if isinstance(a, dict) and a.get("name")})
            items = data["memories"]
        elif isinstance(data, dict) and isinstance(data.get("results"), list):
            items = data["results"]
        elif isinstance(data, list):
            items = data
        else:
            continue
        items = [m for m in items if isinstance(m, dict) and ("memory" in m or "content" in m)
                 and ("created_at" in m or "hash" in m or "state" in m)]
        if items:
            found.append((e, items, categories))
    if any(e.name == "memories.json" for e, _, _ in found):
        found = [f for f in found if not f[0].path.endswith(".jsonl.gz")]
    return found


def detect(export: Export) -> str | None:
    found = _memories(export)
    if not found:
        return None
    return f"{sum(len(items) for _, items, _ in found)} memories"


def count(export: Export, options: Options) -> int:
    return sum(len(items) for _, items, _ in _memories(export))


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry, items, categories in _memories(export):
        for m in items:
            yield from guarded(str(m.get("id") or "a memory"), entry.path, _memory, m, entry, categories, options)


def _memory(m: dict[str, Any], entry: Entry, categories: dict[str, str], options: Options) -> Result:
    text = str(m.get("memory") or m.get("content") or "").strip()
    label = text[:60] or str(m.get("id") or "a memory")
    state = str(m.get("state") or "active").lower()
    if state == "deleted" or m.get("deleted_at"):
        return Skipped(label, "deleted in OpenMemory", entry.path)
    if not text:
        return Skipped(label, "the memory is empty", entry.path)
    names = [str(c) for c in m.get("categories") or [] if isinstance(c, str)]
    names += [categories[str(c)] for c in m.get("category_ids") or [] if str(c) in categories]
    app = m.get("app") or categories.get(f"app:{m.get('app_id')}")
    if state in ("archived", "paused"):
        names.append(state)
    metadata = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
    details = [("App", str(app or "")), ("User", str(m.get("user_id") or ""))]
    details += [(str(k), json.dumps(v) if not isinstance(v, str) else v) for k, v in (metadata or {}).items()
                if v not in (None, "", [], {})][:20]
    created, updated = iso(m.get("created_at"), options.tz), iso(m.get("updated_at"), options.tz)
    item = str(m.get("id") or m.get("hash") or label)
    title = text if len(text) <= 80 else text[:79].rstrip() + "…"
    return render.note(NAME, item, origin=entry.path, title=title, body=text, created=created or updated,
                       updated=updated, tags=["memory", *names], details=details, label=label)


FORMAT = Format(NAME, "Mem0 / OpenMemory memories", "OpenMemory: Export (a zip with memories.json); Mem0: the "
                "JSON of get_all()", detect, count, read, aliases=("openmemory", "mem0ai"))
