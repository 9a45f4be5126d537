"""Telegram Desktop's export in machine-readable JSON (Export chat history, or Settings > Advanced > Export
Telegram data): ``result.json``, one chat (``name``, ``type``, ``id``, ``messages``) or every chat
(``chats.list``).

A message has ``id``, ``type`` (``message`` or ``service``), ``date`` (local time) and ``date_unixtime``
(seconds, UTC: preferred), ``from``, and ``text``: a string, or a list of strings and entities
(``{"type": "link", "text": ...}``).  Photos and files are named by ``photo`` / ``file`` (a path beside
``result.json``, or "(File not included...)" when they were left out), voice notes by ``media_type``.
Service messages (joined, pinned, called) are left out; media in the export is imported too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import from_epoch, iso

NAME = "telegram"


def _files(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".json", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(65536)
        except (OSError, ExportError):
            continue
        # A chat's export starts with its name, type and id, then "messages"; a whole account's holds "chats"
        # after its personal information, maybe further in (result.json is what Telegram calls it).
        if head.lstrip().startswith(b"{") and (b'"messages"' in head or b'"chats"' in head
                                               or e.name == "result.json"):
            out.append(e)
    return out


def _chats(export: Export, entry: Entry) -> list[dict[str, Any]]:
    data = json.loads(export.read(entry))
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return [data]
    chats = data.get("chats") if isinstance(data, dict) else None
    if isinstance(chats, dict) and isinstance(chats.get("list"), list):
        return [c for c in chats["list"] if isinstance(c, dict) and isinstance(c.get("messages"), list)]
    return []


def detect(export: Export) -> str | None:
    found = []
    for e in _files(export):
        try:
            found += _chats(export, e)
        except (ValueError, ExportError):
            continue
    if not found:
        return None
    names = ", ".join(str(c.get("name") or "Saved Messages") for c in found[:3])
    return f"{len(found)} chat{'s' if len(found) > 1 else ''} ({names})"


def count(export: Export, options: Options) -> int:
    total = 0
    for e in _files(export):
        for chat in _chats(export, e):
            total += len({w.astimezone(options.tz).date() for m in chat["messages"]
                          if isinstance(m, dict) and (w := _when(m, options)) is not None})
    return total


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry in _files(export):
        try:
            chats = _chats(export, entry)
        except (ValueError, UnicodeDecodeError) as exc:
            yield Skipped(entry.name, f"not readable JSON: {exc}", entry.path)
            continue
        for chat in chats:
            yield from guarded(str(chat.get("name") or "a chat"), entry.path, _chat, export, entry, chat, options)


def _when(message: dict[str, Any], options: Options) -> datetime | None:
    return from_epoch(message.get("date_unixtime")) or iso(message.get("date"), options.tz)


def text_of(value: Any) -> str:
    """A message's text: plain, or pieces of text and entities (a link keeps its address)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for piece in value:
            if isinstance(piece, str):
                parts.append(piece)
            elif isinstance(piece, dict):
                text = str(piece.get("text") or "")
                href = piece.get("href")
                parts.append(f"[{text}]({href})" if href and href != text else text)
        return "".join(parts)
    return ""


def _chat(export: Export, entry: Entry, chat: dict[str, Any], options: Options) -> Iterator[Result]:
    name = str(chat.get("name") or ("Saved Messages" if chat.get("type") == "saved_messages" else "a chat"))
    chat_id = str(chat.get("id") or name)
    messages: list[render.Message] = []
    media: list[tuple[datetime, str, str]] = []
    for m in chat["messages"]:
        if not isinstance(m, dict) or m.get("type") != "message":
            continue
        at = _when(m, options)
        if at is None:
            yield Skipped(f"{name}: message {m.get('id')}", "it has no readable date", entry.path)
            continue
        speaker = str(m.get("from") or m.get("author") or "Unknown")
        text = text_of(m.get("text")).strip()
        attached = m.get("photo") or m.get("file")
        marks = []
        if isinstance(attached, str) and attached:
            if attached.startswith("(File not included"):
                marks.append(f"[{_kind(m)} not included in the export]")
            else:
                marks.append(f"[{_kind(m)}: {PurePosixPath(attached).name}]")
                media.append((at, speaker, attached))
        elif m.get("media_type") or m.get("sticker_emoji"):
            marks.append(f"[{_kind(m)}]" + (f" {m['sticker_emoji']}" if m.get("sticker_emoji") else ""))
        said = " ".join([*marks, text]).strip()
        if said:
            messages.append(render.Message(at, speaker, said))
    kind = "group" if "group" in str(chat.get("type", "")) else "chat"
    yield from render.chat_records(NAME, chat_id, origin=entry.path, title=f"Telegram {kind}: {name}",
                                   messages=messages, tz=options.tz, chat=name)
    for at, speaker, path in media:
        yield _media(export, entry, name, chat_id, at, speaker, path)


def _kind(m: dict[str, Any]) -> str:
    media = str(m.get("media_type") or "")
    return {"voice_message": "voice message", "video_message": "video message", "sticker": "sticker",
            "video_file": "video", "audio_file": "audio", "animation": "animation"}.get(
        media, "photo" if m.get("photo") else "file")


def _media(export: Export, entry: Entry, name: str, chat_id: str, at: datetime, speaker: str, path: str) -> Result:
    folder = entry.parent
    rel = path.lstrip("./")
    found = export.get(f"{folder}/{rel}" if folder else rel)
    label = f"{name}: {PurePosixPath(path).name}"
    if found is None:
        return Skipped(label, "the file is not in the export", entry.path)
    target = found

    def data() -> bytes:
        return export.read(target)

    return render.file(NAME, f"{chat_id}/{rel}", origin=found.path, data=data, filename=found.name,
                       content_type=None, title=f"From {speaker} in the Telegram chat {name}", captured_at=at,
                       label=label, chat=name, speaker=speaker)


FORMAT = Format(NAME, "Telegram chats", "Telegram Desktop: Export chat history (or Export Telegram data) as "
                "machine-readable JSON (result.json)", detect, count, read)
