"""An e-mail message as captures: its text as a note, each attachment as a file for the extractors.

The note is Markdown: the thread as its title and first heading, the message's own subject under it (so every
passage's heading path is thread > subject), then From, To, Cc, Date and the attachments' names, then the
body (the plain text part, else the HTML part as Markdown).  It is dated by the ``Date`` header.  The source is
the message itself (``import:mail:<Message-ID>``), so the same message fetched twice, from two folders or
after the server renumbered them, is one source and its second sending adds nothing.

The e-mail extractor only names attachments, so they go to the extractors as files of their own, dated
like their message and titled ``subject (file name)``; a calendar invitation (an ``.ics``, also in a message
forwarded as an attachment) becomes its events, as the calendar import makes them
(:mod:`services.importers.invitations`).
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any, cast

from services.importers import invitations, render
from services.importers.html_markdown import html_to_markdown
from services.importers.model import Capture, Result, Skipped

NAME = "mail"
# Reply and forward markers in the languages mail programs write them in, and a list's [tag].
_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|r|tr|rif|enc)\s*(?:\[\d+\])?\s*:\s*|\[[^\]]{1,40}\]\s*)+",
                     re.I)
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,500}>")


@dataclass(frozen=True, slots=True)
class Parsed:
    """What the client needs of a message besides its captures: its id, thread and subject."""

    message_id: str
    thread_id: str  # the Message-ID of the thread's first message, as far as the message says
    subject: str
    results: list[Result]


def thread_subject(subject: str) -> str:
    """The subject without ``Re:``, ``Fwd:``, ``AW:`` and list tags: what the thread is called."""
    return " ".join(_PREFIX.sub("", subject).split()) or " ".join(subject.split())


def message_id(msg: EmailMessage, raw: bytes) -> str:
    """The ``Message-ID`` (with its brackets), else one made of the bytes (the same message, the same id)."""
    found = _MESSAGE_ID.search(_header(msg, "message-id"))
    return found.group(0) if found else f"<sha256-{hashlib.sha256(raw).hexdigest()[:32]}@secondbrain>"


def thread_root(msg: EmailMessage) -> str | None:
    """The first message of the thread, from ``References`` (its first id), else ``In-Reply-To``."""
    for header in ("references", "in-reply-to"):
        ids = _MESSAGE_ID.findall(_header(msg, header))
        if ids:
            return str(ids[0])
    return None


def parse(raw: bytes, *, origin: str, threads: Mapping[str, str] | None = None,
          received: datetime | None = None) -> Parsed:
    """The captures of one message (``raw``: its bytes as the server keeps them).  ``threads`` maps a message
    id to its thread's name, for replies whose first message was read before; ``received`` dates a message
    without a readable ``Date`` header."""
    msg = cast(EmailMessage, email.message_from_bytes(raw, policy=email.policy.default))
    mid = message_id(msg, raw)
    subject = " ".join(_header(msg, "subject").split())
    root = thread_root(msg)
    # The gateway takes titles of up to 500 characters: a subject longer than any person writes is cut.
    thread = ((threads or {}).get(root or mid) or thread_subject(subject) or "(no subject)")[:300]
    when = _date(_header(msg, "date")) or received
    label = f"{subject or '(no subject)'} ({_header(msg, 'from') or 'unknown sender'})"[:300]
    results: list[Result] = []
    body = _body(msg)
    names: list[str] = []
    files: list[Result] = []
    for n, part in enumerate(_attachments(msg), 1):
        filename = _filename(part, n)
        names.append(filename)
        try:
            data = part.get_payload(decode=True) or b""
        except (ValueError, TypeError, LookupError):
            data = b""
        if invitations.is_calendar(part, filename):  # an invitation: its events, as a calendar import has them
            files.extend(invitations.events(bytes(data), origin=origin, received=when))
            continue
        title = f"{(subject or thread)[:280]} ({filename[:200]})"
        files.append(render.file(NAME, f"{mid}/{n}/{filename}", origin=origin, data=bytes(data), filename=filename,
                                 content_type=part.get_content_type(), title=title, captured_at=when,
                                 label=f"{label}: {filename}", message_id=mid, thread=thread))
    for part in invitations.inside(msg):  # an invitation forwarded as an attachment
        try:
            data = part.get_payload(decode=True) or b""
        except (ValueError, TypeError, LookupError):
            continue
        files.extend(invitations.events(bytes(data), origin=origin, received=when))
    if not body.strip() and not files:
        results.append(Skipped(label, "the message has no text and no attachments", origin))
        return Parsed(mid, root or mid, subject, results)
    lines = [f"{name}: {value}" for name, key in (("From", "from"), ("To", "to"), ("Cc", "cc"), ("Date", "date"))
             if (value := " ".join(_header(msg, key).split()))]
    if names:
        lines.append("Attachments: " + ", ".join(names))
    text = f"# {_md_line(thread)}\n\n"
    if subject and _md_line(subject) != _md_line(thread):  # a reply: thread > its own subject
        text += f"## {_md_line(subject)}\n\n"
    text += "\n".join(lines)
    text += "\n\n" + (body.strip() or "(no text; see the attachments)")
    results.append(render.note(NAME, mid, origin=origin, title=thread, body=text, created=when, label=label,
                               message_id=mid, thread=thread, subject=subject[:500] or None,
                               sender=_header(msg, "from")[:500] or None))
    results.extend(files)
    return Parsed(mid, root or mid, subject, results)


def captures(results: list[Result]) -> Iterator[Capture]:
    for r in results:
        if isinstance(r, Capture):
            yield r


def _header(msg: EmailMessage, name: str) -> str:
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError, AttributeError):  # a malformed header: the rest is still read
        return ""
    return "" if value is None else str(value).replace("\x00", "")


def _date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _body(msg: EmailMessage) -> str:
    """The text a person reads: the plain part, else the HTML part as Markdown."""
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
    except (KeyError, ValueError, TypeError, IndexError, AttributeError):
        part = None
    if part is None:
        return ""
    try:
        content: Any = part.get_content()
    except (LookupError, ValueError, TypeError, AssertionError):  # an unknown charset: read it as Latin-1
        payload = part.get_payload(decode=True)
        content = payload.decode("latin-1") if isinstance(payload, bytes) else ""
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    text = str(content).replace("\x00", "").replace("\r\n", "\n")
    if part.get_content_subtype() == "html":
        return html_to_markdown(text)
    return text


def _attachments(msg: EmailMessage) -> list[EmailMessage]:
    try:
        return [cast(EmailMessage, p) for p in msg.iter_attachments()
                if not p.is_multipart() or p.get_content_type() == "message/rfc822"]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return []


def _filename(part: EmailMessage, n: int) -> str:
    try:
        name = part.get_filename() or ""
    except (ValueError, TypeError, IndexError):
        name = ""
    name = name.replace("\\", "/").rsplit("/", 1)[-1].replace("\x00", "").strip()[:200]
    if name:
        return name
    ext = {"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg", "text/plain": ".txt",
           "message/rfc822": ".eml", "text/html": ".html"}.get(part.get_content_type(), "")
    return f"attachment-{n}{ext}"


def _md_line(text: str) -> str:
    return " ".join(text.split()).lstrip("#").strip() or "(no subject)"

