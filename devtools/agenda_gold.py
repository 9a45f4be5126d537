"""The agenda's gold sets: passages as people save them (notes, chat turns, transcripts, OCR of letters,
tickets and posters, e-mails and invitations, chat exports) with the agenda items each should produce, and
none where it must not produce any (dates of birth, publication dates, past narrative read as upcoming,
habits, forecasts, news, other people's plans, hypotheticals, questions).

Each case is read as of ``said`` (the passage's own time, in ``written_in`` or the person's ``zone``); an
expected item is its local start in the person's zone ("2026-12-10 09:40", or a day alone when the time
does not matter, or "2026-12-10 09:40-11:20" when its end matters too) and words its quoted sentence must
hold.  Anything else the reader produces is a false positive.  A case may hold later passages (``then``:
a move, a reply, a cancellation, each said at its own time): the agenda merges what they all say, and the
case is judged on the merged lines, as ``GET /v1/agenda`` shows them.  An item that recurs is judged at its
first three times from the day the case is said.

An e-mail (``mail``) is the raw message, read as the mail import files it (its text as a note, each
attachment through the extractors); a chat export (``whatsapp``) is the export's text, read as the WhatsApp
import files it (a record per day, dated by its first message).

The sets: ``CASES`` here (the first: tuned on, every third case held out, and 22 written after the rules),
``devtools.agenda_gold2.CASES`` (the second: 80+ passages of kinds the first lacks, written before the rules
were changed for them) and ``devtools.agenda_gold3.CASES`` (the third: written after, measured once).
Shared by the fast-lane test (tests/services/agenda/test_gold.py) and bench/agenda.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.agenda.agenda import Event

SAID = "2026-11-24 10:00"  # a Tuesday
ZONE = "Europe/London"
RECURRING_TIMES = 3  # an item that recurs is judged at its first three times


@dataclass(frozen=True, slots=True)
class Case:
    """One passage (and any said after it) and what it should put on the agenda."""

    id: str
    source: str  # note, chat, transcript, ocr, mail, whatsapp
    text: str
    expect: tuple[tuple[str, str], ...] = ()  # (local start, words of the quote)
    said: str = SAID
    zone: str = ZONE  # the person's zone
    written_in: str | None = None  # the zone the passage was written in, when the source says so
    why: str = ""  # for a case that must produce nothing: what it is
    headings: tuple[str, ...] = ()
    held_out: bool = field(default=False, compare=False)
    then: tuple[tuple[str, str], ...] = ()  # later passages of the same kind: (said, text)
    locale: str | None = None  # the person's locale (how "03/12" reads); None: the default calendar


_CASES: list[Case] = [
    # ------------------------------------------------------------------ notes: things to come
    Case("dentist-moved", "note", "Dentist moved to Thursday 10 December at 09:40.",
         (("2026-12-10 09:40", "Dentist moved"),)),
    Case("flight", "note", "Flight BA117 departs at 07:25 on 14 January.", (("2027-01-14 07:25", "BA117"),)),
    Case("rent", "note", "Call with the landlord: rent goes up to \u00a31,450 from January.",
         (("2027-01-01", "rent goes up"),)),
    Case("dentist-booked", "note", "My dentist appointment with Dr. Adeyemi is on the 3rd of December at 9:30.",
         (("2026-12-03 09:30", "Adeyemi"),)),
    Case("parents-evening", "note", "Parents' evening at school on 3rd December, 6-8pm.",
         (("2026-12-03 18:00", "Parents' evening"),)),
    Case("dinner-sam", "note", "Dinner with Sam next Friday at 7.", (("2026-11-27 19:00", "Dinner with Sam"),)),
    Case("council-tax", "note", "Remember to pay the council tax by 1 December.", (("2026-12-01", "council tax"),)),
    Case("mot", "note", "The car's MOT expires on 02/02/2027.", (("2027-02-02", "MOT"),)),
    Case("rome", "note", "Trip to Rome 14-18 January, hotel booked near Termini.", (("2027-01-14", "Rome"),)),
    Case("mum-birthday", "note", "Mum's birthday is on 12 March.", (("2027-03-12", "birthday"),)),
    Case("tax-return", "note", "Tax return deadline: 31 January.", (("2027-01-31", "Tax return"),)),
    Case("recital", "note", "Piano recital tomorrow at 4pm in the church hall.", (("2026-11-25 16:00", "recital"),)),
    Case("boiler", "note", "The boiler service is booked for Monday 30 November between 8 and 12.",
         (("2026-11-30 08:00", "boiler"),)),
    Case("book-club", "note", "Book club meets on Wednesday 2 December at 19:30 at Nina's.",
         (("2026-12-02 19:30", "Book club"),)),
    Case("wedding", "note", "Lucy's wedding is on 5 June 2027 in Bath.", (("2027-06-05", "wedding"),)),
    Case("keys", "note", "I'll drop the keys off at the estate agent on Friday.", (("2026-11-27", "keys"),)),
    Case("interview", "note", "Interview at Acme on 8 Dec, 2:30pm, ask for Priya at reception.",
         (("2026-12-08 14:30", "Interview"),)),
    Case("itinerary", "note",
         "# Lisbon trip\n\n## Thursday 14 January\n\n- 07:25 flight TP1351 from Gatwick\n- 14:00 check in at Casa "
         "Amora\n\n## Friday 15 January\n\n- 10:00 walking tour from Pra\u00e7a do Com\u00e9rcio\n",
         (("2027-01-14 07:25", "TP1351"), ("2027-01-14 14:00", "check in"), ("2027-01-15 10:00", "walking tour"))),
    Case("tokyo-call", "note", "Call with the Tokyo office on Thursday 3 December at 10:00 Tokyo time.",
         (("2026-12-03 01:00", "Tokyo office"),)),
    Case("webinar-et", "note", "Webinar on 9 December at 3pm ET.", (("2026-12-09 20:00", "Webinar"),)),
    Case("lands-ny", "note", "Flight lands in New York on 14 January at 11:05 local time.",
         (("2027-01-14 16:05", "lands in New York"),)),
    Case("electricity", "note", "The electricity bill of \u00a384 is due on the 15th.",
         (("2026-12-15", "electricity bill"),)),
    Case("vet", "note", "Vet appointment for Biscuit next Tuesday 9am.", (("2026-12-01 09:00", "Vet"),)),
    Case("gala", "note", "Don't forget: Leo's swimming gala on Saturday at 2pm.", (("2026-11-28 14:00", "gala"),)),
    Case("concert", "note", "Concert tickets for Arctic Monkeys, 12 December, doors 7pm.",
         (("2026-12-12 19:00", "Arctic Monkeys"),)),
    Case("accountant-moved", "note", "Meeting with the accountant moved from 1 December to 4 December at 11:00.",
         (("2026-12-04 11:00", "accountant"),)),
    Case("school-closes", "note", "School closes for Christmas on 18 December.", (("2026-12-18", "School closes"),)),
    Case("passport", "note", "Renew the passport before it expires on 3 March 2027.", (("2027-03-03", "passport"),)),
    Case("spain", "note", "Next week we fly to Spain.", (("2026-11-30", "Spain"),)),
    Case("new-job", "note", "The new job starts on Monday 4 January.", (("2027-01-04", "new job"),)),
    Case("netflix", "note", "Netflix subscription renews on 2 December for \u00a310.99.", (("2026-12-02", "Netflix"),)),
    Case("gym-debit", "note", "Direct debit for the gym (\u00a335) leaves on the 1st.", (("2026-12-01", "gym"),)),
    Case("expenses", "note", "Submit the expense report by Friday 5pm.", (("2026-11-27 17:00", "expense report"),)),
    Case("nursery", "note", "The nursery invoice must be paid by 15 December.", (("2026-12-15", "nursery"),)),
    Case("insurance", "note", "Car insurance renewal is due 9 January.", (("2027-01-09", "insurance"),)),
    Case("hairdresser", "note", "Haircut with Jo on 11 December at 12:15.", (("2026-12-11 12:15", "Haircut"),)),
    Case("plumber", "note", "The plumber is coming on Thursday morning to fix the leak.",
         (("2026-11-26", "plumber"),)),
    Case("exam", "note", "Maths exam on 14 December, 9:00, room B12.", (("2026-12-14 09:00", "exam"),)),
    # ------------------------------------------------------------------ notes: written in another zone
    Case("lunch-dana", "note", "Lunch with Dana tomorrow at 12:30.", (("2026-11-21 17:30", "Lunch with Dana"),),
         said="2026-11-20 18:00", written_in="America/New_York"),
    Case("cet-call", "note", "Call with the Berlin team on 3 December at 09:00 CET.",
         (("2026-12-03 00:00", "Berlin team"),), zone="America/Los_Angeles"),
    # ------------------------------------------------------------------ notes: what happened
    Case("lisbon-past", "note", "We went to Lisbon on 14 March.", (("2026-03-14", "Lisbon"),)),
    Case("flu-jab", "note", "Yesterday I had my flu jab at the pharmacy.", (("2026-11-23", "flu jab"),)),
    Case("dad-70", "note", "Last Saturday we celebrated Dad's 70th at the Swan.", (("2026-11-21", "Dad's 70th"),)),
    Case("half-marathon", "note", "On 2 October I ran the Cardiff half marathon in 1:52.",
         (("2026-10-02", "half marathon"),)),
    Case("dentist-was", "note", "The dentist appointment was on 8 December.", (("2026-12-08", "dentist"),),
         said="2026-12-12 09:00"),
    # ------------------------------------------------------------------ notes: never on the agenda
    Case("born", "note", "I was born in March 1990.", why="a date of birth"),
    Case("dob", "note", "Date of birth: 14/07/1985", why="a date of birth"),
    Case("published", "note", "Published 3 March 2024 \u00b7 6 min read", why="a publication date"),
    Case("swimming", "note", "Every Monday I go swimming at 7am.", why="a habit"),
    Case("yoga", "note", "Yoga on Tuesdays at 6.30pm.", why="a habit"),
    Case("updated", "note", "Last updated on 12 November 2026.", why="a publication date"),
    Case("invoice-date", "note", "Invoice date: 3 November 2026. Invoice number 8812.", why="a document's date"),
    Case("standup", "note", "The weekly team standup is every weekday at 9:15.", why="a habit"),
    Case("copyright", "note", "Copyright \u00a9 2025 Acme Ltd. All rights reserved.", why="a publication year"),
    Case("free-friday", "note", "Are you free on Friday?", why="a question"),
    Case("period", "note", "The report covers the period from 1 April to 30 September 2026.",
         why="a document's period"),
    Case("prices", "note", "Prices may change after January.", why="an open range"),
    Case("employees", "note", "In 2019 the company had 40 employees.", why="a year of a fact"),
    Case("posted", "note", "Posted by Jane on 20 October 2026.", why="a publication date"),
    Case("sunrise", "note", "Sunrise on 21 December is at 08:04.", why="a fact, not an event"),
    Case("born-leeds", "note", "He was born on 2 May 1957 in Leeds.", why="a date of birth"),
    Case("bins", "note", "Bins go out every Thursday night.", why="a habit"),
    Case("shop-hours", "note", "The shop is open 9am-5pm Monday to Saturday.", why="opening hours"),
    Case("released", "note", "Version 3.2 was released on 4 May.", why="a publication date"),
    Case("lunch-habit", "note", "I usually have lunch at 12:30.", why="a habit"),
    Case("cars-2030", "note", "By 2030 most new cars will be electric.", why="a forecast"),
    Case("warranty", "note", "The warranty is valid until 31 March 2027.", why="an open range"),
    Case("frost", "note", "Temperatures will drop to -3 on Friday night.", why="a weather forecast"),
    Case("blog", "note", "Mark's blog post from 2 November explains the new tax rules.", why="a publication date"),
    Case("edition", "note", "See chapter 3 on page 12 of the 2024 edition.", why="an edition year"),
    # ------------------------------------------------------------------ chat turns
    Case("chat-dinner", "chat", "[1] Maya: Are we still on for dinner on Saturday?\n[2] Tom: Yes! Saturday at 7.30 "
         "at Dishoom.\n[3] Maya: Perfect, see you then.\n", (("2026-11-28 19:30", "Dishoom"),)),
    Case("chat-kickoff", "chat", "[1] Priya: The kickoff got pushed to Monday 7 December, 10am.\n[2] Ben: Noted, "
         "I'll move my calendar.\n", (("2026-12-07 10:00", "kickoff"),)),
    Case("chat-berlin", "chat", "[1] Sam: I'm flying to Berlin on the 4th.\n[2] Jo: Safe travels!\n",
         (("2026-12-04", "Berlin"),)),
    Case("chat-birthday-wish", "chat", "[1] Alex: Happy birthday!!\n[2] Kim: Thank you!\n", why="no date"),
    Case("chat-parents", "chat", "[1] Dan: Remember the parents' meeting is tomorrow at 8:45.\n[2] Eve: Thanks for "
         "the reminder.\n", (("2026-11-25 08:45", "parents' meeting"),)),
    Case("chat-gig", "chat", "[1] Lee: How was the gig last night?\n[2] Ana: Amazing, we stayed till the end.\n",
         why="a question"),
    Case("chat-anniversary", "chat", "[1] Rita: Our anniversary is on the 20th of December, can you book a table?\n",
         (("2026-12-20", "anniversary"),)),
    Case("chat-gym", "chat", "[1] Mo: I go to the gym every morning at 6.\n[2] Zed: Respect.\n", why="a habit"),
    Case("chat-delivery", "chat", "[1] Hana: The package should be delivered on Thursday between 9 and 1.\n",
         (("2026-11-26 09:00", "delivered"),)),
    Case("chat-met", "chat", "[1] Ola: I met Jonas on 3 May 2019, that's when it all started.\n",
         (("2019-05-03", "met Jonas"),)),
    Case("chat-lunch-moved", "chat", "[1] Kai: Can we move lunch to Wednesday?\n[2] Lin: Sure, Wednesday 1pm "
         "at the usual place.\n", (("2026-11-25 13:00", "Wednesday 1pm"),)),
    Case("chat-thanks", "chat", "[1] Tim: Thanks for yesterday, it was great to catch up.\n", why="no event said"),
    # ------------------------------------------------------------------ transcripts
    Case("talk-launch", "transcript", "Okay so quick recap. The product launch is set for January 12th. Marketing "
         "needs the final assets by January 5th.", (("2027-01-12", "launch"), ("2027-01-05", "assets"))),
    Case("talk-board", "transcript", "And then the board meeting is on Thursday at two p.m. in the main conference "
         "room.", (("2026-11-26 14:00", "board meeting"),)),
    Case("talk-offsite", "transcript", "We had the offsite last week and it went really well.",
         (("2026-11-16", "offsite"),)),
    Case("talk-bank", "transcript", "Remind me to call the bank tomorrow morning.", (("2026-11-25", "call the bank"),)),
    Case("talk-grant", "transcript", "Um, so, uh, the deadline for the grant application is the first of December.",
         (("2026-12-01", "grant application"),)),
    Case("talk-vague", "transcript", "I think we should meet again at some point.", why="no date"),
    Case("talk-flight-back", "transcript", "My flight back is on Sunday at 6:40 in the evening.",
         (("2026-11-29 18:40", "flight back"),)),
    Case("talk-speakers", "transcript", "Speaker 1: So when is the review?\nSpeaker 2: The design review is on "
         "Wednesday at half past three.", (("2026-11-25 15:30", "design review"),)),
    Case("talk-history", "transcript", "In the eighteen hundreds this town was mostly farmland.", why="history"),
    # ------------------------------------------------------------------ OCR: letters, tickets, posters, receipts
    Case("ocr-nhs", "ocr", "NHS\nDear Ms Carter,\nYour appointment has been booked for:\nTuesday 8 December 2026\n"
         "at 10:30\nLocation: Outpatients, Level 2\n", (("2026-12-08 10:30", "appointment"),)),
    Case("ocr-eurostar", "ocr", "EUROSTAR 9014\nLondon St Pancras - Paris Nord\nDeparture: 19 Dec 2026 08:01\n"
         "Coach 7 Seat 42\n", (("2026-12-19 08:01", "Departure"),)),
    Case("ocr-fair", "ocr", "SUMMER FAIR\nSaturday 26 June 2027\n12 noon - 5pm\nSt Mary's School Field\n",
         (("2027-06-26", "SUMMER FAIR"),)),
    Case("ocr-gas", "ocr", "British Gas\nStatement date: 10 November 2026\nAmount due: \u00a3126.40\nPayment will be "
         "taken by direct debit on 30 November 2026.\n", (("2026-11-30", "direct debit"),)),
    Case("ocr-instalments", "ocr", "Council Tax Bill 2026/27\nInstalments are due on the 1st of each month from "
         "April to January.\n", why="a monthly habit"),
    Case("ocr-receipt", "ocr", "TESCO\n12/11/2026 14:32\nTotal \u00a323.17\nThank you for shopping\n",
         why="a receipt's printing time"),
    Case("ocr-book", "ocr", "First published in Great Britain in 2019 by Penguin Books.\nReprinted 2020, 2021.\n",
         why="a publication date"),
    Case("ocr-school", "ocr", "Dear Parents,\nThe school will close early at 1.30pm on Friday 18 December for the\n"
         "Christmas holidays.\n", (("2026-12-18 13:30", "close early"),)),
    Case("ocr-parking", "ocr", "PENALTY CHARGE NOTICE\nIssued: 20/11/2026\nPay \u00a335 within 14 days, by "
         "4 December 2026, or the charge rises to \u00a370.\n", (("2026-12-04", "Pay"),)),
    Case("ocr-dob", "ocr", "PASSPORT\nSurname: CARTER\nGiven names: ANNA MARIE\nDate of birth: 02 MAY 1985\n",
         why="dates of an identity document"),
]

# Written after the rules were tuned on the others, and measured once before any change: all held out.
_LATER: list[Case] = [
    Case("l-optician", "note", "Optician on the 9th at 11.", (("2026-12-09 11:00", "Optician"),)),
    Case("l-mot-booked", "note", "Booked the MOT for Wednesday 16 December, drop the car off by 8:30.",
         (("2026-12-16 08:30", "MOT"),)),
    Case("l-ferry", "note", "Ferry to Santander sails 22 December 21:30 from Portsmouth.",
         (("2026-12-22 21:30", "Ferry"),)),
    Case("l-bday-leo", "note", "Leo turns 7 on 5 February, party at the climbing wall that Saturday.",
         (("2027-02-05", "Leo turns 7"),)),
    Case("l-xmas-dinner", "note", "Christmas dinner at Gran's, we need to be there by 1pm.",
         (("2026-12-25 13:00", "Christmas dinner"),)),
    Case("l-parking", "note", "Residents' parking permit expires 31/12/2026 - renew online.",
         (("2026-12-31", "parking permit"),)),
    Case("l-hist", "note", "The castle was built in 1215 and besieged in 1266.", why="history"),
    Case("l-recipe", "note", "Bake at 180C for 25 minutes, then rest for 10.", why="a recipe"),
    Case("l-met-last-year", "note", "I met Clara at the conference on 3 December last year.",
         (("2025-12-03", "met Clara"),)),
    Case("l-sched-table", "note", "| Date | Event |\n|---|---|\n| 2 Dec | Team lunch |\n| 9 Dec | Carol service |\n",
         (("2026-12-02", "Team lunch"), ("2026-12-09", "Carol service"))),
    Case("l-train-strike", "note", "Train strike on Thursday, work from home.", (("2026-11-26", "Train strike"),)),
    Case("l-meeting-cancel", "note", "Friday's board meeting is cancelled.", why="nothing to attend"),
    Case("l-age", "note", "My grandmother is 92 and lives in Cork.", why="no date"),
    Case("l-news", "note", "The Bank of England raised rates on 6 November.", why="news, not the person's"),
    Case("c-pickup", "chat", "[1] Nora: Can you pick up Ella from school tomorrow at 3:15?\n[2] Raj: Yes, "
         "I'll get her at 3:15.\n", (("2026-11-25 15:15", "get her"),)),
    Case("c-movie", "chat", "[1] Ivy: Movie night at mine on Sunday, 8pm!\n[2] Jack: In!\n",
         (("2026-11-29 20:00", "Movie night"),)),
    Case("c-last-week", "chat", "[1] Gus: Last Tuesday's quiz was so much fun.\n", (("2026-11-17", "quiz"),)),
    Case("t-standup-moved", "transcript", "Quick heads up, the sprint review moves from Thursday to Friday at ten.",
         (("2026-11-27 10:00", "sprint review"),)),
    Case("t-numbers", "transcript", "We grew revenue by 12 percent in Q3 and hired 4 people.", why="figures"),
    Case("o-invite", "ocr", "You're invited!\nMia's 5th Birthday Party\nSunday 13 December\n2:00 - 4:00 pm\n"
         "Jungle Gym, Mill Road\n", (("2026-12-13 14:00", "Birthday Party"),)),
    Case("o-dvla", "ocr", "DVLA\nYour vehicle tax is due on 1 January 2027. You can tax your vehicle online.\n",
         (("2027-01-01", "vehicle tax"),)),
    Case("o-menu", "ocr", "MENU\nSoup of the day 5.50\nFish and chips 14.95\nOpen daily 12-10pm\n",
         why="a menu and opening hours"),
]

CASES: list[Case] = [replace(c, held_out=i % 3 == 2) for i, c in enumerate(_CASES)] + [
    replace(c, held_out=True) for c in _LATER]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the reader made of one case: the items it produced, matched against those expected."""

    case: Case
    produced: tuple[tuple[str, str], ...]  # (local start, quote)
    hits: int  # expected items found
    false: tuple[tuple[str, str], ...]  # produced items no expected one matches


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage as the pipeline stores it: its text, when it was said, its speakers."""

    text: str
    said_at: datetime
    speakers: frozenset[str] = frozenset()
    title: str = ""
    headings: tuple[str, ...] = ()  # the section it is in, as the chunker names it
    source_uri: str = ""
    kind: str = ""  # "chat" for a chat's record


def passages(case: Case) -> list[Passage]:
    """The passages of a case, each as the pipeline would store it."""
    from zoneinfo import ZoneInfo

    written = ZoneInfo(case.written_in) if case.written_in else ZoneInfo(case.zone)
    out: list[Passage] = []
    for said, text in ((case.said, case.text), *case.then):
        said_at = datetime.fromisoformat(said).replace(tzinfo=written)
        for p in _stored(case, text, said_at):
            if p.source_uri:  # the same source again is a new version of it: the old one is gone
                out = [q for q in out if q.source_uri != p.source_uri]
            out.append(p)
    return out


def _stored(case: Case, text: str, said_at: datetime) -> list[Passage]:
    import re

    if case.source == "chat":  # as the chat extractor stores it: a turn a paragraph, its speaker named
        return [_chat(text.encode(), said_at)]
    if case.source == "transcript":
        return [Passage(text, said_at, frozenset(re.findall(r"^(Speaker \d+|[A-Z]\w*):", text, re.M)))]
    if case.source == "mail":
        return _mail(text, said_at)
    if case.source == "whatsapp":
        return _whatsapp(case, text)
    return [Passage(text, said_at)]


def _chat(raw: bytes, said_at: datetime, title: str = "", source_uri: str = "") -> Passage:
    from services.extractors.text import extract_text

    extracted = extract_text(raw, content_type="text/x-chat", filename="chat.chat", is_note=False)
    speakers = frozenset(s.strip() for s in extracted.metadata["speakers"].split(","))
    return Passage(extracted.full_text, said_at, speakers, title, source_uri=source_uri, kind="chat")


def _mail(raw: str, received: datetime) -> list[Passage]:
    """A message as the mail import files it: its note, and each attachment the extractors read as text."""
    from secondbrain import sniff
    from secondbrain.errors import PermanentError
    from services.agenda.service import CALENDAR_SOURCE
    from services.extractors.text import extract_text
    from services.importers import mail
    from services.importers.model import Capture

    out = []
    for capture in mail.parse(raw.encode(), origin="gold", received=received).results:
        if not isinstance(capture, Capture) or not isinstance(capture.content, bytes):
            continue
        said_at = capture.captured_at or received
        try:
            kind = sniff.resolve(capture.content, capture.content_type or "", capture.filename,
                                 is_note=capture.kind == "note")
        except PermanentError:
            continue
        if kind.family != sniff.TEXT:
            continue
        if kind.content_type == "text/x-chat":
            out.append(_chat(capture.content, said_at, capture.title or ""))
            continue
        try:
            extracted = extract_text(capture.content, content_type=kind.content_type, filename=capture.filename,
                                     is_note=capture.kind == "note")
        except PermanentError:
            continue
        body = [seg for seg in extracted.segments if seg.kind != "heading"] or extracted.segments
        section = tuple(max(body, key=lambda seg: len(seg.text)).heading_path)
        if not section and capture.source_uri.startswith(CALENDAR_SOURCE) and capture.title:
            section = (capture.title,)  # a calendar event's record is read under its title, as the agenda does
        out.append(Passage(extracted.full_text, said_at, title=capture.title or "", headings=section,
                           source_uri=capture.source_uri))
    return out


def _whatsapp(case: Case, text: str) -> list[Passage]:
    """An export as the WhatsApp import files it: a record per day, dated by its first message."""
    import io
    from zoneinfo import ZoneInfo

    from services.importers import whatsapp
    from services.importers.archive import Export
    from services.importers.model import Capture, Options

    out = []
    with Export.from_file("WhatsApp Chat with gold.txt", io.BytesIO(text.encode())) as export:
        for capture in whatsapp.read(export, Options(tz=ZoneInfo(case.written_in or case.zone), date_order="dmy")):
            if isinstance(capture, Capture) and isinstance(capture.content, bytes) and capture.captured_at:
                out.append(_chat(capture.content, capture.captured_at, capture.title or "", capture.source_uri))
    return out


def events(case: Case) -> list[Event]:
    """The agenda's lines for a case: every passage read as the agenda reads it, merged."""
    from zoneinfo import ZoneInfo

    from secondbrain.search_hits import SearchHit
    from secondbrain.temporal.calendar import Conventions
    from services.agenda.agenda import Said, merge
    from services.agenda.happenings import read_passage

    written = ZoneInfo(case.written_in) if case.written_in else ZoneInfo(case.zone)
    calendar = Conventions.for_locale(case.locale) if case.locale else None
    said = []
    for n, p in enumerate(passages(case)):
        hit = SearchHit(f"{case.id}/{n}", 0.0, p.text, p.title, f"{case.id}/{n}", f"{case.id}/{n}", case.id,
                        "text", p.said_at.isoformat(), p.said_at.isoformat(), 0, len(p.text), list(p.headings),
                        None, None, None, source_uri=p.source_uri, kind=p.kind)
        for h in read_passage(p.text, p.said_at, written, headings=p.headings or case.headings, speakers=p.speakers,
                              conventions=calendar):
            said.append(Said(h, hit, p.said_at))
    return merge(said)


def produced(case: Case) -> list[tuple[str, str]]:
    """The agenda's lines for a case, as (local start in the person's zone, with its end when it has one;
    quote); a line that recurs at its first three times."""
    from zoneinfo import ZoneInfo

    person = ZoneInfo(case.zone)
    out = []
    for event in events(case):
        if event.cancelled is not None:
            continue  # a cancellation takes an event off the agenda; alone it puts nothing on it
        h = event.happening
        if h.change == "cancelled":
            continue
        for start, end, day in _times(case, event):
            if start is not None:
                when = start.astimezone(person).strftime("%Y-%m-%d %H:%M")
                if end is not None:
                    when += end.astimezone(person).strftime("-%H:%M")
            else:
                when = day.isoformat()
            out.append((when, h.quote))
    return out


def _times(case: Case, event: Event) -> list[tuple[datetime | None, datetime | None, date]]:
    """When a line is: once, or (for an item that recurs) its first times from the day the case is said."""
    h = event.happening
    recurs = getattr(h, "recurrence", None)
    if recurs is None:
        return [(h.start, h.end, h.day)]
    first = datetime.fromisoformat(case.said).date()
    out: list[tuple[datetime | None, datetime | None, date]] = []
    for day in recurs.days(max(first, h.day), first + timedelta(days=800)):
        if len(out) == RECURRING_TIMES:
            break
        start = datetime.combine(day, h.start.timetz()) if h.start is not None else None
        end = datetime.combine(day, h.end.timetz()) if h.end is not None and start is not None else None
        out.append((start, end, day))
    return out


def _matches(expected: str, produced: str) -> bool:
    """A day alone matches any item that day; a start matches a start (whatever its end); a start and an
    end match only both."""
    if len(expected) == 10:
        return produced[:10] == expected
    if len(expected) == 16:
        return produced[:16] == expected
    return produced == expected


def judge(case: Case, items: list[tuple[str, str]]) -> Outcome:
    """Each expected item is found when an item is then (see ``_matches``) and its quote holds the expected
    words; every other item is a false positive."""
    left = list(items)
    hits = 0
    for when, words in case.expect:
        match = next((i for i in left if _matches(when, i[0]) and words.lower() in i[1].lower()), None)
        if match is not None:
            hits += 1
            left.remove(match)
    return Outcome(case, tuple(items), hits, tuple(left))


def measure(cases: list[Case] | None = None) -> tuple[float, float, list[Outcome]]:
    """Precision and recall of the agenda items over ``cases`` (default: the first set), with each case's
    outcome."""
    outcomes = [judge(c, produced(c)) for c in (CASES if cases is None else cases)]
    made = sum(len(o.produced) for o in outcomes)
    right = sum(o.hits for o in outcomes)
    expected = sum(len(o.case.expect) for o in outcomes)
    return (right / made if made else 1.0), (right / expected if expected else 1.0), outcomes
