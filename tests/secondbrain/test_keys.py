"""Object keys and user ids: the prefix rule that keeps each user's data apart."""

from __future__ import annotations

import pytest

from secondbrain import keys
from secondbrain.stores.vector_payload import collection_name

pytestmark = pytest.mark.fast  # no services: in the fast lane


@pytest.mark.parametrize("bad", ["", "local\n", "a/b", "../x", "a..b", ".hidden", "a b", "x" * 129, "é", None, 7])
def test_unsafe_user_ids_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        keys.check_user_id(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        collection_name(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("good", ["local", "alice@example.com", "u-1_2.3", "A" * 128])
def test_safe_user_ids_pass(good: str) -> None:
    assert keys.check_user_id(good) == good


def test_keys_stay_inside_the_user_prefix() -> None:
    key = keys.artifact_key("alice", "abc")
    assert key == "users/alice/artifacts/abc"
    assert keys.owns_key("alice", key)
    assert not keys.owns_key("al", key)  # a prefix of another user's id is not ownership
    assert not keys.owns_key("alice", "users/alice/../bob/artifacts/x")
    assert not keys.owns_key("alice", "users/bob/artifacts/x")
