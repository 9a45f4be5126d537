"""How a question is read (services.query.question): whether it asks what was done, with "did", and which of the
events it wants; what it is about when the tagger reads its verb as a noun or an adjective."""

from __future__ import annotations

import pytest

from secondbrain.sparse import Bm25Encoder
from services.query.lemmas import Lemmas
from services.query.question import understand

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(("question", "recalls"), [
    ("When did I go swimming?", "each"),
    ("What did I pay for the taxi?", "each"),
    ("How much did the vet charge for Milo?", "each"),  # "charge" tagged a noun
    ("When did I last get a haircut?", "last"),
    ("When was the last time I went swimming?", "last"),
    ("When did I most recently see the dentist?", "last"),
    ("When did I first meet Tom?", "first"),
    ("When did I go swimming last week?", "each"),  # "last week" is the time asked about
    ("Where did I park the car?", ""),  # where it is now
    ("When is the standup?", ""),  # a fact, which may have changed
    ("Did I go swimming?", ""),
    ("When did I go swimming again?", ""),  # asked again
    ("Which books did I finish?", ""),  # a list
    ("How did the interview go?", ""),  # "how", not "how much": not a record of events
])
def test_what_was_done_and_which_time(question: str, recalls: str) -> None:
    assert understand(question, Lemmas(Bm25Encoder())).recalls == recalls


@pytest.mark.parametrize(("question", "things"), [
    ("What time does the swimming pool close?", ("swimming", "pool")),  # "close" read as an adjective
    ("Which platform does the train leave from?", ("train",)),  # "leave" read as a noun is the verb
])
def test_what_it_is_about_when_the_verb_is_tagged_otherwise(question: str, things: tuple[str, ...]) -> None:
    assert understand(question, Lemmas(Bm25Encoder())).things == things


@pytest.mark.parametrize(("question", "kind"), [
    ("How many books did I finish this year?", "books"), ("how many Countries have we been to?", "Countries"),
    ("How many times did I run?", ""), ("How many cups of coffee did I drink?", ""), ("Which books did I read?", ""),
])
def test_the_kind_of_named_thing_counted(question: str, kind: str) -> None:
    assert understand(question, Lemmas(Bm25Encoder())).counted == kind


@pytest.mark.parametrize(("question", "person"), [
    ("What is the name of the electrician?", True), ("What's the plumber's name?", True),
    ("What is the name of the restaurant?", False), ("What's the dog's name?", False),
])
def test_the_name_of_someone_known_by_what_they_are_asks_for_a_person(question: str, person: bool) -> None:
    assert ("person" in understand(question, Lemmas(Bm25Encoder())).facts) is person


def test_a_noun_the_tagger_reads_as_an_adjective_before_a_noun_narrows_it_as_a_noun() -> None:
    """"optician" in "the optician appointment" (WordNet knows it only as a noun): which appointment, not a quality."""
    (phrase,) = understand("When is the optician appointment?", Lemmas(Bm25Encoder())).phrases
    assert phrase.words == "optician appointment" and phrase.opening == ""


@pytest.mark.parametrize(("question", "words"), [
    ("When does the pet insurance renew?", "pet insurance"),  # "pet": a noun more often than an adjective
    ("What is the combination for the left locker?", "left locker"),  # "left" has an opposite: a quality
])
def test_a_word_more_often_a_noun_than_an_adjective_narrows_as_a_noun(question: str, words: str) -> None:
    (phrase,) = understand(question, Lemmas(Bm25Encoder())).phrases
    assert phrase.words == words
    assert phrase.opening == ("" if words.startswith("pet") else "left")


@pytest.mark.parametrize(("question", "place"), [
    ("What is the address of the vet?", True),
    ("Where is the stopcock?", True),
    ("What is Sam's email address?", False),
    ("What is Sam's home address?", True),
    ("What challenges does Sam face, and how does he address them?", False),  # the verb
])
def test_an_address_asks_for_a_place(question: str, place: bool) -> None:
    assert ("place" in understand(question, Lemmas(Bm25Encoder())).facts) is place


@pytest.mark.parametrize(("question", "email"), [
    ("What is the roofer's email address?", True),
    ("What are their e-mail addresses?", True),
    ("What did the email from Sam say?", False),  # an email, the capture, not an address
])
def test_an_email_address_is_a_kind_of_fact(question: str, email: bool) -> None:
    asked = understand(question, Lemmas(Bm25Encoder()))
    assert ("email" in asked.facts) is email
    assert "place" not in asked.facts


@pytest.mark.parametrize(("question", "main"), [
    ("Where is the parents' meeting?", "meeting"),  # what the parents have: the meeting
    ("What is the roofer's email address?", "roofer"),  # the email address is the kind of fact asked
])
def test_a_common_nouns_possessive_leads_to_the_thing_it_has(question: str, main: str) -> None:
    assert understand(question, Lemmas(Bm25Encoder())).main == main


def test_an_adjective_saying_what_a_thing_is_like_opens_its_phrase() -> None:
    """"advanced" swimming lesson: which lesson, when the notes name another ("Beginner swimming lesson")."""
    (phrase,) = understand("When is the advanced swimming lesson?", Lemmas(Bm25Encoder())).phrases
    assert phrase.words == "advanced swimming lesson" and phrase.opening == "advanced"


@pytest.mark.parametrize(("question", "quantity"), [
    ("How much flea treatment does the cat need?", True),  # "one pipette" answers it
    ("How much sugar goes in the cake?", True),
    ("How much money did I give Priya?", False),  # money: an amount only
    ("How much rent do I pay?", False),
    ("How much tax did I pay?", False),
    ("How much is the sofa?", False),
])
def test_how_much_of_a_thing_is_answered_by_a_number_as_well_as_a_price(question: str, quantity: bool) -> None:
    facts = understand(question, Lemmas(Bm25Encoder())).facts
    assert "amount" in facts and ("count" in facts) is quantity
