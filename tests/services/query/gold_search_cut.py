"""Which sources a source search should list: a labelled set for the relevance cut of ``GET /v1/search``.

``NOTES`` are a person's notes.  Each query names the notes it is about (listed first, or at least listed), or none:
then nothing is about it, and the search must say "Nothing matches".  ``TUNING`` was written before the cut
existed and the cut was chosen on it; ``UNTUNED`` was written afterwards and scored once, as it came (both figures
are in docs/reminders-and-search.md).
"""

from __future__ import annotations

NOTES: dict[str, str] = {
    "Dentist": "Dentist appointment with Dr Okafor on Thursday at 9:30; the crown on the lower left molar.",
    "Car service": "The car is booked in at the Renault garage for its annual service and a new set of brake pads.",
    "Sourdough": "Sourdough recipe: 500 g flour, 350 g water, 100 g starter, 10 g salt; fold four times, "
                 "bake covered at 250 degrees.",
    "Passport": "My passport expires in March 2027; the renewal form needs two photos and the old passport.",
    "Wifi": "The guest wifi network is Larkspur-Guest and its password is on the fridge.",
    "Book club": "Book club picked Piranesi by Susanna Clarke for next month; meeting at Hannah's flat.",
    "Running": "Ran 10 km along the canal in 52 minutes; the left knee felt fine afterwards.",
    "Tax return": "Tax return: the self-assessment deadline is 31 January; gather the P60 and the pension statements.",
    "Plumber": "The plumber fixed the leaking pipe under the kitchen sink; the bill was 180 pounds.",
    "Gift ideas": "Gift ideas for Mum's birthday: a silk scarf, the new Ottolenghi cookbook, tickets to Kew Gardens.",
    "Meeting notes": "Quarterly planning: the mobile app launch moves to May; Priya owns the marketing plan.",
    "Insurance": "Home insurance renews on 3 April with Aviva; the premium went up to 412 pounds a year.",
    "Garden": "Plant the tomato seedlings after the last frost; the raspberries need netting against birds.",
    "Vet": "The cat, Miso, is due her vaccination booster at the vet in June.",
    "Recipe curry": "Chickpea curry: onions, garlic, ginger, a tin of tomatoes, coconut milk and garam masala.",
    "Holiday": "Holiday in Lisbon: flights booked with TAP for 12 to 19 August; hotel in Alfama.",
    "Bike": "The bicycle's rear tyre has a slow puncture; buy a new inner tube, 700x28.",
    "Podcast": "Podcast worth hearing: the episode of Hidden Brain on habits and willpower.",
    "Landlord": "The landlord will replace the broken boiler next week; the engineer comes on Tuesday morning.",
    "Pension": "Pension: moved the old workplace pension into the SIPP; fees are 0.15 percent.",
    "Language": "Spanish lessons every Wednesday evening; practise the subjunctive and irregular past tenses.",
    "Wedding": "Tom and Aisha's wedding on 6 September in Bath; the dress code is black tie.",
    "Electricity": "Electricity meter reading 04512 sent to Octopus Energy on the first of the month.",
    "Doctor": "GP said the blood test results are normal; vitamin D slightly low, take a supplement in winter.",
    "Shopping": "Shopping list: oat milk, eggs, spinach, lemons, coffee beans and dishwasher tablets.",
    "Film": "Watched Past Lives; the ending in the street stayed with me for days.",
    "Password manager": "Moved every login into Bitwarden; the recovery codes are printed in the blue folder.",
    "Moving house": "Removal company quoted 950 pounds to move from Leeds to York on the 28th.",
    "School": "Parents' evening at Oak Lane Primary on 14 November; Leo's reading has improved a lot.",
    "Guitar": "Guitar practice: the F barre chord still buzzes; try the capo on the third fret for the song.",
    "Receipt": "Receipt from the hardware shop: a drill, wall plugs and screws, 64 pounds.",
    "Climbing": "Bouldering at the Arch on Saturday with Sam; finished my first V4.",
}

# (query, the notes it is about); no notes: nothing matches.
Query = tuple[str, tuple[str, ...]]

TUNING: list[Query] = [
    ("dentist", ("Dentist",)),
    ("when is my crown appointment", ("Dentist",)),
    ("car service booking", ("Car service",)),
    ("bread recipe", ("Sourdough",)),
    ("passport renewal", ("Passport",)),
    ("wifi password", ("Wifi",)),
    ("which book is the book club reading", ("Book club",)),
    ("my running time along the canal", ("Running",)),
    ("tax deadline", ("Tax return",)),
    ("leaking sink", ("Plumber",)),
    ("present for my mother", ("Gift ideas",)),
    ("who owns the marketing plan", ("Meeting notes",)),
    ("cat vaccination", ("Vet",)),
    ("trip to Portugal", ("Holiday",)),
    ("bike puncture", ("Bike",)),
    ("boiler repair", ("Landlord",)),
    ("wedding dress code", ("Wedding",)),
    ("blood test results", ("Doctor",)),
    ("Bitwarden", ("Password manager",)),
    ("removal quote", ("Moving house",)),
    ("quantum chromodynamics lecture", ()),
    ("skiing in the Alps", ()),
    ("mortgage interest rate", ()),
    ("Kubernetes cluster upgrade", ()),
    ("volcano eruption in Iceland", ()),
    ("my grandfather's war medals", ()),
    ("chess opening repertoire", ()),
    ("solar panel installation", ()),
    ("Zanzibar", ()),
    ("knitting pattern for a jumper", ()),
    ("parking fine appeal", ()),
    ("piano tuning", ()),
]

# Written after the cut was chosen on TUNING, and scored once as it came.
UNTUNED: list[Query] = [
    ("Okafor", ("Dentist",)),
    ("brake pads", ("Car service",)),
    ("how much flour for the loaf", ("Sourdough",)),
    ("travel documents expiring", ("Passport",)),
    ("Piranesi", ("Book club",)),
    ("knee pain after a run", ("Running",)),
    ("P60", ("Tax return",)),
    ("what did the plumber charge", ("Plumber",)),
    ("cookbook", ("Gift ideas",)),
    ("app launch date", ("Meeting notes",)),
    ("Aviva premium", ("Insurance",)),
    ("protect the raspberries", ("Garden",)),
    ("vegetarian dinner with coconut milk", ("Recipe curry",)),
    ("flights to Lisbon", ("Holiday",)),
    ("heating engineer visit", ("Landlord",)),
    ("learning Spanish", ("Language",)),
    ("vitamin supplement", ("Doctor",)),
    ("things to buy at the supermarket", ("Shopping",)),
    ("Leo's school report", ("School",)),
    ("bouldering grade", ("Climbing",)),
    ("orthodontist braces", ()),
    ("rent increase letter", ()),
    ("marathon training plan", ()),
    ("dog grooming", ()),
    ("gas bill dispute", ()),
    ("sushi restaurant recommendation", ()),
    ("broken laptop screen", ()),
    ("salsa dancing class", ()),
    ("jury service summons", ()),
    ("Berlin conference hotel", ()),
    ("lost my keys", ()),
    ("baby shower gift", ()),
]
