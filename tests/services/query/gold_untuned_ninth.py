"""A ninth set, written after the eighth set's rules (an adjective saying which one, over notes; a plural
possessive says which kind; an email address is a kind of fact; the old one is not the new one) and never tuned
on: scored once, the score and its misses are in docs/answers.md and tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_TESCO = "TESCO EXPRESS\nMilk 1.45\nBread 1.20\nTOTAL 32.75"
_BILLS = "| Bill | Yearly |\n|---|---|\n| Car insurance | £412 |\n| Home insurance | £198 |"

NINTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "How much was the coach to Stansted?", "coach", "The train to Stansted was £18.90."),
    near("note", "When is Noah's dentist appointment?", "Noah", "Maya's dentist appointment is on Friday at 3:40."),
    near("note", "What's the key safe code at the holiday cottage?", "cottage", "Key safe code at Mum's: 1966."),
    near("pdf", "What is the deposit for the flat on Elm Road?", "Elm Road",
         "Tenancy for the flat on Park Street: deposit £1,200, rent £950 a month."),
    near("transcript", "What did Hannah say about the school fees?", "fees",
         "Hannah: The school trip to Paris is in May.\nTom: We should start saving for it."),
    near("note", "What time does the farmers' market in Altrincham open?", "Altrincham",
         "The farmers' market in Stockport opens at 9am on Saturdays."),
    # narrowed otherwise
    near("note", "What is the password for the kitchen tablet?", "kitchen",
         "Password for the bedroom tablet: sunflower88.", family="narrow"),
    near("note", "How much is a double scoop at the ice cream van?", "double",
         "Single scoop at the ice cream van: £2.50.", family="narrow"),
    near("note", "What size are the hiking boots?", "hiking", "Snow boots: size 9, bought at Decathlon.",
         family="narrow"),
    near("note", "When does the night bus to Salford run?", "night",
         "The day bus to Salford runs every 12 minutes.", family="narrow"),
    near("note", "What is Uncle Pete's address?", "Pete", "Uncle Raj's address: 14 Linden Grove, Leeds LS6 2AB.",
         family="narrow"),
    near("note", "How much is the student ticket for the planetarium?", "student",
         "Adult ticket for the planetarium: £9.50.", family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the MOT cost?", "MOT", "MOT passed on Tuesday at Kwik Fit, no advisories.",
         family="kind"),
    near("note", "What time does the nativity play start?", "nativity", "Nativity play: Ava is a sheep this year!",
         family="kind"),
    near("note", "Where is the book club meeting this month?", "book club",
         "Book club this month: we're reading Small Things Like These.", family="kind"),
    # mended after scoring: as written it wanted "barbecue" named, though the note is about the barbecue and it is
    # the guests that are missing (the answer said so)
    near("note", "How many guests did we invite to the barbecue?", "guests",
         "Barbecue on Saturday, bring the big grill.", family="kind"),
    # found, in other words or other shapes
    found("note", "How much did the trousers cost?", "£35", "Bought chinos for £35 in the sale."),
    found("note", "When is the boiler being replaced?", "Monday 14 December",
          "New boiler going in on Monday 14 December, 8am start."),
    found("note", "How much did I owe Callum for the tickets?", "£30",
          "Owed Callum £30 for the concert tickets, paid him back today."),
    found("ocr", "What did the Tesco shop come to?", "32.75", _TESCO, absent=("1.45",)),
    found("markdown", "How much is the car insurance?", "£412", _BILLS, absent=("£198",)),
    found("note", "Where did I leave the bike pump?", "in the boot of the car",
          "The bike pump is in the boot of the car, under the picnic rug."),
    # repeated events counted
    count("How many times did I swim in November?", 3, ("lengths", "lido", "Ben"),
          ("Swam 40 lengths before work.", "Swim at the lido, freezing.", "Swam with Ben after work."),
          ("2026-11-03T07:00:00Z", "2026-11-10T07:00:00Z", "2026-11-24T18:00:00Z")),
    count("How many parcels arrived in October?", 2, ("blender", "Blackwell"),
          ("Parcel arrived: the blender.", "Parcel arrived with the books from Blackwell's."),
          ("2026-10-07T12:00:00Z", "2026-10-21T12:00:00Z")),
    count("How often did I work from home in September?", 3, ("quiet", "boiler", "calls"),
          ("Worked from home, quiet day.", "Worked from home while the boiler man came.",
           "Worked from home, back-to-back calls."),
          ("2026-09-02T09:00:00Z", "2026-09-16T09:00:00Z", "2026-09-23T09:00:00Z")),
    count("How many times did I take the dog to the beach in August?", 2, ("Formby", "hole"),
          ("Took the dog to the beach at Formby.", "Took the dog to the beach, Ruby dug a huge hole."),
          ("2026-08-08T10:00:00Z", "2026-08-22T10:00:00Z")),
    # what was done, asked with "did"
    events("When did I last clean the gutters?", ("November 8, 2026",),
           ("Cleaned the gutters, full of leaves.", "Cleaned the gutters before the spring rain."),
           ("2026-11-08T10:00:00Z", "2026-04-10T10:00:00Z"), absent=("April 10",)),
    events("How much did I pay the dog walker?", ("£15", "£30"),
           ("Dog walker paid £15.", "Paid the dog walker £30 for the whole week."),
           ("2026-09-19T10:00:00Z", "2026-10-24T10:00:00Z")),
    # lists without what was only meant
    listed("Which beaches did we swim at in Cornwall?", ("Porthcurno", "Gwithian"), ("Kynance",),
           "Cornwall: swam at Porthcurno beach.", "Cornwall: meant to swim at Kynance Cove, far too rough.",
           "Cornwall: swam at Gwithian, huge waves."),
    listed("Which plants did I repot?", ("monstera", "fern"), ("cactus",),
           "Repotted the monstera.", "Should repot the cactus soon.", "Repotted the fern into a bigger pot."),
]
