"""What an importer turns an export into: captures (ready for the gateway) and items skipped with a reason.

A :class:`Capture` is one source in secondbrain: a note (Markdown with its title, dates and tags in front
matter), a chat record (a ``text/x-chat`` transcript of one day of a conversation), a file (an attachment
the extractors read: a photo, a PDF, a recording) or a web page to fetch.  Its ``source_uri`` names the
item for good (``import:keep:Groceries.json``): importing the same item again is the same source, so a
changed note becomes its next version and an unchanged one adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, Literal

CaptureKind = Literal["note", "chat", "file", "url"]
DateOrder = Literal["dmy", "mdy", "ymd"]
KINDS: tuple[CaptureKind, ...] = ("note", "chat", "file", "url")


class ExportError(Exception):
    """The export as a whole cannot be read (not this format, a broken archive): the message is a sentence
    for the person importing it."""


@dataclass(frozen=True, slots=True)
class Options:
    """How to read what an export leaves unsaid."""

    # Exports that write local times without a zone (WhatsApp, Kindle, Notion, Khoj) are read in this zone.
    tz: tzinfo = UTC
    # WhatsApp writes numeric dates in the phone's order; when no date in the chat settles it (a day over 12),
    # this decides (from the locale), else month first.
    date_order: DateOrder | None = None
    # When the import runs (aware; None: the clock): a calendar's recurring events are expanded around it.
    now: datetime | None = None


@dataclass(frozen=True, slots=True)
class Capture:
    """One item of an export, as the gateway will take it."""

    source_uri: str  # import:<format>:<the item's own id>: the same item again is the same source
    kind: CaptureKind
    label: str  # how progress and the summary name it
    title: str | None
    captured_at: datetime | None  # when it was written, said or saved: the event time
    content: bytes | Callable[[], bytes] = b""  # a note's Markdown, a chat's transcript, a file's bytes (read late)
    # A file on the sending machine (folder sync): streamed from disk when its batch goes, never held whole.
    path: Path | None = None
    content_type: str = "text/markdown"
    filename: str | None = None
    url: str | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)  # provenance: import.format, import.file, ...
    # Sent once every capture of an earlier wave has finished: the versions of one item, in order (a version
    # submitted while the one before it is still in the pipeline would replace it before it is indexed).
    wave: int = 0
    # False for an earlier version an export carries (secondbrain's own keeps each source's history): filed in
    # its order, and never brought back as the source's current content when it is imported again.
    current: bool = True

    def data(self) -> bytes:
        """The bytes to send (a file's are read only now, so a large export is never held whole)."""
        return self.content() if callable(self.content) else self.content

    def json(self, part: str | None) -> dict[str, Any]:
        """The capture as a batch sends it (its bytes go in the multipart part named ``part``)."""
        return {"source_uri": self.source_uri, "kind": self.kind, "label": self.label, "title": self.title,
                "captured_at": self.captured_at.isoformat() if self.captured_at else None,
                "content_type": self.content_type, "filename": self.filename, "url": self.url,
                "attributes": dict(self.attributes), "part": part, **({} if self.current else {"current": False})}

    def submission_key(self, data: bytes | None = None) -> str:
        """The idempotency key of this item with this content: importing it again changes nothing, and a
        changed item (other text, other time, other title) is a new submission of the same source."""
        body = self.url.encode() if self.kind == "url" and self.url else (self.data() if data is None else data)
        parts = [self.source_uri, self.kind, hashlib.sha256(body).hexdigest(),
                 self.captured_at.isoformat() if self.captured_at else None, self.title, self.content_type,
                 self.filename]
        return "import:" + hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Skipped:
    """An item left out, and why (a sentence); ``origin`` is where it is in the export.  ``duplicate``: it
    repeats another item of the same export (counted with the duplicates, not as a problem), ``equal_to``
    naming that item when it is known."""

    label: str
    reason: str
    origin: str = ""
    duplicate: bool = False
    equal_to: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    """One message of an imported conversation."""

    role: Literal["user", "assistant"]
    content: str
    created_at: datetime
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation with secondbrain itself (its own export's questions and answers), kept as it was."""

    key: str  # the conversation's id where it came from: importing it again adds nothing
    label: str
    title: str | None
    created_at: datetime
    turns: tuple[ConversationTurn, ...]
    # The sources the answers cite, by their id where they came from -> their source address here, and the
    # cited files by their artifact id there -> the SHA-256 of the bytes imported for them: the citations (source,
    # file, passage and the links to them) are pointed at the imported copies.
    sources: Mapping[str, str] = field(default_factory=dict)
    artifacts: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "title": self.title, "created_at": self.created_at.isoformat(),
                "sources": dict(self.sources), "artifacts": dict(self.artifacts),
                "turns": [{"role": t.role, "content": t.content, "created_at": t.created_at.isoformat(),
                           "meta": dict(t.meta)} for t in self.turns]}


Result = Capture | Skipped | Conversation


class Distinct:
    """Keeps the items of one import apart: two items with the same identity (``source_uri``) would otherwise
    be one source, the second silently the next version of the first.  The same item twice (the same
    content) is found equal and imported once, and said so; two different items that an export names alike
    are both kept, the second under its identity and a hash of its content (listed in ``kept_apart``)."""

    def __init__(self) -> None:
        # Per identity and wave: the first item's label, and its fingerprint (a file's, whose bytes are read late,
        # is worked out only on a clash: the capture is kept instead).  The versions of one item that an export
        # holds (secondbrain's own) share its identity, each in a wave of its own: they are versions, not a clash.
        self._first: dict[tuple[str, int], tuple[str, str | Capture]] = {}
        self.kept_apart: list[tuple[str, str]] = []  # (label, the label of the item it was named like)

    def __call__(self, results: Iterable[Any]) -> Iterator[Any]:
        for result in results:
            yield self.check(result) if isinstance(result, Capture) else result

    def check(self, capture: Capture) -> Result:
        first = self._first.get((capture.source_uri, capture.wave))
        if first is None:
            self._first[(capture.source_uri, capture.wave)] = (capture.label, capture if callable(capture.content)
                                                               else fingerprint(capture))
            return capture
        label, earlier = first
        mine = fingerprint(capture)
        if (earlier if isinstance(earlier, str) else fingerprint(earlier)) == mine:
            return Skipped(capture.label, f"found equal to {label}: the same item is in the export twice, "
                                          "imported once", str(capture.attributes.get("import.file", "")),
                           duplicate=True, equal_to=label)
        self.kept_apart.append((capture.label, label))
        return self.check(replace(capture, source_uri=f"{capture.source_uri}#{mine[:12]}"))


def fingerprint(capture: Capture) -> str:
    """What an item is, to tell two items with one identity apart: its kind, title, time and content."""
    body = capture.url.encode() if capture.kind == "url" and capture.url else capture.data()
    parts = [capture.kind, capture.title, capture.captured_at.isoformat() if capture.captured_at else None,
             hashlib.sha256(body).hexdigest()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def guarded(label: str, origin: str, work: Callable[..., Result | Iterable[Result]], *args: Any) -> Iterator[Result]:
    """What ``work(*args)`` reads, with an error in reading it turned into a skip that says so: one bad item (a
    note that is not what its format says) never stops the rest of an import."""
    try:
        out = work(*args)
        if isinstance(out, Capture | Skipped | Conversation):
            yield out
        else:
            yield from out
    except Exception as exc:  # whatever a damaged item raises, the next one is read
        yield Skipped(label, failure(exc), origin)


def failure(exc: Exception) -> str:
    """Why an item could not be read, as a sentence (an ExportError is one already)."""
    if isinstance(exc, ExportError):
        return str(exc)
    return f"it could not be read ({type(exc).__name__}: {str(exc)[:300]})"
