"""A second set of near-miss, count and person-swap cases, written after the person rule and never tuned on: scored
once, the score is in docs/answers.md.  A person swap is a conversation where the asked fact is said by or of
someone other than the person the question names (the answer must say it found nothing about that person); a
few cases where the named person did say it check the rule does not refuse them too."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_near_misses import count, found, near

_CAMPING = "Lucy: We went camping at Loch Lomond last weekend.\nTariq: Sounds amazing."
_BAKING = "Hana: The party was so much fun.\nOwen: I baked a lemon drizzle cake for it, it went in minutes."
_MARATHON = "Carmen: How did the marathon go?\nJoel: I felt exhausted but really proud when I crossed the line."

SECOND_UNTUNED: list[Gold] = [
    # the person asked about is not the one who said or did it
    near("transcript", "Which instrument does Rosa practise?", "Rosa",
         "Rosa: How was your weekend?\nDev: Great, I practised the violin for three hours.\nRosa: Nice!"),
    near("transcript", "Where did Tariq go camping?", "Tariq", _CAMPING),
    near("transcript", "What did Hana bake for the party?", "Hana", _BAKING),
    near("transcript", "Which novel is Felix reading at the moment?", "Felix",
         "Felix: Read anything good lately?\nIrene: I'm reading The Remains of the Day, slowly."),
    near("transcript", "How did Carmen feel after the marathon?", "Carmen", _MARATHON),
    near("transcript", "What kind of dog did Nadia adopt?", "Nadia",
         "Nadia: Any news?\nPaulo: We adopted a rescue greyhound called Biscuit!"),
    near("transcript", "What did Marco paint last week?", "Marco",
         "Sophie: Last week I painted a seascape of the harbour.\nMarco: Love the colours."),
    near("transcript", "What did Aisha give her brother for his birthday?", "Aisha",
         "Ben: I gave my brother a skateboard for his birthday.\nAisha: He must have loved it."),
    near("transcript", "Which job did Ravi apply for?", "Ravi",
         "Ravi: Fingers crossed for you!\nElsa: Thanks! I applied for a nursing job at St Mary's."),
    # ...and the one who did say it is answered
    found("transcript", "Where did Lucy go camping?", "Loch Lomond", _CAMPING, family="person"),
    found("transcript", "What did Owen bake?", "lemon drizzle cake", _BAKING, family="person"),
    found("transcript", "How did Joel feel when he finished the marathon?", "proud", _MARATHON, family="person"),
    # the place, person or kind of thing is there, the asked detail is not
    near("note", "How much was dinner in Seville?", "dinner", "The tapas tour in Seville cost 45 euros each."),
    near("note", "What is the locker combination at the pool?", "pool", "Gym locker combination: 3391."),
    near("note", "When is Noor's parents' evening?", "Noor", "Zain's parents' evening is on 2 December at 18:00."),
    near("note", "Where did I park at the airport?", "airport", "Parked at the station car park, level 3, bay 41."),
    near("note", "How much is the gym membership a month?", "gym", "The Netflix subscription is 10.99 a month."),
    near("note", "What is the serial number of the dishwasher?", "dishwasher",
         "Washing machine serial number: WM-88213-K."),
    near("note", "Who is the rabbit's vet?", "rabbit", "The dog's vet is Dr. Hollis at Greenway surgery."),
    near("note", "When does the post office close on Saturdays?", "post", "The bank closes at 12:30 on Saturdays."),
    near("note", "How much were the concert tickets?", "concert", "Theatre tickets for Hamlet: £38 each."),
    near("note", "How much did my new glasses cost?", "glasses",
         "Picked up the new glasses from the optician on Monday."),
    found("note", "How much was the cab home?", "£17", "Taxi home from the party: £17."),
    # repeated events, counted
    count("How often did I do yoga this month?", 3, ("hot yoga", "stretching", "sun salutations"),
          ("Did hot yoga after work.", "Yoga at home, lots of stretching.", "Morning yoga, twenty sun salutations."),
          ("2026-11-02T18:00:00Z", "2026-11-06T18:00:00Z", "2026-11-13T07:00:00Z")),
    count("How many times did I play tennis in October?", 2, ("Hugo", "indoor court"),
          ("Played tennis with Hugo, lost 6-4.", "Tennis on the indoor court, rain outside.",
           "Called the plumber about the leak."),
          ("2026-10-04T10:00:00Z", "2026-10-18T10:00:00Z", "2026-10-20T10:00:00Z"), absent=("plumber",)),
    count("How many times did I go to the cinema in October?", 2, ("Anora", "Conclave"),
          ("Cinema: Anora, great film.", "Cinema with Jo, saw Conclave.", "Cinema trip: Dune Part Two."),
          ("2026-10-09T20:00:00Z", "2026-10-23T20:00:00Z", "2026-09-25T20:00:00Z"), absent=("Dune",)),
    count("How many times did I visit the library this month?", 2, ("returned", "study room"),
          ("Visited the library and returned two books.", "Library visit, worked in the study room."),
          ("2026-11-03T15:00:00Z", "2026-11-10T15:00:00Z")),
    count("How many times did I call Mum in November?", 3, ("garden", "Christmas", "knee"),
          ("Called Mum, she talked about the garden.", "Called Mum about Christmas plans.",
           "Called Mum, her knee is better."),
          ("2026-11-01T19:00:00Z", "2026-11-08T19:00:00Z", "2026-11-15T19:00:00Z")),
    count("How often did I cook dinner at home in October?", 2, ("risotto", "curry"),
          ("Cooked dinner at home: mushroom risotto.", "Cooked a curry for dinner at home."),
          ("2026-10-12T19:00:00Z", "2026-10-26T19:00:00Z")),
    found("note", "How many chairs does the dining table seat?", "six chairs",
          "The dining table comes with six chairs.", family="count"),
]
