"""List questions whose sources also name near items.  ``LISTS_TUNING`` was written before the answerer told a
list's members from them (0 of 12 right then) and the change was measured on it; ``LISTS_AFTER`` was written after
the change and scored once (docs/answers.md has the scores).

An item belongs to the list when its source says the asked thing of it as done (read, planted, met); what is only
wanted, planned, advised, denied or still to come is left out or shown apart, after "Also mentioned"."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold


def listed(question: str, items: tuple[str, ...], outside: tuple[str, ...], *passages: str) -> Gold:
    times = tuple(f"2026-{m:02d}-0{d}T19:00:00Z" for m, d in zip(range(3, 3 + len(passages)), range(1, 10),
                                                                   strict=False))
    return Gold("note", passages, question, items[0], order=items, times=times, family="members", apart=outside)


LISTS_TUNING = [
    listed("Which novels did I read this year?", ("Klara and the Sun", "Tomorrow"), ("Babel",),
           "Read Klara and the Sun on the train.", "Hope to read Babel over the summer.",
           "Read Tomorrow, and Tomorrow, and Tomorrow in two sittings."),
    listed("What did I plant in the allotment?", ("garlic",), ("asparagus",),
           "Planted garlic in the allotment, two rows.", "Should plant asparagus in the allotment next spring."),
    listed("Which restaurants did we try in Lyon?", ("Le Bouchon",), ("Paul Bocuse",),
           "Lyon: tried Le Bouchon des Filles, superb quenelles.",
           "Lyon: we didn't try Paul Bocuse, far too expensive."),
    listed("Who did I meet at the conference?", ("Dr Ahmed",), ("Lucy Park",),
           "Met Dr Ahmed at the conference, she works on soil carbon.",
           "Was going to meet Lucy Park at the conference but she cancelled."),
    listed("Which hikes did I do in Scotland?", ("Ben Nevis", "Arthur's Seat"), ("the Cuillin",),
           "Scotland: hiked Ben Nevis in the rain.", "Scotland: would like to hike the Cuillin some day.",
           "Scotland: hiked Arthur's Seat at sunrise."),
    listed("What did I cook for the dinner party?", ("risotto",), ("tiramisu",),
           "Cooked a mushroom risotto for the dinner party.",
           "Meant to cook tiramisu for the dinner party, ran out of time."),
    listed("Which courses did I finish?", ("Spanish A1",), ("the pottery course",),
           "Finished the Spanish A1 course with a distinction.", "Never finished the pottery course."),
    listed("Which concerts did I attend this year?", ("Arctic Monkeys", "Nils Frahm"), ("Bjork",),
           "Attended the Arctic Monkeys concert at Wembley.", "Will attend the Bjork concert in December.",
           "Attended Nils Frahm at the Barbican."),
    listed("What did I buy at the market?", ("honey",), ("cheese",),
           "Bought local honey at the market.", "Forgot to buy cheese at the market."),
    listed("Which films did I watch this year?", ("Anora", "Conclave"), ("The Brutalist",),
           "Watched Anora at the Rio.", "Want to watch The Brutalist when it is out.", "Watched Conclave with Mum."),
    listed("Which friends did I visit in Bristol?", ("Hannah",), ("Joe",),
           "Visited Hannah in Bristol, lovely flat.", "Couldn't visit Joe in Bristol, he was away."),
    listed("What did I fix in the house?", ("the leaking tap",), ("the fence",),
           "Fixed the leaking tap in the house.", "Need to fix the fence behind the house before winter."),
]

# Written after the change (the set above was its tuning), scored once.
LISTS_AFTER = [
    listed("Which podcasts did I listen to last month?", ("Radiolab",), ("Serial",),
           "Listened to two episodes of Radiolab on the bus.", "Must listen to Serial, everyone recommends it."),
    listed("Which plays did we see in London?", ("The Mousetrap",), ("Hamlet",),
           "London: saw The Mousetrap, guessed the killer wrong.", "London: we could not see Hamlet, sold out."),
    listed("What did I paint this year?", ("the garden shed",), ("the kitchen",),
           "Painted the garden shed dark green.", "Planning to paint the kitchen in spring."),
    listed("Which hotels did we stay at in Italy?", ("Hotel Flora", "Villa Rosa"), ("the Danieli",),
           "Italy: stayed at Hotel Flora in Rome.", "Italy: would have stayed at the Danieli if it were cheaper.",
           "Italy: stayed at Villa Rosa near Siena."),
    listed("Who did I call on Sunday?", ("Grandma",), ("Uncle Ray",),
           "Called Grandma, she sounded well.", "Forgot to call Uncle Ray about the boiler."),
    listed("Which apps did I delete?", ("Instagram",), ("TikTok",),
           "Deleted Instagram from my phone.", "Should delete TikTok too."),
    listed("What did I sell on eBay?", ("the old bike",), ("the sofa",),
           "Sold the old bike on eBay for £60.", "Tried to sell the sofa on eBay, no luck."),
    listed("Which languages did I practise this week?", ("French", "German"), ("Italian",),
           "Practised French for twenty minutes.", "Didn't practise Italian at all.",
           "Practised German with Hans."),
    listed("Which recipes did I bake?", ("banana bread",), ("sourdough",),
           "Baked banana bread with the kids.", "Going to bake sourdough once the starter is ready."),
    listed("Which teams did I play against?", ("the Hawks",), ("the Lions",),
           "Played against the Hawks, lost 2-1.", "We will play against the Lions next Saturday."),
]
