"""The agenda's fourth gold set: 45 passages written after the rules were changed for what the third set showed,
and measured once, untuned.  The third set was measured once before those changes (its first figure is the one
asked for); this one says how the reader does on text it never saw after them.

Kinds as before (notes, e-mails and invitations, WhatsApp exports, voice memos and transcripts, OCR'd tickets and
letters, rhythms, and what must stay off).  The person is Anna Hart in London (``en_GB``); most cases are said on
Wednesday 9 December 2026.  Judged as ``devtools.agenda_gold`` says.
"""

from __future__ import annotations

from devtools.agenda_gold import Case
from devtools.agenda_gold2 import ME, _ics, _mail

SAID = "2026-12-09 10:00"  # a Wednesday


def _c(*args: object, **kw: object) -> Case:
    kw.setdefault("locale", "en_GB")
    kw.setdefault("said", SAID)
    return Case(*args, **kw)  # type: ignore[arg-type]


CASES: list[Case] = [
    # ------------------------------------------------------------------ notes
    _c("4-optician", "note", "Optician 2:45 Friday.", (("2026-12-11 14:45", "Optician"),)),
    _c("4-cards", "note", "Get Christmas cards posted by the 18th!", (("2026-12-18", "Christmas cards"),)),
    _c("4-party", "note", "Work Christmas party \u2013 Thursday 17th Dec, 7pm onwards, The Ivy.",
       (("2026-12-17 19:00", "Christmas party"),)),
    _c("4-flu", "note", "Flu jab booked at Boots for 10.40 on Monday.", (("2026-12-14 10:40", "Flu jab"),)),
    _c("4-airport", "note", "Leave for the airport at 5am on the 21st!", (("2026-12-21 05:00", "airport"),)),
    _c("4-nursery", "note", "Ella's nursery closes on 23 December and reopens 4 January.",
       (("2026-12-23", "nursery"), ("2027-01-04", "nursery"))),
    _c("4-dave", "note", "Pay Dave back for the concert tickets before Friday.", (("2026-12-11", "Dave"),)),
    _c("4-yoga", "note", "Yoga teacher training weekend 16-17 January.", (("2027-01-16", "Yoga"),)),
    _c("4-quiz", "note", "Quiz night at the Red Lion every first Tuesday of the month, 8pm.",
       (("2027-01-05 20:00", "Quiz"), ("2027-02-02 20:00", "Quiz"), ("2027-03-02 20:00", "Quiz"))),
    _c("4-driving", "note", "Driving lesson every other Saturday at 9, the next one is this Saturday.",
       (("2026-12-12 09:00", "Driving"), ("2026-12-26 09:00", "Driving"), ("2027-01-09 09:00", "Driving"))),
    _c("4-landlord", "note", "The landlord's coming round to check the smoke alarms between 9 and 11 on Tuesday.",
       (("2026-12-15 09:00-11:00", "smoke alarms"),)),
    _c("4-bristol", "note", "Mark and Jess are moving to Bristol in January.", why="other people's plans"),
    _c("4-eurostar", "note", "Prices for the Eurostar usually go up in the new year.", why="a habit of prices"),
    _c("4-lights", "note", "It'd be lovely to see the northern lights in Norway one February.", why="a wish"),
    _c("4-apple", "note", "Apple's event is rumoured for 9 September.", why="a rumour, news"),
    _c("4-rita", "note", "We had a lovely dinner at Rita's on Saturday.", (("2026-12-05", "dinner"),)),
    _c("4-ben", "note", "Remember Ben's birthday on the 28th \u2013 get a card.", (("2026-12-28", "birthday"),)),
    _c("4-gym", "note", "Gym induction tomorrow 7:15am.", (("2026-12-10 07:15", "Gym induction"),)),
    _c("4-might", "note", "Dad said he might pop round at the weekend.", why="a maybe"),
    _c("4-rates", "note", "Interest rates are likely to fall in February.", why="a forecast"),
    # ------------------------------------------------------------------ e-mails and invitations
    _c("4-m-fracture", "mail", _mail(
        "Royal Free Hospital <appointments@royalfree.example>", "Your outpatient appointment", "2026-12-08 14:00",
        "Dear Ms Hart,\n\nAn appointment has been made for you at the Fracture Clinic.\n\nDate: Tuesday 5 January "
        "2027\nTime: 14:10\nWhere: Outpatients, Level 2\n\nPlease arrive 15 minutes early.\n"),
       (("2027-01-05 14:10", ""),), said="2026-12-08 14:00"),
    _c("4-m-parcel", "mail", _mail(
        "Amazon <shipment-tracking@amazon.example>", "Your package is on its way", "2026-12-09 06:30",
        "Hello Anna,\n\nYour package will arrive Friday, 11 December between 7am and 9pm.\n\nTrack your package in "
        "Your Orders.\n"), (("2026-12-11 07:00-21:00", "package"),), said="2026-12-09 06:30"),
    _c("4-m-walk", "mail", _mail(
        "Hannah Lee <hannah@lee.example>", "Walk?", "2026-12-08 18:00",
        "Hi Anna, are you free for a walk on Sunday afternoon? H x\n", message_id="<walk-1@lee.example>"),
       (("2026-12-13 14:00", ""),), said="2026-12-08 18:00",
       then=(("2026-12-08 19:10", _mail(
           ME, "Re: Walk?", "2026-12-08 19:10", "Sunday's perfect, 2pm at the park gate?\n\nA\n",
           to="Hannah Lee <hannah@lee.example>")),
             ("2026-12-08 19:30", _mail(
                 "Hannah Lee <hannah@lee.example>", "Re: Walk?", "2026-12-08 19:30", "See you there!\n")))),
    _c("4-i-dentist", "mail", _mail(
        "Bright Smiles Dental <reception@brightsmiles.example>", "Your appointment", "2026-12-07 12:00",
        "Your appointment has been added to your calendar.\n",
        attach=(("appointment.ics", "text/calendar", _ics(
            "bs-5521@brightsmiles.example", "Dentist check-up", "TZID=Europe/London:20270112T083000",
            "TZID=Europe/London:20270112T090000", organizer="reception@brightsmiles.example")),)),
       (("2027-01-12 08:30-09:00", "Dentist"),), said="2026-12-07 12:00"),
    _c("4-i-sync", "mail", _mail(
        "Grace Kim <grace@studio.example>", "Design sync", "2026-12-08 23:00", "Adding a sync with the LA team.\n",
        attach=(("invite.ics", "text/calendar", _ics(
            "sync-15@studio.example", "Design sync", "TZID=America/Los_Angeles:20261215T090000",
            "TZID=America/Los_Angeles:20261215T100000", organizer="grace@studio.example")),)),
       (("2026-12-15 17:00-18:00", "Design sync"),), said="2026-12-08 23:00"),
    _c("4-m-sale", "mail", _mail(
        "Cotswold Outdoor <hello@cotswold.example>", "This weekend only", "2026-12-09 07:00",
        "This weekend only: 20% off everything, Saturday 12 and Sunday 13 December.\n\nUnsubscribe\n"),
       why="a shop's offer", said="2026-12-09 07:00"),
    _c("4-m-counciltax", "mail", _mail(
        "Borough Council <counciltax@council.example>", "Council tax instalment", "2026-12-09 08:00",
        "Reminder: your council tax instalment of \u00a3152 will be collected on 1 January.\n"),
       (("2027-01-01", "council tax"),), said="2026-12-09 08:00"),
    # ------------------------------------------------------------------ chat exports
    _c("4-w-drinks", "whatsapp", "09/12/2026, 08:10 - Chloe: Can you do Thursday at 6 for drinks?\n09/12/2026, 08:30 "
       "- Anna: Make it 6.30 and I'm there\n09/12/2026, 08:31 - Chloe: Done\n", (("2026-12-10 18:30", ""),)),
    _c("4-w-footy", "whatsapp", "08/12/2026, 20:00 - Sam: Footy Sunday?\n08/12/2026, 20:05 - Sam: 10am, usual pitch\n"
       "08/12/2026, 21:40 - Anna: In\n", (("2026-12-13 10:00", ""),), said="2026-12-08 20:00"),
    _c("4-w-bookclub", "whatsapp", "09/12/2026, 12:00 - Nina: Book club is at mine on the 15th this time\n"
       "09/12/2026, 12:05 - Anna: Great, what time?\n09/12/2026, 12:06 - Nina: 7:30\n",
       (("2026-12-15 19:30", "Book club"),)),
    _c("4-w-dad", "whatsapp", "07/12/2026, 17:00 - Dad: We'll come down on the 24th and stay till the 27th\n"
       "07/12/2026, 17:10 - Anna: Lovely!\n", (("2026-12-24", ""),), said="2026-12-07 17:00"),
    _c("4-w-pt", "whatsapp", "09/12/2026, 09:00 - FitGym: Reminder: your PT session is tomorrow at 18:00\n",
       (("2026-12-10 18:00", "PT session"),)),
    _c("4-w-market", "whatsapp", "09/12/2026, 15:00 - Lou: Shall we say the 19th for the Christmas market?\n"
       "09/12/2026, 15:40 - Anna: Can't that day, how about the 20th?\n09/12/2026, 15:41 - Lou: 20th it is\n",
       (("2026-12-20", ""),)),
    _c("4-w-maybe", "whatsapp", "09/12/2026, 11:00 - Amir: Dinner Friday?\n09/12/2026, 11:30 - Anna: Let me check "
       "and get back to you\n", why="not agreed yet"),
    # ------------------------------------------------------------------ voice memos and transcripts
    _c("4-t-turkey", "transcript", "Okay note for tomorrow: pick up the turkey from the butcher's at ten.",
       (("2026-12-10 10:00", "turkey"),)),
    _c("4-t-handover", "transcript", "Speaker 1: When's the handover?\nSpeaker 2: Monday the 21st, first thing.",
       (("2026-12-21", ""),)),
    _c("4-t-insurance", "transcript", "Memo to self \u2014 the car insurance runs out on the 2nd of February, shop "
       "around before then.", (("2027-02-02", "car insurance"),)),
    _c("4-t-massage", "transcript", "I keep meaning to book a massage, maybe next week.", why="a maybe"),
    _c("4-t-term", "transcript", "So the kids break up on Friday the 18th and go back Tuesday the 5th.",
       (("2026-12-18", ""), ("2027-01-05", ""))),
    # ------------------------------------------------------------------ OCR
    _c("4-o-dental", "ocr", "DENTAL PRACTICE\nNext appointment\n12/01/27 08:30\nDr Osei\n",
       (("2027-01-12 08:30", ""),)),
    _c("4-o-cinema", "ocr", "CINEMA\nWicked: For Good\nSCREEN 4\n13/12/2026 17:45\nSEAT F7\n",
       (("2026-12-13 17:45", ""),)),
    _c("4-o-sainsburys", "ocr", "SAINSBURY'S\n08/12/2026 18:22\nTOTAL \u00a363.10\nNECTAR POINTS 63\n",
       why="a receipt's time"),
    _c("4-o-newsletter", "ocr", "SCHOOL NEWSLETTER\nCarol concert: Wednesday 16 December, 2pm\nLast day of term: "
       "Friday 18 December (finishes 1.30pm)\n",
       (("2026-12-16 14:00", "Carol concert"), ("2026-12-18", "Last day of term"))),
    _c("4-o-penalty", "ocr", "PENALTY NOTICE\nDate of contravention: 02/12/2026\nPay \u00a335 by 30/12/2026\n",
       (("2026-12-30", "Pay"),)),
    _c("4-o-fatduck", "ocr", "BOOKING CONFIRMATION\nThe Fat Duck\nParty of 2\n22/01/2027, 12:00\n",
       (("2027-01-22 12:00", ""),)),
]
