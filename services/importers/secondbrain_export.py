"""secondbrain's own export (``GET /v1/export``, ``secondbrain export``), read back into an account, so a person
can move their memory from one server to another.

The export's ``sources.jsonl`` lists every version of every source; each version whose job succeeded comes back
from its original file (``raw/<artifact id>/<name>``) with its title, its time and its provenance (the original
source address, in ``import.source_uri``).  Tags are in a note's own text (its front matter), so they come back
with it.  A version whose original file expired under the retention setting comes back from the text the
export kept (``documents/<id>.json``) as a note.  The versions of one source are imported in order, each once
the one before it is indexed, so the source keeps its versions.  ``conversations.jsonl`` comes back as the
conversations they were, with their times; what their answers cite (sources, files, passages, links) is
pointed at the imported copies, whose ids the server derives for the importing person from the cited
sources' addresses and the SHA-256 of the files imported for them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from secondbrain.tags import normalise_tags
from services.importers.archive import Export
from services.importers.format import Format
from services.importers.model import (
    Capture,
    Conversation,
    ConversationTurn,
    ExportError,
    Options,
    Result,
    Skipped,
)

NAME = "secondbrain"
EXPORT_FORMAT = "secondbrain-export"
MAX_SOURCE_URI = 1900  # an imported item's source is import:secondbrain:<original>, at most 2000 characters


def _manifest(export: Export) -> dict[str, Any] | None:
    entry = export.get("manifest.json")
    if entry is None or export.get("sources.jsonl") is None:
        return None
    try:
        data = json.loads(export.read(entry, 1024 * 1024))
    except (ValueError, ExportError):
        return None
    return data if isinstance(data, dict) and data.get("format") == EXPORT_FORMAT else None


def detect(export: Export) -> str | None:
    manifest = _manifest(export)
    if manifest is None:
        return None
    counts = manifest.get("counts") or {}
    return (f"{counts.get('sources', 0)} source versions and {counts.get('conversations', 0)} conversations of "
            f"{manifest.get('user_id', 'a user')}")


def _lines(export: Export, name: str) -> list[dict[str, Any]]:
    if export.get(name) is None:
        return []
    rows = []
    for line in export.read(name).decode("utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            if isinstance(item, dict):
                rows.append(item)
    return rows


def count(export: Export, options: Options) -> int:
    return len(_lines(export, "sources.jsonl")) + len(_lines(export, "conversations.jsonl"))


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _number(row: dict[str, Any]) -> int:
    """A row's version number (a job that made no document has none: it is skipped anyway)."""
    version = row.get("version")
    return version if isinstance(version, int) and version > 0 else 1


def _raw_entry(export: Export, artifact_id: str) -> str | None:
    prefix = f"raw/{artifact_id}/"
    found = [e.path for e in export.entries() if e.path.startswith(prefix)]
    return found[0] if found else None


def _version(export: Export, row: dict[str, Any], wave: int, current: bool) -> Result:
    uri = str(row.get("source_uri") or "")
    label = str(row.get("title") or uri or row.get("source_id"))
    if row.get("status") != "succeeded":
        return Skipped(label, f"its job did not succeed where it came from ({row.get('status')}); there is nothing "
                              "of it to bring", "sources.jsonl")
    if len(uri) > MAX_SOURCE_URI:
        return Skipped(label, "its source address is too long to import", "sources.jsonl")
    note = uri.startswith("note:") or row.get("modality") == "note"
    common: dict[str, Any] = {
        "source_uri": f"import:{NAME}:{uri}", "label": label, "title": row.get("title"),
        "captured_at": _when(row.get("captured_at")), "wave": wave, "current": current,
        "attributes": {"import.source_uri": uri, **({"kind": "note"} if note else {}),
                       # the source's tags there are its tags here (taken in with its first version)
                       **({"import.tags": " ".join(normalise_tags(str(t) for t in row["tags"]))}
                          if isinstance(row.get("tags"), list) and row["tags"] else {})}}
    raw = _raw_entry(export, str(row.get("artifact_id"))) if row.get("raw") == "kept" else None
    if raw is not None:
        kind: Literal["note", "file"] = "note" if note else "file"
        return Capture(kind=kind, content=lambda: export.read(raw), filename=raw.rsplit("/", 1)[-1],
                       content_type=str(row.get("content_type") or "application/octet-stream"), **common)
    doc = f"documents/{row.get('document_id')}.json"
    text = json.loads(export.read(doc)).get("text") if export.get(doc) is not None else None
    if not text:
        return Skipped(label, "neither its original file nor its text is in the export", "sources.jsonl")
    body = (f"# {row.get('title')}\n\n{text}" if row.get("title") else str(text)).encode("utf-8")
    return Capture(kind="note", content=body, content_type="text/markdown", filename=None,
                   **{**common, "attributes": {**common["attributes"], "kind": "note", "import.from": "text"}})


def _cited(value: Any, key: str) -> set[str]:
    """Every id under ``key`` (``source_id``, ``artifact_id``) that an answer's records name."""
    if isinstance(value, dict):
        return set().union(*(({v} if k == key and isinstance(v, str) else _cited(v, key)) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_cited(v, key) for v in value))
    return set()


class _Imported:
    """What was imported for each version: its source's address here, and its bytes' digest (read only for the
    files a conversation cites)."""

    def __init__(self) -> None:
        self.addresses: dict[str, str] = {}  # source id there -> source address here
        self.captures: dict[str, Capture] = {}  # artifact id there -> what was imported for it
        self.digests: dict[str, str] = {}

    def add(self, row: dict[str, Any], capture: Capture) -> None:
        self.addresses[str(row.get("source_id"))] = capture.source_uri
        self.captures[str(row.get("artifact_id"))] = capture

    def digest(self, artifact_id: str) -> str:
        if artifact_id not in self.digests:
            self.digests[artifact_id] = hashlib.sha256(self.captures[artifact_id].data()).hexdigest()
        return self.digests[artifact_id]


def _conversation(row: dict[str, Any], imported: _Imported) -> Result:
    key = str(row.get("conversation_id") or "")
    turns = tuple(ConversationTurn(role=t["role"], content=str(t.get("content") or ""),
                                   created_at=_when(t.get("created_at")) or datetime.now(UTC),
                                   meta=t.get("meta") if isinstance(t.get("meta"), dict) else {})
                  for t in row.get("turns") or () if t.get("role") in ("user", "assistant"))
    label = str(row.get("title") or (turns[0].content[:80] if turns else key))
    if not key or not turns:
        return Skipped(label, "an empty conversation", "conversations.jsonl")
    metas = [dict(t.meta) for t in turns]
    sources = {s: imported.addresses[s] for s in sorted(_cited(metas, "source_id")) if s in imported.addresses}
    files = {a: imported.digest(a) for a in sorted(_cited(metas, "artifact_id")) if a in imported.captures}
    return Conversation(key=key, label=label, title=row.get("title"),
                        created_at=_when(row.get("created_at")) or turns[0].created_at, turns=turns,
                        sources=sources, artifacts=files)


def read(export: Export, options: Options) -> Iterator[Result]:
    rows = _lines(export, "sources.jsonl")
    # Each source's versions in order: the n-th version number of the export goes in wave n-1, sent once the
    # earlier waves are indexed (by version number, not by a source's count of versions imported: a version
    # whose predecessor did not come still goes after every wave that may hold one).
    rows.sort(key=lambda r: (_number(r), str(r.get("source_id"))))
    waves = {number: wave for wave, number in enumerate(sorted({_number(r) for r in rows}))}
    newest = {str(r.get("source_id")): _number(r) for r in rows}  # (sorted: the last one of a source is its newest)
    imported = _Imported()
    for row in rows:
        result = _version(export, row, waves[_number(row)], _number(row) == newest[str(row.get("source_id"))])
        if isinstance(result, Capture):
            imported.add(row, result)
        yield result
    for row in _lines(export, "conversations.jsonl"):
        yield _conversation(row, imported)


FORMAT = Format(name=NAME, label="secondbrain", what="Settings > Export, or `secondbrain export -o FILE.zip`: the "
                "ZIP with manifest.json, sources.jsonl, raw/ and conversations.jsonl",
                detect=detect, count=count, read=read, aliases=("secondbrain-export",))
