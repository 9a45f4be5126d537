"""Fixtures shared by test modules: a fresh database and a Kafka-protocol broker, one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.processes import keep_away_from_home

# Before anything reads a platform directory: the suite never touches the person's data, state or config.
keep_away_from_home()

from secondbrain.infra.tansu import TansuBroker  # noqa: E402
from tests import examples  # noqa: E402
from tests.model_guard import pytest_runtest_protocol  # noqa: E402, F401 - a hook: fast tests load no model
from tests.pg import base_dsn, fresh_database  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    # the fast lane is what `-m fast` selects; its property tests try fewer examples (tests/examples.py)
    examples.fast_lane(config.getoption("markexpr", "").strip() == "fast")


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    """A new, empty database on the test Postgres for this module, dropped afterwards."""
    with base_dsn() as base, fresh_database(base) as db:
        yield db


@pytest.fixture(scope="module")
def broker() -> Iterator[TansuBroker]:
    """A Tansu broker on loopback for this module."""
    b = TansuBroker().start()
    yield b
    b.stop()
