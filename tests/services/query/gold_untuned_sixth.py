"""A sixth set, written after the fifth set's rules (names no note has, the closest shown when no word is shared, a
tagger slip around "close") and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_CAFE = "CAFE NERO\nFlat white 3.40\nCroissant 2.90\nTOTAL 6.30"
_GARDEN = "| Item | Cost |\n|---|---|\n| Paving slabs | £240 |\n| Sand | £35 |"

SIXTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "How much was the ferry to Skye?", "Skye", "Ferry to Mull was £18 each way."),
    near("note", "When is the parents' evening for Sam?", "Sam", "Parents' evening for Ella: Wednesday at 17:40."),
    near("note", "What is the wifi password at the cottage?", "cottage", "Wifi password at the office: blue-heron-42."),
    near("pdf", "What is the excess on the car insurance?", "car",
         "Home insurance policy: excess £250, renewal on 3 March."),
    near("transcript", "What did Priya say about the garden fence?", "fence",
         "Priya: The garden shed needs a new roof before winter.\nMark: I'll get quotes."),
    near("note", "When does the pharmacy on King Street open?", "King Street",
         "The pharmacy on Mill Road opens at 8:30."),
    # narrowed otherwise
    near("note", "What is the code for the side gate?", "side", "Front gate code: 1945.", family="narrow"),
    near("note", "When is the monthly book club?", "monthly", "The weekly book club meets on Thursdays at 19:00.",
         family="narrow"),
    near("note", "What is the password for the old router?", "old", "New router password: kx7-plum-88.",
         family="narrow"),
    near("note", "How much is the adult ticket for the zoo?", "adult", "Zoo child ticket: £12.50.", family="narrow"),
    near("note", "Where is the upstairs smoke alarm?", "upstairs",
         "The downstairs smoke alarm is in the hall by the stairs.", family="narrow"),
    near("note", "What is Grandma's blood type?", "Grandma", "Grandpa's blood type is O negative.", family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the roofer charge?", "roofer", "The roofer fixed the loose tiles on Monday.",
         family="kind"),
    near("note", "What is the name of the electrician?", "electrician",
         "The electrician is coming on Friday to fix the lights.", family="kind"),
    near("note", "Where is the passport office appointment?", "passport office",
         "Passport office appointment booked for 9 December at 11:15.", family="kind"),
    near("note", "What is the plumber's phone number?", "plumber", "The plumber is called Dave and he works weekends.",
         family="kind"),
    # found, in other words or other shapes
    found("note", "How much did the sofa cost?", "£640", "The new couch was £640 from DFS."),
    found("note", "When is the physio appointment?", "Tuesday 8 December",
          "Physiotherapy on Tuesday 8 December at 10:00."),
    found("note", "How much money did I lend Sam?", "£50", "Lent Sam £50 until payday."),
    found("ocr", "How much was the coffee?", "3.40", _CAFE, absent=("2.90",)),
    found("markdown", "How much were the paving slabs?", "£240", _GARDEN, absent=("£35",)),
    found("note", "Where did I leave the bike lock key?", "in the kitchen drawer",
          "Bike lock key is in the kitchen drawer."),
    # repeated events counted
    count("How many times did I go swimming in October?", 3, ("lido", "40 lengths", "with Jo"),
          ("Swim at the lido.", "Swimming, 40 lengths.", "Swim with Jo before work."),
          ("2026-10-03T08:00:00Z", "2026-10-10T08:00:00Z", "2026-10-24T08:00:00Z")),
    count("How many books did I finish in October?", 2, ("Demon Copperhead", "Orbital"),
          ("Finished Demon Copperhead.", "Finished Orbital on the train."),
          ("2026-10-06T21:00:00Z", "2026-10-27T21:00:00Z")),
    count("How often did I see Grandma in November?", 2, ("Sunday lunch", "hospital"),
          ("Sunday lunch at Grandma's.", "Visited Grandma in hospital with flowers."),
          ("2026-11-01T13:00:00Z", "2026-11-08T15:00:00Z")),
    count("How many times did I cycle to work in November?", 2, ("rain", "tailwind"),
          ("Cycled to work in the rain.", "Cycled to work, great tailwind."),
          ("2026-11-05T08:00:00Z", "2026-11-12T08:00:00Z")),
    # what was done, asked with "did"
    events("When did I last see the dentist?", ("October 20, 2026",),
           ("Dentist: filling on the lower left.", "Dentist check-up, all fine."),
           ("2026-10-20T09:00:00Z", "2026-06-02T09:00:00Z"), absent=("June 2",)),
    events("How much did I pay for the gas bill?", ("£84", "£97"),
           ("Gas bill paid, £84.", "Paid the gas bill: £97, colder month."),
           ("2026-10-01T10:00:00Z", "2026-11-01T10:00:00Z")),
    # lists without what was only meant
    listed("Which restaurants did we eat at in Porto?", ("Cantinho", "Taberna"), ("Majestic",),
           "Porto: ate at Cantinho do Avillez, superb.", "Porto: wanted to eat at the Majestic but the queue was huge.",
           "Porto: ate at Taberna dos Mercadores."),
    listed("What did I buy at the market?", ("tomatoes", "cheese"), ("flowers",),
           "Bought tomatoes at the market.", "Forgot to buy flowers at the market.",
           "Bought cheese at the market, the smoked one."),
]
