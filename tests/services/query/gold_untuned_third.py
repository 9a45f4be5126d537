"""A third set of person-swap and changed-detail cases, written before the answerer read who did what in a sentence
and never tuned on: scored once before that change and once after, both scores are in docs/answers.md.

A person swap here is of the kinds LoCoMo's category 5 still got through: the asked person replies to or comments
on what the other did, naming the same thing ("Berlin is lovely in spring!"), asks the other about it, or is given
advice ("You should try yoga").  A changed detail asks of the right person with one detail swapped: another
place, relative, kind of event or thing, or the opposite ("least favourite").  The cases where the named person
did say it check that the answer still quotes them."""

from __future__ import annotations

from tests.services.query.gold_answers import Gold
from tests.services.query.gold_near_misses import found, near

_BERLIN = ("Priya: How was the conference?\nTom: Great, I flew to Berlin for it and gave my talk on Friday.\n"
           "Priya: Berlin is lovely in spring!")
_BEDROOM = "Ana: We painted our bedroom sage green last week.\nKofi: Sage green is such a calming colour for a bedroom!"
_HAMSTER = "Omar: We got the kids a hamster called Nibbles.\nLena: Kids love hamsters! Nibbles is a great name."
_LIDO = "Tom: Do you still swim in the mornings?\nRita: Yes, at the lido on Brook Road, every day at seven."
_BACK = "Sam: My back is killing me after the move.\nInes: You should try yoga, it fixed my back pain in a month."
_QUIT = "Hugo: I heard you quit your job!\nMaya: Yes, I quit because the commute was three hours a day."
_BAKE_OFF = "Zoe: Congrats on the bake-off!\nNina: Thanks! I won first prize for my cherry pie."
_ROME = "Lucia: In Rome I saw the Colosseum at sunset.\nMark: Wow, that must have been magical."
_SCARF = "Omar: I bought my mom a silk scarf for her birthday.\nJade: She must have loved it."
_FOOD = "Kira: My favourite food is Thai green curry, the spicier the better.\nLuis: Same here!"
_PUPPY = "Leo: We named the new puppy Biscuit.\nAmy: Biscuit is adorable!"

THIRD_UNTUNED: list[Gold] = [
    # the asked person replies to, comments on or asks about what the other did
    near("transcript", "Which city did Priya fly to for the conference?", "Priya", _BERLIN, family="person"),
    near("transcript", "What colour did Kofi paint his bedroom?", "Kofi", _BEDROOM, family="person"),
    near("transcript", "What pet did Lena get for her kids?", "Lena", _HAMSTER, family="person"),
    near("transcript", "Where does Tom swim in the mornings?", "Tom", _LIDO, family="person"),
    near("transcript", "Why did Hugo quit his job?", "Hugo", _QUIT, family="person"),
    near("transcript", "What did Zoe win at the bake-off?", "Zoe", _BAKE_OFF, family="person"),
    near("transcript", "How did Ethan feel about starting his new job?", "Ethan",
         "Ethan: You must be so happy about your new job!\nClara: I am, I feel excited and a bit nervous about "
         "starting.", family="person"),
    near("transcript", "What did Ivy's daughter draw at school?", "Ivy",
         "Ivy: How's your daughter?\nCarl: My daughter drew a dragon at school today!\nIvy: A dragon! How fun.",
         family="person"),
    near("transcript", "Which piece is Ayla learning on the piano?", "Ayla",
         "Ayla: How are the piano lessons going?\nJude: Slowly! I'm learning a Chopin nocturne on the piano.",
         family="person"),
    # ...or is given advice, worded with "you"
    near("transcript", "What does Sam do for his back pain?", "Sam", _BACK, family="person"),
    near("transcript", "What does Leon read before bed to help him sleep?", "Leon",
         "Leon: I can't sleep lately.\nMara: You should read a paper book before bed instead of scrolling, "
         "it helps me sleep.", family="person"),
    # ...and the one who did say it is answered
    found("transcript", "Which city did Tom fly to for the conference?", "Berlin", _BERLIN, family="person"),
    found("transcript", "What colour did Ana paint her bedroom?", "sage green", _BEDROOM, family="person"),
    found("transcript", "What pet did Omar get for his kids?", "hamster", _HAMSTER, family="person"),
    found("transcript", "Where does Rita swim in the mornings?", "lido", _LIDO, family="person"),
    found("transcript", "Why did Maya quit her job?", "commute", _QUIT, family="person"),
    found("transcript", "What did Nina win at the bake-off?", "first prize", _BAKE_OFF, family="person"),
    found("transcript", "What does Ines recommend for back pain?", "yoga", _BACK, family="person"),
    # the right person, one detail changed: a place, a relative, an event, a thing, the opposite
    near("transcript", "What did Lucia see in Lisbon?", "Lisbon", _ROME),
    near("transcript", "What did Omar buy for his father's birthday?", "father", _SCARF),
    near("transcript", "What is Kira's least favourite food?", "least", _FOOD),
    near("transcript", "What did Leo name his new kitten?", "kitten", _PUPPY),
    near("transcript", "What did Dan bring to the wedding?", "wedding",
         "Dan: I brought a huge lasagna to the potluck.\nEmma: Everyone went back for seconds!"),
    near("transcript", "Which museum did Sara visit in Paris?", "Paris",
         "Sara: In Madrid I spent a whole day at the Prado.\nNoah: I'd love to go one day."),
    near("transcript", "What did Pia's sister give her for her birthday?", "sister",
         "Pia: My brother gave me a record player for my birthday!\nRaj: That's so cool, vinyl sounds great."),
    near("transcript", "How did Mina celebrate her graduation?", "graduation",
         "Mina: We celebrated my promotion with a dinner at the harbour.\nOlly: You deserved it!"),
    # ...and the detail as said is answered
    found("transcript", "What did Lucia see in Rome?", "Colosseum", _ROME, family="near"),
    found("transcript", "What did Omar buy for his mom?", "silk scarf", _SCARF, family="near"),
    found("transcript", "What is Kira's favourite food?", "Thai green curry", _FOOD, family="near"),
    found("transcript", "What did Leo name his new puppy?", "Biscuit", _PUPPY, family="near"),
]
