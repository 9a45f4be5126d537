"""The in-memory twin cannot drift from Postgres: both compositions have the same roles, each role the
same public methods with the same signatures, and each implements its port."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from secondbrain.ports import (
    ApiKeys,
    Catalog,
    Conversations,
    Database,
    DeadLetters,
    FeedTokens,
    IndexVersions,
    Intake,
    JobFence,
    JobLedger,
    Lifecycle,
    Outbox,
    PushSubscriptions,
    RateCounts,
    Reminders,
    ServerSettings,
    Sessions,
    Users,
)
from secondbrain.stores.memory import MemoryMetadataStore
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from secondbrain.stores.migrations import load_migrations
from secondbrain.stores.postgres import base as postgres_base
from tests.contracts.metadata.helpers import Stores

PORTS: dict[str, type] = {
    "database": Database, "users": Users, "api_keys": ApiKeys, "feed_tokens": FeedTokens, "sessions": Sessions,
    "rate_counts": RateCounts, "reminders": Reminders,
    "push_subscriptions": PushSubscriptions,
    "intake": Intake, "jobs": JobLedger, "outbox": Outbox,
    "catalog": Catalog, "lifecycle": Lifecycle, "conversations": Conversations, "indexes": IndexVersions,
    "server_settings": ServerSettings,
    "dead_letters": DeadLetters, "fence": JobFence,
}


def public_methods(obj: Any) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in inspect.getmembers(obj, callable)
            if not name.startswith("_") and not inspect.isclass(member)}


class _NoPool:
    """Stands in for the connection pool: only the shape of the composition is looked at."""

    check_connection = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def compositions(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """One store of each implementation, neither connected to anything."""
    monkeypatch.setattr(postgres_base, "ConnectionPool", _NoPool)
    return {"postgres": PostgresMetadataStore("postgresql:///unused"), "memory": MemoryMetadataStore()}


def roles(store: Any) -> dict[str, Any]:
    return {name: value for name, value in vars(store).items() if not name.startswith("_")}


def test_both_compositions_have_the_same_roles(compositions: dict[str, Any]) -> None:
    assert set(roles(compositions["postgres"])) == set(roles(compositions["memory"])) == set(PORTS)


@pytest.mark.parametrize("role", sorted(PORTS))
def test_each_role_has_the_same_methods_and_signatures(compositions: dict[str, Any], role: str) -> None:
    postgres = public_methods(getattr(compositions["postgres"], role))
    memory = public_methods(getattr(compositions["memory"], role))
    assert sorted(memory) == sorted(postgres)
    for name, signature in postgres.items():
        assert str(memory[name]) == str(signature), name


@pytest.mark.parametrize("role", sorted(PORTS))
def test_each_role_implements_its_port(compositions: dict[str, Any], role: str) -> None:
    port = {name: inspect.signature(getattr(PORTS[role], name)) for name in dir(PORTS[role])
            if not name.startswith("_")}
    for kind, store in compositions.items():
        implemented = public_methods(getattr(store, role))
        for name, signature in port.items():
            assert name in implemented, f"{kind} {role} lacks {name}"
            # the port's signature has self; a bound method's does not
            expected = signature.replace(parameters=list(signature.parameters.values())[1:])
            assert str(implemented[name]) == str(expected), f"{kind} {role}.{name}"


def test_the_compositions_themselves_match(compositions: dict[str, Any]) -> None:
    postgres, memory = public_methods(compositions["postgres"]), public_methods(compositions["memory"])
    assert sorted(memory) == sorted(postgres)
    for name, signature in postgres.items():
        assert str(memory[name]) == str(signature), name


def test_a_composed_store_answers_only_through_its_roles(stores: Stores) -> None:
    assert set(roles(stores)) == set(PORTS)
    assert stores.users.user_exists("nobody") is False
    whole: Any = stores
    for name in ("get_job", "user_exists", "no_such_method", "_t"):  # no flat calls: a caller names the role
        with pytest.raises(AttributeError):
            getattr(whole, name)


def test_a_closed_store_refuses_calls(stores: Stores) -> None:
    stores.database.check()
    assert stores.database.migrate() == []  # already migrated: nothing left to apply
    assert stores.database.pending_migrations() == []
    assert max(stores.database.applied_migrations()) == max(m.version for m in load_migrations())
    stores.database.close()
    with pytest.raises(Exception) as refused:
        stores.database.check()
    assert not isinstance(refused.value, AssertionError)
    with pytest.raises(Exception):  # noqa: B017
        stores.users.user_exists("alice")
