"""All the in-memory role stores of one process over one :class:`MemoryDatabase`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from secondbrain.stores.memory.base import MemoryDatabase
from secondbrain.stores.memory.catalog import MemoryCatalog
from secondbrain.stores.memory.conversations import MemoryConversations
from secondbrain.stores.memory.dead_letters import MemoryDeadLetters
from secondbrain.stores.memory.feeds import MemoryFeedTokens
from secondbrain.stores.memory.indexes import MemoryIndexes
from secondbrain.stores.memory.intake import MemoryIntake
from secondbrain.stores.memory.jobs import MemoryJobs
from secondbrain.stores.memory.lifecycle import MemoryLifecycle
from secondbrain.stores.memory.outbox import MemoryOutbox
from secondbrain.stores.memory.push import MemoryPushSubscriptions
from secondbrain.stores.memory.reminders import MemoryReminders
from secondbrain.stores.memory.server_settings import MemoryServerSettings
from secondbrain.stores.memory.users import MemoryApiKeys, MemoryRateCounts, MemorySessions, MemoryUsers

if TYPE_CHECKING:
    from secondbrain.ports import (
        ApiKeys,
        Catalog,
        Conversations,
        Database,
        DeadLetters,
        FeedTokens,
        IndexVersions,
        Intake,
        JobFence,
        JobLedger,
        Lifecycle,
        Outbox,
        PushSubscriptions,
        RateCounts,
        Reminders,
        ServerSettings,
        Sessions,
        Users,
    )
    from secondbrain.secret_box import SecretBox
    from secondbrain.topic_names import TopicNames


class MemoryMetadataStore:
    """Every metadata role on one in-memory database: ``users``, ``api_keys``, ``feed_tokens``, ``reminders``,
    ``push_subscriptions``, ``sessions``, ``rate_counts``,
    ``intake``, ``jobs``, ``outbox``, ``catalog``,
    ``lifecycle``, ``conversations``, ``indexes``, ``server_settings``, ``dead_letters`` and the job
    ``fence``,
    plus the database itself (migrations, readiness).  ``topics``: the deployment's topic names (the
    outbox's submission messages are found by them; no prefix unless given).

    ``clock`` replaces the real clock (see :class:`MemoryDatabase`)."""

    def __init__(self, *, clock: Callable[[], datetime] | None = None, secrets: SecretBox | None = None,
                 topics: TopicNames | None = None) -> None:
        self.database = MemoryDatabase(clock=clock)
        self.users = MemoryUsers(self.database)
        self.api_keys = MemoryApiKeys(self.database)
        self.feed_tokens = MemoryFeedTokens(self.database)
        self.reminders = MemoryReminders(self.database)
        self.push_subscriptions = MemoryPushSubscriptions(self.database)
        self.sessions = MemorySessions(self.database)
        self.rate_counts = MemoryRateCounts(self.database)
        self.intake = MemoryIntake(self.database)
        self.jobs = MemoryJobs(self.database)
        self.fence = self.jobs  # the job ledger fences the stages' writes (its rows are what is locked)
        self.outbox = MemoryOutbox(self.database, topics)
        self.catalog = MemoryCatalog(self.database)
        self.lifecycle = MemoryLifecycle(self.database, topics)
        self.conversations = MemoryConversations(self.database)
        self.indexes = MemoryIndexes(self.database)
        self.server_settings = MemoryServerSettings(self.database, secrets)
        self.dead_letters = MemoryDeadLetters(self.database)

    def migrate(self) -> list[int]:
        """Nothing to migrate."""
        return self.database.migrate()

    def check(self) -> None:
        """Raise once closed (readiness)."""
        self.database.check()

    def close(self) -> None:
        """Refuse every later call."""
        self.database.close()

    def __enter__(self) -> MemoryMetadataStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if TYPE_CHECKING:
    def _each_role_implements_its_port(s: MemoryMetadataStore) -> tuple[
            Database, Users, ApiKeys, FeedTokens, Reminders, PushSubscriptions, Sessions, RateCounts, Intake, JobLedger,
            Outbox, Catalog,
            Lifecycle, Conversations, IndexVersions, ServerSettings, DeadLetters, JobFence]:
        # mypy checks every role against its Protocol here (signatures included).
        return (s.database, s.users, s.api_keys, s.feed_tokens, s.reminders, s.push_subscriptions, s.sessions,
                s.rate_counts, s.intake, s.jobs, s.outbox, s.catalog, s.lifecycle, s.conversations,
                s.indexes, s.server_settings, s.dead_letters, s.fence)
