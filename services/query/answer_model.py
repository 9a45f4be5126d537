"""Which model answers now: the endpoint an administrator stored at run time, else the start-up one.

The stored endpoint lives in Postgres, so every query process follows a change: each reads it at
most every ``ttl_s`` seconds (the process that took the change at once).
"""

from __future__ import annotations

import logging
import threading
import time

from pydantic import SecretStr

from secondbrain.llm import ChatLLM, OpenAICompatibleLLM
from secondbrain.ports import AnswerEndpoint, ServerSettings
from secondbrain.settings import Settings

log = logging.getLogger(__name__)


class AnswerModel:
    """The model answers come from: :meth:`current` is ``None`` for extractive answers."""

    def __init__(self, store: ServerSettings, startup: ChatLLM | None, settings: Settings, *,
                 ttl_s: float = 5.0) -> None:
        self._store = store
        self.startup = startup
        self._settings = settings
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._stored: AnswerEndpoint | None = None
        self._client: tuple[tuple[str, str, str | None], OpenAICompatibleLLM] | None = None

    def stored(self) -> AnswerEndpoint | None:
        """The stored endpoint (re-read after ``ttl_s``; the last one known while the database is away)."""
        with self._lock:
            if time.monotonic() - self._read_at >= self._ttl_s:
                try:
                    self._stored = self._store.answer_endpoint()
                    self._read_at = time.monotonic()
                except Exception:  # the database is restarting: keep answering with what we knew
                    log.warning("could not read the stored answer endpoint", exc_info=True)
            return self._stored

    def changed(self) -> None:
        """The stored endpoint was changed by this process: read it on the next question."""
        with self._lock:
            self._read_at = float("-inf")

    def current(self) -> ChatLLM | None:
        """The stored endpoint's client when one is stored, else the start-up model (or ``None``)."""
        stored = self.stored()
        if stored is None:
            return self.startup
        wanted = (stored.base_url, stored.model, stored.api_key)
        with self._lock:
            if self._client is None or self._client[0] != wanted:
                # The old client is not closed: a stream may still be reading from it.
                key = SecretStr(stored.api_key) if stored.api_key else None
                self._client = (wanted, OpenAICompatibleLLM(stored.base_url, stored.model, key,
                                                            timeout_s=self._settings.llm_timeout_s))
            return self._client[1]
