"""Gold cases for extractive answers: passages as the sources would hold them, a question, and what the
answer must (and must not) say.

The passages are what each kind of capture really gives the answerer: notes as typed, Markdown files
through the real extractor and chunker (headings become context), PDF text with its reflowed (sometimes
still hard-wrapped) lines, OCR text whose short lines stay apart, and transcripts (speech windows cut
between sentences, chat turns with speakers).  The relevant passage is not always the first, and most
cases have a distractor that shares the question's words.

Families beyond "quote the fact": ``none`` (nothing covers the question: the answer says so), ``gather``
(several items, one per source, in time order), ``update`` (the newest of a changed fact first, the older
as earlier), ``gloss`` (the date a relative time word stood for, and none for a date the text pins).
"""

from __future__ import annotations

from dataclasses import dataclass

# When each passage was captured, unless a case says: a Tuesday.
DEFAULT_TIME = "2026-11-17T08:00:00.000000Z"


@dataclass(frozen=True, slots=True)
class Gold:
    kind: str  # note, markdown, pdf, ocr, transcript
    passages: tuple[str, ...]
    question: str
    fact: str  # must be quoted (with the citation of its source); "" for a case with nothing to find
    absent: tuple[str, ...] = ()  # must not be in the answer (Markdown marks, a heading, a wrong date...)
    found: bool = True  # False: the answer must say it found nothing about the question
    order: tuple[str, ...] = ()  # must appear in this order (lists in time order, the newest fact first)
    times: tuple[str, ...] = ()  # capture time of each passage (ISO, UTC); DEFAULT_TIME when empty
    family: str = "fact"  # fact, none, gather, update, gloss, structure, modality (and gold_near_misses.py's)
    missing: str = ""  # a "not found" answer names this (what it did not find) before anything it shows
    count: int | None = None  # the answer starts with this number (repeated events counted)
    apart: tuple[str, ...] = ()  # absent, or only after "Also mentioned" (near items of a list)

    @property
    def id(self) -> str:
        return f"{self.kind}: {self.question}"


def g(kind: str, question: str, fact: str, *passages: str) -> Gold:
    return Gold(kind, passages, question, fact)


NOTES = [
    g("note", "When is my dentist appointment?", "3rd of December at 9:30",
      "My dentist appointment with Dr. Okafor is on the 3rd of December at 9:30"),
    g("note", "Who is my dentist?", "Okafor",
      "My dentist appointment with Dr. Okafor is on the 3rd of December at 9:30"),
    g("note", "When are the cello lessons?", "Thursdays at 17:00",
      "The cello lessons are with Mr. Okafor on Thursdays at 17:00. Bring the rosin."),
    g("note", "What is the wifi password at the cabin?", "birch-lake-42",
      "Cabin notes. The wifi password at the cabin is birch-lake-42. Firewood is in the shed.",
      "The wifi at the office is managed by IT."),
    g("note", "How much did the sofa cost?", "1,240.50",
      "Bought the sofa from Nordhaus Inc. for EUR 1,240.50 on Sat. 4 May. Delivery in two weeks."),
    g("note", "When does the sofa arrive?", "two weeks",
      "Bought the sofa from Nordhaus Inc. for EUR 1,240.50 on Sat. 4 May. Delivery in two weeks."),
    g("note", "Who recommended the book?", "J. R. Hartley",
      "The fly fishing book was recommended by J. R. Hartley at the club. I still have not read it."),
    g("note", "When is the flight to Lisbon?", "10:45",
      "Flight to Lisbon: TP 1235 dep. 10:45 arr. 12:30 on Fri. Gate opens approx. 40 min. before."),
    g("note", "What gate is the Lisbon flight?", "B12",
      "Flight to Lisbon: TP 1235 dep. 10:45 arr. 12:30. Gate B12.",
      "Gate codes for the garden: 4471."),
    g("note", "Where did I park the car?", "level -2, bay 117",
      "Parked the car at the airport, level -2, bay 117, near the lifts."),
    g("note", "When is the car service?", "Thursday",
      "Picked up the dry cleaning.\nBooked the car service for Thursday at 8 a.m. with St. James Garage."),
    g("note", "What is the plumber's phone number?", "555-0134",
      "Plumber: Mr. D. Novak, tel. 555-0134 (evenings only).", "The plumber fixed the sink."),
    g("note", "How many people are coming to the party?", "14",
      "Party planning. Guests confirmed: 14. Cake from the bakery on Rue St. Denis."),
    g("note", "When is Mum's birthday dinner?", "7 p.m.",
      "Mum's birthday dinner is booked at Chez Marcel. It starts at 7 p.m. on the 12th.",
      "Birthday presents: a scarf for Mum."),
    g("note", "Which vaccine did the dog get?", "rabies",
      "Vet visit with Dr. K. Amsel. The dog got the rabies vaccine and a check-up. Next visit in 12 mo."),
    g("note", "What did the doctor say about my knee?", "physiotherapy twice a week",
      "Saw Dr. Patel about the knee. She said physiotherapy twice a week for six weeks, no running."),
    g("note", "What is the budget for the kitchen renovation?", "18,000",
      "Kitchen renovation\n\nThe budget is EUR 18,000 incl. appliances, approx. 3 weeks of work.",
      "Bathroom renovation budget: not decided."),
    g("note", "When does the lease end?", "31 Aug. 2027",
      "The Krakow office lease was renewed for two years. It ends on 31 Aug. 2027."),
    g("note", "Who is picking up the kids on Friday?", "Grandpa Joe",
      "Friday: Grandpa Joe picks up the kids at 3:15 p.m. from school.", "The kids have swimming on Monday."),
    g("note", "What is my passport number?", "X4417820",
      "Documents\n- Passport no. X4417820, exp. 2031\n- ID card in the blue folder"),
    g("note", "Where are the spare keys?", "blue box",
      "The spare keys are in the blue box on the top shelf of the hall cupboard."),
]

PDFS = [
    g("pdf", "How much is the monthly rent?", "1,450",
      "TENANCY AGREEMENT\n\n§ 3 Rent. The monthly rent is EUR 1,450.00, payable by the 3rd day of each "
      "month to the account of the landlord, Mr. H. Bauer."),
    g("pdf", "What is the notice period?", "three months",
      "§ 7 Termination. Either party may terminate this agreement with a notice period of three months "
      "to the end of a calendar month, cf. § 573c BGB."),
    g("pdf", "When is invoice 8391 due?", "15 December",
      "Invoice no. 8391\nAcme Ltd.\nAmount: 1,240 EUR\nDue on 15 December 2026. Ref. PO-77."),
    g("pdf", "What is the deductible of the car insurance?", "EUR 300",
      "Comprehensive cover (Vollkasko). The deductible is EUR 300 per claim, i.e. you pay the first "
      "EUR 300 of any damage."),
    g("pdf", "When was the boiler last serviced?", "14 Feb. 2026",
      "Service report no. 2231. The boiler (Vaillant ecoTEC) was serviced on 14 Feb. 2026 by\n"
      "Mr. T. O'Brien. Next service due in 12 months."),
    g("pdf", "What dose of amoxicillin was prescribed?", "500 mg three times a day",
      "Prescription\nPatient: A. Lindqvist\nAmoxicillin 500 mg three times a day for 7 days.\nDr. M. Saleh, "
      "M.D."),
    g("pdf", "Who signed the contract?", "Prof. E. Marchetti",
      "The contract was signed on behalf of the university by Prof. E. Marchetti, Dean of Engineering, "
      "on 2 March 2026."),
    g("pdf", "What is the warranty period of the dishwasher?", "24 months",
      "Warranty. The manufacturer grants a warranty of 24 months from the date of purchase (see sec. 4.2 "
      "for exclusions).", "The dishwasher must be installed by a qualified technician."),
    g("pdf", "When does the conference start?", "8:30 a.m.",
      "Programme\nDay 1 (Tue. 9 June)\nRegistration opens at 7:45 a.m. and the conference starts at 8:30 a.m. in "
      "Hall A."),
    g("pdf", "What was the Q3 revenue?", "4.2 million",
      "Quarterly report. Revenue in Q3 was EUR 4.2 million, up 12.5% vs. Q2. Costs rose approx. 3%."),
    g("pdf", "How long is the probation period?", "six months",
      "5. Probation. The first six months of employment are a probation period during which either\n"
      "party may end the contract with two weeks' notice."),
    g("pdf", "What is the tracking number?", "JD014600003828",
      "Shipping confirmation. Your parcel (order no. 55-1023) was handed to DHL.\nTracking number: "
      "JD014600003828."),
    g("pdf", "What is the property tax this year?", "612.40",
      "Notice of assessment for 2026. The property tax due this year is EUR 612.40, payable in four "
      "instalments (Feb., May, Aug., Nov.)."),
    g("pdf", "When does the parental leave start?", "1 October",
      "Parental leave application. The employee, Ms. R. Sato, takes parental leave from\n1 October for "
      "twelve months."),
]

OCR = [
    g("ocr", "When is the launch date?", "14 March",
      "Whiteboard: launch date is\n14 March, owner Priya\n\nRisks: QA capacity"),
    g("ocr", "Who owns the launch?", "Priya",
      "Whiteboard: launch date is\n14 March, owner Priya\n\nRisks: QA capacity"),
    g("ocr", "What time does the pharmacy open on Saturday?", "9:00",
      "CITY PHARMACY\nOpening hours\nMon-Fri 8:00 - 19:00\nSat 9:00 - 13:00\nSun closed"),
    g("ocr", "What is the total on the receipt?", "23.80",
      "BAKERY MÜLLER\n2 x Croissant 3.20\n1 x Rye bread 4.60\nCake 16.00\nTOTAL EUR 23.80\nThank you!"),
    g("ocr", "What is the parking fine?", "35",
      "PARKING NOTICE\nVehicle parked in a\nno-parking zone. Fine:\nEUR 35, payable within\n14 days."),
    g("ocr", "When is the recycling collected?", "every second Tuesday",
      "Notice to residents\n\nRecycling is collected\nevery second Tuesday from 6 a.m.,\nplease put the bins out the\n"
      "night before."),
    g("ocr", "What is the guest wifi password?", "Welcome2026!",
      "GUEST WIFI\nNetwork: Hotel-Lobby\nPassword: Welcome2026!"),
    g("ocr", "What did the sticky note say about the report?", "Friday",
      "Sticky note: send the\nreport to Dr. Lee by\nFriday noon"),
    g("ocr", "Who is the sprint goal owner?", "Marta",
      "SPRINT 14\n\nGoal: checkout\nredesign live\n\nOwner: Marta\n\nDemo: Thu 15:00"),
    g("ocr", "When is the sprint demo?", "Thu 15:00",
      "SPRINT 14\n\nGoal: checkout\nredesign live\n\nOwner: Marta\n\nDemo: Thu 15:00"),
    g("ocr", "What is the dosage on the medicine box?", "2 tablets",
      "IBUPROFEN 200 mg\nAdults: take 1 or\n2 tablets every 4 to\n6 hours. Do not exceed\n6 tablets in 24 hours."),
    g("ocr", "What is the serial number of the router?", "SN 7Q-44-1090",
      "Model: AX3000\nSN 7Q-44-1090\nMade in Taiwan"),
    g("ocr", "When is the museum open late?", "Wed. until 21:00",
      "MUSEUM OF MODERN ART\n\nOpen daily 10:00-18:00,\nlate opening Wed. until 21:00.\nAdults 12 EUR"),
    g("ocr", "How much is museum entry for adults?", "12 EUR",
      "MUSEUM OF MODERN ART\n\nOpen daily 10:00-18:00,\nlate opening Wed. until 21:00.\nAdults 12 EUR"),
    g("ocr", "What is the name of the wine?", "Château Margaux",
      "Château Margaux\n2015\nPremier Grand Cru Classé\nAppellation Margaux Contrôlée"),
    g("ocr", "Which platform does the train leave from?", "platform 7",
      "DEPARTURES 14:05 ICE 578 to Hamburg\nleaves from platform 7,\ndelayed approx. 10 min."),
]

TRANSCRIPTS = [
    g("transcript", "Who writes the rollback runbook?", "Tomasz",
      "Maria asked who owns the rollback plan if the billing service misbehaves. We agreed that Tomasz "
      "writes the rollback runbook by Friday.", "Good morning everyone, this is the weekly engineering sync."),
    g("transcript", "When did the database migration finish?", "Tuesday night",
      "The database migration finished on Tuesday night without downtime. Next, the cache."),
    g("transcript", "When is the launch?", "March 14th",
      "okay so the launch date is\nMarch 14th and Priya owns it\nwe still need QA sign-off"),
    g("transcript", "What is the budget for the campaign?", "30,000",
      "Priya: Where are we on the campaign?\nSam: The budget for the campaign is 30,000 euros, approved "
      "by Dr. Klein yesterday.\nPriya: Great."),
    g("transcript", "Who approved the campaign budget?", "Dr. Klein",
      "Priya: Where are we on the campaign?\nSam: The budget for the campaign is 30,000 euros, approved "
      "by Dr. Klein yesterday.\nPriya: Great."),
    g("transcript", "When is the next team offsite?", "June",
      "[00:12:04] Lena: The next team offsite is in June, in Porto.\n[00:12:10] Ahmed: Do we have a "
      "budget for that?"),
    g("transcript", "Where is the next offsite?", "Porto",
      "[00:12:04] Lena: The next team offsite is in June, in Porto.\n[00:12:10] Ahmed: Do we have a "
      "budget for that?"),
    g("transcript", "What did the doctor recommend?", "ten minutes of stretching every morning",
      "so the doctor recommended ten minutes of stretching every morning and less screen time before bed "
      "which honestly makes sense"),
    g("transcript", "When does the school trip leave?", "7:15",
      "Teacher: Reminder for parents. The school trip leaves at 7:15 a.m. sharp on Monday. Kids need a "
      "packed lunch."),
    g("transcript", "What do the kids need for the school trip?", "packed lunch",
      "Teacher: Reminder for parents. The school trip leaves at 7:15 a.m. sharp on Monday. Kids need a "
      "packed lunch."),
    g("transcript", "How many users signed up last month?", "12,400",
      "the growth numbers look good, we had 12,400 new users sign up last month,\nwhich is about 8.5 "
      "percent more than in April"),
    g("transcript", "Who is the new hire?", "Dana Whitfield",
      "Speaker 1: Quick announcement, Dana Whitfield joins us on Monday as the new hire on the data team.\n"
      "Speaker 2: Welcome, Dana."),
    g("transcript", "What is the deadline for the grant application?", "30 April",
      "Mei: the grant application is due on 30 April, so we have about three weeks.\nJon: okay, I'll draft "
      "the budget part."),
    g("transcript", "Who drafts the budget part of the grant?", "Jon",
      "Mei: the grant application is due on 30 April, so we have about three weeks.\nJon: okay, I'll draft "
      "the budget part of the grant."),
    g("transcript", "What was decided about the vendor?", "switch to Fastly",
      "After a long discussion we decided to switch to Fastly at the end of the quarter, mainly because "
      "of the price and the support we got from them during the outage, and Ravi will handle the "
      "migration plan together with the security team, who want a review of the configuration before "
      "anything goes live, and we will revisit the question of the second vendor in September when the "
      "contract renewal comes up."),
]

# --------------------------------------------------------------------------- Markdown, through the extractor


def md(question: str, fact: str, *files: str, absent: tuple[str, ...] = (), found: bool = True,
       family: str = "structure") -> Gold:
    return Gold("markdown", files, question, fact, absent, found, family=family)


TRIP = """# Lisbon trip plan

## Flights

- Outbound: TP 1235 on **12 December**, departs 10:45 from Gate B12.
- Return: TP 1240 on 19 December at 18:10.

## Hotel

Staying at *Casa do Alfama*, booking ref `CA-7731`, check-in from 15:00.

## Day plans

1. Tram 28 to the castle on the first morning.
2. Dinner at [Taberna da Rua](https://example.org/taberna) on Saturday.
"""

SOURDOUGH = """Sourdough starter guide
Feed the starter every morning with 50 g flour and 50 g water.
Keep it at about 24 degrees; it doubles in 6 hours when it is ready to bake with.
"""

KITCHEN = """---
title: Kitchen renovation
tags: [home, budget]
---

# Kitchen renovation

## Budget

| Item | Cost |
|---|---|
| Cabinets | EUR 9,400 |
| Worktop | EUR 2,150 |
| Appliances | EUR 6,450 |

## Schedule

Demolition starts on **3 February**; the fitters need __two weeks__.
"""

PROJECT = """# Atlas migration

## Owners

- Database: Ingrid
- Frontend: Kofi

## Risks

The biggest risk is the **payment gateway** cut-over on 14 March.

## Decisions

We keep `PostgreSQL 16` and drop the old read replica.
"""

RECIPE = """# Grandma's plum cake

## Ingredients

- 500 g plums, halved
- 200 g flour
- 150 g butter
- 3 eggs

## Method

Bake at **180 °C** for 45 minutes, then let it rest for ten minutes.
"""

GARDEN_MD = """# Garden plan

## Spring

Sow the tomatoes indoors in *March*.

## Summer

Water the beds at dawn; mulch with straw.

## Tools

The spare hose is in the **blue shed**.
"""

MARKDOWN = [
    md("What did I plan for the trip?", "TP 1235 on 12 December", TRIP, absent=("**", "Lisbon trip plan Flights")),
    md("What is the hotel booking reference?", "CA-7731", TRIP, absent=("`",)),
    md("Where am I staying in Lisbon?", "Casa do Alfama", TRIP, absent=("*Casa",)),
    md("When does the return flight leave?", "18:10", TRIP),
    md("Where is dinner on Saturday?", "Taberna da Rua", TRIP, absent=("](", "https://")),
    md("How often do I feed the sourdough starter?", "every morning", SOURDOUGH,
       absent=("Sourdough starter guide Feed",)),
    md("How long does the starter take to double?", "6 hours", SOURDOUGH),
    md("How much do the cabinets cost?", "9,400", KITCHEN, absent=("|",)),
    md("How much is the worktop?", "2,150", KITCHEN),
    md("When does the kitchen demolition start?", "3 February", KITCHEN, absent=("**", "tags:")),
    md("How long do the kitchen fitters need?", "two weeks", KITCHEN, absent=("__",)),
    md("Who owns the database part of the Atlas migration?", "Ingrid", PROJECT),
    md("What is the biggest risk of the Atlas migration?", "payment gateway", PROJECT, absent=("**",)),
    md("Which PostgreSQL version do we keep?", "PostgreSQL 16", PROJECT, absent=("`",)),
    md("How many eggs go into the plum cake?", "3 eggs", RECIPE),
    md("At what temperature is the plum cake baked?", "180 °C", RECIPE, absent=("**",)),
    md("Where is the spare hose?", "blue shed", GARDEN_MD, absent=("**",)),
    md("When do I sow the tomatoes?", "March", GARDEN_MD, absent=("*March*",)),
]

# --------------------------------------------------------------------------- nothing to find


def none(kind: str, question: str, *passages: str, absent: tuple[str, ...] = ()) -> Gold:
    return Gold(kind, passages, question, "", absent, found=False, family="none")


NOTHING = [
    none("note", "What is my bike lock code?", "Gym locker code is 5521."),
    none("note", "When is my physiotherapy session?", "Gym locker code is 5521."),
    none("note", "What is the wifi password at the office?",
         "The wifi password at the cabin is birch-lake-42. Firewood is in the shed."),
    none("note", "When is the dentist appointment for Leo?",
         "Dentist appointment for Mia on Thursday 10 December at 09:40."),
    none("note", "What is the passport number of my husband?", "Dog's microchip number: 276098106543210."),
    none("note", "How much did the bicycle cost?", "The car service cost EUR 320 at St. James Garage."),
    none("pdf", "What is the notice period of the gym membership?",
         "§ 7 Termination. Either party may terminate this tenancy with a notice period of three months."),
    none("ocr", "What is the price of the espresso machine?", "CITY PHARMACY\nOpening hours\nSat 9:00 - 13:00"),
    none("transcript", "What did Mei say about the hiring plan?",
         "Mei: the grant application is due on 30 April.\nJon: okay, I'll draft the budget part."),
    none("transcript", "How did Jon's son handle the accident?",
         "Jon: How did the kids take it?\nMei: My son got into an accident last week; I was so scared.\n"
         "Mei: He was brave though, and we all hugged him."),
    none("transcript", "Where did Jon go camping?",
         "Mei: We went camping at Lake Bled last weekend, it was so peaceful.\nJon: That sounds lovely!"),
    none("note", "What is the gate code for the garage?", "Gate codes for the garden: 4471."),
    # a chat drops the "I": Tim speaks of himself, and John says nothing of an instrument
    none("transcript", "What instrument is John learning?",
         "John: How are your studies going?\nTim: Busy! Recently started learning the violin.\nJohn: Cool!"),
    # her name is all the sources share with it
    none("transcript", "What did Melanie buy for the piano lessons?",
         "Caroline: Any big plans?\nMelanie: Next year I want to run the Berlin marathon with my sister."),
]

# The other side: questions that look unanswered but are answered, never "not found".
ANSWERED = [
    Gold("note", ("Weekend trip to Basel with Anna: the art museum and the Rhine swim.",
                  "Hiking at Lake Bled in June, the water was freezing.",
                  "Two days in Lyon for the food market; bought cheese for everyone."),
         "Which places did I travel to this year?", "Basel", order=("Basel", "Lake Bled", "Lyon"),
         times=("2026-03-14T09:00:00Z", "2026-06-20T09:00:00Z", "2026-09-05T09:00:00Z"), family="gather"),
    g("note", "What is the dosage on the medicine box?", "2 tablets",
      "IBUPROFEN 200 mg\nAdults: take 1 or\n2 tablets every 4 to\n6 hours."),
    g("note", "What did the doctor say about the knee?", "physiotherapy",
      "Saw Dr. Patel about the knee. She said physiotherapy twice a week for six weeks."),
    g("note", "When is the team standup?", "10:00", "From Monday the standup moves to 10:00 in room Vega."),
    g("note", "What is the road trip budget?", "600",
      "Roadtrip to Cornwall: budget GBP 600 for fuel, food and the B&B."),
]

# --------------------------------------------------------------------------- several things


def gather(kind: str, question: str, items: tuple[str, ...], *passages: str, times: tuple[str, ...]) -> Gold:
    return Gold(kind, passages, question, items[0], order=items, times=times, family="gather")


GATHERED = [
    gather("note", "Who came to the party?", ("Grandpa Joe", "Aunt Rosa", "The Lindqvists"),
           "Party: Grandpa Joe came early and brought the cake.",
           "Aunt Rosa came to the party after her shift.",
           "The Lindqvists came to the party with their new puppy.",
           times=("2026-05-02T18:00:00Z", "2026-05-02T19:00:00Z", "2026-05-02T20:00:00Z")),
    gather("note", "Which books did I read this year?", ("The Overstory", "Piranesi", "Middlemarch"),
           "Finished reading The Overstory by Richard Powers; the chestnut chapter stays with me.",
           "Read Piranesi in two evenings, a strange and lovely book.",
           "Finally read Middlemarch on the train to Porto.",
           times=("2026-02-10T20:00:00Z", "2026-05-18T21:00:00Z", "2026-08-30T10:00:00Z")),
    gather("transcript", "What instruments does Mei play?", ("clarinet", "violin"),
           "Mei: I've played the clarinet since school, it calms me down.",
           "Mei: I started violin lessons last month, my neighbours are very patient.",
           times=("2026-01-12T18:00:00Z", "2026-04-03T18:00:00Z")),
    gather("note", "Which restaurants did we try in Porto?", ("Cantinho do Avillez", "Taberna Santo António"),
           "Porto day 1: dinner at Cantinho do Avillez, the octopus was superb.",
           "Porto day 2: lunch at Taberna Santo António, tiny place, huge portions.",
           times=("2026-09-01T20:00:00Z", "2026-09-02T13:00:00Z")),
    gather("note", "What activities did the kids do this summer?", ("swimming", "Pottery", "football camp"),
           "The kids did swimming lessons at the lido all July.",
           "Pottery class with the kids: they made bowls with dog faces.",
           "The kids loved the football camp in August.",
           times=("2026-07-05T10:00:00Z", "2026-07-20T10:00:00Z", "2026-08-10T10:00:00Z")),
    gather("note", "Which cities did I work from this year?", ("Berlin", "Warsaw", "Madrid"),
           "Worked from Berlin for the first week of March, the co-working space was great.",
           "Worked from Warsaw in May while visiting the team.",
           "Worked remotely from Madrid in October, mostly from the flat.",
           times=("2026-03-02T09:00:00Z", "2026-05-11T09:00:00Z", "2026-10-05T09:00:00Z")),
]

# --------------------------------------------------------------------------- a fact that changed


def update(kind: str, question: str, newest: str, older: str, *passages: str, times: tuple[str, ...]) -> Gold:
    return Gold(kind, passages, question, newest, order=(newest, older), times=times, family="update")


UPDATES = [
    update("note", "When is the standup?", "10:00", "9:15",
           "The team standup is at 9:15 in room Orion.",
           "From Monday the standup moves to 10:00 in room Vega.",
           times=("2026-06-03T08:00:00Z", "2026-10-16T08:00:00Z")),
    update("note", "How much is the rent?", "1,520", "1,450",
           "The monthly rent is EUR 1,450.",
           "Letter from the landlord: the rent goes up to EUR 1,520 from January.",
           times=("2025-01-10T08:00:00Z", "2026-11-02T08:00:00Z")),
    update("note", "When is the dentist appointment?", "Thursday 10 December at 09:40", "8 December",
           "Dentist appointment booked for 8 December at 14:00.",
           "Dentist moved to Thursday 10 December at 09:40.",
           times=("2026-11-01T08:00:00Z", "2026-11-20T08:00:00Z")),
    update("note", "Where does Anna live?", "Rue Vieille du Temple", "Kreuzberg",
           "Anna's address: Oranienstrasse 12, Kreuzberg, Berlin.",
           "Anna moved! New address: 44 Rue Vieille du Temple, Paris.",
           times=("2025-03-01T08:00:00Z", "2026-09-15T08:00:00Z")),
    update("note", "What's the wifi password at the cabin?", "pine-ridge-77", "birch-lake-42",
           "The wifi password at the cabin is birch-lake-42.",
           "Changed the wifi password at the cabin to pine-ridge-77.",
           times=("2026-02-01T08:00:00Z", "2026-08-01T08:00:00Z")),
    update("transcript", "What time does the swimming lesson start?", "17:30", "17:00",
           "Coach: swimming lessons start at 17:00 on Wednesdays.",
           "Coach: from next week the swimming lesson starts at 17:30 because of the pool works.",
           times=("2026-09-02T18:00:00Z", "2026-10-07T18:00:00Z")),
]

# --------------------------------------------------------------------------- dates a time word stood for


def gloss(kind: str, question: str, fact: str, passage: str, at: str, *, absent: tuple[str, ...] = ()) -> Gold:
    return Gold(kind, (passage,), question, fact, absent, times=(at,), family="gloss")


GLOSSES = [
    # "yesterday", said on Monday 8 May 2023: Sunday 7 May
    gloss("transcript", "When did Caroline go to the support group?", "May 7, 2023",
          "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", "2023-05-08T13:56:00Z"),
    # a weekday followed by its date: the date says it, nothing is added
    gloss("note", "When is the dentist?", "Tuesday 1 December at 9:30",
          "Dentist on Tuesday 1 December at 9:30 with Dr. Okafor.", "2026-11-24T08:00:00Z",
          absent=("= Tue", "Nov 24")),
    # written on Friday 16 October: "from Monday" is the Monday after
    gloss("note", "When does the standup move?", "Mon, October 19, 2026",
          "From Monday the standup moves to 10:00.", "2026-10-16T08:00:00Z", absent=("October 12",)),
    # a weekday that does not fit its date is flagged, not corrected
    gloss("note", "When is the school play?", "is a Friday",
          "The school play is on Thursday 4 December at 18:00.", "2026-11-20T08:00:00Z"),
    gloss("note", "When did I fix the bike?", "the week before",
          "Fixed the bike last week, new chain and brake pads.", "2026-11-12T08:00:00Z"),
    gloss("note", "When did I last call grandma?", "Sat, November 7, 2026",
          "Called grandma on Saturday, she sounded well.", "2026-11-09T08:00:00Z"),
    # a season is named as a person names it, then its months
    gloss("transcript", "When did John organize the basketball camp?", "summer 2023, June 1 \u2013 August 31",
          "John: Organizing a basketball camp for kids in my hometown last summer was an awesome experience!",
          "2023-10-02T10:00:00Z"),
    # "a few days ago" is no date, but it is a few days before the day it was said
    gloss("transcript", "When did Evan finish the painting?", "a few days before December 17, 2023",
          "Evan: This is a contemporary figurative painting that I finished a few days ago.",
          "2023-12-17T10:00:00Z"),
    gloss("note", "When did we paint the fence?", "2025",
          "We painted the fence last year, it already needs another coat.", "2026-06-01T08:00:00Z"),
    gloss("note", "When is the car inspection due?", "31 March 2027",
          "The car inspection is due on 31 March 2027.", "2026-11-17T08:00:00Z", absent=("=",)),
    gloss("note", "When was the cheese bought?", "recorded",
          "Bought cheese for the party at the market.", "2026-11-17T08:00:00Z"),
    gloss("transcript", "When did Jon lose his job?", "On 3 May I lost my job",
          "Jon: On 3 May I lost my job, it was a shock.", "2023-05-08T13:56:00Z", absent=("=",)),
    # "last night" is the evening before, one day (not "the weekend before" for a span crossing midnight)
    gloss("transcript", "When did Jolene have dinner with her friends?",
          "\u201clast night\u201d = Tue, February 21, 2023",
          "Jolene: Had a great night out last night - dinner and drinks with my friends.", "2023-02-22T14:00:00Z",
          absent=("weekend",)),
    # a month without its year ("last August", "August last year") is glossed with its year
    gloss("transcript", "When did John go to the Harry Potter trivia night?", "\u201cLast August\u201d = August 2023",
          "John: Last August I went to a charity event with Harry Potter trivia, it was a blast.",
          "2023-12-08T10:00:00Z"),
    gloss("transcript", "When did Calvin start working with Frank?", "August 2022",
          "Calvin: It all started August last year when we met at a festival.", "2023-03-02T10:00:00Z"),
    # the present month is the month it was said in
    gloss("transcript", "When is Caroline going to the conference?", "\u201cthis month\u201d = July 2023",
          "Caroline: I'm going to a conference for trans people this month. So excited!", "2023-07-03T10:00:00Z"),
    # "today" is the day it was said
    gloss("transcript", "When did Deborah go to an art show?", "\u201ctoday\u201d = Sun, April 9, 2023",
          "Deborah: Checked out an art show with a friend today - really cool stuff.", "2023-04-09T15:00:00Z"),
]

# --------------------------------------------------------------------------- the kind of capture asked about


def kind_of(question: str, fact: str, *passages: str, absent: tuple[str, ...] = ()) -> Gold:
    return Gold("transcript", passages, question, fact, absent, family="modality")


MODALITIES = [
    kind_of("What did I say in the voice memo about the plumber?", "plumber comes on Thursday at 8",
            "Voice memo. Reminder to myself about the garden. Buy tomato plants on Saturday. Also the plumber "
            "comes on Thursday at 8 to fix the boiler.", absent=("Voice memo.",)),
    kind_of("What did I record about the boiler?", "boiler pressure is too low",
            "Recording. Quick note on the house. The boiler pressure is too low, call the installer.",
            absent=("Recording.",)),
]


# --------------------------------------------------------------------------- more of each kind

BOARD = """# Board meeting

## Attendees

- Ana
- Ben

## Decisions

- Budget approved: **EUR 40,000**
- Next meeting on 9 April, in the *small room*
"""

BOARDING = "BOARDING PASS\nLISBON LIS\nBooking ref: QX7P2L\nSeat 14C\nBoarding 10:05"
INVOICE = ("Invoice no. 2026-118\nDate: 3 November 2026\nNet 1,000.00 EUR, VAT 19% 190.00 EUR.\n"
           "Total due 1,190.00 EUR by 17 November 2026.")
LEASE = ("§ 2 Term. The lease term begins on 1 February 2025 and ends on\n31 January 2027. "
         "§ 3 Deposit. The tenant pays a deposit of three monthly rents (EUR 4,350) before moving in.")

MORE = [
    # an unrelated sentence of another source is not appended
    g("note", "Where is the meeting place for the Saturday hike?", "bakery on Kastanienallee",
      "Meeting place for the Saturday hike: the bakery on Kastanienallee at 8:00.",
      "Hotel Casa do Alfama, check-in from 15:00."),
    Gold("note", ("Garden plan: buy straw, compost and two tomato plants.", "Tram card top-up: EUR 30 on the 1st."),
         "What do I need to buy for the garden?", "straw", absent=("Tram card",)),
    g("note", "Who is the landlord?", "Ferreira", "Landlord: Mrs. Ferreira, phone 555-0199. Rent is due on the 1st."),
    g("note", "How many tiles do we need for the bathroom?", "42 tiles",
      "Bathroom: 42 tiles needed, plus 10% spare.", "Kitchen: the tiles are already ordered."),
    g("note", "How long is the warranty on the dishwasher?", "2 years",
      "Dishwasher bought at MediaMarkt, warranty 2 years, receipt in the blue folder."),
    g("note", "Where is the spare key?", "under the blue flowerpot",
      "Spare key is under the blue flowerpot by the back door.", "The car key is in the drawer."),
    Gold("note", ("Debit card PIN: 4410. Credit card PIN: 9923.",), "What is the PIN of my debit card?", "4410"),
    Gold("note", ("The parent-teacher meeting is on Tuesday 1 December at 18:00.",),
         "When is the parent-teacher meeting?", "Tuesday 1 December at 18:00", absent=("=",)),
    g("pdf", "When does the lease end?", "31 January 2027", LEASE),
    g("pdf", "How much is the deposit?", "EUR 4,350", LEASE),
    g("pdf", "What is the invoice total?", "1,190.00", INVOICE),
    g("pdf", "When is the invoice due?", "17 November 2026", INVOICE),
    g("ocr", "When does the pharmacy open on Saturday?", "Sat 9:00 - 13:00",
      "CITY PHARMACY\nOpening hours\nMon-Fri 8:00 - 19:00\nSat 9:00 - 13:00"),
    g("ocr", "What is the booking reference?", "QX7P2L", BOARDING),
    g("ocr", "Which seat do I have?", "14C", BOARDING),
    g("transcript", "What did Priya say about the launch?", "14 March",
      "Priya: the launch moves to 14 March because QA needs another week.\nTom: fine by me."),
    g("transcript", "Who will book the venue?", "Tom",
      "Priya: someone has to sort out the venue.\nTom: I'll book the venue tomorrow.\n"
      "Priya: great, I'll do the invitations."),
    md("What budget was approved at the board meeting?", "EUR 40,000", BOARD, absent=("**",)),
    md("When is the next board meeting?", "9 April", BOARD, absent=("*small",)),
    md("Who attended the board meeting?", "Ana", BOARD),
    none("note", "When is Leo's swimming lesson?", "Mia's swimming lesson is on Wednesdays at 17:00."),
    none("pdf", "What is the cancellation fee for the flight?",
         "Hotel cancellation: free until 48 hours before arrival, then one night is charged."),
    none("ocr", "What is the wifi password?", "MENU\nEspresso 2.20\nCappuccino 3.10"),
    none("note", "What is the alarm code for the shop?", "Alarm code for the house: 7781."),
    gather("note", "Which museums did we visit in Vienna?", ("Albertina", "Belvedere", "Leopold"),
           "Vienna day 1: the Albertina, then cake at Demel.",
           "Vienna day 2: Klimt at the Belvedere.",
           "Vienna day 3: the Leopold Museum before the train home.",
           times=("2026-04-10T17:00:00Z", "2026-04-11T17:00:00Z", "2026-04-12T12:00:00Z")),
    gather("note", "Which friends did I meet for coffee this month?", ("Lena", "Marco", "Sofia"),
           "Coffee with Lena at Café Sperl, she is moving to Graz.",
           "Coffee with Marco, he starts the new job in January.",
           "Met Sofia for coffee near the office.",
           times=("2026-11-03T10:00:00Z", "2026-11-09T10:00:00Z", "2026-11-14T10:00:00Z")),
    update("note", "What is Tom's phone number?", "555-0177", "555-0101",
           "Tom's number: 555-0101.", "Tom has a new number: 555-0177.",
           times=("2025-05-01T08:00:00Z", "2026-10-01T08:00:00Z")),
    update("note", "Where is the team offsite?", "Porto", "Lisbon",
           "The team offsite will be in Lisbon in May.",
           "The offsite moved to Porto because of the conference dates.",
           times=("2026-01-15T08:00:00Z", "2026-02-20T08:00:00Z")),
    gloss("note", "When is the plumber coming?", "Wed, November 18, 2026",
          "The plumber comes tomorrow at 8 to fix the boiler.", "2026-11-17T08:00:00Z"),
    gloss("note", "When is the school concert?", "is a Wednesday",
          "The school concert is on Tuesday 2 December at 18:00.", "2026-11-17T08:00:00Z", absent=("= Tue",)),
    Gold("pdf", ("Rental agreement. The deposit is EUR 4,350, due before moving in.",),
         "What does the PDF say about the deposit?", "EUR 4,350", family="modality"),
    # a recording's other sentences state nothing about the cake, though they follow it
    Gold("transcript", ("The lighthouse keeper counted purple boats in the harbor. My grandmother baked a chocolate "
                        "cake for the volcano festival. Please send the quarterly budget report to the finance "
                        "department. The orchestra rehearsed a beautiful symphony in the old cathedral.",),
         "Where did the chocolate cake go?", "volcano festival", absent=("orchestra",)),
    Gold("ocr", ("Your train ICE 578 leaves at 14:05 from platform 7.",),
         "What does the screenshot say about the train?", "platform 7", family="modality"),
]

# Chat records: what a turn says is quoted with what it points back to, and a reply to the other's follow-up
# question is part of the answer.
CONVERSATIONS = [
    # "fantasy shows" are another kind of show than the "crime shows" asked about ("fantasy" is a noun: a kind)
    Gold("transcript", ("John: Watched anything good lately?\nTim: Yes! I love getting lost in those worlds. "
                        "\"That\" is one of my favorite fantasy shows. Have you seen it?\nJohn: Not yet!",),
         "What is one of Tim's favorite crime shows?", "", found=False, missing="crime shows"),
    # "It gives me ..." names its subject only in the sentence before, which opens the turn
    g("transcript", "What gives Dave a sense of achievement and purpose?", "fixing up old radios",
      "Calvin: What do you love about it?\nDave: I'm passionate about fixing up old radios. It's more than just a "
      "hobby - it gives me a sense of achievement and purpose. I get a real buzz transforming something that's not "
      "working into something that runs smoothly, like giving it a second chance.\nCalvin: Wow, nice."),
    # a runner-up that points back comes with its lead-in
    g("transcript", "What journal has Jolene been using to track tasks and stay organized?", "bullet journal",
      "Jolene: Thanks, Deb! I've been trying out some time management strategies and started using a bullet "
      "journal. It's been really helpful for tracking my tasks and staying organized.\nDeborah: It's great to "
      "hear that it's been helping you out!\nJolene: Not only does it help me stay on top of everything, but it's "
      "also so satisfying when I cross tasks off my list."),
    # "what type of game": the best statement names the game plainly; the one naming the type is quoted too
    g("transcript", "What type of game is John's upcoming mobile game?", "2D puzzle",
      "Sam: Any news?\nJohn: I just reached a big career milestone - making my first mobile game! I kept it a "
      "secret for months because I was afraid it would not work out.\nSam: Wow, congrats, that is huge!\n"
      "John: Thanks! I have been coding every night. It's a 2D puzzle game about a lighthouse keeper."),
    # "when" inside the question joins a clause: it asks for no date, and none is added
    Gold("transcript", ("Calvin: How do you get going again when you are stuck?\nDave: When my creativity is "
                        "frozen I go for a long drive along the coast, then I sketch whatever I saw.",),
         "What does Dave do when he feels his creativity is frozen?", "long drive", ("recorded",)),
    # the caption of what a runner-up showed says nothing the question asks: left out, the runner-up fits
    g("transcript", "What activity does Deborah do with her cats?", "a run in the park",
      "Deborah: I never liked dogs much, that's why I have cats. [shares a photo: a photo of two grey cats "
      "sitting on a couch under a knitted blanket next to a window]\nJolene: They look so cosy!\n"
      "Deborah: Exercise and nature really matter to me, so I make sure to take the cats out for a run in the park "
      "every morning. [shares a photo: a photography of a woman walking on a path with trees "
      "and a lake behind her in the soft light of an early autumn morning]"),
    # "what type of movies" asks for the kind, not for one movie per source
    g("transcript", "What type of movies does Nate enjoy watching the most?", "action and sci-fi",
      "Joanna: What do you do to relax?\nNate: Playing video games and watching movies are my main hobbies.\n"
      "Joanna: Nice! Which ones do you like?\nNate: I love action and sci-fi movies, the effects are so cool!",
      "Nate: I watched a movie about a chess player last night, it was great."),
    # the reply to the follow-up says first how it felt, then what it was
    g("transcript", "What did Maria recently get promoted to?", "head of logistics",
      "Maria: Oh, also, something big happened since we last spoke. I got promoted at work! It took ages.\n"
      "John: Wow, congrats on the promotion! How did you feel when you found out?\n"
      "Maria: Thanks, John! I was really excited. All the late shifts paid off now that I'm head of logistics."),
    # the fact is in the reply to the other speaker's follow-up question
    g("transcript", "What was in the cake Joanna made recently?", "coconut cream frosting",
      "Joanna: Been testing out dairy-free dessert recipes for friends. Here's a pic of a cake I made recently!\n"
      "Nate: Yum! What's in it?\nJoanna: Dairy-free vanilla with strawberry filling and coconut cream frosting."),
    # the follow-up question is not the last thing the other says, and the reply opens with thanks: the answer
    # is the statement after the thanks
    g("transcript", "Who performed at the concert for Melanie's daughter's birthday?", "Matt Patterson",
      "Melanie: Last night was amazing! We celebrated my daughter's birthday with a concert in the park.\n"
      "Caroline: Wow, sounds wonderful! What concert was it? The advocacy event I went to was great too.\n"
      "Melanie: Thanks, Caroline! It was Matt Patterson, he is so talented!\nCaroline: Lucky you."),
    g("transcript", "What are Melanie's new shoes used for?", "for running",
      "Melanie: The kids are so playful! Just got some new shoes, too!\n"
      "Caroline: Love them! What are they for? They look so comfy.\n"
      "Melanie: Thanks, Caroline! These are for running.\nCaroline: Nice."),
    # a follow-up question that is answered with "Definitely!" first
    g("transcript", "What meal does John often cook in his slow cooker?", "honey garlic chicken",
      "John: Here's a photo of me cooking a meal in the slow cooker.\nMaria: Looks tasty! What are you making?\n"
      "John: Definitely! I make this yummy honey garlic chicken with roasted veg a lot."),
    # thanks say nothing: they are not quoted, though they answer the question's turn
    Gold("transcript", ("Maria: That picture is amazing! How often do you get to see sunsets like that on your "
                        "walks?\nJohn: Thanks, Maria!\nJohn: Thanks!\nJohn: I'd say once a week, more in summer.",),
         "How often does John see sunsets on his walks?", "once a week", absent=("Thanks",)),
    # the statement after the best one leans back on it with "their": it is how she felt
    g("note", "How did I feel when someone wrote me a letter about my blog post?", "touched me",
      "Last week, someone wrote me a letter after reading a blog post I made about a hard moment in my life. "
      "Their words touched me; they said my story had brought them comfort. The garden needs water."),
    # the other speaker's echo ("so glad you and your family...") has more of the question's words than what
    # John said himself, but his own words say what it was
    g("transcript", "What kind of event did John and his family attend?", "live music event",
      "John: Last week, we had a blast at a live music event. The energy was unreal.\n"
      "Maria: Wow, John! So glad you and your family got to experience that lively event. These are the moments "
      "that make the best memories."),
    # "how often" wants how many times in a span, not the sentence with more of the question's words
    Gold("transcript", ("John: Working out together is a great way of bonding as a family, and my family loves "
                        "it.\nMaria: That's so cool! How often do you all do it?\nJohn: Three times a week; it keeps "
                        "us on track.",
                        "John: It's always fun coming up with activities for my family to enjoy on a weekend."),
         "How often does John work out with his family?", "Three times a week", absent=("always fun",)),
    g("transcript", "How often does Audrey meet up with other dog owners for playdates?", "once a week",
      "Audrey: We also meet other dog owners in the park and have a doggie playdate. It's a great way for me to "
      "chat with people and for the dogs to make new friends.\nAndrew: That's sweet.",
      "Andrew: Any tips for a new dog owner?\nAudrey: I try to meet up with other dog owners once a week for tips "
      "from other parents."),
    # Tim's own words come first, though John's of himself name the book: it is about Tim
    g("transcript", "What book did Tim just finish reading?", "A Dance with Dragons",
      "Tim: Just finished reading \"A Dance with Dragons\" and it's a really good story.\n"
      "John: I haven't read that book yet. I'm reading a book about basketball, my favourite book this year."),
    # a question with a shared photo after it is still a question, not the answer
    g("transcript", "What is Jon offering to the dancers at his studio?", "one-on-one mentoring",
      "Gina: What support are you offering the dancers at your studio? [shares a photo: a studio with mirrors]\n"
      "Jon: Besides classes, I give one-on-one mentoring to help them grow."),
    # a "how did ... feel" question wants the words of a feeling, not the sentence that repeats the question's
    g("transcript", "How did Jon feel about the opening night of his dance studio?", "I'm so excited",
      "Jon: The opening night of the dance studio is tomorrow. I'm working hard to make every detail of the studio "
      "right.\nGina: You must be nervous!\nJon: Honestly? I'm so excited, it's been a wild ride."),
    # a question that proposes something states it: "How about ...?" is what was suggested
    g("transcript", "What did Andrew suggest to reduce their carbon footprint?", "biking or taking the tram",
      "Audrey: We should do more for the planet. Any ideas?\nAndrew: How about reducing our carbon footprint by "
      "biking or taking the tram?\nAudrey: I mostly drive, but a lower carbon footprint sounds good to me."),
    # a photo is where to look, not what the dancers are narrowed to
    Gold("ocr", ("The dancers performed at the harbour festival in front of the whole town.",
                 "The dancers in the studio rehearse twice a week."),
         "What do the dancers in the photo represent?", "harbour festival", family="modality"),
    # "met" is the past of "meet": the reply, not the greeting that has the question's word
    g("transcript", "How did Jolene and her partner meet?", "engineering class",
      "Deborah: Hey Jolene, nice to meet you!\nJolene: Hi! My partner is Ryan.\nDeborah: Lovely.",
      "Jolene: We met in an engineering class in college and quickly became friends."),
    # the feeling asked for is in the words right after the event, in the same long turn
    g("transcript", "How did Mei feel when someone wrote her a letter after reading her blog post?", "touched",
      "Mei: A letter from a reader always makes me happy, honestly.\nJon: How is the blog going?\nMei: Busy! Last "
      "week someone wrote me a letter after reading my blog post about the move across the country with the kids "
      "and the dog. Their words touched me. The rest of the week was long, with the boxes, the painting of the "
      "hallway, the broken washing machine and the new school for the kids."),
    # a question tag ("..., right?") asks only for agreement: the sentence states what it says
    g("transcript", "What do sunflowers mean to Mei?", "warmth and happiness",
      "Mei: Love the blue vase in the picture! Blue is my favourite colour. Sunflowers mean warmth and happiness, "
      "right? I wish I had known you back then!\nJon: Roses stand for love, I think."),
    # "It's a masterpiece on wheels" is about whom the words before it are: Calvin, who got the Ferrari
    g("transcript", "What did Calvin recently get that is a masterpiece on wheels?", "Ferrari",
      "Dave: Keep going, you got this!\nCalvin: Thanks, Dave! You know what? Last week I got a new Ferrari! It's a "
      "masterpiece on wheels. Excited for the road trips!\nDave: I got my own masterpiece on wheels last year, an "
      "old van I restored."),
    # "a long day" is a kind of day, not a duration: the statement that has one answers "how long"
    Gold("note", ("Playing board games with my partner after a long day is how Ana relaxes.",
                  "Ana and her partner are not married yet, but they have been together for three years."),
         "How long have Ana and her partner been together?", "three years", absent=("board games",)),
    # the words that match best are Calvin's question: Dave's reply to it is the answer
    g("transcript", "What is the toughest part of car restoration according to Dave?", "attention to detail",
      "Calvin: Cool! Been wanting to try that. What would you say is the toughest part of car restoration, Dave?\n"
      "Dave: It takes a lot of patience, but the payoff is worth it. Paying extra attention to detail isn't easy, "
      "but it pays off.\nCalvin: Nice.",
      "Dave: I work on all kinds of cars at the shop, from maintenance to full restorations."),
]

GOLD: list[Gold] = (CONVERSATIONS + NOTES + PDFS + OCR + TRANSCRIPTS + MARKDOWN + NOTHING + ANSWERED + GATHERED
                    + UPDATES + GLOSSES + MODALITIES + MORE)
