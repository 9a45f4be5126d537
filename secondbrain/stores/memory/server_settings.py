"""Server-wide settings an administrator changes at run time (in memory)."""

from __future__ import annotations

import logging
from dataclasses import replace

from secondbrain.ports import AnswerEndpoint
from secondbrain.secret_box import ANSWER_API_KEY, SecretBox, SecretUnreadable
from secondbrain.stores.memory.base import MemoryDatabase, MemoryRole

log = logging.getLogger(__name__)


class MemoryServerSettings(MemoryRole):
    """Server-wide settings: the answer endpoint (one row).  With a :class:`SecretBox` the row holds the
    API key encrypted, as the Postgres store's does."""

    def __init__(self, db: MemoryDatabase, secrets: SecretBox | None = None) -> None:
        super().__init__(db)
        self._secrets = secrets

    def answer_endpoint(self) -> AnswerEndpoint | None:
        """The stored answer endpoint, or ``None``."""
        with self._tx():
            row = self._t.answer_endpoint
        return self._opened(row)

    def set_answer_endpoint(self, base_url: str, model: str, api_key: str | None, *,
                            keep_key: bool = False) -> AnswerEndpoint:
        """Store the endpoint; with ``keep_key`` and no new key the stored key stays."""
        stored_key = self._secrets.seal(api_key, ANSWER_API_KEY) if api_key is not None and self._secrets else api_key
        with self._tx() as now:
            old = self._t.answer_endpoint
            if keep_key and stored_key is None and old is not None:
                stored_key = old.api_key
            row = self._t.answer_endpoint = AnswerEndpoint(base_url, model, stored_key, now)
        opened = self._opened(row)
        assert opened is not None
        return opened

    def clear_answer_endpoint(self) -> bool:
        """Forget the stored endpoint."""
        with self._tx():
            had = self._t.answer_endpoint is not None
            self._t.answer_endpoint = None
            return had

    def _opened(self, row: AnswerEndpoint | None) -> AnswerEndpoint | None:
        if row is None or row.api_key is None or self._secrets is None:
            return row
        try:
            return replace(row, api_key=self._secrets.open(row.api_key, ANSWER_API_KEY))
        except SecretUnreadable as exc:
            log.warning("the answer model's API key is not used: %s", exc)
            return replace(row, api_key=None)
