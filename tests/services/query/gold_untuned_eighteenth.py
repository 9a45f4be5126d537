"""An eighteenth set, written after the seventeenth set's rules ("final" an order, a "new" thing over the old one, a
clock time's part of the day) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a slip or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_FERRY = "BRITTANY FERRIES\nPortsmouth - Caen\nDeparts 08:15 Sat 19 Dec\nCabin B-211"
_ROTA = "| Week | Church flowers |\n|---|---|\n| 6 Dec | Joan |\n| 13 Dec | Martin |"

EIGHTEENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "What's the registration of Dad's car?", "Dad", "Mum's car registration: KX19 PLM."),
    near("note", "When is the hedge being cut?", "hedge", "The tree surgeon is pollarding the willow on 7 January."),
    near("pdf", "What is the deposit for the Tuscany villa?", "Tuscany", "Deposit for the Algarve villa: £450."),
    near("transcript", "What did Grace say about the Leeds office?", "Leeds",
         "Grace: The Bristol office closes at Easter.\nIan: That's a shame."),
    near("note", "How old is Wilf's guinea pig?", "guinea pig", "Wilf's rabbit is three."),
    near("note", "What's the mileage on the motorbike?", "motorbike", "Mileage on the van: 84,200."),
    # narrowed otherwise
    near("note", "What's the code for the staff entrance?", "staff", "Code for the visitor entrance: 3366.",
         family="narrow"),
    near("note", "How much is the standard delivery?", "standard", "Express delivery: £6.99.", family="narrow"),
    near("note", "When is the indoor rehearsal?", "indoor", "Outdoor rehearsal on the green: Sunday 2pm.",
         family="narrow"),
    near("note", "What's the password for the child account?", "child",
         "Password for the adult account: Mango-Sky-77.", family="narrow"),
    near("note", "What time is the late train back from London?", "late", "Early train back from London: 06:48.",
         family="narrow"),
    near("note", "Which bay is the disabled parking in?", "disabled", "Parent and child parking: bays 1-6.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much was the Christmas tree?", "Christmas tree", "Christmas tree up, Ava did the star.",
         family="kind"),
    near("note", "When is the flu clinic?", "flu clinic", "Flu clinic: walk in, no appointment needed.",
         family="kind"),
    near("note", "Who is coming to the barbecue?", "barbecue", "Barbecue: buy charcoal and halloumi.", family="kind"),
    near("note", "Where is the Year 6 trip going?", "trip", "Year 6 trip: packed lunch, no fizzy drinks.",
         family="kind"),
    # found, in other words or other shapes
    found("ocr", "When does the ferry leave?", "08:15", _FERRY),
    found("markdown", "Who is doing the church flowers on 13 December?", "Martin", _ROTA, absent=("Joan",)),
    found("note", "How much does the tutor charge?", "£32", "Maths tutoring with Mrs Dale: £32 for 45 minutes."),
    found("note", "When is the bathroom being refitted?", "week of 11 January",
          "Bathroom refit starts the week of 11 January."),
    found("note", "Where is the birth certificate?", "in the safe", "Birth certificates are in the safe in the study."),
    found("note", "Who cut the hedge?", "Sid", "Hedge trimmed by Sid from down the road."),
    # repeated events counted
    count("How many times did I swim in the sea in September?", 2, ("freezing", "sunset"),
          ("Sea swim, freezing.", "Swam in the sea at sunset."), ("2026-09-06T18:00:00Z", "2026-09-20T18:00:00Z")),
    count("How many times did the car need jump-starting in November?", 2, ("frost", "lights"),
          ("Car needed a jump-start, frost.", "Car needed jump-starting again, left the lights on."),
          ("2026-11-04T07:30:00Z", "2026-11-12T07:30:00Z")),
    count("How often did I go to choir in October?", 3, ("Messiah", "tenor", "concert"),
          ("Choir: started the Messiah.", "Choir, sat with the tenors.", "Choir, concert run-through."),
          ("2026-10-06T19:30:00Z", "2026-10-13T19:30:00Z", "2026-10-20T19:30:00Z")),
    count("How many walks did we do in the Peak District?", 2, ("Kinder Scout", "Mam Tor"),
          ("Peak District: walked up Kinder Scout.", "Peak District: walk along Mam Tor ridge."),
          ("2026-08-10T10:00:00Z", "2026-08-12T10:00:00Z")),
    # what was done, asked with "did"
    events("When did I last change the toothbrush head?", ("November 9, 2026",),
           ("Changed the toothbrush head.", "Changed the toothbrush head, bristles splayed."),
           ("2026-11-09T08:00:00Z", "2026-08-02T08:00:00Z"), absent=("August 2",)),
    events("How much did I pay for the logs?", ("£90", "£110"),
           ("Logs delivered: £90.", "Paid £110 for a load of kiln-dried logs."),
           ("2025-11-01T12:00:00Z", "2026-10-30T12:00:00Z")),
    # lists without what was only meant
    listed("Which jigsaws did we finish?", ("lighthouse", "map"), ("cats",),
           "Finished the lighthouse jigsaw.", "The cats jigsaw is still half done.",
           "Finished the map jigsaw, 1000 pieces."),
    listed("Which countries did we drive through?", ("France", "Belgium"), ("Luxembourg",),
           "Drove through France in a day.", "Meant to drive through Luxembourg, no time.", "Drove through Belgium."),
]
