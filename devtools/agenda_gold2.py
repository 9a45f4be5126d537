"""The agenda's second gold set: passages of kinds the first lacks, written before the rules were changed for
them (their first score is the reader's as it was).

E-mails and invitations (a booking, a school letter, a thread that agrees a time, a calendar invitation's
``.ics`` from Google or Outlook, forwarded inline or as an attached message, updated and cancelled), chat
exports with proposals and counter-proposals (WhatsApp's format: agreed, declined, left unanswered, changed
later), reminders in voice memos and meeting transcripts, OCR'd letters, tickets and slips with numeric
dates, recurring arrangements ("every other Friday", "the first Monday of each month"), and sentences that
must stay off: news, forecasts, other people's plans, hypotheticals, a shop's newsletter, a receipt.

The person is Anna Hart in London, writing dates day first (``en_GB``); most cases are said on Tuesday 24
November 2026.  Judged as ``devtools.agenda_gold`` says.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from zoneinfo import ZoneInfo

from devtools.agenda_gold import ZONE, Case

ME = "Anna Hart <anna@hart.example>"
_LONDON = ZoneInfo(ZONE)


def _message(sender: str, subject: str, said: str, body: str, *, to: str = ME,
             attach: tuple[tuple[str, str, str], ...] = (), inner: EmailMessage | None = None,
             message_id: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg["Date"] = format_datetime(datetime.fromisoformat(said).replace(tzinfo=_LONDON))
    made = hashlib.sha256(f"{sender}|{subject}|{said}".encode()).hexdigest()[:16]
    msg["Message-ID"] = message_id or f"<{made}@gold.example>"
    msg.set_content(body)
    for filename, content_type, text in attach:
        maintype, subtype = content_type.split("/")
        msg.add_attachment(text.encode(), maintype=maintype, subtype=subtype, filename=filename)
    if inner is not None:
        msg.add_attachment(inner)
    return msg


def _mail(sender: str, subject: str, said: str, body: str, **kw: object) -> str:
    return _message(sender, subject, said, body, **kw).as_string()  # type: ignore[arg-type]


def _ics(uid: str, summary: str, start: str, end: str, *, method: str = "REQUEST", sequence: int = 0,
         status: str = "CONFIRMED", location: str = "", organizer: str = "tom@acme.example") -> str:
    """An invitation as calendar programs send it: ``start``/``end`` as written in the file (``TZID=...:``,
    a UTC time ending in Z, or ``VALUE=DATE:`` for an all-day event)."""
    def prop(name: str, value: str) -> str:
        return f"{name};{value}" if ":" in value else f"{name}:{value}"

    lines = ["BEGIN:VCALENDAR", "PRODID:-//Gold//Calendar 1.0//EN", "VERSION:2.0", f"METHOD:{method}",
             "BEGIN:VEVENT", prop("DTSTART", start), prop("DTEND", end), "DTSTAMP:20261120T090000Z",
             f"ORGANIZER;CN=Organizer:mailto:{organizer}", f"UID:{uid}", f"SEQUENCE:{sequence}",
             f"STATUS:{status}", f"SUMMARY:{summary}"]
    if location:
        lines.append(f"LOCATION:{location}")
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


def _google_body(summary: str, when: str, where: str = "", note: str = "") -> str:
    """The text part of an invitation from Google Calendar."""
    parts = [summary, when, "Greenwich Mean Time - London", ""]
    if where:
        parts += ["Location", where, ""]
    if note:
        parts += [note, ""]
    parts += ["Organiser", "Tom Reed", "tom@acme.example", "", "Reply for anna@hart.example", "Yes", "No", "Maybe",
              "", "Invitation from Google Calendar"]
    return "\n".join(parts)


def _c(*args: object, **kw: object) -> Case:
    kw.setdefault("locale", "en_GB")
    return Case(*args, **kw)  # type: ignore[arg-type]


_SUPPLIER_AUDIT = _ics("audit-77@acme.example", "Supplier audit", "TZID=Europe/London:20261209T130000",
                       "TZID=Europe/London:20261209T150000")
_SUPPLIER_VISIT = _ics("visit-31@acme.example", "Supplier visit", "TZID=Europe/London:20261215T093000",
                       "TZID=Europe/London:20261215T103000")
_BOARD = _message("Office of the Chair <chair@trust.example>", "Board dinner", "2026-11-20 09:00",
                  "You are invited to the board dinner at the Athenaeum.",
                  attach=(("invite.ics", "text/calendar", _ics(
                      "board-2026@trust.example", "Board dinner", "TZID=Europe/London:20261217T190000",
                      "TZID=Europe/London:20261217T223000", location="The Athenaeum")),))

CASES: list[Case] = [
    # ------------------------------------------------------------------ e-mails
    _c("m-dentist-confirm", "mail", _mail(
        "Bright Smiles Dental <reception@brightsmiles.example>", "Your appointment at Bright Smiles Dental",
        "2026-11-20 16:02",
        "Dear Anna,\n\nThank you for booking with us. Your appointment with Dr. Osei is confirmed for Wednesday 9 "
        "December 2026 at 14:20.\n\nPlease arrive 10 minutes early and bring a list of any medication you take.\n\n"
        "To cancel or rearrange, call 020 7946 0321 at least 24 hours before.\n\nKind regards,\nBright Smiles "
        "Dental\n"), (("2026-12-09 14:20", "Osei"),), said="2026-11-20 16:02"),
    _c("m-flight-booking", "mail", _mail(
        "TAP Air Portugal <booking@flytap.example>", "Booking confirmation X7KQ2P", "2026-11-18 21:40",
        "Hello Anna Hart,\n\nThank you for booking with TAP Air Portugal. Your booking reference is X7KQ2P.\n\n"
        "Outbound flight\nTP1363, Thursday 14 January 2027\nDeparts London Heathrow (LHR) 07:25\nArrives Lisbon "
        "(LIS) 10:05\n\nReturn flight\nTP1362, Monday 18 January 2027\nDeparts Lisbon (LIS) 18:40\nArrives London "
        "Heathrow (LHR) 21:20\n\nOnline check-in opens 36 hours before departure.\n"),
        (("2027-01-14 07:25", "TP1363"), ("2027-01-18 18:40", "TP1362")), said="2026-11-18 21:40"),
    _c("m-boiler-thread", "mail", _mail(
        "Gary Price <gary@gpheating.example>", "Boiler service", "2026-11-23 08:12",
        "Morning Anna,\n\nI could come round on Monday 7th December between 8 and 10 to service the boiler. Does "
        "that suit?\n\nGary\n", message_id="<boiler-1@gpheating.example>"),
       (("2026-12-07 08:00", ""),), said="2026-11-23 08:12",
       then=(("2026-11-23 12:30", _mail(
           ME, "Re: Boiler service", "2026-11-23 12:30",
           "Hi Gary,\n\nMonday 7th between 8 and 10 is perfect, see you then.\n\nAnna\n\nOn Mon, 23 Nov 2026 at "
           "08:12, Gary Price <gary@gpheating.example> wrote:\n> Morning Anna,\n> I could come round on Monday 7th "
           "December between 8 and 10 to service the boiler. Does that suit?\n> Gary\n",
           to="Gary Price <gary@gpheating.example>")),)),
    _c("m-school-trip", "mail", _mail(
        "Oakfield Primary School <office@oakfield.example>", "Year 4 trip to the Science Museum", "2026-11-19 15:45",
        "Dear Parents and Carers,\n\nYear 4 will visit the Science Museum on Friday 11 December. Children need to "
        "be in school by 8:15 and we expect to be back by 15:30.\n\nPlease provide a packed lunch in a disposable "
        "bag. The cost of \u00a312 can be paid on ParentPay by Friday 4 December.\n\nMany thanks,\nMrs Adebayo\n"),
       (("2026-12-11", "Science Museum"), ("2026-12-04", "ParentPay")), said="2026-11-19 15:45"),
    _c("m-newsletter", "mail", _mail(
        "Waterstones <news@waterstones.example>", "This week at Waterstones", "2026-11-24 07:00",
        "Richard Osman will be signing copies of his new novel at our Piccadilly shop on Saturday 5 December from "
        "11am.\n\nOur Christmas opening hours start on 14 December.\n\nUnsubscribe\n"),
       why="a shop's newsletter: other people's events", said="2026-11-24 07:00"),
    _c("m-garden-waste", "mail", _mail(
        "Borough Council <noreply@council.example>", "Changes to your garden waste collection", "2026-11-20 11:00",
        "Dear resident,\n\nFrom Monday 4 January 2027 your garden waste will be collected every other Monday. "
        "Please have your bin out by 7am on collection day.\n\nWaste Services\n"),
       (("2027-01-04", "garden waste"), ("2027-01-18", "garden waste"), ("2027-02-01", "garden waste")),
       said="2026-11-20 11:00"),
    _c("m-insurance", "mail", _mail(
        "Direct Home Insurance <renewals@dhi.example>", "Your renewal documents", "2026-11-22 09:00",
        "Dear Ms Hart,\n\nYour home insurance policy HX-44120 is due for renewal on 03/01/2027. If you do nothing "
        "it will renew automatically and we will collect \u00a3312.40 by direct debit.\n\nPolicy documents are "
        "attached.\n"), (("2027-01-03", "renewal"),), said="2026-11-22 09:00"),
    _c("m-viewing", "mail", _mail(
        "Foxtons Islington <islington@foxtons.example>", "Viewing confirmed: 14 Elm Road", "2026-11-24 09:30",
        "Hi Anna,\n\nYour viewing of 14 Elm Road is confirmed for Saturday at 11:30. Priya will meet you outside "
        "the property.\n\nBest,\nFoxtons Islington\n"), (("2026-11-28 11:30", "viewing"),), said="2026-11-24 09:30"),
    _c("m-budget", "mail", _mail(
        "Mark Lee <mark@acme.example>", "Q4 budget", "2026-11-23 10:05",
        "Hi all,\n\nA reminder that Q4 budget submissions are due by end of day Friday 4 December. Use the template "
        "on the shared drive.\n\nThanks,\nMark\n"), (("2026-12-04", "budget"),), said="2026-11-23 10:05"),
    _c("m-physio-moved", "mail", _mail(
        "City Physio <bookings@cityphysio.example>", "Appointment confirmation", "2026-11-16 10:00",
        "Dear Anna,\n\nYour physiotherapy appointment with Anna Kowalski is booked for Friday 27 November at "
        "16:00.\n\nCity Physio\n"), (("2026-12-01 16:00", "moved"),), said="2026-11-16 10:00",
       then=(("2026-11-25 09:10", _mail(
           "City Physio <bookings@cityphysio.example>", "Your appointment has changed", "2026-11-25 09:10",
           "Dear Anna,\n\nUnfortunately Anna Kowalski is away on Friday, so we have moved your appointment to "
           "Tuesday 1 December at the same time.\n\nApologies for any inconvenience,\nCity Physio\n")),)),
    _c("m-lesson-cancelled", "mail", _mail(
        "Helen Marsh <helen@marshmusic.example>", "Piano lessons", "2026-11-20 18:00",
        "Hi Anna,\n\nLeo's next piano lesson is on Thursday 3 December at 17:00.\n\nHelen\n",
        message_id="<piano-1@marshmusic.example>"),
       why="a lesson booked, then cancelled", said="2026-11-20 18:00",
       then=(("2026-11-30 08:05", _mail(
           "Helen Marsh <helen@marshmusic.example>", "Re: Piano lessons", "2026-11-30 08:05",
           "Hi Anna,\n\nI'm so sorry but I have to cancel Thursday's lesson, I've come down with flu.\n\nHelen\n")),)),
    # ------------------------------------------------------------------ invitations
    _c("i-google-review", "mail", _mail(
        "Tom Reed (Google Calendar) <calendar-notification@google.example>",
        "Invitation: Design review @ Thu 10 Dec 2026 10:00 - 11:00 (GMT) (anna@hart.example)", "2026-11-23 09:12",
        _google_body("Design review", "Thursday 10 Dec 2026 \u22c5 10:00 \u2013 11:00", "Room 4"),
        attach=(("invite.ics", "text/calendar", _ics(
            "review-10dec@google.example", "Design review", "TZID=Europe/London:20261210T100000",
            "TZID=Europe/London:20261210T110000", location="Room 4")),)),
       (("2026-12-10 10:00-11:00", "Design review"),), said="2026-11-23 09:12"),
    _c("i-outlook-planning", "mail", _mail(
        "Priya Shah <priya@acme.example>", "Quarterly planning", "2026-11-24 14:30",
        "Hi all, let's use this slot for quarterly planning. Agenda to follow.\n",
        attach=(("invite.ics", "text/calendar", _ics(
            "040000008200E00074C5B7101A82E008000000@acme.example", "Quarterly planning", "20261215T140000Z",
            "20261215T153000Z", organizer="priya@acme.example")),)),
       (("2026-12-15 14:00-15:30", "Quarterly planning"),), said="2026-11-24 14:30"),
    _c("i-allday-offsite", "mail", _mail(
        "Ops (Google Calendar) <calendar-notification@google.example>",
        "Invitation: Team offsite @ Tue 8 Dec 2026 (anna@hart.example)", "2026-11-20 12:00",
        _google_body("Team offsite", "Tuesday 8 Dec 2026", "The Barn, Hertford"),
        attach=(("invite.ics", "text/calendar", _ics(
            "offsite-2026@google.example", "Team offsite", "VALUE=DATE:20261208", "VALUE=DATE:20261209")),)),
       (("2026-12-08", "offsite"),), said="2026-11-20 12:00"),
    _c("i-ny-vendor", "mail", _mail(
        "Dan Brooks <dan@northwind.example>", "Vendor call: Northwind", "2026-11-24 16:00",
        "Looking forward to speaking with you.\n",
        attach=(("invite.ics", "text/calendar", _ics(
            "nw-call-3@northwind.example", "Vendor call: Northwind", "TZID=America/New_York:20261203T090000",
            "TZID=America/New_York:20261203T093000", organizer="dan@northwind.example")),)),
       (("2026-12-03 14:00-14:30", "Vendor call"),), said="2026-11-24 16:00"),
    _c("i-forwarded-drinks", "mail", _mail(
        ME, "Fwd: Invitation: Lucy's leaving drinks @ Fri 4 Dec 2026 18:30 - 21:00 (GMT)", "2026-11-24 08:30",
        "Are you coming to this?\n\n---------- Forwarded message ---------\nFrom: Lucy Hart <lucy@hart.example>\n"
        "Date: Mon, 23 Nov 2026 at 18:02\nSubject: Invitation: Lucy's leaving drinks @ Fri 4 Dec 2026 18:30 - "
        "21:00 (GMT)\nTo: <anna@hart.example>\n\n\n" + _google_body(
            "Lucy's leaving drinks", "Friday 4 Dec 2026 \u22c5 18:30 \u2013 21:00", "The Crown, Borough",
            "Come and say goodbye!"),
        to="Sam Cole <sam@cole.example>",
        attach=(("invite.ics", "text/calendar", _ics(
            "lucy-leaving@google.example", "Lucy's leaving drinks", "TZID=Europe/London:20261204T183000",
            "TZID=Europe/London:20261204T210000", location="The Crown, Borough", organizer="lucy@hart.example")),)),
       (("2026-12-04 18:30-21:00", "leaving drinks"),), said="2026-11-24 08:30"),
    _c("i-forwarded-attached", "mail", _mail(ME, "Fwd: Board dinner", "2026-11-24 11:00", "FYI, see attached.\n",
                                             inner=_BOARD),
       (("2026-12-17 19:00-22:30", "Board dinner"),), said="2026-11-24 11:00"),
    _c("i-cancelled", "mail", _mail(
        "Tom Reed (Google Calendar) <calendar-notification@google.example>",
        "Invitation: Supplier audit @ Wed 9 Dec 2026 13:00 - 15:00 (GMT) (anna@hart.example)", "2026-11-20 10:00",
        _google_body("Supplier audit", "Wednesday 9 Dec 2026 \u22c5 13:00 \u2013 15:00"),
        attach=(("invite.ics", "text/calendar", _SUPPLIER_AUDIT),)),
       why="an invitation, then its cancellation", said="2026-11-20 10:00",
       then=(("2026-11-26 09:00", _mail(
           "Tom Reed (Google Calendar) <calendar-notification@google.example>",
           "Canceled event: Supplier audit @ Wed 9 Dec 2026 13:00 - 15:00 (GMT) (anna@hart.example)",
           "2026-11-26 09:00", "This event has been canceled and removed from your calendar.\n\n" + _google_body(
               "Supplier audit", "Wednesday 9 Dec 2026 \u22c5 13:00 \u2013 15:00"),
           attach=(("invite.ics", "text/calendar", _SUPPLIER_AUDIT.replace("METHOD:REQUEST", "METHOD:CANCEL")
                    .replace("SEQUENCE:0", "SEQUENCE:1").replace("STATUS:CONFIRMED", "STATUS:CANCELLED")),))),)),
    _c("i-updated", "mail", _mail(
        "Tom Reed (Google Calendar) <calendar-notification@google.example>",
        "Invitation: Supplier visit @ Tue 15 Dec 2026 09:30 - 10:30 (GMT) (anna@hart.example)", "2026-11-19 15:00",
        _google_body("Supplier visit", "Tuesday 15 Dec 2026 \u22c5 09:30 \u2013 10:30"),
        attach=(("invite.ics", "text/calendar", _SUPPLIER_VISIT),)),
       (("2026-12-16 09:30-10:30", "Supplier visit"),), said="2026-11-19 15:00",
       then=(("2026-11-25 10:00", _mail(
           "Tom Reed (Google Calendar) <calendar-notification@google.example>",
           "Updated invitation: Supplier visit @ Wed 16 Dec 2026 09:30 - 10:30 (GMT) (anna@hart.example)",
           "2026-11-25 10:00", "This event has been changed.\n\n" + _google_body(
               "Supplier visit", "Changed: Wednesday 16 Dec 2026 \u22c5 09:30 \u2013 10:30"),
           attach=(("invite.ics", "text/calendar", _SUPPLIER_VISIT.replace("SEQUENCE:0", "SEQUENCE:1")
                    .replace("20261215T", "20261216T")),))),)),
    _c("i-accepted", "mail", _mail(
        "Sam Cole (Google Calendar) <calendar-notification@google.example>",
        "Accepted: Design review @ Thu 10 Dec 2026 10:00 - 11:00 (GMT) (anna@hart.example)", "2026-11-24 12:00",
        "Sam Cole has accepted this invitation.\n\nDesign review\nThursday 10 Dec 2026 \u22c5 10:00 \u2013 11:00\n"
        "Greenwich Mean Time - London\n\nInvitation from Google Calendar\n"),
       (("2026-12-10 10:00-11:00", "Design review"),), said="2026-11-24 12:00"),
    # ------------------------------------------------------------------ chat exports (WhatsApp, day first)
    _c("w-coffee", "whatsapp", "26/11/2026, 09:14 - Dana: Coffee on Tuesday?\n26/11/2026, 09:20 - Anna: Tuesday's "
       "good. 10:30 at Monmouth?\n26/11/2026, 09:21 - Dana: Great, see you then.\n",
       (("2026-12-01 10:30", "Monmouth"),), said="2026-11-26 09:14"),
    _c("w-counter", "whatsapp", "24/11/2026, 12:01 - Ben: Drinks Thursday at 7?\n24/11/2026, 12:15 - Anna: Can't "
       "do Thursday, how about Friday?\n24/11/2026, 12:16 - Ben: Friday works. 7:30 at the Lamb?\n24/11/2026, 12:20 "
       "- Anna: \U0001f44d\n", (("2026-11-27 19:30", "Lamb"),)),
    _c("w-unanswered", "whatsapp", "25/11/2026, 18:40 - Kate: Are you free for lunch on Wednesday?\n25/11/2026, "
       "19:02 - Anna: Did you watch the match last night?\n", why="a proposal nobody agreed to"),
    _c("w-declined", "whatsapp", "25/11/2026, 08:00 - Omar: Squash on Saturday morning?\n25/11/2026, 08:30 - Anna: "
       "Sorry, I'm away this weekend. Next week?\n25/11/2026, 08:31 - Omar: Sure, I'll message you\n",
       why="a proposal declined"),
    _c("w-lunch-time-change", "whatsapp", "22/11/2026, 10:00 - Mum: Lunch here on Sunday at 1?\n22/11/2026, 10:05 - "
       "Anna: Yes please!\n27/11/2026, 17:45 - Mum: Can we make Sunday 12:30 instead? Dad's got football at 3\n"
       "27/11/2026, 17:50 - Anna: Of course\n", (("2026-11-29 12:30", "12:30"),), said="2026-11-22 10:00"),
    _c("w-party", "whatsapp", "24/11/2026, 20:10 - Priya: Can Ella come to Maya's party on Sat 5 Dec, 2-4pm? It's "
       "at Jungle Gym\n24/11/2026, 20:31 - Anna: She'd love to! See you there\n",
       (("2026-12-05 14:00-16:00", "party"),)),
    _c("w-handover", "whatsapp", "24/11/2026, 16:00 - Tom: I can do Tues 1st or Weds 2nd for the flat handover\n"
       "24/11/2026, 16:10 - Anna: Weds works better\n24/11/2026, 16:11 - Tom: Great, 2pm at the flat then\n",
       (("2026-12-02 14:00", ""),)),
    _c("w-question-only", "whatsapp", "28/11/2026, 08:00 - Zoe: What time does the market open on Saturday?\n"
       "28/11/2026, 08:05 - Anna: 9 I think\n", why="a question about opening hours", said="2026-11-28 08:00"),
    _c("w-tennis-moved", "whatsapp", "24/11/2026, 19:00 - Anna: Tennis Thursday 6pm still on?\n24/11/2026, 19:04 - "
       "Raj: Yes!\n25/11/2026, 21:30 - Raj: Courts are flooded, can we push to Friday same time?\n25/11/2026, 21:41 "
       "- Anna: ok\n", (("2026-11-27 18:00", ""),)),
    _c("w-dinner-next-week", "whatsapp", "23/11/2026, 13:00 - Jess: Dinner next week? Wed or Thu?\n23/11/2026, 13:30 "
       "- Anna: Thu! 8pm Padella?\n23/11/2026, 13:32 - Jess: Booked \U0001f389\n",
       (("2026-12-03 20:00", "Padella"),), said="2026-11-23 13:00"),
    _c("w-note-to-self", "whatsapp", "24/11/2026, 07:45 - Anna: Haircut Sat 10am w/ Jo\n",
       (("2026-11-28 10:00", "Haircut"),)),
    _c("w-baby-shower", "whatsapp", "20/11/2026, 11:00 - Nadia: Baby shower for Chloe is on 13 Dec at 3, at mine. "
       "Can you bring a dessert?\n20/11/2026, 11:20 - Anna: Yes of course, I'll do a trifle\n",
       (("2026-12-13 15:00", "Baby shower"),), said="2026-11-20 11:00"),
    _c("w-other-people", "whatsapp", "24/11/2026, 10:00 - Liam: Mum and Dad are flying to Malaga on the 2nd\n"
       "24/11/2026, 10:02 - Anna: Lucky them!\n", why="other people's plans"),
    # ------------------------------------------------------------------ chat turns (as pasted)
    _c("c-coffee-issue", "chat", "[1] Dana: Coffee on Tuesday?\n[2] Me: Tuesday's good. 10:30 at Monmouth?\n"
       "[3] Dana: Great, see you then.\n", (("2026-12-01 10:30", "Monmouth"),), said="2026-11-26 09:00"),
    # ------------------------------------------------------------------ voice memos and meeting transcripts
    _c("t-gas", "transcript", "Voice memo. Note to self: the gas safety check is booked for next Wednesday "
       "afternoon.", (("2026-12-02", "gas safety"),), said="2026-11-26 18:00"),
    _c("t-skip", "transcript", "Okay, reminder, um, the skip is being collected on Friday morning so the drive needs "
       "to be clear by eight.", (("2026-11-27", "skip"),)),
    _c("t-surgery", "transcript", "Remind me to ring Dr Patel's surgery on Monday at nine to get the blood test "
       "results.", (("2026-11-30 09:00", "Patel"),)),
    _c("t-consultant", "transcript", "Voice note. The consultant wants to see me again in two weeks, so I need to "
       "book that.", (("2026-12-08", "consultant"),)),
    _c("t-parcel", "transcript", "Reminder: the parcel from Argos is arriving tomorrow between 7am and 7pm, someone "
       "has to be in.", (("2026-11-25 07:00-19:00", "parcel"),)),
    _c("t-granddad", "transcript", "Don't forget it's Granddad's eightieth on the 12th, we're taking him to the Ivy "
       "at one.", (("2026-12-12 13:00", "Granddad"),)),
    _c("t-legal", "transcript", "Speaker 1: Can we get the draft to legal by the 7th?\nSpeaker 2: Yeah, the 7th is "
       "fine. I'll send it over that morning.", (("2026-12-07", "7th"),)),
    _c("t-lakes", "transcript", "If the weather holds we might head up to the Lakes on Saturday, but nothing's "
       "decided yet.", why="a hypothetical"),
    _c("t-garage", "transcript", "Note: the car's in the garage from Monday until Wednesday, so I'll need to get the "
       "bus.", (("2026-11-30", "garage"),)),
    _c("t-retro-moved", "transcript", "Speaker 1: One more thing, the retro is moving from Thursday to Friday, same "
       "time, two o'clock.\nSpeaker 2: Got it.", (("2026-11-27 14:00", "retro"),)),
    _c("t-dry-cleaning", "transcript", "Memo: collect the dry cleaning after 5 on Thursday, ticket number 4471.",
       (("2026-11-26", "dry cleaning"),)),
    _c("t-budget-news", "transcript", "Radio note: the Chancellor will deliver the autumn budget on Wednesday.",
       why="news"),
    _c("t-forecast", "transcript", "The forecast says heavy rain on Thursday and Friday, with winds up to 60 miles "
       "an hour.", why="a weather forecast"),
    _c("t-sister", "transcript", "My sister's starting her new job on Monday, she's really nervous about it.",
       why="someone else's plan"),
    # ------------------------------------------------------------------ OCR: letters, tickets, slips
    _c("o-train", "ocr", "ADVANCE SINGLE\nLONDON KINGS X\nTO EDINBURGH\nDATE 14/01/27\nDEP 07:30 ARR 11:52\n"
       "COACH C SEAT 42\nROUTE: LNER ONLY\n", (("2027-01-14 07:30-11:52", ""),)),
    _c("o-boarding", "ocr", "BOARDING PASS\neasyJet\nEZY8123\nLGW > GVA\n14/01 07:25\nGATE CLOSES 06:55\nSEAT 12C\n",
       (("2027-01-14 07:25", ""),)),
    _c("o-hospital", "ocr", "Royal Free Hospital\nOutpatient Appointment\nDate: 08/12/2026\nTime: 11:15\nClinic: "
       "Dermatology, Ground Floor\nPlease bring this letter with you.\n", (("2026-12-08 11:15", ""),)),
    _c("o-mot", "ocr", "MOT REMINDER\nVehicle: AB12 CDE\nYour MOT expires on 19.12.2026\nBook a test now to avoid a "
       "fine of up to \u00a31,000.\n", (("2026-12-19", "MOT"),)),
    _c("o-gig", "ocr", "O2 ACADEMY BRIXTON\nFONTAINES D.C.\nSAT 12/12/2026\nDOORS 19:00\nSTANDING\nNO RE-ENTRY\n",
       (("2026-12-12 19:00", ""),)),
    _c("o-council-tax", "ocr", "COUNCIL TAX BILL 2026/27\nDate of issue: 02/11/2026\nAccount no. 40021188\nBand C\n"
       "Annual amount: \u00a31,842.00\n", why="a bill's date of issue"),
    _c("o-parking", "ocr", "PAY & DISPLAY\nValid until 24/11/2026 18:30\nTariff 3 hrs \u00a36.50\nDisplay on "
       "dashboard\n", why="a ticket's validity"),
    _c("o-school-concert", "ocr", "Dear Parent/Carer,\nOur Christmas concert will take place on 16/12/2026 at 2pm in "
       "the school hall.\nTickets are free but please reply by 04/12/2026 so we can plan seating.\n",
       (("2026-12-16 14:00", "Christmas concert"), ("2026-12-04", "reply"))),
    _c("o-gym", "ocr", "PULSE GYMS\nMembership renewal\nYour membership renews on 01.01.2027 at \u00a342.00 per "
       "month.\nNo action needed.\n", (("2027-01-01", "renews"),)),
    _c("o-vet", "ocr", "Riverside Vets\nBiscuit is due his booster vaccination.\nAppointment: 03/12/2026 16:40\nwith "
       "Dr. Hughes\n", (("2026-12-03 16:40", ""),)),
    _c("o-delivery", "ocr", "Sainsbury's\nYour delivery slot\nThu 26/11 8am-10am\nOrder 55120934\n",
       (("2026-11-26 08:00-10:00", ""),)),
    _c("o-news-clipping", "ocr", "Bridge to close for repairs\nHammersmith Bridge will be closed to traffic from "
       "07/12/2026 for six weeks, the council announced on Tuesday.\n", why="news"),
    _c("o-prescription", "ocr", "Boots Pharmacy\nYour prescription will be ready to collect from 27/11/2026 after "
       "2pm.\n", (("2026-11-27", "collect"),)),
    _c("o-dentist-card", "ocr", "BRIGHT SMILES DENTAL\nYour next appointment:\nTue 05/01/2027 at 08.45\nPlease give "
       "24 hrs notice to cancel\n", (("2027-01-05 08:45", ""),)),
    _c("o-receipt", "ocr", "WAITROSE\n23/11/2026 17:42\nTOTAL \u00a341.27\nVISA ****4471\n", why="a receipt's time"),
    _c("o-exam-slip", "ocr", "CANDIDATE STATEMENT OF ENTRY\nGCSE Mathematics Paper 1\n14/12/2026 09:00 - 10:30\n"
       "Centre: Oakfield Academy\n", (("2026-12-14 09:00-10:30", ""),)),
    # ------------------------------------------------------------------ recurring arrangements
    _c("r-bookclub", "note", "Book club is the first Monday of each month at 7.30pm at Nina's.",
       (("2026-12-07 19:30", "Book club"), ("2027-01-04 19:30", "Book club"), ("2027-02-01 19:30", "Book club"))),
    _c("r-five-a-side", "note", "Five-a-side every other Friday at 6pm, starting this Friday.",
       (("2026-11-27 18:00", "Five-a-side"), ("2026-12-11 18:00", "Five-a-side"), ("2026-12-25 18:00", "Five-a-side"))),
    _c("r-piano", "note", "Leo's piano lessons are fortnightly on Wednesdays at 4.15pm; the next one is on 2 "
       "December.", (("2026-12-02 16:15", "piano"), ("2026-12-16 16:15", "piano"), ("2026-12-30 16:15", "piano"))),
    _c("r-drinks", "note", "Team drinks are on the last Friday of every month, 5pm at the Anchor.",
       (("2026-11-27 17:00", "drinks"), ("2026-12-25 17:00", "drinks"), ("2027-01-29 17:00", "drinks"))),
    _c("r-blood", "note", "Blood test every three weeks from Thursday 3 December, 8:40 at the GP.",
       (("2026-12-03 08:40", "Blood test"), ("2026-12-24 08:40", "Blood test"), ("2027-01-14 08:40", "Blood test"))),
    _c("r-residents", "note", "The residents' association meets on the second Tuesday of the month at 19:00 in the "
       "library.", (("2026-12-08 19:00", "residents"), ("2027-01-12 19:00", "residents"),
                    ("2027-02-09 19:00", "residents"))),
    _c("r-cleaner", "note", "The cleaner comes every other Monday from 30 November, 10 till 12.",
       (("2026-11-30 10:00-12:00", "cleaner"), ("2026-12-14 10:00-12:00", "cleaner"),
        ("2026-12-28 10:00-12:00", "cleaner"))),
    _c("r-window", "note", "Window cleaner every 8 weeks, next visit Monday 14 December.",
       (("2026-12-14", "Window cleaner"), ("2027-02-08", "Window cleaner"), ("2027-04-05", "Window cleaner"))),
    _c("r-swimming", "note", "Swimming lessons are every Saturday at 9.", why="a weekly habit (shown when asked for)"),
    _c("r-rent", "note", "Rent of \u00a31,450 leaves on the 1st of every month.", why="a monthly standing order"),
    # ------------------------------------------------------------------ must stay off
    _c("n-election", "note", "The general election will be held on Thursday 6 May 2027, the prime minister "
       "confirmed.", why="news"),
    _c("n-snow", "note", "Met Office: snow likely across the north on Sunday, up to 10cm on high ground.",
       why="a forecast"),
    _c("n-cornwall", "note", "Liam and Sophie are off to Cornwall on Saturday for a week.", why="other people's plans"),
    _c("n-brother", "note", "My brother is flying to Toronto on 3 December for work.", why="someone else's plan"),
    _c("n-job-hypo", "note", "If I got the job, I'd start on 4 January.", why="a hypothetical"),
    _c("n-paris-hypo", "note", "We could go to Paris for New Year if the Eurostar isn't too expensive.",
       why="a hypothetical"),
    _c("n-fed", "note", "Analysts expect the Fed to cut rates on 16 December.", why="news, a forecast"),
    _c("n-footbridge", "note", "According to the BBC, the new footbridge opens to the public on 14 December.",
       why="news"),
    _c("n-energy", "note", "Energy prices are forecast to rise by 6% from 1 January.", why="a forecast"),
    _c("n-missed", "note", "Had the train been on time, we'd have made the 7:15 showing on Friday.",
       why="a past hypothetical"),
    _c("n-someday", "note", "One day I'd love to run the Berlin marathon in September.", why="a wish"),
    _c("n-example", "note", "For example, a meeting on 3 May at 10:00 is written as 2027-05-03T10:00.",
       why="an example"),
    # ------------------------------------------------------------------ the families the agenda missed
    _c("f-kwikfit", "note", "Car service at Kwik Fit on 9 December at 8:00, they quoted \u00a3240",
       (("2026-12-09 08:00", "Kwik Fit"),)),
    _c("f-physio-same-time", "note", "Physio with Anna on Friday 27 November at 16:00.",
       (("2026-12-01 16:00", "physio"),), said="2026-11-20 18:00",
       then=(("2026-11-24 18:00", "Anna moved my physio to Tuesday 1 December, same time."),)),
    _c("f-haircut-new-time", "note", "Haircut with Jo on Saturday 5 December at 10:00.",
       (("2026-12-05 11:30", "haircut"),), said="2026-11-20 18:00",
       then=(("2026-11-25 09:00", "Jo texted: haircut now at 11:30 instead, same day."),)),
    _c("f-parents-two-weeks", "note", "Parents' evening is in two weeks, Tuesday at 6.",
       (("2026-12-08 18:00", "Parents' evening"),)),
    _c("f-exam-until", "note", "Exam: Thursday 10 December, 09:00 until 11:20, sports hall.",
       (("2026-12-10 09:00-11:20", "Exam"),)),
    _c("f-flights-numeric", "note", "Flights: out 14/01 07:25 from LGW, back 18/01 19:40.",
       (("2027-01-14 07:25", ""), ("2027-01-18 19:40", ""))),
    _c("f-carpet", "note", "Carpet fitters on 2 December at 9.", (("2026-12-02 09:00", "Carpet fitters"),)),
    _c("f-solicitor", "note", "Solicitor re: the house, Thursday 3 December 2:15pm.",
       (("2026-12-03 14:15", "Solicitor"),)),
    _c("f-padella", "note", "Table for 4 at Padella, Friday 11 December, 8pm, under Hart.",
       (("2026-12-11 20:00", "Padella"),)),
    _c("f-governors", "note", "Governors' meeting 3 December, 6:30 until 8pm, in the staff room.",
       (("2026-12-03 18:30-20:00", "Governors"),)),
    _c("f-stitches", "note", "Stitches out in 10 days at the practice nurse.", (("2026-12-04", "Stitches"),)),
    _c("f-nativity", "note", "Mia's nativity play, 17/12, 2pm.", (("2026-12-17 14:00", "nativity"),)),
    _c("f-market", "note", "Christmas market with the girls, Sat 12th, meet at 2 by the station.",
       (("2026-12-12 14:00", "Christmas market"),)),
]

