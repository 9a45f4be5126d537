"""Near-miss and count cases written after the answerer's rules were done, scored once and never tuned on (the
score is in docs/answers.md): the measure of the rules on text they never saw."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_near_misses import count, found, near

UNTUNED: list[Gold] = [
    near("note", "How much was the train to Bristol?", "train", "The coach to Bristol was 22 pounds."),
    near("note", "What is the gate code at Grandma's?", "Grandma", "Gate code at the allotment: 7731."),
    near("note", "When is Ben's dentist appointment?", "Ben", "Ella's dentist appointment is on 4 December."),
    near("note", "Where is the spare bike key?", "bike", "The spare car key is in the blue bowl."),
    near("note", "What is the water meter reading?", "water", "Gas meter reading: 04512 on 1 November."),
    near("note", "How much is the council tax?", "council", "The TV licence is 169.50 a year."),
    near("note", "Who is the kids' swimming coach?", "swimming", "The kids' football coach is Dave Reilly."),
    near("note", "What is the hotel wifi password in Rome?", "Rome", "Hotel wifi in Florence: duomo2026."),
    near("pdf", "What is the notice period for the flat?", "flat",
         "Employment contract. The notice period is one month."),
    near("note", "When does the pool open on Sunday?", "pool", "The library opens at 10 on Sundays."),
    near("note", "What did the plumber charge for the boiler?", "plumber",
         "The electrician charged £90 for the new sockets."),
    near("note", "Where did I leave the umbrella?", "umbrella", "Left my gloves at the cinema."),
    near("note", "When is the recycling collected?", "recycling", "Garden waste goes out on Thursdays."),
    near("note", "What is Nadia's flight number?", "Nadia", "Omar's flight number is BA 2491."),
    near("note", "How much did the ferry cost?", "ferry", "New ferry timetable from Monday: departures at 7 and 9."),
    found("note", "How much did the film cost?", "£11", "Movie night: the tickets were £11 each."),
    found("note", "Where is the couch from?", "Habitat", "Bought the sofa at Habitat in the sale."),
    found("note", "How much cash did I lend Tom?", "£50", "Lent Tom £50 until payday."),
    found("note", "Who repaired the bicycle?", "Kasia", "Kasia repaired the bike's brakes for free."),
    found("note", "When is Dad's birthday?", "9 August", "Dad's birthday is on 9 August."),
    count("How many times did I go climbing in October?", 2, ("bouldering", "Ana"),
          ("Climbing at the wall, bouldering mostly.", "Went climbing with Ana, new route!"),
          ("2026-10-06T18:00:00Z", "2026-10-20T18:00:00Z")),
    count("How many times did I cycle to work this month?", 3, ("rain", "tailwind", "puncture"),
          ("Cycled to work in the rain.", "Cycled to work, nice tailwind.", "Cycled to work, then a puncture."),
          ("2026-11-02T08:00:00Z", "2026-11-05T08:00:00Z", "2026-11-12T08:00:00Z")),
    count("How many times did I see Maya in November?", 2, ("coffee", "cinema"),
          ("Saw Maya for coffee at Fika.", "Saw Maya at the cinema.", "Called the bank about the card."),
          ("2026-11-03T10:00:00Z", "2026-11-14T19:00:00Z", "2026-11-15T10:00:00Z"), absent=("bank",)),
    count("How many times did I swim this month?", 2, ("lido", "30 lengths"),
          ("Swam at the lido before work.", "Swam 30 lengths at the leisure centre."),
          ("2026-11-04T07:00:00Z", "2026-11-11T07:00:00Z")),
    count("How many times did I bake bread in October?", 2, ("sourdough", "rye"),
          ("Baked sourdough bread, good crust.", "Baked a rye bread for Sunday."),
          ("2026-10-03T10:00:00Z", "2026-10-17T10:00:00Z")),
    found("note", "How many bedrooms does the flat have?", "three bedrooms",
          "The flat has three bedrooms and a small garden.", family="count"),
    near("note", "What is the PIN for the garage door?", "garage", "PIN for the shed padlock: 9921."),
    near("note", "How much was the taxi to the airport?", "airport", "The taxi to the station was £14."),
    near("transcript", "What did Lena say about the kitchen budget?", "kitchen",
         "Lena: The bathroom budget is 6,000.\nMarc: Okay."),
    found("note", "What time does the chemist open?", "8:30", "The pharmacy opens at 8:30 on weekdays."),
]
