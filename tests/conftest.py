"""Fixtures shared by test modules: a fresh database and a Kafka-protocol broker, one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from secondbrain.infra.tansu import TansuBroker
from tests.model_guard import pytest_runtest_protocol  # noqa: F401 - a hook: fast tests load no model
from tests.pg import base_dsn, fresh_database


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
