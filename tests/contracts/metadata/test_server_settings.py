"""Contract of the ServerSettings role: the answer endpoint an administrator sets at run time."""

from __future__ import annotations

from tests.contracts.metadata.helpers import Stores


def test_the_answer_endpoint_is_stored_replaced_and_cleared(stores: Stores) -> None:
    settings = stores.server_settings
    assert settings.answer_endpoint() is None
    assert settings.clear_answer_endpoint() is False
    first = settings.set_answer_endpoint("http://127.0.0.1:11434/v1", "llama3.2", "sk-secret")
    stored = settings.answer_endpoint()
    assert stored is not None and (stored.base_url, stored.model, stored.api_key) == (
        "http://127.0.0.1:11434/v1", "llama3.2", "sk-secret")
    assert stored == first and stored.updated_at is not None
    assert "sk-secret" not in repr(stored)  # a log line of the record never shows the key
    # A new model without a key keeps the stored key only when asked to.
    kept = settings.set_answer_endpoint("http://127.0.0.1:11434/v1", "qwen2.5", None, keep_key=True)
    assert (kept.model, kept.api_key) == ("qwen2.5", "sk-secret")
    assert first.updated_at is not None and kept.updated_at is not None and kept.updated_at >= first.updated_at
    dropped = settings.set_answer_endpoint("http://127.0.0.1:8080/v1", "local", None)
    assert dropped.api_key is None and settings.answer_endpoint() == dropped
    assert settings.clear_answer_endpoint() is True
    assert settings.answer_endpoint() is None
