"""Gold cases for extractive answers: passages as the sources would hold them, a question, and the
fact the answer must quote.

The passages are what each kind of capture really gives the answerer: notes as typed, PDF text
with its reflowed (sometimes still hard-wrapped) lines, OCR text whose short lines stay apart,
and transcripts (speech windows cut between sentences, chat turns with speakers).  The relevant
passage is not always the first, and most cases have a distractor that shares the question's words.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Gold:
    kind: str  # note, pdf, ocr, transcript
    passages: tuple[str, ...]
    question: str
    fact: str

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

GOLD: list[Gold] = NOTES + PDFS + OCR + TRANSCRIPTS
