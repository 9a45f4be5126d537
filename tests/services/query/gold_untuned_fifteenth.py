"""A fifteenth set, written after the fourteenth set's rules (a noun the tagger misreads after a determiner, a
possessive's noun named, a name after "for" is a person) and never tuned on: scored once, the score and its misses
are in docs/answers.md and tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a slip or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_PAYSLIP = "ACME LTD PAYSLIP NOVEMBER\nGross pay 3,250.00\nTax 412.20\nNET PAY 2,486.15"
_PE = "| Class | PE day |\n|---|---|\n| Year 2 | Tuesday |\n| Year 5 | Thursday |"

FIFTEENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "What's the tyre pressure for the caravan?", "caravan",
         "Tyre pressure for the Fiesta: 32 psi front."),
    near("note", "When does Zara's passport expire?", "Zara", "Ollie's passport expires in March 2028."),
    near("pdf", "What is the excess on the pet insurance?", "pet", "Car insurance: £350 voluntary excess."),
    near("transcript", "What did Mehmet say about the server migration?", "migration",
         "Mehmet: The laptop refresh slips to January.\nKate: Noted."),
    near("note", "Which gate does the Malaga flight board from?", "Malaga", "The Faro flight boards from gate 22."),
    near("note", "How much flea treatment does the cat need?", "cat",
         "Flea treatment for the dog: one pipette a month."),
    # narrowed otherwise
    near("note", "What's the code for the inner door at work?", "inner", "Outer door code at work: 7741.",
         family="narrow"),
    near("note", "How much is the junior membership at the tennis club?", "junior",
         "Senior membership at the tennis club: £180 a year.", family="narrow"),
    near("note", "When is the written part of the driving test?", "written",
         "Practical driving test: 19 January, 10:14.", family="narrow"),
    near("note", "What's the password for the shared calendar?", "shared",
         "Password for the personal calendar: lemon-tree-6.", family="narrow"),
    near("note", "What is the minimum payment on the credit card?", "minimum",
         "Full balance on the credit card: £612.40.", family="narrow"),
    near("note", "When is the morning drop-off at the kennels?", "morning",
         "Afternoon drop-off at the kennels: 2-4pm.", family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much was the carpet for the stairs?", "carpet", "New stair carpet fitted, looks great.",
         family="kind"),
    near("note", "When is the school disco?", "disco", "School disco: glow sticks for both kids.", family="kind"),
    near("note", "Who is doing the wedding cake?", "cake", "Wedding cake: three tiers, lemon and elderflower.",
         family="kind"),
    near("note", "Where is the first aid course?", "first aid", "First aid course: certificate lasts three years.",
         family="kind"),
    # found, in other words or other shapes
    found("ocr", "How much was I paid in November?", "2,486.15", _PAYSLIP),
    found("markdown", "Which day is PE for Year 5?", "Thursday", _PE, absent=("Tuesday",)),
    found("note", "When is the wedding RSVP due?", "1 February",
          "Reply to Sam and Ella's wedding invite by 1 February."),
    found("note", "How much is the prescription?", "£9.90", "Repeat prescription, £9.90 per item."),
    found("note", "Where is the foot pump?", "in the boot", "Foot pump is in the boot of the car."),
    found("note", "Who is the new manager?", "Alexa Reid", "New manager starts Monday: Alexa Reid."),
    # repeated events counted
    count("How many times did I give blood this year?", 2, ("March", "September"),
          ("Gave blood, March session.", "Gave blood again, September session."),
          ("2026-03-10T10:00:00Z", "2026-09-15T10:00:00Z")),
    count("How many times did the washing machine leak in October?", 2, ("kitchen", "towels"),
          ("Washing machine leaked over the kitchen floor.", "Washing machine leaked again, used all the towels."),
          ("2026-10-06T09:00:00Z", "2026-10-28T09:00:00Z")),
    count("How often did I knit in November?", 3, ("scarf", "hat", "sleeve"),
          ("Knitted the scarf.", "Knitted a hat for Oscar.", "Knitted half a sleeve."),
          ("2026-11-02T20:00:00Z", "2026-11-09T20:00:00Z", "2026-11-16T20:00:00Z")),
    count("How many plays did we see in October?", 2, ("Globe", "Old Vic"),
          ("Saw Twelfth Night at the Globe.", "Saw a new play at the Old Vic."),
          ("2026-10-10T19:30:00Z", "2026-10-24T19:30:00Z")),
    # what was done, asked with "did"
    events("When did I last top up the screenwash?", ("November 1, 2026",),
           ("Topped up the screenwash.", "Topped up the screenwash, it was nearly empty."),
           ("2026-11-01T11:00:00Z", "2026-07-12T11:00:00Z"), absent=("July 12",)),
    events("What did I spend at the farm shop?", ("£23", "£31"),
           ("Farm shop: £23.", "Spent £31 at the farm shop, mostly cheese."),
           ("2026-10-03T12:00:00Z", "2026-11-14T12:00:00Z")),
    # lists without what was only meant
    listed("Which seeds did I sow?", ("carrots", "beetroot"), ("parsnips",),
           "Sowed carrots in the raised bed.", "Parsnips to sow when it warms up.", "Sowed beetroot by the fence."),
    listed("Which vaccines did the puppy have?", ("parvovirus", "kennel cough"), ("rabies",),
           "Puppy had the parvovirus jab.", "Rabies jab only if we go abroad.", "Puppy had the kennel cough vaccine."),
]
