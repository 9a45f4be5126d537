"""The fast lane loads no model: while a test marked ``fast`` runs (its fixtures included), constructing
one of the model classes fails it, naming the in-memory twin to use instead.

``tests/conftest.py`` installs the hook; ``-p tests.model_guard`` installs it for a test file elsewhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

# class -> the twin in secondbrain.stores.memory that stands in for it
MODELS = {
    "secondbrain.embedding:OnnxMiniLMEmbedder": "HashEmbedder",
    "services.query.rerank:OnnxCrossEncoder": "OverlapReranker",
    "secondbrain.transcribe:FasterWhisperTranscriber": "HashTranscriber",
    "secondbrain.transcribe:WhisperXTranscriber": "HashTranscriber",
    "services.extractors.image:OpenAICaptioner": "HashCaptioner",
}


def _refusing(name: str, twin: str) -> Any:
    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        # pytest.fail raises a BaseException, so no "except Exception" in the code under test swallows it
        pytest.fail(f"a fast test loads a model ({name}): use secondbrain.stores.memory.{twin}, "
                    "or drop the fast mark if the test is about the model", pytrace=False)
    return __init__


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if item.get_closest_marker("fast") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        for target, twin in MODELS.items():
            module_name, class_name = target.split(":")
            cls = getattr(importlib.import_module(module_name), class_name)
            patch.setattr(cls, "__init__", _refusing(class_name, twin))
        yield
