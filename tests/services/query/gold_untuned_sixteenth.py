"""A sixteenth set, written after the fifteenth set's rules (another of the kind named over notes, a hyphenated head,
"how much" of a thing) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a slip or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_METER = "SOUTHERN WATER\nMeter serial 04B22871\nReading 01377\nNext reading due May"
_CLUBS = "| Day | Club |\n|---|---|\n| Monday | Chess |\n| Wednesday | Drama |"

SIXTEENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "What's the case number for the parking appeal?", "parking",
         "Case number for the speeding appeal: SP-22841."),
    near("note", "When is Esme's karate grading?", "Esme", "Noah's karate grading: Saturday 12 December, 9am."),
    near("pdf", "What is the renewal date of the breakdown cover?", "breakdown",
         "Home emergency cover renews on 2 April."),
    near("transcript", "What did Rosa say about the hiring freeze?", "hiring",
         "Rosa: The pay review is pushed to spring.\nDan: Fair enough."),
    near("note", "How many steps did I do on the Snowdon hike?", "Snowdon", "Scafell hike: 24,000 steps."),
    near("note", "What size is the rug for the dining room?", "dining", "Rug for the living room: 160 x 230."),
    # narrowed otherwise
    near("note", "What's the pin for the back gate lock?", "back", "Front gate lock pin: 6620.", family="narrow"),
    near("note", "How much is the peak electricity rate?", "peak", "Off-peak electricity rate: 7.5p per kWh.",
         family="narrow"),
    near("note", "When does the Saturday service start?", "Saturday", "Sunday service starts at 10:30.",
         family="narrow"),
    near("note", "What's the number for the out-of-hours vet?", "out-of-hours", "Daytime vet number: 01632 960 321.",
         family="narrow"),
    near("note", "How long is the long-stay car park stay allowed?", "long-stay", "Short-stay car park: 2 hours max.",
         family="narrow"),
    near("note", "What is the weight limit for hold luggage?", "hold", "Cabin luggage weight limit: 10kg.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much was the new lawnmower?", "lawnmower", "New lawnmower arrived, much quieter.",
         family="kind"),
    near("note", "When is the eye test?", "eye test", "Eye test: bring my current glasses.", family="kind"),
    near("note", "Who is the new neighbour?", "neighbour", "New neighbour moved in at number 12, has a spaniel.",
         family="kind"),
    near("note", "Where is the leavers' assembly?", "assembly", "Leavers' assembly: parents welcome, 2pm start.",
         family="kind"),
    # found, in other words or other shapes
    found("ocr", "What's the water meter serial number?", "04B22871", _METER),
    found("markdown", "Which club is on Wednesday?", "Drama", _CLUBS, absent=("Chess",)),
    found("note", "How much is the childminder a day?", "£62", "Childminder charges £62 a day, nappies included."),
    found("note", "When is the boiler engineer coming?", "Thursday 3 December",
          "Heating engineer booked to look at the boiler: Thursday 3 December, 8-12."),
    found("note", "Which level did we park on at the hospital?", "level 2",
          "Hospital car park: level 2, near the lift."),
    found("note", "Who is Ava's key worker at nursery?", "Gemma", "Ava's key worker at nursery is Gemma, lovely."),
    # repeated events counted
    count("How many times did I go to the dentist this year?", 2, ("check-up", "filling"),
          ("Dentist, six-month check-up.", "Dentist again, a filling."),
          ("2026-04-14T09:00:00Z", "2026-10-20T09:00:00Z")),
    count("How many times did the nursery ring in November?", 2, ("temperature", "nappies"),
          ("Nursery rang, Ava has a temperature.", "Nursery rang again, forgotten nappies."),
          ("2026-11-04T11:00:00Z", "2026-11-19T11:00:00Z")),
    count("How often did I practise piano in November?", 3, ("scales", "Chopin", "hour"),
          ("Practised piano, scales only.", "Practised piano, the Chopin nocturne.", "Practised piano for an hour."),
          ("2026-11-03T19:00:00Z", "2026-11-10T19:00:00Z", "2026-11-17T19:00:00Z")),
    count("How many parties did the kids go to in October?", 2, ("bowling", "soft play"),
          ("Kids at Amir's party, bowling.", "Kids at a party at the soft play."),
          ("2026-10-10T14:00:00Z", "2026-10-24T14:00:00Z")),
    # what was done, asked with "did"
    events("When did I last jet-wash the patio?", ("November 14, 2026",),
           ("Jet-washed the patio.", "Jet-washed the patio, so much moss."),
           ("2026-11-14T10:00:00Z", "2026-04-02T10:00:00Z"), absent=("April 2",)),
    events("How much did I pay for the MOT?", ("£54.85", "£45"),
           ("MOT: £54.85.", "Paid £45 for the MOT at the council garage."),
           ("2025-11-20T12:00:00Z", "2026-11-18T12:00:00Z")),
    # lists without what was only meant
    listed("Which trees did we plant?", ("apple", "cherry"), ("walnut",),
           "Planted the apple tree by the fence.", "Walnut tree: maybe next year.",
           "Planted a cherry tree in the front."),
    listed("Which marathons did I run?", ("London", "Berlin"), ("Boston",),
           "Ran the London marathon.", "Boston marathon: didn't qualify.", "Ran the Berlin marathon, a PB."),
]
