"""How many examples a property test tries.

The whole suite (``make test``) tries each property test's full count. The fast lane (``make test-fast``,
``pytest -m fast``) is the loop a developer runs after every change, so there a property test tries a fifth of
its count (at least 25): each still runs every time, and CI still runs the full search. Hypothesis's own cost
per example (about 3 ms here, ten times the temporal parser's) is what made the fast lane slow.
"""

from __future__ import annotations

from hypothesis import settings

FAST_SHARE = 5
FAST_FLOOR = 25
_fast_lane = False


def fast_lane(on: bool) -> None:
    """Called once by ``tests/conftest.py`` before any test module is imported."""
    global _fast_lane
    _fast_lane = on
    settings.register_profile("fast-lane", max_examples=FAST_FLOOR)
    if on:
        settings.load_profile("fast-lane")


def examples(count: int) -> int:
    """``count`` in the whole suite, a fifth of it (at least 25) in the fast lane."""
    return max(FAST_FLOOR, count // FAST_SHARE) if _fast_lane else count
