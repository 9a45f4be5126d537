"""An eleventh set, written after the tenth set's rules (a kind of capture asked "about" is the topic, a receipt
speaks of itself) and never tuned on: scored once, the score and its misses are in docs/answers.md and
tests/services/query/test_answer_gold.py.

Half are near misses (another detail, another one of the kind, the fact kind absent); the rest must be found: in
other words, on a receipt or in a table, counted, listed without what was only meant, or the one event asked for."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_events import events
from tests.services.query.gold_lists import listed
from tests.services.query.gold_near_misses import count, found, near

_SUPERDRUG = "SUPERDRUG\nShampoo 4.50\nPlasters 2.25\nTOTAL 6.75"
_HOURS = "| Day | Opening hours |\n|---|---|\n| Monday | 9-5 |\n| Saturday | 10-2 |"

ELEVENTH_UNTUNED: list[Gold] = [
    # another detail: the same kind of thing, not the one asked about
    near("note", "How much was the coach to Edinburgh?", "coach", "Train to Edinburgh booked: £64 return."),
    near("note", "When is Tom's retirement party?", "Tom",
         "Linda's retirement party is on 12 December at the golf club."),
    near("note", "What's the key box code at the church hall?", "church", "Key box code at the scout hut: 8812."),
    near("pdf", "What is the annual fee on the Amex card?", "Amex",
         "Barclaycard terms: annual fee of £0 for the first year."),
    near("transcript", "What did Ruth say about the harvest festival?", "harvest",
         "Ruth: The carol concert was lovely.\nBen: Our two sang in the choir."),
    near("note", "Which day is the farmers' market in Ludlow?", "Ludlow",
         "The farmers' market in Shrewsbury is on the second Sunday."),
    # narrowed otherwise
    near("note", "How much is the senior railcard?", "senior", "Young person's railcard: £35 a year.",
         family="narrow"),
    near("note", "What's the username for the council tax account?", "council",
         "Username for the water bill account: hjones88.", family="narrow"),
    near("note", "When is the morning train to Cardiff?", "morning", "The evening train to Cardiff leaves at 18:42.",
         family="narrow"),
    near("note", "What size are the kitchen blinds?", "kitchen", "Bedroom blinds: 90 x 160 cm.", family="narrow"),
    near("note", "What is Auntie Sue's postcode?", "Sue", "Auntie Jan's postcode: LS6 2QT.", family="narrow"),
    near("note", "When does the winter timetable start?", "winter", "The summer timetable starts on 1 June.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the carpet cleaning cost?", "carpet",
         "Carpet cleaning done on Tuesday, the stains came out.", family="kind"),
    near("note", "What time is the Diwali party?", "Diwali", "Diwali party at Anjali's, bring sweets.", family="kind"),
    near("note", "Where is the choir rehearsal on Thursday?", "choir",
         "Choir rehearsal on Thursday: learn the alto part.", family="kind"),
    near("note", "Who is the new head teacher?", "head teacher", "The new head teacher starts after Easter.",
         family="kind"),
    # found, in other words or other shapes
    found("note", "How much did the telly cost?", "£399", "New TV from Currys, £399."),
    found("note", "When is the engineer coming to fix the oven?", "Tuesday 1 December",
          "Oven repair booked for Tuesday 1 December, 10am."),
    found("note", "How much did the Elbow gig cost?", "£86", "Two tickets for Elbow at the Apollo: £86."),
    found("ocr", "What did I spend at Superdrug?", "6.75", _SUPERDRUG, absent=("4.50",)),
    found("markdown", "What are the opening hours on Saturday?", "10-2", _HOURS, absent=("9-5",)),
    found("note", "Where did I leave the ladder?", "behind the garage", "Left the ladder behind the garage."),
    # repeated events counted
    count("How many times did I go to the allotment in October?", 3, ("weeding", "leeks", "shed"),
          ("Allotment: two hours of weeding.", "Allotment: dug up the leeks.", "Allotment: fixed the shed roof."),
          ("2026-10-06T19:00:00Z", "2026-10-13T19:00:00Z", "2026-10-27T19:00:00Z")),
    count("How many times did I visit Mum in August?", 2, ("better", "flowers"),
          ("Visited Mum, she's doing better.", "Visited Mum with the kids, took flowers."),
          ("2026-08-09T15:00:00Z", "2026-08-23T15:00:00Z")),
    count("How often did I take the bus to town in November?", 3, ("market", "rain", "late"),
          ("Bus into town for the market.", "Bus to town, pouring with rain.", "Bus to town, it came 20 minutes late."),
          ("2026-11-03T07:00:00Z", "2026-11-10T07:00:00Z", "2026-11-14T07:00:00Z")),
    count("How many times did the boiler break down in October?", 2, ("pressure", "engineer"),
          ("Boiler broke down again, low pressure.", "Boiler broke down, called the engineer."),
          ("2026-10-08T08:00:00Z", "2026-10-22T08:00:00Z")),
    # what was done, asked with "did"
    events("When did I last change the bedding?", ("November 12, 2026",),
           ("Changed the bedding.", "Changed the bedding and washed the towels."),
           ("2026-11-12T10:00:00Z", "2026-11-01T10:00:00Z"), absent=("November 1,",)),
    events("What did I pay the hairdresser?", ("£35", "£42"),
           ("Hairdresser paid £35.", "Paid the hairdresser £42 with the colour."),
           ("2026-09-12T12:00:00Z", "2026-10-24T12:00:00Z")),
    # lists without what was only meant
    listed("Which gardens did we visit in Cornwall?", ("Trebah", "Heligan"), ("Trelissick",),
           "Cornwall: visited Trebah Garden.", "Cornwall: hoped to see Trelissick but the car broke down.",
           "Cornwall: visited the Lost Gardens of Heligan."),
    listed("Which jams did I make?", ("strawberry", "plum"), ("apricot",),
           "Made strawberry jam, six jars.", "Must make apricot jam next week.", "Made plum jam with the windfalls."),
]
