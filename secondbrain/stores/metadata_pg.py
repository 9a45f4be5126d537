"""All the Postgres role stores of one process over one pool (see :mod:`secondbrain.stores.postgres`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from secondbrain.stores.postgres.base import PostgresDatabase
from secondbrain.stores.postgres.catalog import PostgresCatalog
from secondbrain.stores.postgres.conversations import PostgresConversations
from secondbrain.stores.postgres.dead_letters import PostgresDeadLetters
from secondbrain.stores.postgres.feeds import PostgresFeedTokens
from secondbrain.stores.postgres.indexes import PostgresIndexes
from secondbrain.stores.postgres.intake import PostgresIntake
from secondbrain.stores.postgres.jobs import PostgresJobs
from secondbrain.stores.postgres.lifecycle import PostgresLifecycle
from secondbrain.stores.postgres.outbox import PostgresOutbox
from secondbrain.stores.postgres.push import PostgresPushSubscriptions
from secondbrain.stores.postgres.reminders import PostgresReminders
from secondbrain.stores.postgres.server_settings import PostgresServerSettings
from secondbrain.stores.postgres.users import PostgresApiKeys, PostgresRateCounts, PostgresSessions, PostgresUsers

if TYPE_CHECKING:
    from secondbrain.secret_box import SecretBox
    from secondbrain.topic_names import TopicNames

__all__ = ["PostgresMetadataStore"]


class PostgresMetadataStore:
    """Every metadata role on one Postgres pool: ``users``, ``api_keys``, ``feed_tokens``, ``reminders``,
    ``push_subscriptions``, ``sessions``, ``rate_counts``,
    ``intake``, ``jobs``, ``outbox``, ``catalog``,
    ``lifecycle``, ``conversations``, ``indexes``, ``server_settings``, ``dead_letters`` and the job
    ``fence``,
    plus the database itself (migrations, readiness).  ``topics``: the deployment's topic names (the
    outbox's submission messages are found by them; no prefix unless given)."""

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 8, secrets: SecretBox | None = None,
                 topics: TopicNames | None = None) -> None:
        self.database = PostgresDatabase(dsn, min_size=min_size, max_size=max_size)
        self.users = PostgresUsers(self.database)
        self.api_keys = PostgresApiKeys(self.database)
        self.feed_tokens = PostgresFeedTokens(self.database)
        self.reminders = PostgresReminders(self.database)
        self.push_subscriptions = PostgresPushSubscriptions(self.database)
        self.sessions = PostgresSessions(self.database)
        self.rate_counts = PostgresRateCounts(self.database)
        self.intake = PostgresIntake(self.database)
        self.jobs = PostgresJobs(self.database)
        self.fence = self.jobs  # the job ledger fences the stages' writes (its rows are what is locked)
        self.outbox = PostgresOutbox(self.database, topics)
        self.catalog = PostgresCatalog(self.database)
        self.lifecycle = PostgresLifecycle(self.database, topics)
        self.conversations = PostgresConversations(self.database)
        self.indexes = PostgresIndexes(self.database)
        self.server_settings = PostgresServerSettings(self.database, secrets)  # stores the API key encrypted
        self.dead_letters = PostgresDeadLetters(self.database)

    def migrate(self) -> list[int]:
        """Apply pending migrations."""
        return self.database.migrate()

    def check(self) -> None:
        """Raise if the database does not answer (readiness)."""
        self.database.check()

    def close(self) -> None:
        """Close the pool."""
        self.database.close()

    def __enter__(self) -> PostgresMetadataStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
