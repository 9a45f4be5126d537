"""A fourth set of near-miss, found-in-other-words, count and structure cases, written after the answerer learned
opposites, weekdays, receipts' lines and money words (the session that wrote it), and never tuned on: scored once,
the score and its misses are in docs/answers.md and tests/services/query/test_answer_gold.py.  Three questions
were reworded after the scoring only because earlier sets ask them in the same words (a case is named by its
question); each passed as scored and as reworded.

Half are near misses of kinds the earlier sets have (another detail, another one of the kind, the fact kind
absent), with other words; the rest must still be found: a synonym, a receipt's total, opening hours that hold
the day asked, an opening name, and repeated events to count."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_near_misses import count, found, near

_GARDEN_RECEIPT = ("GREENFINGERS GARDEN CENTRE\n12 Nov 2026 10:02\nCompost 8.50\nTrowel 12.00\nBulbs 18.00\n"
                   "TOTAL GBP 38.50\nVisa ****9981")
_GROCER = "GREEN GROCER\nApples 2.10\nBananas 1.05\nTOTAL 3.15"

FOURTH_UNTUNED: list[Gold] = [
    # another detail of the same thing, or another one of its kind
    near("note", "What is the gate code for the allotment?", "allotment", "Gate code for the car park: 7731."),
    near("note", "When is Ella's dance recital?", "dance recital", "Ella's parents' evening is on Thursday at 18:00."),
    near("note", "What did the sofa cost?", "sofa", "The armchair cost £420 in the sale."),
    near("note", "What is the landlord's phone number?", "landlord", "The plumber's number is 07700 900456."),
    near("note", "What is the upstairs wifi password?", "upstairs", "Downstairs wifi password: otter-lamp-42.",
         family="narrow"),
    near("note", "When is the winter tyre change booked?", "winter", "Summer tyres fitted on 3 April.",
         family="narrow"),
    near("pdf", "What is the cancellation fee for the venue?", "venue",
         "Catering contract: a cancellation fee of £300 if cancelled within 14 days."),
    near("note", "What time does the dentist open on Saturday?", "Saturday",
         "Dentist opening hours: Mon-Fri 8:30-17:00.", family="kind"),
    near("transcript", "What did Omar say about the roof repair?", "roof",
         "Omar: The gutter repair will be done next week.\nLiz: Great, thanks."),
    near("note", "How much is the monthly parking permit?", "monthly", "Annual parking permit: £240.",
         family="narrow"),
    near("note", "Where is the spare house key?", "house", "The spare car key is in the blue bowl.", family="narrow"),
    near("ocr", "How much was the orange juice?", "orange juice", _GROCER),
    near("note", "When does the evening yoga class start?", "evening", "Morning yoga class starts at 7:15.",
         family="narrow"),
    near("note", "What is my sister's shoe size?", "sister", "My shoe size is 42.", family="narrow"),
    near("note", "What is the password for the work laptop?", "work", "Home laptop password: river-stone-8.",
         family="narrow"),
    # the thing is there, the kind of fact asked is not
    near("note", "How much did the bathroom tiles cost?", "tiles", "Ordered the bathroom tiles from Topps on Monday.",
         family="kind"),
    near("note", "When is the car's MOT due?", "MOT", "The MOT garage is Fenwick Motors on Mill Lane.", family="kind"),
    # found, in other words or other shapes
    found("note", "How much did I pay for the cab home?", "£22", "Taxi home from the party, £22."),
    found("note", "What is the code for the bike lock?", "5190", "Bike lock combination: 5190."),
    found("note", "Who fixed the boiler?", "Gareth", "Gareth fixed the boiler on Tuesday, no charge."),
    found("ocr", "How much did I spend at the garden centre?", "TOTAL GBP 38.50", _GARDEN_RECEIPT,
          family="structure", absent=("10:02",)),
    found("ocr", "How much were the bananas?", "Bananas 1.05", _GROCER, family="structure", absent=("Apples",)),
    found("note", "What time does the library close on Saturday?", "13:00",
          "Library hours: Mon-Fri 9:00-19:00, Sat 10:00-13:00."),
    found("note", "When is the second booster due?", "late January", "Second booster due in late January."),
    found("note", "How much money did I lend Jo?", "£40", "Lent Jo £40 for the concert tickets."),
    found("note", "What is the back gate code?", "2214", "Back gate code: 2214. Front gate has no lock."),
    # repeated events, counted
    count("How many times did I climb in October?", 3, ("Foundry", "Mia", "lead route"),
          ("Climbing at the Foundry, good session.", "Climbed with Mia after work.", "Climbing: first lead route!"),
          ("2026-10-03T18:00:00Z", "2026-10-14T18:00:00Z", "2026-10-28T18:00:00Z")),
    count("How many times did I cycle to work in November?", 2, ("rain", "flat tyre"),
          ("Cycled to work in the rain.", "Cycled to work, flat tyre on the way back."),
          ("2026-11-04T08:00:00Z", "2026-11-12T08:00:00Z")),
    count("How many times did I visit Gran in September?", 2, ("scones", "garden"),
          ("Visited Gran, she made scones.", "Visit to Gran's, helped in the garden."),
          ("2026-09-06T14:00:00Z", "2026-09-20T14:00:00Z")),
    count("How often did I go to the pool in October?", 2, ("30 lengths", "Sam"),
          ("Pool: 30 lengths before work.", "Went to the pool with Sam."),
          ("2026-10-07T07:00:00Z", "2026-10-21T07:00:00Z")),
]
