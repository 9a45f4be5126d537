"""Web push subscriptions in the ``push_subscriptions`` table (migration 0021): one role."""

from __future__ import annotations

import secrets

from secondbrain.ports import PushSubscription
from secondbrain.stores.postgres.base import PgRole

_COLUMNS = "subscription_id, user_id, endpoint, p256dh, auth, created_at"


class PostgresPushSubscriptions(PgRole):
    """One subscription per user and push endpoint; the user's erasure removes them (the foreign key cascades)."""

    def put(self, user_id: str, endpoint: str, p256dh: str, auth: str) -> PushSubscription:
        with self._tx() as conn:
            row = conn.execute(
                f"INSERT INTO push_subscriptions (subscription_id, user_id, endpoint, p256dh, auth) "
                f"VALUES (%s, %s, %s, %s, %s) ON CONFLICT (user_id, endpoint) DO UPDATE SET "
                f"p256dh = excluded.p256dh, auth = excluded.auth RETURNING {_COLUMNS}",
                (secrets.token_hex(8), user_id, endpoint, p256dh, auth)).fetchone()
        assert row is not None
        return PushSubscription(*row)

    def listed(self, user_id: str) -> list[PushSubscription]:
        with self._pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM push_subscriptions WHERE user_id = %s "
                                "ORDER BY created_at, subscription_id", (user_id,)).fetchall()
        return [PushSubscription(*r) for r in rows]

    def delete(self, user_id: str, subscription_id: str) -> bool:
        with self._pool.connection() as conn:
            row = conn.execute("DELETE FROM push_subscriptions WHERE subscription_id = %s AND user_id = %s "
                               "RETURNING subscription_id", (subscription_id, user_id)).fetchone()
        return row is not None
