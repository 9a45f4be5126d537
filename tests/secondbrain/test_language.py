"""The WordNet reader the answerer reads English with: word forms, what a word may also be called, what it is a
kind of, and what it is the opposite of."""

from __future__ import annotations

import pytest

from secondbrain.language import wordnet

pytestmark = pytest.mark.fast


def test_a_word_is_read_under_the_form_wordnet_lists_it() -> None:
    wn = wordnet()
    assert wn.base("ran", "v") == "run"
    assert wn.base("tyres", "n") == "tyre"
    assert wn.base("qwzx", "n") == "qwzx"  # unknown: itself
    # an empty word (the part after a hyphen at a word's end) is no word, not the licence the files open with
    assert wn.offsets("", "n") == () and wn.base("", "v") == "" and wn.tagged(" ", "n") == 0


def test_synonyms_and_kinds_come_from_the_commonest_senses() -> None:
    wn = wordnet()
    assert "bike" in wn.synonyms("bicycle")
    assert wn.is_kind_of("cash", "currency")
    assert not wn.is_kind_of("hotel", "currency")


def test_opposites_are_the_ones_wordnet_names() -> None:
    wn = wordnet()
    assert "front" in wn.antonyms("back")  # "front(a)" in the data: the marker is not part of the word
    assert "early" in wn.antonyms("late")
    assert "first" in wn.antonyms("second")
    assert "outdoor" in wn.antonyms("indoor")
    assert wn.antonyms("prominent") == frozenset()
    assert wn.antonyms("qwzx") == frozenset()


def test_an_adjective_of_recurrence_names_its_span_of_time() -> None:
    wn = wordnet()
    assert wn.period("annual") == wn.period("yearly") != frozenset()
    assert wn.period("monthly") and not wn.period("monthly") & wn.period("annual")
    assert wn.period("weekly") and wn.period("daily")
    assert wn.period("back") == wn.period("prominent") == wn.period("qwzx") == frozenset()


def test_a_prefix_is_looked_up_among_the_lemmas() -> None:
    wn = wordnet()
    assert wn.begins("physio", "n") and wn.begins("dentist", "n")
    assert not wn.begins("fesetival", "n") and not wn.begins("qwzx", "n")


def test_how_often_a_part_of_speech_was_seen_tells_the_usual_one() -> None:
    wn = wordnet()
    assert wn.tagged("pet", "n") > wn.tagged("pet", "a")  # a pet, rarely a pet project
    assert wn.tagged("large", "a") > wn.tagged("large", "n")
    assert wn.tagged("qwzx", "n") == 0


def test_an_adjective_relates_to_the_nouns_it_is_of() -> None:
    wn = wordnet()
    assert {"tooth", "dentistry"} <= wn.pertains("dental") and "vet" in wn.pertains("veterinary")
    assert wn.pertains("large") == wn.pertains("qwzx") == frozenset()


def test_a_noun_s_verbs_of_the_same_root_are_the_ones_wordnet_derives() -> None:
    wn = wordnet()
    assert wn.derived("renewal", "n", "v") == {"renew"} and "deliver" in wn.derived("delivery", "n", "v")
    assert "get" not in wn.derived("arrival", "n", "v")  # a synonym of the derived verb, not of its root
    assert wn.derived("haircut", "n", "v") == frozenset()
