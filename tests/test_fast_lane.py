"""The fast lane loads no model: ``tests/conftest.py`` makes every model class refuse to load while a
``fast`` test runs, fixtures included, and names the in-memory twin to use instead."""

from __future__ import annotations

import importlib

import pytest

from tests.model_guard import MODELS

pytestmark = pytest.mark.fast  # no services: in the fast lane


def _load(target: str) -> str:
    """Try to construct the model class ``target`` names; what stopped it."""
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        cls()
    except pytest.fail.Exception as refused:
        return str(refused)
    except Exception as exc:  # anything else: the class really tried to load
        return f"not refused: {type(exc).__name__}: {exc}"
    return "not refused: it loaded"


@pytest.fixture(scope="module")
def refused_in_a_fixture() -> str:
    return _load("secondbrain.embedding:OnnxMiniLMEmbedder")


@pytest.mark.parametrize("target", sorted(MODELS))
def test_a_fast_test_cannot_load_a_model(target: str) -> None:
    message = _load(target)
    assert message.startswith(f"a fast test loads a model ({target.split(':')[1]})"), message
    assert f"secondbrain.stores.memory.{MODELS[target]}" in message


def test_nor_can_its_fixtures(refused_in_a_fixture: str) -> None:
    assert refused_in_a_fixture.startswith("a fast test loads a model (OnnxMiniLMEmbedder)"), refused_in_a_fixture


def test_the_twins_named_exist() -> None:
    memory = importlib.import_module("secondbrain.stores.memory")
    assert all(hasattr(memory, twin) for twin in MODELS.values())
