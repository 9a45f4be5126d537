"""What a statement speaks of (services.query.coverage): a thing picked out by the opposite adjective, a "least
favourite", a hyphenated word."""

from __future__ import annotations

import pytest

from services.query.coverage import covers, known, least_not_there, misspelt, opposed, words

pytestmark = pytest.mark.fast
def test_only_the_opposite_adjective_or_another_ordinal_picks_out_another_thing() -> None:
    assert opposed("back", ["back door code"], ["Front door code: 4812."])
    assert opposed("second", ["second vaccine"], ["First vaccine dose given on 3 March."])
    assert opposed("indoor", ["indoor activities"], ["More outdoor activities like this!"])
    assert not opposed("prominent", ["prominent charity organization"], ["A local charity helps kids."])
    assert not opposed("back", ["back door code"], ["Back door code: 1234."])


def test_a_hyphenated_word_covers_only_itself() -> None:
    assert covers("check-in", words("Check-in: 15:00"))
    assert not covers("checkout", words("Early check-in fee: 25 euros."))


def test_a_least_favourite_is_not_the_favourite() -> None:
    mine = ["Kira: My favourite food is Thai green curry."]
    assert least_not_there("What is Kira's least favourite food?", mine) == "least favourite"
    assert least_not_there("What is Kira's least favourite food?", ["Kira: My least favourite is okra."]) is None
    assert least_not_there("What is Kira's favourite food?", mine) is None
    assert least_not_there("What is Kira's least favourite film?", ["Kira: Films bore me."]) is None  # not named


def test_another_span_of_recurrence_picks_out_another_thing() -> None:
    assert opposed("monthly", ["monthly parking permit"], ["Annual parking permit: £240."])
    assert opposed("weekly", ["weekly meeting"], ["The daily meeting is at 9."])
    assert not opposed("annual", ["annual parking permit"], ["Yearly parking permit: £240."])  # the same span
    assert not opposed("monthly", ["monthly parking permit"], ["Residents' parking permit: £20 a month."])


def test_a_short_form_wordnet_does_not_list_is_a_word_and_covers_what_it_begins() -> None:
    assert known("physio") and covers("physio", words("Physiotherapy appointment on Tuesday."))
    assert not covers("physio", words("Dentist appointment on Tuesday."))
    assert not known("fesetival") and not known("supervillain")  # misspelt, or no word begins so: nothing said


def test_a_word_wordnet_lacks_is_a_slip_only_when_a_source_spells_one_nearly_like_it() -> None:
    assert misspelt("fesetival", words("Festival tickets booked."))
    assert not misspelt("wellies", words("Ruby's trainers are size 12."))  # a word WordNet lacks, and not there
    assert misspelt("-", words("Anything at all."))  # no word to look up: says nothing either way
    assert covers("ice-cream", words("Vegan ice cream recipes.")) and not covers("off-peak", words("Peak fare."))


def test_a_noun_is_spoken_of_by_the_verb_of_its_root() -> None:
    assert covers("renewal", words("Home cover renews on 2 April.")) and covers("delivery", words("Delivered Monday."))
    assert not covers("arrival", words("Got there at six."))  # a synonym of the verb is not its root


def test_a_two_letter_word_may_be_a_kind_of_the_asked_thing() -> None:
    assert covers("doctor", words("GP appointment on Friday."))
    assert not covers("dentist", words("GP appointment on Friday."))
    assert not covers("country", words("Tell us on Friday."))  # a pronoun, not the United States


def test_an_adjective_covers_the_noun_it_relates_to_or_names_it_in_other_words() -> None:
    assert covers("dentist", words("Dental check-up on Friday."))  # a dentist is a "dental practitioner"
    assert covers("vet", words("Veterinary clinic on Mill Road."))
    assert not covers("dentist", words("Eye test on Friday."))
    assert not covers("optician", words("Dental check-up on Friday."))


def test_a_clock_time_says_the_part_of_the_day_it_falls_in() -> None:
    assert covers("night", words("Woke at 3am with a cough.")) and covers("evening", words("Home by 8pm."))
    assert not covers("morning", words("Woke at 3am.")) and not covers("night", words("Lunch at 1pm."))


def test_final_is_an_order_and_first_is_another_one() -> None:
    assert opposed("final", ["final fitting"], ["First fitting: 9 January."])
    assert not opposed("final", ["final fitting"], ["Last fitting: 9 January."])  # the same one
