"""A fifth set, written after the answerer read what was done with "did" as events, counted named things and read
spans of recurrence ("monthly") as picking out another one (the session that wrote it), and never tuned on: scored
once, the score and its misses are in docs/answers.md and tests/services/query/test_answer_gold.py.  One case was
mended after the scoring, in itself, not in the answerer: Ada's count expected "lunch" and "cinema" in lower case,
where the notes (and the right answer, as given) say "Lunch" and "Cinema".

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_PIZZERIA = "LUIGI'S\nMargherita pizza 11.50\nSparkling water 2.80\nTOTAL 14.30"

FIFTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "What did the train to Bristol cost?", "Bristol", "Train to Bath was £34 return."),
    near("note", "When is the vet appointment for the rabbit?", "rabbit",
         "Vet appointment for the dog on Friday at 10:30."),
    near("pdf", "What is the deposit for the flat in Leeds?", "Leeds",
         "Flat in York: deposit £950, rent £780 a month."),
    near("note", "What time does the swimming pool close?", "swimming pool",
         "The library closes at 19:00 on weekdays."),
    near("transcript", "What did Ines say about the kitchen budget?", "kitchen",
         "Ines: The bathroom budget is about eight thousand.\nTom: OK, let's keep to that."),
    near("note", "What is Marek's email address?", "email", "Marek's mobile: 07700 900881."),
    # narrowed otherwise
    near("note", "What is the combination for the left locker?", "left", "Right locker combination: 3312.",
         family="narrow"),
    near("note", "When is the weekly team call?", "weekly", "The daily team call is at 9:15.", family="narrow"),
    near("note", "When is the second payment due?", "second", "First payment due on 1 December: £400.",
         family="narrow"),
    near("note", "What size is the single duvet?", "single", "Double duvet cover, size 200x200.", family="narrow"),
    near("note", "What is Dad's shoe size?", "Dad", "Mum's shoe size is 38.", family="narrow"),
    near("note", "Where is the winter coat?", "winter", "The summer coat is in the loft.", family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the new kettle cost?", "kettle", "Bought a new kettle from Argos on Saturday.",
         family="kind"),
    near("note", "When is the boiler service booked?", "boiler",
         "The boiler engineer is Gas Safe registered, the firm is HeatRight.", family="kind"),
    near("note", "Who is the piano teacher?", "piano teacher", "Piano lessons are on Tuesdays at 16:00.",
         family="kind"),
    near("note", "What is the gym's phone number?", "gym", "The gym opens at 6:00 on weekdays.", family="kind"),
    # found, in other words or other shapes
    found("note", "How much did I spend on the haircut?", "£18", "Haircut at Nico's, £18."),
    found("note", "What is the code for the bike shed?", "4471", "Bicycle shed padlock: 4471."),
    found("note", "When is the optician appointment?", "Thursday 3 December",
          "Eye test at Specsavers on Thursday 3 December at 14:20."),
    found("note", "How much cash did I give Leo?", "£15", "Gave Leo £15 for the school trip."),
    found("note", "Where is the spare key for the shed?", "under the blue pot",
          "Shed spare key: under the blue pot by the door."),
    found("ocr", "How much was the pizza?", "11.50", _PIZZERIA, absent=("2.80",)),
    # repeated events counted
    count("How many times did I go running in November?", 2, ("park", "river"),
          ("Went running in the park.", "Running along the river, 8k."),
          ("2026-11-04T07:00:00Z", "2026-11-11T07:00:00Z")),
    count("How many times did I see Ada this month?", 2, ("Lunch", "Cinema"),
          ("Lunch with Ada at the deli.", "Cinema with Ada and Jon."),
          ("2026-11-03T12:00:00Z", "2026-11-12T19:00:00Z")),
    count("How many films did I watch in October?", 2, ("Aftersun", "Past Lives"),
          ("Watched Aftersun.", "Watched Past Lives at the Curzon."), ("2026-10-05T21:00:00Z", "2026-10-19T21:00:00Z")),
    count("How often did I go to the climbing wall in November?", 3, ("after work", "Mia", "Bouldering"),
          ("Climbing wall after work.", "Climbing wall with Mia, new routes.",
           "Bouldering session at the climbing wall."),
          ("2026-11-02T18:00:00Z", "2026-11-09T18:00:00Z", "2026-11-16T18:00:00Z")),
    # what was done, asked with "did"
    events("When did I last get a haircut?", ("November 10, 2026",),
           ("Haircut at Nico's.", "Got a haircut, shorter this time."),
           ("2026-11-10T17:00:00Z", "2026-10-06T17:00:00Z"),
           absent=("October 6",)),
    events("What did I pay for the window cleaner?", ("£20", "£25"),
           ("Window cleaner came, paid £20.", "Paid the window cleaner £25, did the conservatory too."),
           ("2026-10-05T10:00:00Z", "2026-11-02T10:00:00Z")),
    # lists without what was only meant
    listed("Which museums did we visit in Madrid?", ("the Prado", "the Reina Sofia"), ("the Thyssen",),
           "Madrid: visited the Prado, three hours.", "Madrid: we didn't visit the Thyssen, no time.",
           "Madrid: visited the Reina Sofia for Guernica."),
    listed("What did I bake for the school fair?", ("brownies",), ("lemon cake",),
           "Baked brownies for the school fair.", "Meant to bake a lemon cake for the school fair too."),
]
