"""Server-wide settings an administrator changes at run time (in memory)."""

from __future__ import annotations

from secondbrain.ports import AnswerEndpoint
from secondbrain.stores.memory.base import MemoryRole


class MemoryServerSettings(MemoryRole):
    """Server-wide settings: the answer endpoint (one row)."""

    def answer_endpoint(self) -> AnswerEndpoint | None:
        """The stored answer endpoint, or ``None``."""
        with self._tx():
            return self._t.answer_endpoint

    def set_answer_endpoint(self, base_url: str, model: str, api_key: str | None, *,
                            keep_key: bool = False) -> AnswerEndpoint:
        """Store the endpoint; with ``keep_key`` and no new key the stored key stays."""
        with self._tx() as now:
            old = self._t.answer_endpoint
            if keep_key and api_key is None and old is not None:
                api_key = old.api_key
            stored = self._t.answer_endpoint = AnswerEndpoint(base_url, model, api_key, now)
            return stored

    def clear_answer_endpoint(self) -> bool:
        """Forget the stored endpoint."""
        with self._tx():
            had = self._t.answer_endpoint is not None
            self._t.answer_endpoint = None
            return had
