"""Items of an export as captures the existing pipeline already understands.

* A **note** is Markdown with front matter (``title``, ``date``, ``updated``, ``tags``): the text extractor
  takes the tags to every passage (shown with each search hit), and the source's first version keeps them
  as its tags (filter by them with ``tags=`` or ``tag:``).  Its links are also written at its end, so they
  are searchable words.
* A **chat** becomes one record per day of the conversation (in the chat's time zone), a ``text/x-chat``
  transcript of ``[HH:MM] Speaker: text`` turns dated by the day's first message: the chat extractor keeps
  each turn's speaker and time (``turn_id``), and time words in a message ("yesterday") are read against
  that day, as for the LoCoMo sessions.
* A **file** (an attachment) goes to the extractors as it is; one they cannot read is skipped up front
  with their own sentence.
* A **URL** (a bookmark) is fetched by the fetcher, with its limits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from secondbrain.errors import PermanentError
from services.importers.model import Capture, Skipped

MAX_TURNS_PER_RECORD = 600  # a busy group's day is cut in parts: each stays well inside one document's budget
_TAG_CHARS = re.compile(r"[^\w/-]+", re.U)


def source_uri(fmt: str, item: str) -> str:
    """``import:<format>:<item>``: spaces and control characters escaped, at most 2,000 characters."""
    cleaned = "".join(c if c.isprintable() and not c.isspace() else f"%{ord(c):02X}" for c in item)
    uri = f"import:{fmt}:{cleaned}"
    return uri if len(uri) <= 2000 else uri[:1950] + "~" + _short_hash(uri)


def _short_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]


def provenance(fmt: str, origin: str, item: str | None = None, **more: str | None) -> dict[str, str]:
    """The attributes that lead back to the original: the export's format, the file, the item in it."""
    out = {"import.format": fmt, "import.file": origin[:500]}
    if item:
        out["import.item"] = item[:500]
    out.update({f"import.{k}": v[:500] for k, v in more.items() if v})
    return out


def tag(name: str) -> str:
    """A label as a tag: lower case, words joined by ``-`` (the extractor splits tags on spaces)."""
    return _TAG_CHARS.sub("-", name.strip().lower()).strip("-")


def _one_line(value: str) -> str:
    return " ".join(value.split()).replace('"', "'")


def note(fmt: str, item: str, *, origin: str, title: str | None, body: str, created: datetime | None,
         updated: datetime | None = None, tags: Iterable[str] = (), links: Iterable[tuple[str, str]] = (),
         details: Sequence[tuple[str, str]] = (), label: str | None = None,
         front: Sequence[tuple[str, str]] = (), **attrs: str | None) -> Capture:
    """A note: ``body`` is Markdown; ``links`` are (text, URL); ``details`` are (name, value) lines shown
    under the body (a highlight's book and location, a memory's app); ``front``: more front matter lines
    (a calendar series' ``recurrence``, one line of JSON)."""
    tag_list = list(dict.fromkeys(t for t in (tag(x) for x in tags) if t))
    head = ["---"]
    if title:
        head.append(f'title: "{_one_line(title)[:300]}"')
    if created:
        head.append(f"date: {created.isoformat()}")
    if updated and updated != created:
        head.append(f"updated: {updated.isoformat()}")
    if tag_list:
        head.append(f"tags: [{', '.join(tag_list)}]")
    head += [f"{name}: {value}" for name, value in front if "\n" not in value]
    head.append("---")
    tail: list[str] = []
    link_list = [(text or url, url) for text, url in links if url]
    if link_list:
        tail.append("Links:\n" + "\n".join(f"- [{_one_line(t).replace(']', ')')}]({u})" for t, u in link_list))
    # The tags live in the front matter only: they become the source's tags, not words of its text.
    lines = [f"{name}: {value}" for name, value in details if value]
    if lines:
        tail.append("\n".join(lines))
    text = "\n".join(head) + "\n\n" + "\n\n".join(p for p in [body.strip(), *tail] if p) + "\n"
    return Capture(source_uri=source_uri(fmt, item), kind="note", label=label or title or item, title=title,
                   captured_at=created or updated, content=text.encode("utf-8"), content_type="text/markdown",
                   attributes={"kind": "note", **provenance(fmt, origin, item, **attrs)})


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a chat: when, who, what (several lines welcome)."""

    at: datetime  # aware
    speaker: str
    text: str


def chat_records(fmt: str, chat_id: str, *, origin: str, title: str, messages: Iterable[Message], tz: tzinfo,
                 **attrs: str | None) -> Iterator[Capture]:
    """One record per day of the chat (days in ``tz``), each dated by its first message."""
    by_day: dict[str, list[Message]] = {}
    for m in sorted(messages, key=lambda m: m.at):
        if m.text.strip():
            by_day.setdefault(m.at.astimezone(tz).date().isoformat(), []).append(m)
    for day, msgs in by_day.items():
        parts = [msgs[i:i + MAX_TURNS_PER_RECORD] for i in range(0, len(msgs), MAX_TURNS_PER_RECORD)]
        for n, part in enumerate(parts, 1):
            first = part[0].at.astimezone(tz)
            when = f"{first:%A} {first.day} {first:%B %Y}"
            record_title = f"{title}, {when}" + (f" (part {n})" if len(parts) > 1 else "")
            item = f"{chat_id}#{day}" + (f"/{n}" if len(parts) > 1 else "")
            yield Capture(
                source_uri=source_uri(fmt, item), kind="chat", label=record_title, title=record_title,
                captured_at=part[0].at.astimezone(UTC), content=transcript(record_title, part, tz).encode("utf-8"),
                content_type="text/x-chat", filename=None,
                attributes=provenance(fmt, origin, item, **attrs))


def transcript(title: str, messages: Sequence[Message], tz: tzinfo) -> str:
    """``# title`` then ``[HH:MM] Speaker: text`` per message (the id is the local time, made unique)."""
    lines = [f"# {_one_line(title)}"]
    seen: dict[str, int] = {}
    for m in messages:
        stamp = f"{m.at.astimezone(tz):%H:%M}"
        seen[stamp] = seen.get(stamp, 0) + 1
        turn_id = stamp if seen[stamp] == 1 else f"{stamp}-{seen[stamp]}"
        speaker = _speaker(m.speaker)
        body = [ln.strip() for ln in m.text.strip().split("\n") if ln.strip()]
        lines.append(f"[{turn_id}] {speaker}: {body[0]}")
        lines.extend(_continued(ln) for ln in body[1:])
    return "\n".join(lines) + "\n"


_LOOKS_LIKE_TURN = re.compile(r"^(\[[^\]\n]{1,64}\][ \t]*)?[^\s:\[\]#][^:\n\[\]]{0,63}?:[ \t]")


def _continued(line: str) -> str:
    """A message's next line, kept from reading as a new speaker's turn ("Note: ..." is not a speaker): its
    first ``": "`` gets a no-break space, which reads the same."""
    if _LOOKS_LIKE_TURN.match(line):
        return re.sub(r":[ \t]+", ":\u00a0", line, count=1)
    return line


def _speaker(name: str) -> str:
    """A name the transcript format can carry: no colon, no brackets, at most 64 characters."""
    cleaned = re.sub(r"[:\[\]\n#]+", " ", name).strip() or "Unknown"
    return " ".join(cleaned.split())[:64]


def file(fmt: str, item: str, *, origin: str, data: bytes | Callable[[], bytes], filename: str,
         content_type: str | None, title: str | None, captured_at: datetime | None, label: str,
         **attrs: str | None) -> Capture | Skipped:
    """An attachment for the extractors, or why they could not read it (decided from its bytes)."""
    from secondbrain import sniff

    raw = data() if callable(data) else data
    if not raw:
        return Skipped(label, "the attachment is empty", origin)
    try:
        resolved = sniff.resolve(raw[:1024 * 1024], content_type or "application/octet-stream", filename)
    except PermanentError as exc:
        return Skipped(label, f"secondbrain cannot read this attachment: {exc}", origin)
    return Capture(source_uri=source_uri(fmt, item), kind="file", label=label, title=title,
                   captured_at=captured_at, content=raw, content_type=resolved.content_type, filename=filename,
                   attributes=provenance(fmt, origin, item, **attrs))


def url(fmt: str, address: str, *, origin: str, title: str | None, captured_at: datetime | None,
        **attrs: str | None) -> Capture | Skipped:
    """A web page to fetch (only http and https)."""
    if not address.lower().startswith(("http://", "https://")) or len(address) > 8192:
        return Skipped(title or address[:80], "only http and https pages can be fetched", origin)
    return Capture(source_uri=address, kind="url", label=title or address, title=title, captured_at=captured_at,
                   url=address, content_type="", attributes=provenance(fmt, origin, None, **attrs))
