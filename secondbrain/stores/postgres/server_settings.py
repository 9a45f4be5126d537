"""Server-wide settings an administrator changes at run time."""

from __future__ import annotations

import logging
from datetime import datetime

from secondbrain.ports import AnswerEndpoint
from secondbrain.secret_box import ANSWER_API_KEY, SecretBox, SecretUnreadable, is_sealed
from secondbrain.stores.postgres.base import PgRole, PostgresDatabase

log = logging.getLogger(__name__)

class PostgresServerSettings(PgRole):
    """Server-wide settings: the answer endpoint (one row).

    With a :class:`SecretBox` (every process builds one, see ``app.assembly``) the API key is stored
    encrypted, and a plaintext key stored before is encrypted the first time it is read; without one
    (a store tested on its own) the key is kept as given."""

    def __init__(self, db: PostgresDatabase, secrets: SecretBox | None = None) -> None:
        super().__init__(db)
        self._secrets = secrets

    def answer_endpoint(self) -> AnswerEndpoint | None:
        """The stored answer endpoint, or ``None``."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT base_url, model, api_key, updated_at FROM answer_endpoint").fetchone()
        if row is None:
            return None
        if row[2] is not None and not is_sealed(row[2]) and self._secrets is not None and self._secrets.has_key:
            self._seal_stored(row[2])
        return self._endpoint(row[0], row[1], row[2], row[3])

    def set_answer_endpoint(self, base_url: str, model: str, api_key: str | None, *,
                            keep_key: bool = False) -> AnswerEndpoint:
        """Store the endpoint; with ``keep_key`` and no new key the stored key stays."""
        stored_key = self._secrets.seal(api_key, ANSWER_API_KEY) if api_key is not None and self._secrets else api_key
        with self._tx() as conn:
            row = conn.execute(
                "INSERT INTO answer_endpoint (singleton, base_url, model, api_key) VALUES (true, %(url)s, %(model)s, "
                "%(key)s) ON CONFLICT (singleton) DO UPDATE SET base_url = EXCLUDED.base_url, model = EXCLUDED.model, "
                "api_key = CASE WHEN %(keep)s AND EXCLUDED.api_key IS NULL THEN answer_endpoint.api_key "
                "ELSE EXCLUDED.api_key END, updated_at = now() RETURNING base_url, model, api_key, updated_at",
                {"url": base_url, "model": model, "key": stored_key, "keep": keep_key}).fetchone()
        assert row is not None
        return self._endpoint(row[0], row[1], row[2], row[3])

    def clear_answer_endpoint(self) -> bool:
        """Forget the stored endpoint."""
        with self._tx() as conn:
            return conn.execute("DELETE FROM answer_endpoint").rowcount > 0

    def _endpoint(self, base_url: str, model: str, stored_key: str | None, updated_at: datetime) -> AnswerEndpoint:
        key = stored_key
        if stored_key is not None and self._secrets is not None:
            try:
                key = self._secrets.open(stored_key, ANSWER_API_KEY)
            except SecretUnreadable as exc:
                log.warning("the answer model's API key is not used: %s", exc)
                key = None
        return AnswerEndpoint(base_url, model, key, updated_at)

    def _seal_stored(self, plaintext: str) -> None:
        """A key stored before encryption, written back encrypted (unless it changed meanwhile)."""
        assert self._secrets is not None
        with self._tx() as conn:
            conn.execute("UPDATE answer_endpoint SET api_key = %(sealed)s WHERE api_key = %(plain)s",
                         {"sealed": self._secrets.seal(plaintext, ANSWER_API_KEY), "plain": plaintext})
        log.info("the answer model's API key, stored in plain text by an earlier version, is now encrypted")
