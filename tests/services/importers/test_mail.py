"""An e-mail message as captures: the text dated by its Date header under its thread, attachments as files,
the same message always the same source with the same key."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage

import pytest

from services.importers import mail
from services.importers.model import Capture, Skipped

pytestmark = pytest.mark.fast


def raw(subject: str, *, mid: str | None = "<a@example.org>", date: str | None = "Tue, 05 Mar 2024 09:30:00 +0100",
        text: str | None = "Hello there.", html: str | None = None, refs: str | None = None,
        attach: tuple[str, bytes, str] | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Ann <ann@example.org>"
    msg["Subject"] = subject
    if date:
        msg["Date"] = date
    if mid:
        msg["Message-ID"] = mid
    if refs:
        msg["References"] = refs
    if text is not None:
        msg.set_content(text)
    elif html is not None:
        msg.set_content(html, subtype="html")
    if attach:
        main, sub = attach[2].split("/")
        msg.add_attachment(attach[1], maintype=main, subtype=sub, filename=attach[0])
    return bytes(msg)


@pytest.mark.parametrize(("subject", "thread"), [
    ("Re: Budget", "Budget"), ("RE: Fwd: [team] Budget", "Budget"), ("AW: WG: Budget", "Budget"),
    ("Re[2]: Budget", "Budget"), ("Budget", "Budget"), ("Re:", "Re:")])
def test_the_thread_is_the_subject_without_reply_marks(subject: str, thread: str) -> None:
    assert mail.thread_subject(subject) == thread


def test_a_message_is_a_note_dated_by_its_date_header() -> None:
    parsed = mail.parse(raw("Budget"), origin="imaps://me@host:993/secondbrain 7")
    (note,) = parsed.results
    assert isinstance(note, Capture) and note.kind == "note"
    assert note.source_uri == "import:mail:<a@example.org>" and note.title == "Budget"
    assert note.captured_at == datetime(2024, 3, 5, 8, 30, tzinfo=UTC)
    text = note.data().decode()
    assert "# Budget\n" in text and "From: Ann <ann@example.org>" in text and "Hello there." in text
    assert note.attributes["import.message_id"] == "<a@example.org>"
    assert note.attributes["import.file"] == "imaps://me@host:993/secondbrain 7"


def test_a_reply_is_filed_under_its_thread_and_keeps_its_own_subject() -> None:
    threads = {"<root@example.org>": "Budget for 2024"}
    parsed = mail.parse(raw("Re: the numbers", mid="<b@example.org>", refs="<root@example.org> <x@example.org>"),
                        origin="o", threads=threads)
    note = parsed.results[0]
    assert isinstance(note, Capture) and note.title == "Budget for 2024"
    assert "# Budget for 2024\n\n## Re: the numbers\n" in note.data().decode()
    assert parsed.thread_id == "<root@example.org>"


def test_html_only_is_read_as_text_and_attachments_are_files() -> None:
    parsed = mail.parse(raw("Hike", text=None, html="<p>Meet at <b>the car park</b></p>",
                            attach=("map.pdf", b"%PDF-1.4\n%test\n", "application/pdf")), origin="o")
    note, pdf = parsed.results
    assert isinstance(note, Capture) and "Meet at **the car park**" in note.data().decode()
    assert "Attachments: map.pdf" in note.data().decode()
    assert isinstance(pdf, Capture) and pdf.kind == "file" and pdf.filename == "map.pdf"
    assert pdf.title == "Hike (map.pdf)" and pdf.captured_at == note.captured_at


def test_the_same_message_is_the_same_source_with_the_same_key() -> None:
    one = mail.parse(raw("Budget"), origin="folder A").results[0]
    two = mail.parse(raw("Budget"), origin="folder B").results[0]
    assert isinstance(one, Capture) and isinstance(two, Capture)
    assert one.source_uri == two.source_uri and one.submission_key() == two.submission_key()


def test_without_message_id_or_date_the_bytes_name_it_and_the_server_dates_it() -> None:
    received = datetime(2024, 1, 2, 3, 4, tzinfo=UTC)
    data = raw("No id", mid=None, date=None)
    note = mail.parse(data, origin="o", received=received).results[0]
    assert isinstance(note, Capture) and note.captured_at == received
    assert note.source_uri.startswith("import:mail:<sha256-")
    assert note.source_uri == mail.parse(data, origin="o").results[0].source_uri  # type: ignore[union-attr]


def test_an_empty_message_is_skipped_with_the_reason() -> None:
    (skip,) = mail.parse(raw("Nothing", text=""), origin="o").results
    assert isinstance(skip, Skipped) and skip.reason == "the message has no text and no attachments"


def test_a_subject_longer_than_a_title_may_be_is_cut() -> None:
    note = mail.parse(raw("Re: " + "very " * 200 + "long"), origin="o").results[0]
    assert isinstance(note, Capture) and note.title is not None and len(note.title) == 300
    assert note.title.startswith("very very")


def _ics(method: str = "REQUEST", start: str = "20261215T140000Z") -> bytes:
    status = "CANCELLED" if method == "CANCEL" else "CONFIRMED"
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\nMETHOD:{method}\r\nBEGIN:VEVENT\r\n"
            f"UID:plan-7@example.org\r\nDTSTAMP:20261120T090000Z\r\nDTSTART:{start}\r\nDTEND:20261215T153000Z\r\n"
            f"STATUS:{status}\r\nSUMMARY:Quarterly planning\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()


def test_an_invitation_is_its_event_as_a_calendar_import_makes_it() -> None:
    parsed = mail.parse(raw("Quarterly planning", attach=("invite.ics", _ics(), "text/calendar")), origin="inbox")
    captures = list(mail.captures(parsed.results))
    (event,) = [c for c in captures if c.source_uri.startswith("import:ics:")]
    assert event.source_uri == "import:ics:plan-7@example.org" and event.title == "Quarterly planning"
    assert event.captured_at == datetime(2026, 12, 15, 14, 0, tzinfo=UTC)
    assert b"When: Tuesday 15 December 2026, 14:00-15:30" in event.content  # type: ignore[operator]
    assert not [c for c in captures if c.filename == "invite.ics"]  # not the calendar file's raw text too


def test_an_invitation_forwarded_as_an_attached_message_is_read_inside_it() -> None:
    inner = EmailMessage()
    inner["From"], inner["Subject"] = "Chair <chair@example.org>", "Quarterly planning"
    inner.set_content("Join us.")
    inner.add_attachment(_ics(), maintype="text", subtype="calendar", filename="invite.ics")
    outer = EmailMessage()
    outer["From"], outer["Subject"], outer["Message-ID"] = "Ann <ann@example.org>", "Fwd: planning", "<f@example.org>"
    outer.set_content("FYI")
    outer.add_attachment(inner)
    captures = list(mail.captures(mail.parse(bytes(outer), origin="inbox").results))
    assert [c.source_uri for c in captures if c.source_uri.startswith("import:ics:")] == [
        "import:ics:plan-7@example.org"]


def test_a_cancelled_invitation_is_recorded_over_its_event_as_cancelled() -> None:
    parsed = mail.parse(raw("Cancelled: Quarterly planning", attach=("invite.ics", _ics("CANCEL"), "text/calendar")),
                        origin="inbox")
    assert not [r for r in parsed.results if isinstance(r, Skipped)]
    (event,) = [c for c in mail.captures(parsed.results) if c.source_uri.startswith("import:ics:")]
    assert event.source_uri == "import:ics:plan-7@example.org" and event.title == "Cancelled: Quarterly planning"
    assert b"This event was cancelled." in event.content  # type: ignore[operator]
