"""Server-wide settings an administrator changes at run time."""

from __future__ import annotations

from secondbrain.ports import AnswerEndpoint
from secondbrain.stores.postgres.base import PgRole


class PostgresServerSettings(PgRole):
    """Server-wide settings: the answer endpoint (one row)."""

    def answer_endpoint(self) -> AnswerEndpoint | None:
        """The stored answer endpoint, or ``None``."""
        with self._pool.connection() as conn:
            row = conn.execute("SELECT base_url, model, api_key, updated_at FROM answer_endpoint").fetchone()
        return AnswerEndpoint(row[0], row[1], row[2], row[3]) if row else None

    def set_answer_endpoint(self, base_url: str, model: str, api_key: str | None, *,
                            keep_key: bool = False) -> AnswerEndpoint:
        """Store the endpoint; with ``keep_key`` and no new key the stored key stays."""
        with self._tx() as conn:
            row = conn.execute(
                "INSERT INTO answer_endpoint (singleton, base_url, model, api_key) VALUES (true, %(url)s, %(model)s, "
                "%(key)s) ON CONFLICT (singleton) DO UPDATE SET base_url = EXCLUDED.base_url, model = EXCLUDED.model, "
                "api_key = CASE WHEN %(keep)s AND EXCLUDED.api_key IS NULL THEN answer_endpoint.api_key "
                "ELSE EXCLUDED.api_key END, updated_at = now() RETURNING base_url, model, api_key, updated_at",
                {"url": base_url, "model": model, "key": api_key, "keep": keep_key}).fetchone()
        assert row is not None
        return AnswerEndpoint(row[0], row[1], row[2], row[3])

    def clear_answer_endpoint(self) -> bool:
        """Forget the stored endpoint."""
        with self._tx() as conn:
            return conn.execute("DELETE FROM answer_endpoint").rowcount > 0
