"""What Khoj lets you take out, as its code documents it:

* Settings > Export chats: ``khoj-conversations.zip`` with ``conversations.json``, a list of
  ``{"title", "agent", "created_at", "updated_at", "conversation_log": {"chat": [{"by": "you"|"khoj",
  "message", "created": "2024-03-05 14:32:11", "turnId", ...}]}}`` (times local to the Khoj server, no zone).
  Each conversation becomes chat records, one per day, with "You" and the agent as speakers.
* Its memories (``GET /api/memories``): ``[{"id", "raw", "created_at"}]``, each a note.
* Its indexed files (``GET /api/content/files?truncated=false``): ``{"files": [{"file_name", "raw_text",
  "updated_at"}]}``, each a note titled by the file, dated when Khoj last indexed it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import iso

NAME = "khoj"


def _kind(data: Any) -> str | None:
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data[:5]):
        if all("conversation_log" in x for x in data[:5]):
            return "conversations"
        if all("raw" in x and "created_at" in x for x in data[:5]):
            return "memories"
    if isinstance(data, dict) and isinstance(data.get("files"), list) and \
            all(isinstance(x, dict) and "raw_text" in x for x in data["files"][:5]):
        return "files"
    return None


def _docs(export: Export) -> list[tuple[Entry, str, Any]]:
    out = []
    for e in export.candidates(".json", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(4096)
            if not any(m in head for m in (b'"conversation_log"', b'"raw"', b'"raw_text"')):
                continue
            data = json.loads(export.read(e))
        except (OSError, ValueError, ExportError, UnicodeDecodeError):
            continue
        kind = _kind(data)
        if kind:
            out.append((e, kind, data))
    return out


def detect(export: Export) -> str | None:
    docs = _docs(export)
    if not docs:
        return None
    sizes = {"conversations": 0, "memories": 0, "files": 0}
    for _e, kind, data in docs:
        sizes[kind] += len(data["files"] if kind == "files" else data)
    return ", ".join(f"{n} {k}" for k, n in sizes.items() if n)


def count(export: Export, options: Options) -> int:
    total = 0
    for _e, kind, data in _docs(export):
        if kind == "conversations":
            total += sum(len({w.astimezone(options.tz).date() for m in _log(c)
                              if (w := iso(m.get("created"), options.tz)) is not None}) for c in data)
        else:
            total += len(data["files"] if kind == "files" else data)
    return total


def _log(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    log = conversation.get("conversation_log")
    chat = log.get("chat") if isinstance(log, dict) else None
    return [m for m in chat or [] if isinstance(m, dict)]


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry, kind, data in _docs(export):
        if kind == "conversations":
            for conversation in data:
                yield from guarded(str(conversation.get("title") or "a conversation"), entry.path, _conversation,
                                   conversation, entry, options)
        elif kind == "memories":
            for m in data:
                yield from guarded("a memory", entry.path, _memory, m, entry, options)
        else:
            for f in data["files"]:
                yield from guarded(str(f.get("file_name") or "a file"), entry.path, _file, f, entry, options)


def _message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, list):  # a message with images: its text parts
        return "\n".join(str(p.get("text") or "") for p in message if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _conversation(c: dict[str, Any], entry: Entry, options: Options) -> Iterator[Result]:
    agent = str(c.get("agent") or "Khoj")
    title = str(c.get("title") or "").strip() or "Conversation with " + agent
    started = iso(c.get("created_at"), options.tz)
    messages = []
    for m in _log(c):
        at = iso(m.get("created"), options.tz) or started
        text = _message_text(m.get("message")).strip()
        if at is None or not text:
            continue
        speaker = "You" if str(m.get("by")).lower() == "you" else agent
        messages.append(render.Message(at, speaker, text))
    if not messages:
        yield Skipped(title, "the conversation has no dated messages", entry.path)
        return
    # Khoj's own id when the export has one, else when it began with a hash of its first message (two
    # conversations begun in the same second under the same title are still two; one that goes on is the same).
    first = messages[0]
    digest = hashlib.sha256(f"{title}\x1f{first.at.isoformat()}\x1f{first.text}".encode()).hexdigest()[:12]
    key = str(c.get("id") or "") or f"{c.get('created_at') or ''}/{digest}"
    yield from render.chat_records(NAME, key, origin=entry.path, title=f"Khoj: {title}", messages=messages,
                                   tz=options.tz, chat=title)


def _memory(m: dict[str, Any], entry: Entry, options: Options) -> Result:
    text = str(m.get("raw") or "").strip()
    label = text[:60] or "a memory"
    if not text:
        return Skipped(label, "the memory is empty", entry.path)
    title = text if len(text) <= 80 else text[:79].rstrip() + "…"
    return render.note(NAME, f"memory/{m.get('id') or hashlib.sha256(text.encode()).hexdigest()[:16]}",
                       origin=entry.path, title=title, body=text, created=iso(m.get("created_at"), options.tz),
                       tags=["memory", "khoj"], label=label)


def _file(f: dict[str, Any], entry: Entry, options: Options) -> Result:
    name = str(f.get("file_name") or "").strip()
    text = str(f.get("raw_text") or "")
    label = name or "a file"
    if not text.strip():
        return Skipped(label, "Khoj kept no text for this file", entry.path)
    when = iso(str(f.get("updated_at") or ""), options.tz)
    return render.note(NAME, f"file/{name or hashlib.sha256(text.encode()).hexdigest()[:16]}", origin=entry.path,
                       title=name.rsplit("/", 1)[-1] or None, body=text, created=when, tags=["khoj"],
                       details=[("File", name)], label=label)


FORMAT = Format(NAME, "Khoj", "Khoj: Settings > Export chats (khoj-conversations.zip); its memories and files as "
                "JSON from /api/memories and /api/content/files", detect, count, read)
