"""Tags have one spelling wherever they are typed: the API, the CLI, a query's ``tag:`` word, an import."""

from __future__ import annotations

import pytest

from secondbrain.tags import MAX_TAG_CHARS, normalise_tag, normalise_tags, tags_in_query

pytestmark = pytest.mark.fast


def test_a_tag_is_lower_case_without_hash_its_words_joined() -> None:
    assert normalise_tag("#Reading List") == "reading-list"
    assert normalise_tag("Work/Plans") == "work/plans"
    assert normalise_tag("  café  ") == "café"
    assert normalise_tag("!!!") == ""
    assert len(normalise_tag("x" * 200)) == MAX_TAG_CHARS


def test_tags_are_kept_once_in_order() -> None:
    assert normalise_tags(["Garden", "garden", "#garden", "", "Seeds"]) == ["garden", "seeds"]


def test_tag_words_are_taken_out_of_a_query() -> None:
    assert tags_in_query("tomato seeds tag:garden") == ("tomato seeds", ["garden"])
    assert tags_in_query("tag:Garden tag:work/plans") == ("", ["garden", "work/plans"])
    # not a tag: inside a word, or a "#" (people search for "#1" and "C#")
    assert tags_in_query("hashtag:x C# #1 pretag:y") == ("hashtag:x C# #1 pretag:y", [])
