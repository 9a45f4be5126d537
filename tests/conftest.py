"""Fixtures shared by test modules: a fresh database and a Kafka-protocol broker, one per module."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="session", autouse=True)
def postgres_template(request: pytest.FixtureRequest) -> Iterator[None]:
    """One initdb for the whole run: each `secondbrain up` the tests start on a new data directory begins as a copy
    of it (``SB_POSTGRES_TEMPLATE``). Not made for the fast lane, which starts no server."""
    if all(item.get_closest_marker("fast") for item in request.session.items):
        yield
        return
    from devtools import processes
    from secondbrain.infra.postgres import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="sb-pg-template-"))
    root.chmod(0o755)  # run as root, the server runs as its own user, which must reach it
    EmbeddedPostgres(root / "postgres").start().stop()
    processes.POSTGRES_TEMPLATE = root / "postgres"
    try:
        yield
    finally:
        processes.POSTGRES_TEMPLATE = None
        shutil.rmtree(root, ignore_errors=True)


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
