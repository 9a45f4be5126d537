"""Web push subscriptions (in memory): one role, on the shared tables (so erasing the user removes their
subscriptions, as Postgres's cascade does)."""

from __future__ import annotations

import secrets
from dataclasses import replace

from secondbrain.ports import PushSubscription
from secondbrain.stores.memory.base import IntegrityError, MemoryRole


class MemoryPushSubscriptions(MemoryRole):
    """One subscription per user and push endpoint."""

    def put(self, user_id: str, endpoint: str, p256dh: str, auth: str) -> PushSubscription:
        with self._tx() as now:
            if user_id not in self._t.users:
                raise IntegrityError(f"unknown user {user_id!r}")
            rows = self._t.push_subscriptions
            old = next((s for s in rows.values() if s.user_id == user_id and s.endpoint == endpoint), None)
            kept = replace(old, p256dh=p256dh, auth=auth) if old is not None else PushSubscription(
                secrets.token_hex(8), user_id, endpoint, p256dh, auth, now)
            rows[kept.subscription_id] = kept
            return kept

    def listed(self, user_id: str) -> list[PushSubscription]:
        with self._tx():
            return sorted((s for s in self._t.push_subscriptions.values() if s.user_id == user_id),
                          key=lambda s: (s.created_at, s.subscription_id))

    def delete(self, user_id: str, subscription_id: str) -> bool:
        with self._tx():
            found = self._t.push_subscriptions.get(subscription_id)
            if found is None or found.user_id != user_id:
                return False
            del self._t.push_subscriptions[subscription_id]
            return True
