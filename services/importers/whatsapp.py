"""WhatsApp's chat export (a chat > More > Export chat): ``WhatsApp Chat with Alice.txt`` (Android), or a zip
of ``_chat.txt`` (iPhone), with the media beside it when "Attach media" was chosen.

Android writes ``05/03/2024, 14:32 - Alice: text`` (``3/5/24, 2:32 PM - ...`` on a 12-hour phone); an iPhone
writes ``[05/03/2024, 14:32:11] Alice: text``.  The date is in the phone's order (day or month first: a day
over 12 anywhere in the chat settles it, else the locale's order), the time in the phone's zone, which the
export does not name (the import's zone is used).  A line without a date continues the message before it;
lines without a speaker ("Messages and calls are end-to-end encrypted") are the app's, and left out.
Media left out of the export (``<Media omitted>``, ``image omitted``) stays in the transcript as a mark;
media in it (``IMG-20240305-WA0001.jpg (file attached)``, ``<attached: 00000012-PHOTO-...jpg>``) is
imported through the extractors too (a photo's text, a voice note's words), dated by its message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, tzinfo
from pathlib import PurePosixPath

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import DateOrder, ExportError, Options, Result, Skipped, guarded

NAME = "whatsapp"
_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_DATE = r"(?P<d1>\d{1,4})[./-](?P<d2>\d{1,2})[./-](?P<d3>\d{1,4})"
_TIME = r"(?P<h>\d{1,2})[:.](?P<m>\d{2})(?:[:.](?P<s>\d{2}))?(?:\s*(?P<ampm>[AaPp]\.?\s?[Mm]\.?))?"
_ANDROID = re.compile(rf"^{_DATE},?\s+{_TIME}\s+[-\u2013]\s+(?P<rest>.*)$")
_IOS = re.compile(rf"^\[{_DATE},?\s+{_TIME}\]\s+(?P<rest>.*)$")
_SPEAKER = re.compile(r"^(?P<who>[^:]{1,80}?):\s(?P<text>.*)$", re.S)
_OMITTED = re.compile(r"^(?:<Media omitted>|(?:image|video|audio|sticker|GIF|document|Contact card) omitted"
                      r"|<.{1,40} omitted>)$", re.I)
_ATTACHED_IOS = re.compile(r"^<attached:\s*(?P<file>[^>]+)>\s*(?P<rest>.*)$", re.S)
_ATTACHED_ANDROID = re.compile(r"^(?P<file>\S+\.\w{2,5}) \(file attached\)\s*(?P<rest>.*)$", re.S)


def _match(line: str) -> re.Match[str] | None:
    line = _BIDI.sub("", line)
    return _IOS.match(line) or _ANDROID.match(line)


def _chats(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".txt", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(16384).decode("utf-8-sig", "replace")
        except (OSError, ExportError):
            continue
        lines = [ln for ln in head.replace("\r", "").split("\n")[:40] if ln.strip()]
        dated = [m for m in (_match(ln) for ln in lines) if m is not None]
        if lines and len(dated) >= max(1, len(lines) // 3) and any(_SPEAKER.match(m["rest"]) for m in dated):
            out.append(e)
    return out


def chat_name(export: Export, entry: Entry) -> str:
    """The chat's name: from ``WhatsApp Chat with Alice.txt``, or the zip's name for an iPhone's ``_chat.txt``."""
    stem = PurePosixPath(entry.path).stem
    if stem.lower() in ("_chat", "chat"):
        stem = PurePosixPath(entry.parent).name or PurePosixPath(export.name).stem
    return re.sub(r"^WhatsApp Chat(?: with| -)?\s*", "", stem, flags=re.I).strip() or stem


def detect(export: Export) -> str | None:
    chats = _chats(export)
    if not chats:
        return None
    return f"{len(chats)} chat{'s' if len(chats) > 1 else ''} ({', '.join(chat_name(export, c) for c in chats[:3])})"


def count(export: Export, options: Options) -> int:
    return sum(len({(m.at.astimezone(options.tz).date()) for m in _messages(export, c, options)[0]})
               for c in _chats(export))


def read(export: Export, options: Options) -> Iterator[Result]:
    for entry in _chats(export):
        yield from guarded(entry.name, entry.path, _chat, export, entry, options)


def _chat(export: Export, entry: Entry, options: Options) -> Iterator[Result]:
    name = chat_name(export, entry)
    messages, media, problems = _messages(export, entry, options)
    yield from problems
    yield from render.chat_records(NAME, name, origin=entry.path, title=f"WhatsApp chat with {name}",
                                   messages=messages, tz=options.tz, chat=name)
    for at, speaker, filename in media:
        yield from guarded(filename, entry.path, _media, export, entry, name, at, speaker, filename)


def _order(lines: list[re.Match[str]], wanted: DateOrder | None) -> DateOrder:
    """Day or month first: a value over 12 in either place settles it; a 4-digit first field is year first."""
    if any(len(m["d1"]) == 4 for m in lines):
        return "ymd"
    if any(int(m["d1"]) > 12 for m in lines):
        return "dmy"
    if any(int(m["d2"]) > 12 for m in lines):
        return "mdy"
    return wanted or "mdy"


def _when(m: re.Match[str], order: DateOrder, tz: tzinfo) -> datetime | None:
    a, b, c = m["d1"], m["d2"], m["d3"]
    year, month, day = (a, b, c) if order == "ymd" else (c, b, a) if order == "dmy" else (c, a, b)
    y = int(year) + (2000 if len(year) <= 2 else 0)
    hour = int(m["h"])
    ampm = (m["ampm"] or "").replace(".", "").replace(" ", "").lower()
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    try:
        return datetime(y, int(month), int(day), hour, int(m["m"]), int(m["s"] or 0), tzinfo=tz)
    except ValueError:
        return None


def _messages(export: Export, entry: Entry, options: Options) \
        -> tuple[list[render.Message], list[tuple[datetime, str, str]], list[Skipped]]:
    text = export.read(entry).decode("utf-8-sig", "replace").replace("\r\n", "\n").replace("\r", "\n")
    raw: list[tuple[re.Match[str], list[str]]] = []
    for line in text.split("\n"):
        m = _match(line)
        if m is not None:
            raw.append((m, [m["rest"]]))
        elif raw:
            raw[-1][1].append(_BIDI.sub("", line))
    order = _order([m for m, _ in raw], options.date_order)
    messages: list[render.Message] = []
    media: list[tuple[datetime, str, str]] = []
    problems: list[Skipped] = []
    for m, lines in raw:
        at = _when(m, order, options.tz)
        body = "\n".join(lines).strip()
        said = _SPEAKER.match(body)
        if said is None:
            continue  # the app's own line: encryption notice, someone joined or left
        if at is None:
            problems.append(Skipped(f"message of {m['d1']}/{m['d2']}/{m['d3']}", "its date is not a real day",
                                    entry.path))
            continue
        speaker, said_text = said["who"].strip(), said["text"].strip()
        attached = _ATTACHED_IOS.match(said_text) or _ATTACHED_ANDROID.match(said_text)
        if attached is not None:
            filename = attached["file"].strip()
            media.append((at, speaker, filename))
            said_text = f"[{_media_kind(filename)}: {filename}]" + (f" {attached['rest'].strip()}"
                                                                     if attached["rest"].strip() else "")
        elif _OMITTED.match(said_text):
            said_text = "[media not included in the export]"
        elif said_text in ("This message was deleted", "You deleted this message"):
            continue
        messages.append(render.Message(at, speaker, said_text))
    return messages, media, problems


def _media_kind(filename: str) -> str:
    upper = filename.upper()
    if "PTT" in upper or "AUDIO" in upper or filename.lower().endswith((".opus", ".m4a", ".mp3", ".aac")):
        return "voice message"
    if "IMG" in upper or "PHOTO" in upper or filename.lower().endswith((".jpg", ".jpeg", ".png", ".webp")):
        return "photo"
    if "VID" in upper or filename.lower().endswith(".mp4"):
        return "video"
    return "file"


def _media(export: Export, entry: Entry, chat: str, at: datetime, speaker: str, filename: str) -> Result:
    label = f"{chat}: {filename}"
    folder = entry.parent
    found = export.get(f"{folder}/{filename}" if folder else filename)
    if found is None:
        return Skipped(label, "the file is not in the export (export the chat with 'Attach media')", entry.path)
    target = found

    def data() -> bytes:
        return export.read(target)

    kind = _media_kind(filename)
    return render.file(NAME, f"{chat}/{filename}", origin=found.path, data=data, filename=found.name,
                       content_type=None, title=f"{kind.capitalize()} from {speaker} in the WhatsApp chat with {chat}",
                       captured_at=at, label=label, chat=chat, speaker=speaker)


FORMAT = Format(NAME, "WhatsApp chat", "a chat > More > Export chat (the .txt, or the zip with media)",
                detect, count, read)
