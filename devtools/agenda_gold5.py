"""The agenda's fifth gold set: 47 passages written after the rules were changed for what the fourth set showed,
and measured once, untuned: the last figure on text the rules never saw.

Kinds as before (notes, e-mails and invitations, WhatsApp exports, voice memos and transcripts, OCR'd tickets,
cards and letters, rhythms, and what must stay off).  The person is Anna Hart in London (``en_GB``); most cases
are said on Monday 14 December 2026.  Judged as ``devtools.agenda_gold`` says.
"""

from __future__ import annotations

from devtools.agenda_gold import Case
from devtools.agenda_gold2 import ME, _google_body, _ics, _mail

SAID = "2026-12-14 09:30"  # a Monday


def _c(*args: object, **kw: object) -> Case:
    kw.setdefault("locale", "en_GB")
    kw.setdefault("said", SAID)
    return Case(*args, **kw)  # type: ignore[arg-type]


_DINNER = _ics("client-dinner@acme.example", "Client dinner", "TZID=Europe/London:20261217T193000",
               "TZID=Europe/London:20261217T220000")

CASES: list[Case] = [
    # ------------------------------------------------------------------ notes
    _c("5-hair", "note", "Hair colour with Bea, Sat 19th 1pm.", (("2026-12-19 13:00", "Hair colour"),)),
    _c("5-library", "note", "Must return the library books by Wednesday.", (("2026-12-16", "library books"),)),
    _c("5-santa", "note", "Secret Santa swap at work on the 22nd.", (("2026-12-22", "Secret Santa"),)),
    _c("5-neighbours", "note", "Neighbours' drinks from 6 on Christmas Eve.", (("2026-12-24 18:00", "drinks"),)),
    _c("5-vet", "note", "Vet for Milo's jabs \u2014 11.15 on Thursday.", (("2026-12-17 11:15", "Vet"),)),
    _c("5-bill", "note", "Electric bill \u00a396 goes out on the 28th.", (("2026-12-28", "Electric bill"),)),
    _c("5-panto", "note", "Pantomime with the kids, Boxing Day, 2.30pm matinee.",
       (("2026-12-26 14:30", "Pantomime"),)),
    _c("5-swim", "note", "Sign up for the January swim course before the 20th.", (("2026-12-20", "swim course"),)),
    _c("5-choir", "note", "Church choir practice every other Wednesday, 7.30pm, starting 6 January.",
       (("2027-01-06 19:30", "choir"), ("2027-01-20 19:30", "choir"), ("2027-02-03 19:30", "choir"))),
    _c("5-brownies", "note", "Brownies meet the last Thursday of each month at 6.",
       (("2026-12-31 18:00", "Brownies"), ("2027-01-28 18:00", "Brownies"), ("2027-02-25 18:00", "Brownies"))),
    _c("5-lands", "note", "Our flight home lands at 22:40 on 3 January.", (("2027-01-03 22:40", "flight"),)),
    _c("5-mary", "note", "Aunt Mary is visiting her sister in Dublin over New Year.", why="someone else's plans"),
    _c("5-boe", "note", "The Bank of England is expected to hold rates in February.", why="news, a forecast"),
    _c("5-snow", "note", "If it snows, the school might close on Friday.", why="a hypothetical"),
    _c("5-spa", "note", "Would be nice to do a spa day sometime in spring.", why="a wish"),
    _c("5-promotion", "note", "We celebrated Jo's promotion at the pub on Friday night.",
       (("2026-12-11", "promotion"),)),
    _c("5-review", "note", "Annual review with my manager moved to 8 January, same time (3pm).",
       (("2027-01-08 15:00", "Annual review"),)),
    _c("5-tree", "note", "Tree delivery booked: Wednesday between 8 and 12.", (("2026-12-16 08:00-12:00", "Tree"),)),
    # ------------------------------------------------------------------ e-mails and invitations
    _c("5-m-lights", "mail", _mail(
        "Eventbrite <orders@eventbrite.example>", "Your order for Winter Lights Walk", "2026-12-12 16:20",
        "You're going to Winter Lights Walk!\n\nSaturday, 9 January 2027 \u00b7 17:00 - 19:00 GMT\nLocation: Kew "
        "Gardens, Richmond\n\nOrder #7781230\n"), (("2027-01-09 17:00-19:00", ""),), said="2026-12-12 16:20"),
    _c("5-m-gp", "mail", _mail(
        "Elm Tree Surgery <noreply@elmtree.example>", "Appointment reminder", "2026-12-14 07:00",
        "Your appointment with Dr Shah is on 21/12/2026 at 09:10. To cancel, reply CANCEL.\n"),
       (("2026-12-21 09:10", "Dr Shah"),), said="2026-12-14 07:00"),
    _c("5-m-oneone", "mail", _mail(
        "Leo Grant <leo@acme.example>", "Our 1:1", "2026-12-14 08:40",
        "Hi Anna, could we move our 1:1 from Thursday to Friday 10am? Leo\n", message_id="<oneone-1@acme.example>"),
       (("2026-12-18 10:00", ""),), said="2026-12-14 08:40",
       then=(("2026-12-14 09:05", _mail(ME, "Re: Our 1:1", "2026-12-14 09:05", "Friday 10am works for me.\n\nAnna\n",
                                        to="Leo Grant <leo@acme.example>")),)),
    _c("5-i-retro", "mail", _mail(
        "Sam Cole (Google Calendar) <calendar-notification@google.example>",
        "Invitation: Year-end retro @ Tue 22 Dec 2026 15:00 - 16:00 (GMT) (anna@hart.example)", "2026-12-11 11:00",
        _google_body("Year-end retro", "Tuesday 22 Dec 2026 \u22c5 15:00 \u2013 16:00"),
        attach=(("invite.ics", "text/calendar", _ics(
            "retro-22@google.example", "Year-end retro", "TZID=Europe/London:20261222T150000",
            "TZID=Europe/London:20261222T160000", organizer="sam@acme.example")),)),
       (("2026-12-22 15:00-16:00", "Year-end retro"),), said="2026-12-11 11:00"),
    _c("5-i-dinner", "mail", _mail(
        "Priya Shah <priya@acme.example>", "Client dinner", "2026-12-10 10:00", "Dinner with the Northwind team.\n",
        attach=(("invite.ics", "text/calendar", _DINNER),)),
       why="an invitation, then its cancellation", said="2026-12-10 10:00",
       then=(("2026-12-13 18:00", _mail(
           "Priya Shah <priya@acme.example>", "Cancelled: Client dinner", "2026-12-13 18:00",
           "Sorry all, Northwind can't make it, so we're cancelling.\n",
           attach=(("invite.ics", "text/calendar", _DINNER.replace("METHOD:REQUEST", "METHOD:CANCEL")
                    .replace("STATUS:CONFIRMED", "STATUS:CANCELLED").replace("SEQUENCE:0", "SEQUENCE:1")),))),)),
    _c("5-m-sale", "mail", _mail(
        "John Lewis <offers@johnlewis.example>", "Our sale starts soon", "2026-12-14 06:00",
        "Our January sale starts 26 December at 8am. Be first in line!\n\nUnsubscribe\n"),
       why="a shop's sale", said="2026-12-14 06:00"),
    _c("5-m-checkin", "mail", _mail(
        "British Airways <ba@ba.example>", "Check-in is open", "2026-12-14 06:45",
        "Check-in is now open for your flight BA2490 to Faro on Tue 5 Jan 2027, departing 06:45.\n"),
       (("2027-01-05 06:45", "BA2490"),), said="2026-12-14 06:45"),
    _c("5-m-inset", "mail", _mail(
        "Oakfield Primary School <office@oakfield.example>", "INSET day", "2026-12-11 15:00",
        "Dear parents, please note INSET day on Monday 4 January \u2014 school closed to pupils.\n"),
       (("2027-01-04", "INSET day"),), said="2026-12-11 15:00"),
    # ------------------------------------------------------------------ chat exports
    _c("5-w-coffee", "whatsapp", "14/12/2026, 08:00 - Zara: Coffee this week? Wed or Fri?\n14/12/2026, 08:20 - Anna: "
       "Fri please, 11ish?\n14/12/2026, 08:22 - Zara: Lovely x\n", (("2026-12-18 11:00", ""),),
       said="2026-12-14 08:00"),
    _c("5-w-squash", "whatsapp", "13/12/2026, 19:00 - Mike: Squash Tues 7pm?\n13/12/2026, 19:30 - Anna: Can't, busy "
       "Tues\n13/12/2026, 19:31 - Mike: No worries, another time\n", why="declined", said="2026-12-13 19:00"),
    _c("5-w-xmas", "whatsapp", "12/12/2026, 10:00 - Mum: Christmas lunch at 1 at ours, everyone ok with that?\n"
       "12/12/2026, 10:05 - Anna: Yes! We'll bring the pudding\n", (("2026-12-25 13:00", "Christmas lunch"),),
       said="2026-12-12 10:00"),
    _c("5-w-running", "whatsapp", "14/12/2026, 12:00 - Pete: Running club moved to 8am Saturday this week\n"
       "14/12/2026, 12:01 - Anna: \U0001f44d\n", (("2026-12-19 08:00", "Running club"),), said="2026-12-14 12:00"),
    _c("5-w-sleepover", "whatsapp", "11/12/2026, 21:00 - Lily: Sleepover at ours Friday 18th? Pick up 10am Sat\n"
       "11/12/2026, 21:30 - Anna: Sounds great, she'll be so excited\n",
       (("2026-12-18", "Sleepover"), ("2026-12-19 10:00", "Pick up")), said="2026-12-11 21:00"),
    _c("5-w-cinema", "whatsapp", "14/12/2026, 17:45 - Tom: Are we still doing the cinema tomorrow?\n14/12/2026, 17:50 "
       "- Anna: Yep, 7.40 showing\n", (("2026-12-15 19:40", ""),), said="2026-12-14 17:45"),
    _c("5-w-ruth", "whatsapp", "14/12/2026, 09:00 - Ruth: My boiler's broken again, engineer coming Thursday "
       "\U0001f644\n", why="someone else's engineer", said="2026-12-14 09:00"),
    _c("5-w-note", "whatsapp", "10/12/2026, 20:00 - Anna: note: parents evening Tues 12 Jan 5.20pm\n",
       (("2027-01-12 17:20", "parents evening"),), said="2026-12-10 20:00"),
    # ------------------------------------------------------------------ voice memos and transcripts
    _c("5-t-licence", "transcript", "Reminder to self: renew the TV licence before it runs out on 31 January.",
       (("2027-01-31", "TV licence"),)),
    _c("5-t-planning", "transcript", "Speaker 1: Can everyone make the planning meeting on the 6th at two?\n"
       "Speaker 2: Yes.\nSpeaker 3: Works for me.", (("2027-01-06 14:00", "planning meeting"),)),
    _c("5-t-physio", "transcript", "Voice memo, the physio said come back in three weeks.",
       (("2027-01-04", "physio"),)),
    _c("5-t-viewing", "transcript", "The guy from the estate agent is showing the flat to someone on Saturday "
       "morning, so tidy up.", (("2026-12-19", "showing the flat"),)),
    _c("5-t-strikes", "transcript", "On the news they said the strikes on the railways are going ahead on the 23rd.",
       why="news"),
    _c("5-t-pilates", "transcript", "I think the Pilates class might be cancelled next week, not sure yet.",
       why="a maybe"),
    # ------------------------------------------------------------------ OCR
    _c("5-o-boarding", "ocr", "BRITISH AIRWAYS\nBOARDING PASS\nBA2490 LHR-FAO\n05JAN 06:45\nGATE CLOSES 06:25\n",
       (("2027-01-05 06:45", ""),)),
    _c("5-o-carol", "ocr", "THE OLD VIC\nA CHRISTMAS CAROL\nTUE 22 DEC 2026 7.30PM\nDRESS CIRCLE B14\n",
       (("2026-12-22 19:30", ""),)),
    _c("5-o-physio", "ocr", "APPOINTMENT CARD\nPhysiotherapy\nMon 04/01/27 16:00\nMon 11/01/27 16:00\n",
       (("2027-01-04 16:00", ""), ("2027-01-11 16:00", ""))),
    _c("5-o-lidl", "ocr", "LIDL\n13.12.2026 11:05\nSUM 24.87\nCARD\n", why="a receipt's time"),
    _c("5-o-counciltax", "ocr", "COUNCIL TAX REMINDER\nAmount overdue: \u00a3152.00\nPay by 28/12/2026 to avoid a "
       "summons.\n", (("2026-12-28", "Pay"),)),
    _c("5-o-cleaners", "ocr", "DRY CLEANERS\nTicket 0442\nReady: Thu 17 Dec after 4pm\n", (("2026-12-17", "Ready"),)),
    _c("5-o-wedding", "ocr", "WEDDING INVITATION\nTogether with their families\nEmma & Josh\ninvite you to celebrate "
       "their marriage\non Saturday the fifth of June 2027\nat two o'clock in the afternoon\n",
       (("2027-06-05 14:00", ""),)),
]
