"""What was done, asked with "did": each note recording it is an event of its own day, listed dated in time order,
never as an older value of one fact ("earlier").  With "last" or "first", the one event asked for.  Where a thing was
left ("Where did I park the car?") and what a conversation tells again stay a fact that changed, the newest first.

``EVENTS_TUNING`` was written while the rule was (the near-miss set's swims and taxis were its first cases);
``EVENTS_AFTER`` was written after it and scored once (docs/answers.md has the score)."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold

SWIMS = ("Went swimming at the lido.", "Went swimming with Tom before work.", "Swam 30 lengths at the leisure centre.")
SWIM_TIMES = ("2026-11-02T07:00:00Z", "2026-11-09T07:00:00Z", "2026-11-12T07:00:00Z")
# the newest first (a date worked out from a capture time is cited by the first source: see the gold test)
NEWEST_FIRST = dict(passages=SWIMS[::-1], times=SWIM_TIMES[::-1])


def events(question: str, items: tuple[str, ...], passages: tuple[str, ...], times: tuple[str, ...], *,
           absent: tuple[str, ...] = ("earlier",), kind: str = "note", family: str = "events") -> Gold:
    """The events (or the one asked for), in time order; what must not be said (``absent``)."""
    return Gold(kind, passages, question, items[0], absent, order=items, times=times, family=family)


EVENTS_TUNING = [
    events("When did I last go swimming?", ("November 12, 2026",), **NEWEST_FIRST,
           absent=("November 2,", "November 9")),
    events("When was the last time I went swimming?", ("November 12, 2026",), **NEWEST_FIRST,
           absent=("November 2,", "November 9")),
    events("When did I first go swimming?", ("November 2, 2026",), SWIMS, SWIM_TIMES,
           absent=("November 9", "November 12")),
    events("How much did I pay for the plumber?", ("£85", "£140"),
           ("Plumber fixed the boiler, paid £85.", "Paid the plumber £140 for the new radiator."),
           ("2026-10-04T18:00:00Z", "2026-11-06T18:00:00Z")),
    # not done: shown apart, not an event
    events("When did I meet Lucy for coffee?", ("October 3, 2026", "November 7, 2026"),
           ("Met Lucy for coffee at Kin.", "Was going to meet Lucy for coffee, she was ill.",
            "Met Lucy for coffee near her office."),
           ("2026-10-03T11:00:00Z", "2026-10-24T11:00:00Z", "2026-11-07T11:00:00Z"), absent=("earlier", "October 24")),
    # where a thing was left: where it is now, the older place said to be older
    Gold("note", ("Parked the car on level 3, row F.", "Parked the car in bay B12."), "Where did I leave the car?",
         "bay B12", order=("bay B12", "earlier", "level 3"), times=("2026-11-09T09:00:00Z", "2026-11-16T09:00:00Z"),
         family="update"),
]

EVENTS_AFTER = [
    events("When did I go to the gym?", ("November 3, 2026", "November 10, 2026"),
           ("Gym session: legs and core.", "Went to the gym after work, short session."),
           ("2026-11-03T18:00:00Z", "2026-11-10T18:00:00Z")),
    events("What did I spend on petrol?", ("£62", "£58.40"),
           ("Filled up with petrol, £62.", "Petrol at the Shell garage, £58.40."),
           ("2026-10-20T08:00:00Z", "2026-11-08T08:00:00Z")),
    events("When did I last see the dentist?", ("November 5, 2026",),
           ("Dentist check-up, all fine.", "Saw the dentist, one small filling."),
           ("2026-11-05T10:00:00Z", "2026-05-12T10:00:00Z"), absent=("May 12",)),
    events("When did I first visit Granny in the care home?", ("September 6, 2026",),
           ("Visited Granny at the care home, she loved the flowers.", "Visited Granny again at the care home."),
           ("2026-09-06T15:00:00Z", "2026-10-04T15:00:00Z"), absent=("October 4",)),
    events("Who did I have lunch with?", ("Priya", "Marco"),
           ("Lunch with Priya at the noodle bar.", "Had lunch with Marco near the office."),
           ("2026-11-02T12:30:00Z", "2026-11-09T12:30:00Z")),
    events("What did I pay for parking at the hospital?", ("£7.50", "£4"),
           ("Hospital parking, £7.50.", "Paid £4 for parking at the hospital."),
           ("2026-10-01T09:00:00Z", "2026-10-15T09:00:00Z")),
    events("When did I water the plants?", ("November 1, 2026", "November 14, 2026"),
           ("Watered the plants on the balcony.", "Forgot to water the plants, away all weekend.",
            "Watered the plants and repotted the fern."),
           ("2026-11-01T09:00:00Z", "2026-11-08T09:00:00Z", "2026-11-14T09:00:00Z"), absent=("earlier", "November 8")),
    Gold("note", ("Put the passports in the desk drawer.", "Moved the passports to the safe."),
         "Where did I put the passports?", "safe", order=("safe", "earlier", "desk drawer"),
         times=("2026-08-01T09:00:00Z", "2026-11-10T09:00:00Z"), family="update"),
    events("How much did the vet charge for Milo?", ("£65", "£48"),
           ("Vet for Milo's vaccinations, £65.", "Milo's vet visit for his ear, £48."),
           ("2026-09-03T10:00:00Z", "2026-11-02T10:00:00Z")),
    events("When did I do the big shop?", ("November 1, 2026", "November 8, 2026"),
           ("Big shop at Tesco, £96.", "Did the big shop at Aldi."),
           ("2026-11-01T10:00:00Z", "2026-11-08T10:00:00Z")),
]
