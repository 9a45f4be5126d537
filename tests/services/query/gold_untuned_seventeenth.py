"""A seventeenth set, written after the sixteenth set's rules (a noun spoken of by its verb, a denied statement no
member) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a slip or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_BP = "| Date | Blood pressure |\n|---|---|\n| 2 Nov | 128/82 |\n| 16 Nov | 135/88 |"
_PHARMACY = "LLOYDS PHARMACY\nAmoxicillin 500mg x21\nTake one three times a day\nCollected 24/11"

SEVENTEENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "What's the oven temperature for the focaccia?", "focaccia",
         "Oven temperature for the brownies: 180C."),
    near("note", "When does Farah's train get in?", "Farah", "Kwame's train gets in at 16:52."),
    near("pdf", "What is the check-in time at the Lakes cottage?", "Lakes", "Check-in at the Devon cottage: from 4pm."),
    near("transcript", "What did Lucia say about the pension scheme?", "pension",
         "Lucia: The cycle-to-work scheme opens in March.\nTom: Good to know."),
    near("note", "What bait works for carp?", "carp", "Best bait for perch: maggots or worms."),
    near("note", "Which nappy size is Ava in?", "Ava", "Isla is in size 5 nappies now."),
    # narrowed otherwise
    near("note", "What's the router admin password?", "admin", "Router wifi password: Tulip-Hill-42.", family="narrow"),
    near("note", "How much is the annual pass for Kew?", "annual", "Day ticket for Kew: £22.50.", family="narrow"),
    near("note", "When is the final fitting for the bridesmaid dress?", "final",
         "First fitting for the bridesmaid dress: 9 January.", family="narrow"),
    near("note", "What's the balance on the joint savings account?", "joint",
         "Balance on the personal savings account: £3,410.", family="narrow"),
    near("note", "What time does the evening surgery open?", "evening", "Morning surgery opens at 8am.",
         family="narrow"),
    near("note", "How long is the warranty on the new laptop?", "new", "Warranty on the old laptop ended in June.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much was the photography workshop?", "workshop", "Photography workshop: bring a tripod.",
         family="kind"),
    near("note", "When is the blood test?", "blood test", "Blood test: fast for 12 hours before.", family="kind"),
    near("note", "Who is the surveyor?", "surveyor", "Surveyor's report: damp in the back bedroom.", family="kind"),
    near("note", "Where is the quiz night?", "quiz", "Quiz night: team name The Quizzly Bears.", family="kind"),
    # found, in other words or other shapes
    found("markdown", "What was my blood pressure on 16 November?", "135/88", _BP, absent=("128/82",)),
    found("ocr", "How often do I take the antibiotics?", "three times a day", _PHARMACY),
    found("note", "How much does the cleaner charge?", "£15", "Cleaner comes Thursdays, £15 an hour."),
    found("note", "When does the clocks change?", "25 October", "Clocks go back on 25 October."),
    found("note", "Where is the stopcock for the outside tap?", "under the kitchen sink",
          "Outside tap isolation valve is under the kitchen sink."),
    found("note", "Who fixed the fence?", "Marek", "Marek mended the fence panels, £120."),
    # repeated events counted
    count("How many times was the train late in November?", 3, ("20 minutes", "signal", "cancelled"),
          ("Train late, 20 minutes.", "Train late again, signal failure.", "Train late, then cancelled."),
          ("2026-11-03T08:30:00Z", "2026-11-11T08:30:00Z", "2026-11-19T08:30:00Z")),
    count("How many times did I go fishing in October?", 2, ("Grafham", "pike"),
          ("Went fishing at Grafham.", "Fishing on the river, caught a pike."),
          ("2026-10-04T07:00:00Z", "2026-10-18T07:00:00Z")),
    count("How often did I do the crossword in November?", 3, ("Monday", "Friday", "cryptic"),
          ("Did the crossword on the train, Monday one.", "Did the Friday crossword.", "Did the cryptic crossword!"),
          ("2026-11-02T08:30:00Z", "2026-11-13T08:30:00Z", "2026-11-21T08:30:00Z")),
    count("How many times did Ava wake in the night last week?", 2, ("teething", "cough"),
          ("Ava woke in the night, teething.", "Ava woke at 3am with a cough."),
          ("2026-11-10T03:00:00Z", "2026-11-12T03:00:00Z")),
    # what was done, asked with "did"
    events("When did I last renew the car tax?", ("November 2, 2026",),
           ("Renewed the car tax.", "Renewed the car tax online, took two minutes."),
           ("2026-11-02T10:00:00Z", "2025-11-03T10:00:00Z"), absent=("November 3, 2025",)),
    events("How much did I pay for the chimney sweep?", ("£65", "£70"),
           ("Chimney sweep: £65.", "Paid the chimney sweep £70, bird's nest removed."),
           ("2025-10-05T12:00:00Z", "2026-10-11T12:00:00Z")),
    # lists without what was only meant
    listed("Which neighbours did we invite?", ("Priti", "the Joneses"), ("Mr Hale",),
           "Invited Priti from next door.", "Didn't invite Mr Hale, he's away.", "Invited the Joneses at 14."),
    listed("Which subscriptions did I cancel?", ("Netflix", "Audible"), ("Spotify",),
           "Cancelled Netflix.", "Should cancel Spotify too.", "Cancelled Audible, finally."),
]
