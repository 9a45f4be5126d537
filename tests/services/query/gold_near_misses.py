"""Near misses, counts, repeated events, weekdays still to come, structured text and lists of members: gold
cases written before the answerer learnt them (their first score is in docs/answers.md).

A near miss is a question whose answer is not in the sources while something near it is: the same place, person
or kind of thing with another detail ("the hotel in Porto" over the flights to Porto), the same thing narrowed
otherwise ("the back door code" over the front door's), or the thing itself without the kind of fact asked (the
tyres with no price).  The answer must say first what it did not find.  The other side is here too: a true
synonym ("bike" for "bicycle") or a fact of the kind asked in other words ("£20" for "money") is found.
"""

from __future__ import annotations

from tests.services.query.gold_answers import Gold

# Times used below (UTC): Tuesday 17 November 2026 is the default capture time of the gold suite.
THU_19_NOV = "2026-11-19T10:00:00Z"
FRI_20_NOV = "2026-11-20T10:00:00Z"
TUE_17_NOV = "2026-11-17T08:00:00Z"


def near(kind: str, question: str, missing: str, *passages: str, family: str = "near") -> Gold:
    """Nothing answers it, though something near it is there: "not found", naming ``missing``."""
    return Gold(kind, passages, question, "", found=False, family=family, missing=missing)


def found(kind: str, question: str, fact: str, *passages: str, family: str = "kind",
          absent: tuple[str, ...] = ()) -> Gold:
    return Gold(kind, passages, question, fact, absent, family=family)


def count(question: str, n: int, items: tuple[str, ...], passages: tuple[str, ...], times: tuple[str, ...], *,
          absent: tuple[str, ...] = ()) -> Gold:
    """Repeated events counted: the number first, then each event in time order."""
    return Gold("note", passages, question, items[0], ("earlier", *absent), order=items, times=times,
                family="count", count=n)


def coming(question: str, fact: str, passage: str, at: str, wrong: str) -> Gold:
    """A weekday or relative day, glossed with the date it stands for from when it was said."""
    return Gold("note", (passage,), question, fact, (wrong,), times=(at,), family="coming")


def members(question: str, items: tuple[str, ...], outside: tuple[str, ...], passages: tuple[str, ...],
            times: tuple[str, ...]) -> Gold:
    """A list of only what the sources say the asked thing of; ``outside`` is absent or shown apart."""
    return Gold("note", passages, question, items[0], order=items, times=times, family="members", apart=outside)


NEAR = [
    near("note", "How much was the hotel in Porto?", "hotel", "Flights to Porto cost 184 pounds return."),
    near("note", "When does the train to Leeds leave?", "train", "The bus to Leeds leaves at 7:10 from stop K."),
    near("note", "What is Sam's email address?", "email", "Sam's phone number is 07700 900123."),
    near("note", "Where did I put the passport?", "passport", "The spare car key is in the kitchen drawer."),
    near("note", "When is Leo's school play?", "school play", "Leo's football match is on Saturday at 10."),
    near("pdf", "What is the excess on the travel insurance?", "travel",
         "Home insurance policy HX-2231. The excess is £250 per claim."),
    near("transcript", "What did Priya say about the marketing budget?", "marketing",
         "Priya: The hiring budget is 40,000 for next year.\nSam: Fine by me."),
    near("note", "How much did the dog's vet visit cost?", "dog",
         "The cat's vet visit cost £65, vaccinations included."),
    near("ocr", "What is the price of the oat milk?", "oat milk", "CORNER SHOP\nBread 1.20\nEggs 2.35\nTOTAL 3.55"),
    near("note", "Who is my landlord?", "landlord", "My letting agent is Harbour Lets, contact Jane Moss."),
    near("note", "What time is Mia's swimming lesson?", "swimming",
         "Mia's piano lesson is on Wednesdays at 16:30."),
    near("note", "How much did the hotel in Lisbon cost?", "Lisbon", "Hotel in Porto: 3 nights, 420 euros."),
    near("transcript", "What did Jon buy for his daughter's birthday?", "Jon",
         "Mei: I bought my daughter a telescope for her birthday.\nJon: That's lovely!"),
    near("transcript", "Where did Mei go hiking last month?", "Mei",
         "Jon: Last month I went hiking in the Lake District.\nMei: Sounds great!"),
]

NARROWED = [
    near("note", "What is the back door code?", "back door", "Front door code: 4812.", family="narrow"),
    near("note", "When is my physiotherapy appointment?", "physiotherapy", "Dentist appointment on Friday at 9:40.",
         family="narrow"),
    near("note", "What is the wifi password for the guest network?", "guest", "Home wifi password: maple-cloud-77.",
         family="narrow"),
    near("note", "When is the bin collection for garden waste?", "garden",
         "General waste is collected every Tuesday.", family="narrow"),
    near("note", "What is the PIN of my work phone?", "work", "PIN of my personal phone: 2580.", family="narrow"),
    near("note", "How much is the late checkout fee?", "late", "Early check-in fee: 25 euros.", family="narrow"),
    near("note", "What is my mother's blood type?", "mother", "My blood type is O negative.", family="narrow"),
    near("note", "When is the second vaccine dose due?", "second", "First vaccine dose given on 3 March.",
         family="narrow"),
]

KINDS = [
    found("note", "How much money did I give Priya?", "£20", "Gave Priya £20 for the taxi home.",
          absent=("could not find",)),
    found("note", "What did I pay for the haircut?", "18 quid", "Haircut at Barber Joe's, 18 quid."),
    near("note", "How much did the new tyres cost?", "tyres", "New tyres fitted at Kwik Fit on Saturday.",
         family="kind"),
    found("note", "When is Anna's wedding?", "12 June", "Anna's wedding is on 12 June in Sintra."),
    near("note", "When is the boiler service?", "boiler", "The boiler service is booked with Dan's Heating.",
         family="kind"),
    found("note", "Who fixed the roof?", "Marek", "The roof was fixed by Marek from Apex Roofing."),
    near("note", "Who is coming to fix the washing machine?", "washing machine",
         "The washing machine broke again, water everywhere.", family="kind"),
    found("note", "Where is the spare tent?", "loft", "The spare tent is in the loft, behind the suitcases."),
    near("note", "Where is the team dinner?", "team dinner", "The team dinner is on Thursday at 19:30.",
         family="kind"),
    found("note", "What is the locker code at the gym?", "5521", "Gym locker code is 5521."),
    near("note", "What is the alarm code?", "alarm", "The alarm was installed by SecureHome on Monday.",
         family="kind"),
    found("note", "How many guests are coming to the wedding?", "86",
          "Wedding: 86 guests confirmed, 4 still to reply."),
    found("note", "How much is the gym membership?", "forty pounds", "Gym membership: forty pounds a month."),
    near("ocr", "What time does the pharmacy close on Sunday?", "Sunday",
         "CITY PHARMACY\nMon-Fri 8:00 - 19:00\nSat 9:00 - 13:00", family="kind"),
]

COUNTS = [
    count("How many times did I run in October?", 3, ("Victoria Park", "26 minutes", "canal"),
          ("Ran 5k in Victoria Park.", "Ran 5k again, 26 minutes.", "Easy 5k run along the canal."),
          ("2026-10-04T08:00:00Z", "2026-10-11T08:00:00Z", "2026-10-25T08:00:00Z")),
    count("How many times did I go swimming in November?", 3, ("lido", "Tom", "50 lengths"),
          ("Swim at the lido, 40 lengths.", "Went swimming with Tom before work.", "Swimming again, 50 lengths!"),
          ("2026-11-02T07:00:00Z", "2026-11-09T07:00:00Z", "2026-11-16T07:00:00Z")),
    count("How often did I go to the gym this month?", 2, ("legs and core", "Ana"),
          ("Gym: legs and core.", "Gym session with Ana."),
          ("2026-11-03T18:00:00Z", "2026-11-10T18:00:00Z")),
    count("How many books did I finish this year?", 2, ("Piranesi", "The Overstory"),
          ("Finished Piranesi.", "Finished The Overstory, wonderful."),
          ("2026-02-10T20:00:00Z", "2026-05-18T20:00:00Z")),
    count("How many times did I see the physio?", 2, ("knee exercises", "less pain"),
          ("Physio session: knee exercises.", "Physio again, less pain.", "Dentist check-up, all fine."),
          ("2026-11-03T09:00:00Z", "2026-11-10T09:00:00Z", "2026-11-12T09:00:00Z"), absent=("Dentist",)),
    count("How many times did we visit Grandma in October?", 2, ("soup", "the kids"),
          ("Visited Grandma, she made soup.", "Visited Grandma with the kids."),
          ("2026-10-05T15:00:00Z", "2026-10-19T15:00:00Z")),
    # two notes of one morning's race are one run
    count("How many times did I run in September?", 2, ("Richmond 10k", "club"),
          ("Ran the Richmond 10k this morning, 52 minutes.", "Still buzzing from the 10k run this morning.",
           "Ran 5k with the club."),
          ("2026-09-13T09:00:00Z", "2026-09-13T15:00:00Z", "2026-09-20T09:00:00Z")),
    found("note", "How many kids does Ana have?", "three kids", "Ana has three kids: Leo, Mia and Sam.",
          family="count"),
]

EVENTS = [
    # separate events are not an old and a new value of one fact
    Gold("note", ("Went swimming at the lido.", "Went swimming with Tom before work."), "When did I go swimming?",
         "November 2, 2026", ("earlier",), order=("November 2, 2026", "November 9, 2026"),
         times=("2026-11-02T07:00:00Z", "2026-11-09T07:00:00Z"), family="events"),
    Gold("note", ("Taxi to the airport, £38.", "Taxi home from the station, £12."), "What did I pay for the taxi?",
         "£38", ("earlier",), order=("£38", "£12"), times=("2026-11-03T07:00:00Z", "2026-11-10T22:00:00Z"),
         family="events"),
    # ...but a changed place is an update
    Gold("note", ("Book club meets at Anna's flat.", "Book club moved to the library café."),
         "Where is the book club?", "library café", order=("library café", "earlier", "Anna's flat"),
         times=("2026-10-01T08:00:00Z", "2026-11-05T08:00:00Z"), family="update"),
]

COMING = [
    coming("When can the electrician come?", "November 23, 2026",
           "The electrician can come on Monday to fix the kitchen lights.", THU_19_NOV, "November 16"),
    coming("When is the piano tuner coming?", "November 20, 2026", "The piano tuner is coming on Friday morning.",
           TUE_17_NOV, "November 13"),
    coming("When do I meet Sara for lunch?", "November 19, 2026", "Lunch with Sara on Thursday at Dishoom.",
           TUE_17_NOV, "November 12"),
    coming("When is the parcel arriving?", "November 25, 2026", "The parcel should arrive on Wednesday.",
           THU_19_NOV, "November 18"),
    coming("When can we go to the car boot sale?", "November 22, 2026",
           "We can go to the car boot sale on Sunday.", FRI_20_NOV, "November 15"),
    coming("When does Tom fly back?", "November 24, 2026", "Tom flies back next Tuesday.", THU_19_NOV,
           "November 17"),
    # a sentence about what was: the one gone
    coming("When did I go to the market?", "November 14, 2026",
           "Went to the farmers' market on Saturday, bought plums.", TUE_17_NOV, "November 21"),
]

RECEIPT = "BLUE HERON CAFE\n21 Nov 2026 12:41\nFlat white 3.40\nAvocado toast 9.80\nCroissant 1.40\nTOTAL GBP 14.60\n" \
          "Card ****1234"
DECKING = """# Decking

| Item | Cost |
|---|---|
| cedar boards | £186 |
| screws | £14 |
| stain | £32 |
"""
BINS = """# Bins

| Bin | Day |
|---|---|
| Recycling | Tuesday |
| Garden | Friday |
"""
HOTEL = """# Porto weekend

## Hotel

- Check-in: 15:00
- Check-out: 11:00
"""

STRUCTURE = [
    found("ocr", "How much did I spend at the Blue Heron cafe?", "TOTAL GBP 14.60", RECEIPT, family="structure",
          absent=("12:41",)),
    found("ocr", "What did the taxi cost?", "14.00",
          "CITY CABS\nReceipt no. 4471\nFrom: Station\nTo: Elm Road\nFare GBP 12.40\nTip 1.60\nTotal GBP 14.00",
          family="structure", absent=("Elm Road",)),
    found("ocr", "How much was the croissant?", "Croissant 1.40", "BAKERY\nCroissant 1.40\nCoffee 2.80\nTOTAL 4.20",
          family="structure", absent=("Coffee",)),
    Gold("markdown", (DECKING,), "How much were the cedar boards?", "cedar boards: £186", ("|",), family="structure"),
    Gold("markdown", (BINS,), "Which day is the recycling collected?", "Recycling: Tuesday", ("|", "Garden"),
         family="structure"),
    Gold("markdown", (HOTEL,), "What time is check-in at the hotel?", "Check-in: 15:00", (",:", "Check-out"),
         family="structure"),
    found("note", "When are the bins collected?", "every Tuesday", "Bins are collected every Tuesday night.",
          family="structure", absent=("recorded",)),
    found("ocr", "What is the wifi password in the flat?", "blue-fox-19",
          "FLAT 3B\nWifi: FlatNet\nPassword: blue-fox-19", family="structure", absent=("recorded", ",:")),
]

MEMBERS = [
    members("Which books did I finish this year?", ("Piranesi", "The Overstory"), ("Middlemarch",),
            ("Finished Piranesi.", "Started Middlemarch, slow going.", "Finished The Overstory."),
            ("2026-02-10T20:00:00Z", "2026-03-10T20:00:00Z", "2026-05-18T20:00:00Z")),
    members("Which countries did I visit this year?", ("Portugal", "Norway"), ("Japan",),
            ("Visited Portugal: Lisbon and Sintra.", "Would love to visit Japan one day.",
             "Visited Norway for a week, fjords!"),
            ("2026-04-10T20:00:00Z", "2026-06-10T20:00:00Z", "2026-08-18T20:00:00Z")),
    members("What did I buy for the garden?", ("rake",), ("hose",),
            ("Bought a rake and compost for the garden.", "Need to buy a hose for the garden."),
            ("2026-04-10T20:00:00Z", "2026-04-12T20:00:00Z")),
    members("Who came to the barbecue?", ("Ana and Tom",), ("Priya",),
            ("Ana and Tom came to the barbecue.", "Priya couldn't come to the barbecue, she was ill."),
            ("2026-07-10T20:00:00Z", "2026-07-10T21:00:00Z")),
    members("Which films did I watch this month?", ("Dune Part Two", "Aftersun"), ("Past Lives",),
            ("Watched Dune Part Two with Leo.", "Want to watch Past Lives.", "Watched Aftersun, so sad."),
            ("2026-11-03T20:00:00Z", "2026-11-08T20:00:00Z", "2026-11-12T20:00:00Z")),
    members("Which museums did I visit in Vienna?", ("Belvedere", "Leopold Museum"), ("Albertina",),
            ("Vienna: visited the Belvedere.", "Vienna: the Albertina was closed, so we skipped it.",
             "Vienna: visited the Leopold Museum."),
            ("2026-04-10T17:00:00Z", "2026-04-11T17:00:00Z", "2026-04-12T12:00:00Z")),
]

SYNONYMS = [
    found("note", "How much did the bicycle cost?", "£140", "Bought a second-hand bike for £140.",
          family="synonym"),
    found("note", "When is Mum's birthday?", "4 March", "Mom's birthday is on 4 March.", family="synonym"),
    found("note", "How much were the movie tickets?", "£24", "Film tickets for Friday: £24.", family="synonym"),
    found("note", "Where is the sofa being delivered?", "Mum's house", "The couch will be delivered to Mum's house.",
          family="synonym"),
    found("note", "How much did the car repair cost?", "£310", "The auto repair came to £310.", family="synonym"),
]

NEAR_MISSES: list[Gold] = NEAR + NARROWED + KINDS + COUNTS + EVENTS + COMING + STRUCTURE + MEMBERS + SYNONYMS
