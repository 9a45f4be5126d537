"""The agenda's third gold set: 46 passages written after the rules were changed for the second set, and measured
once, untuned: the figure the agenda's quality is given as.

Kinds as the second set's (notes, e-mails and calendar invitations, WhatsApp exports, voice memos and meeting
transcripts, OCR'd tickets and letters, arrangements on a rhythm, and what must stay off), in other words.
The person is Anna Hart in London (``en_GB``); most cases are said on Friday 4 December 2026.  Judged as
``devtools.agenda_gold`` says.
"""

from __future__ import annotations

from devtools.agenda_gold import Case
from devtools.agenda_gold2 import ME, _google_body, _ics, _mail

SAID = "2026-12-04 09:00"  # a Friday


def _c(*args: object, **kw: object) -> Case:
    kw.setdefault("locale", "en_GB")
    kw.setdefault("said", SAID)
    return Case(*args, **kw)  # type: ignore[arg-type]


_LUNCH = _ics("lunch-18@acme.example", "Team lunch", "TZID=Europe/London:20261218T123000",
              "TZID=Europe/London:20261218T140000")

CASES: list[Case] = [
    # ------------------------------------------------------------------ notes
    _c("3-glasses", "note", "Pick up the new glasses from Specsavers on Tuesday after 2.",
       (("2026-12-08", "glasses"),)),
    _c("3-nails", "note", "Nail appointment 12/12 at 11.", (("2026-12-12 11:00", "Nail"),)),
    _c("3-carols", "note", "Carol singing at St Luke's, Sunday 20 December, 6pm till 7.30pm.",
       (("2026-12-20 18:00-19:30", "Carol singing"),)),
    _c("3-car-tax", "note", "Renew car tax before 31/12.", (("2026-12-31", "car tax"),)),
    _c("3-christening", "note", "Emma's christening is on the 10th of January at 11am, St Mary's.",
       (("2027-01-10 11:00", "christening"),)),
    _c("3-boiler", "note", "Boiler engineer coming in three days, morning slot.", (("2026-12-07", "Boiler"),)),
    _c("3-guitar", "note", "Guitar lessons every second Thursday, 5pm, next one on Thursday 10 December.",
       (("2026-12-10 17:00", "Guitar"), ("2026-12-24 17:00", "Guitar"), ("2027-01-07 17:00", "Guitar"))),
    _c("3-parish", "note", "Parish council meets on the third Wednesday of every month at 7.30pm.",
       (("2026-12-16 19:30", "Parish"), ("2027-01-20 19:30", "Parish"), ("2027-02-17 19:30", "Parish"))),
    _c("3-hip", "note", "Dad's hip operation is scheduled for 15 January.", (("2027-01-15", "hip operation"),)),
    _c("3-sophie", "note", "Sophie's flying to Sydney on the 19th for Christmas.", why="someone else's trip"),
    _c("3-elections", "note", "The council elections are on Thursday 6 May.", why="news"),
    _c("3-storm", "note", "Storm Bert is expected to hit the south coast on Saturday.", why="a forecast"),
    _c("3-madrid", "note", "Supposing we did go to Madrid, the 14th would suit best.", why="a hypothetical"),
    _c("3-shift", "note", "Swapped shifts with Priya: I'm now on the early on Saturday 12th, 6am start.",
       (("2026-12-12 06:00", "early"),)),
    _c("3-interview", "note", "Interview for the Leeds job got moved to Wednesday 16th, still 10:30.",
       (("2026-12-16 10:30", "Interview"),)),
    _c("3-grandma", "note", "Lunch with Grandma cancelled, she's poorly.", why="a cancellation alone"),
    _c("3-spanish", "note", "Spanish class, fortnightly on Mondays from 11 January, 6.30pm.",
       (("2027-01-11 18:30", "Spanish"), ("2027-01-25 18:30", "Spanish"), ("2027-02-08 18:30", "Spanish"))),
    # ------------------------------------------------------------------ e-mails and invitations
    _c("3-m-gig", "mail", _mail(
        "Ticketmaster <noreply@ticketmaster.example>", "Your tickets for The National", "2026-12-02 20:11",
        "Hi Anna,\n\nYour tickets for The National at the O2 Arena are confirmed.\n\nDate: Saturday 23 January 2027\n"
        "Doors: 18:30\nShow: 20:00\n\nYour order number is 44-1120-9931.\n"), (("2027-01-23", ""),),
       said="2026-12-02 20:11"),
    _c("3-m-jumper", "mail", _mail(
        "Oakfield Primary School <office@oakfield.example>", "Christmas jumper day", "2026-12-07 08:30",
        "Dear families,\n\nReminder: Christmas jumper day is this Friday, 11 December. Donations of \u00a31 are "
        "welcome.\n\nOakfield Primary\n"), (("2026-12-11", "jumper day"),), said="2026-12-07 08:30"),
    _c("3-m-gas", "mail", _mail(
        "Tom Baker <tom@lettings.example>", "Gas safety inspection", "2026-12-03 11:00",
        "Hi Anna,\n\nCould the gas engineer come on Monday 14 December between 12 and 2?\n\nThanks,\nTom\n"),
       (("2026-12-14 12:00", ""),), said="2026-12-03 11:00",
       then=(("2026-12-03 13:40", _mail(
           ME, "Re: Gas safety inspection", "2026-12-03 13:40",
           "Yes, that works, I'll be in.\n\nAnna\n\nOn Thu, 3 Dec 2026 at 11:00, Tom Baker <tom@lettings.example> "
           "wrote:\n> Could the gas engineer come on Monday 14 December between 12 and 2?\n",
           to="Tom Baker <tom@lettings.example>")),)),
    _c("3-m-ocado", "mail", _mail(
        "Ocado <orders@ocado.example>", "Your delivery is booked", "2026-12-03 21:02",
        "Thanks for your order, Anna.\n\nYour Ocado delivery is booked for Sun 13 Dec, 7-8pm.\n\nYou can change "
        "your order until 11pm the night before.\n"), (("2026-12-13 19:00-20:00", "delivery"),),
       said="2026-12-03 21:02"),
    _c("3-m-latenight", "mail", _mail(
        "Tate Modern <members@tate.example>", "Festive late opening", "2026-12-01 10:00",
        "Join us for our festive late opening on Thursday 17 December until 9pm! Mulled wine and music all "
        "evening.\n\nUnsubscribe | View in browser\n"), why="a museum's newsletter", said="2026-12-01 10:00"),
    _c("3-i-oneone", "mail", _mail(
        "Sam Cole (Google Calendar) <calendar-notification@google.example>",
        "Invitation: 1:1 Sam / Anna @ Mon 7 Dec 2026 15:00 - 15:30 (GMT) (anna@hart.example)", "2026-12-02 16:40",
        _google_body("1:1 Sam / Anna", "Monday 7 Dec 2026 \u22c5 15:00 \u2013 15:30"),
        attach=(("invite.ics", "text/calendar", _ics(
            "oneone-7@google.example", "1:1 Sam / Anna", "TZID=Europe/London:20261207T150000",
            "TZID=Europe/London:20261207T153000", organizer="sam@acme.example")),)),
       (("2026-12-07 15:00-15:30", ""),), said="2026-12-02 16:40"),
    _c("3-i-lunch-moved", "mail", _mail(
        "Priya Shah <priya@acme.example>", "Team lunch", "2026-11-27 10:00", "Christmas team lunch, see invite.\n",
        attach=(("invite.ics", "text/calendar", _LUNCH),)),
       (("2026-12-18 13:00-14:30", "Team lunch"),), said="2026-11-27 10:00",
       then=(("2026-12-03 09:00", _mail(
           "Priya Shah <priya@acme.example>", "Updated: Team lunch", "2026-12-03 09:00",
           "The restaurant could only do 1pm, updated invite attached.\n",
           attach=(("invite.ics", "text/calendar", _LUNCH.replace("SEQUENCE:0", "SEQUENCE:1")
                    .replace("T123000", "T130000").replace("T140000", "T143000")),))),)),
    _c("3-i-signoff", "mail", _mail(
        "Finance <finance@acme.example>", "Budget sign-off", "2026-12-01 12:00", "Please accept.\n",
        attach=(("meeting.ics", "text/calendar", _ics(
            "signoff-9@acme.example", "Budget sign-off", "20261209T160000Z", "20261209T164500Z",
            organizer="finance@acme.example")),)),
       (("2026-12-09 16:00-16:45", "Budget sign-off"),), said="2026-12-01 12:00"),
    _c("3-m-trainer", "mail", _mail(
        "Mike Jones <mike@fitpt.example>", "First session", "2026-12-04 07:45",
        "Hi Anna, see you on Tuesday at 9 for your first session. Bring water!\n\nMike\n"),
       (("2026-12-08 09:00", "first session"),), said="2026-12-04 07:45"),
    # ------------------------------------------------------------------ chat exports
    _c("3-w-cinema", "whatsapp", "04/12/2026, 10:02 - Leah: Fancy the cinema tomorrow night?\n04/12/2026, 10:15 - "
       "Anna: Yes! 8:15 showing?\n04/12/2026, 10:16 - Leah: Perfect, I'll book\n", (("2026-12-05 20:15", ""),)),
    _c("3-w-handover", "whatsapp", "04/12/2026, 18:00 - Marco: Can we do the handover Monday instead of Sunday?\n"
       "04/12/2026, 18:30 - Anna: No problem\n", (("2026-12-07", ""),), said="2026-12-04 18:00"),
    _c("3-w-brunch", "whatsapp", "03/12/2026, 21:00 - Jo: Brunch Sat or Sun?\n03/12/2026, 21:05 - Anna: Sun works "
       "better for me\n03/12/2026, 21:06 - Jo: Sun 11am at Dishoom then\n", (("2026-12-06 11:00", ""),),
       said="2026-12-03 21:00"),
    _c("3-w-leaving", "whatsapp", "04/12/2026, 08:00 - Ravi: Are you coming to my leaving do on Friday 18th?\n"
       "04/12/2026, 12:00 - Anna: Wouldn't miss it!\n", (("2026-12-18", "leaving"),)),
    _c("3-w-away", "whatsapp", "04/12/2026, 14:00 - Kim: Dinner at ours on the 12th?\n04/12/2026, 14:20 - Anna: Ah "
       "we're away that weekend, sorry!\n", why="a proposal declined"),
    _c("3-w-ollie", "whatsapp", "02/12/2026, 19:00 - Anna: Reminder: dentist for Ollie tomorrow 4pm\n",
       (("2026-12-03 16:00", "dentist"),), said="2026-12-02 19:00"),
    _c("3-w-plumber", "whatsapp", "04/12/2026, 09:30 - Tom: The plumber can come Tuesday or Wednesday morning, "
       "which is better?\n04/12/2026, 09:45 - Anna: Wednesday please\n", (("2026-12-09", ""),)),
    # ------------------------------------------------------------------ voice memos and transcripts
    _c("3-t-launch", "transcript", "Speaker 1: Let's pencil in the launch review for the 15th.\nSpeaker 2: The "
       "fifteenth works. Morning?\nSpeaker 1: Ten a.m.", (("2026-12-15", "launch review"),)),
    _c("3-t-mot", "transcript", "Voice memo: book the MOT for the week of the 11th of January.",
       (("2027-01-11", "MOT"),)),
    _c("3-t-hmrc", "transcript", "Note to self, call HMRC first thing Monday morning.", (("2026-12-07", "HMRC"),)),
    _c("3-t-farmshop", "transcript", "Memo. The farm shop order is ready for collection on the 23rd between 10 and "
       "12.", (("2026-12-23 10:00-12:00", "farm shop"),)),
    _c("3-t-marathon", "transcript", "We talked about maybe doing the half marathon in April, we'll see.",
       why="a maybe"),
    _c("3-t-snow", "transcript", "Mum reckons it'll snow on Christmas Day.", why="a forecast"),
    # ------------------------------------------------------------------ OCR
    _c("3-o-prescription", "ocr", "PRESCRIPTION COLLECTION\nReady from: 08/12/2026\nBoots, High Street\n",
       (("2026-12-08", ""),)),
    _c("3-o-nutcracker", "ocr", "THEATRE ROYAL\nTHE NUTCRACKER\nWED 23 DEC 2026 19:30\nSTALLS K12\n",
       (("2026-12-23 19:30", ""),)),
    _c("3-o-booster", "ocr", "NHS\nYour COVID-19 booster appointment\n17/12/2026 at 09:20\nVaccination Centre, Town "
       "Hall\n", (("2026-12-17 09:20", ""),)),
    _c("3-o-permit", "ocr", "PARKING PERMIT\nValid from 01/01/2027 to 31/12/2027\n", why="a permit's validity"),
    _c("3-o-royalmail", "ocr", "ROYAL MAIL\nSorry we missed you\nWe'll try to deliver again on 07/12\n",
       (("2026-12-07", "deliver"),)),
    _c("3-o-costa", "ocr", "RECEIPT\nCOSTA COFFEE\n03/12/2026 08:14\nFLAT WHITE 3.45\n", why="a receipt's time"),
    _c("3-o-foodfair", "ocr", "EVENT TICKET\nFestive Food Fair\nSat 19/12 10:00-16:00\nAlexandra Palace\n",
       (("2026-12-19 10:00-16:00", ""),)),
]
