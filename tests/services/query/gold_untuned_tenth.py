"""A tenth set, written after the ninth set's rules (a rare verb after "did", "last" by its role, what many things
did counted, "what time" wants a time of day, "come to" asks for a sum, a topic asked "about", a receipt speaks of
the shop) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_LIDL = "LIDL\nBananas 0.85\nEggs 1.99\nTOTAL 23.64"
_CONTACTS = "| Contact | Number |\n|---|---|\n| School | 0161 496 0123 |\n| Nursery | 0161 496 0456 |"

TENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "How much was the ferry to Mull?", "ferry", "Parking at Oban for the Mull trip: £12."),
    near("note", "When is Priya's leaving do?", "Priya", "Mark's leaving do is on Friday at the Crown."),
    near("note", "What's the combination for the garden gate padlock?", "gate",
         "Combination for the bike lock: 5521."),
    near("pdf", "What is the deposit for the wedding photographer?", "photographer",
         "Florist contract: deposit of £150, the balance due in May."),
    near("transcript", "What did Kofi say about the new website?", "website",
         "Kofi: The new logo needs a darker blue.\nAmy: I'll ask the designer."),
    near("note", "What time does the Co-op on Mill Street close?", "Mill Street",
         "The Co-op on Bridge Street closes at 10pm."),
    # narrowed otherwise
    near("note", "When does the indoor market open?", "indoor", "The outdoor market opens at 8am on Saturdays.",
         family="narrow"),
    near("note", "What size is the large suitcase?", "large", "Cabin suitcase: 55 x 40 x 20 cm.", family="narrow"),
    near("note", "Which gate does the early flight to Belfast leave from?", "early",
         "The late flight to Belfast leaves from gate 12.", family="narrow"),
    near("note", "How much is the weekend parking at the station?", "weekend",
         "Weekday parking at the station: £9.80.", family="narrow"),
    near("note", "What is cousin Mia's phone number?", "Mia", "Cousin Leo's phone number: 07700 900321.",
         family="narrow"),
    near("note", "When is the red bin collected?", "red", "The green bin is collected every other Tuesday.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much was the chiropractor?", "chiropractor", "Chiropractor on Friday helped my back a lot.",
         family="kind"),
    near("note", "What time is the carol service?", "carol", "Carol service at St Mary's, bring the kids.",
         family="kind"),
    near("note", "Where is the team Christmas lunch?", "lunch",
         "Team Christmas lunch on 18 December, Secret Santa limit £10.", family="kind"),
    near("note", "Who is the new guitar tutor?", "tutor", "Guitar lessons start again in January, Thursdays at 4.",
         family="kind"),
    # found, in other words or other shapes
    found("note", "How much did the pushchair cost?", "£250", "Bought a buggy from Mamas & Papas, £250."),
    found("note", "When is the window fitter coming?", "Wednesday 9 December",
          "Window fitter booked: Wednesday 9 December, between 8 and 12."),
    found("note", "How much money did I get for the old bike?", "£120", "Sold the old bike on Marketplace for £120."),
    found("ocr", "How much was the Lidl receipt?", "23.64", _LIDL, absent=("0.85",)),
    found("markdown", "What is the nursery's phone number?", "0161 496 0456", _CONTACTS, absent=("0123",)),
    found("note", "Where is the car parked at the airport?", "Zone C, row 14",
          "Parked the car at the airport in Zone C, row 14."),
    # repeated events counted
    count("How many saunas did I have in November?", 3, ("spa", "Sam", "cold plunge"),
          ("Sauna at the spa, bliss.", "Sauna with Sam after swimming.", "Sauna, then the cold plunge."),
          ("2026-11-02T18:00:00Z", "2026-11-09T18:00:00Z", "2026-11-16T18:00:00Z")),
    count("How many letters came from the council in October?", 2, ("tax", "permit"),
          ("Letter from the council about council tax.", "Another letter from the council, parking permit renewal."),
          ("2026-10-05T09:00:00Z", "2026-10-19T09:00:00Z")),
    count("How often did I ring Grandma in September?", 3, ("birthday", "garden", "holiday"),
          ("Rang Grandma for her birthday.", "Rang Grandma, talked about the garden.",
           "Rang Grandma about the holiday."),
          ("2026-09-03T19:00:00Z", "2026-09-13T19:00:00Z", "2026-09-27T19:00:00Z")),
    count("How many times did I babysit for Jess in October?", 2, ("films", "pizza"),
          ("Babysat for Jess, watched films.", "Babysat for Jess again, ordered pizza."),
          ("2026-10-10T19:00:00Z", "2026-10-24T19:00:00Z")),
    # what was done, asked with "did"
    events("When did I last wash the car?", ("November 15, 2026",),
           ("Washed the car, finally.", "Washed the car before the road trip."),
           ("2026-11-15T10:00:00Z", "2026-07-02T10:00:00Z"), absent=("July 2",)),
    events("What did I pay the babysitter?", ("£30", "£40"),
           ("Babysitter paid £30.", "Paid the babysitter £40, we were late back."),
           ("2026-09-05T23:00:00Z", "2026-10-17T23:00:00Z")),
    # lists without what was only meant
    listed("Which films did we watch at the cinema?", ("Wicked", "Conclave"), ("Gladiator",),
           "Cinema: watched Wicked.", "Cinema: wanted to watch Gladiator II but it was sold out.",
           "Cinema: watched Conclave, gripping."),
    listed("Which rooms did we wallpaper?", ("hallway", "bathroom"), ("kitchen",),
           "Wallpapered the hallway, stripes.", "Still need to wallpaper the kitchen.",
           "Wallpapered the bathroom in sage green."),
]
