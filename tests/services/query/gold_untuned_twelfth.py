"""A twelfth set, written after the eleventh set's rules (a holiday is no name, a possessive narrows, "do" and "make"
read what was done in a list) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_SHELL = "SHELL\nUnleaded 52.10\nTOTAL 52.10"
_BADGES = "| Child | Swimming badge |\n|---|---|\n| Jo | Stage 4 |\n| Sam | Stage 6 |"

TWELFTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "How much was the MOT for the van?", "van", "MOT for the Polo: £54.85."),
    near("note", "When is Grandad's hearing test?", "hearing", "Grandad's eye test is on 3 December at Specsavers."),
    near("note", "What's the locker number at the swimming baths?", "baths", "Locker number at the gym: 117."),
    near("pdf", "What is the hourly rate in the cleaning contract?", "cleaning",
         "Gardening contract: £18 an hour, fortnightly visits."),
    near("transcript", "What did Gwen say about the bathroom refit?", "bathroom",
         "Gwen: The kitchen refit went over budget.\nIvan: Typical."),
    near("note", "Which terminal does the Lisbon flight go from?", "Lisbon", "The Madrid flight goes from Terminal 5."),
    # narrowed otherwise
    near("note", "How much is the family ticket at the lido?", "family", "Adult ticket at the lido: £6.20.",
         family="narrow"),
    near("note", "When is the second vaccination for the puppy?", "second",
         "First vaccination for the puppy: 12 October.", family="narrow"),
    near("note", "What's the entry code for the rear car park?", "rear", "Entry code for the staff car park: 9090.",
         family="narrow"),
    near("note", "What time does the express coach leave?", "express", "The stopping coach leaves at 07:15.",
         family="narrow"),
    near("note", "What is Nana's mobile number?", "Nana", "Grandpa's mobile number: 07700 900555.", family="narrow"),
    near("note", "When does the spring term end?", "spring", "The autumn term ends on 18 December.", family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the garden shed cost?", "shed", "Put up the new garden shed, took all day.",
         family="kind"),
    near("note", "What time does Ella's party start?", "party", "Ella's party: bring a wrapped present.",
         family="kind"),
    near("note", "Where is the antenatal class?", "antenatal", "Antenatal class on Wednesday, bring a cushion.",
         family="kind"),
    near("note", "Who fixed the washing machine?", "washing machine", "Washing machine fixed, the pump was blocked.",
         family="kind"),
    # found, in other words or other shapes
    found("note", "How much did the specs cost?", "£129", "New glasses from Specsavers: £129."),
    found("note", "When is the jab?", "Friday 4 December", "Flu vaccination booked: Friday 4 December, 9:20."),
    found("note", "How much did the takeaway cost?", "£27.40", "Curry from the Taj Mahal, £27.40."),
    found("ocr", "How much did I pay at the garage?", "52.10", _SHELL),
    found("markdown", "Which swimming badge is Jo on?", "Stage 4", _BADGES, absent=("Stage 6",)),
    found("note", "Where are the Christmas decorations?", "in the loft",
          "Christmas decorations are in the loft, above the bathroom."),
    # repeated events counted
    count("How many times did I see Nadia in October?", 3, ("coffee", "film", "birthday"),
          ("Saw Nadia for coffee.", "Saw Nadia, we went to a film.", "Saw Nadia at her birthday drinks."),
          ("2026-10-03T11:00:00Z", "2026-10-17T19:00:00Z", "2026-10-24T20:00:00Z")),
    count("How many runs did I do in September?", 2, ("Parkrun", "hills"),
          ("Parkrun, 27:40.", "Hill run, hard going on the hills."),
          ("2026-09-05T09:00:00Z", "2026-09-19T09:00:00Z")),
    count("How many times did Leo have a nosebleed in October?", 2, ("school", "night"),
          ("Leo had a nosebleed at school.", "Leo had another nosebleed in the night."),
          ("2026-10-07T15:00:00Z", "2026-10-20T03:00:00Z")),
    count("How often did I meditate in November?", 3, ("10 minutes", "Headspace", "evening"),
          ("Meditated for 10 minutes.", "Meditated with Headspace.", "Meditated in the evening, calmer."),
          ("2026-11-02T07:00:00Z", "2026-11-05T07:00:00Z", "2026-11-09T21:00:00Z")),
    # what was done, asked with "did"
    events("When did I last descale the kettle?", ("October 30, 2026",),
           ("Descaled the kettle.", "Descaled the kettle, so much limescale."),
           ("2026-10-30T09:00:00Z", "2026-08-14T09:00:00Z"), absent=("August 14",)),
    events("What did I pay for the car wash?", ("£8", "£12"),
           ("Car wash: £8.", "Paid £12 for the car wash with wax."),
           ("2026-09-02T12:00:00Z", "2026-10-15T12:00:00Z")),
    # lists without what was only meant
    listed("Which bands did we see at the festival?", ("Wet Leg", "Self Esteem"), ("Blur",),
           "Festival: saw Wet Leg.", "Festival: missed Blur, the queue was too long.",
           "Festival: saw Self Esteem, brilliant."),
    listed("Which walls did we paint?", ("lounge", "landing"), ("nursery",),
           "Painted the lounge walls.", "Haven't painted the nursery walls yet.", "Painted the landing walls white."),
]
