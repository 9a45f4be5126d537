"""The in-memory twin of the metadata ports: one role store per port over one shared
:class:`~secondbrain.stores.memory.base.MemoryDatabase`, composed by :class:`MemoryMetadataStore`
exactly as :class:`~secondbrain.stores.metadata_pg.PostgresMetadataStore` composes the Postgres ones.

It keeps the semantics the contract suite checks against Postgres (``tests/contracts/metadata``), so
stage logic can run on it in tests without a database.  Nothing is persisted.

The twins of the model ports (:mod:`secondbrain.stores.memory.models`) do the same for the embedder,
the reranker, the transcriber and the captioner: deterministic, and nothing to load.
"""

from secondbrain.stores.memory.base import IntegrityError, MemoryDatabase
from secondbrain.stores.memory.catalog import MemoryCatalog
from secondbrain.stores.memory.conversations import MemoryConversations
from secondbrain.stores.memory.feeds import MemoryFeedTokens
from secondbrain.stores.memory.indexes import MemoryIndexes
from secondbrain.stores.memory.intake import MemoryIntake
from secondbrain.stores.memory.jobs import MemoryJobs
from secondbrain.stores.memory.lifecycle import MemoryLifecycle
from secondbrain.stores.memory.models import HashCaptioner, HashEmbedder, HashTranscriber, OverlapReranker
from secondbrain.stores.memory.outbox import MemoryOutbox
from secondbrain.stores.memory.push import MemoryPushSubscriptions
from secondbrain.stores.memory.reminders import MemoryReminders
from secondbrain.stores.memory.store import MemoryMetadataStore
from secondbrain.stores.memory.users import MemoryApiKeys, MemoryRateCounts, MemorySessions, MemoryUsers

__all__ = [
    "HashCaptioner",
    "HashEmbedder",
    "HashTranscriber",
    "IntegrityError",
    "MemoryApiKeys",
    "MemoryCatalog",
    "MemoryConversations",
    "MemoryDatabase",
    "MemoryFeedTokens",
    "MemoryIndexes",
    "MemoryIntake",
    "MemoryJobs",
    "MemoryLifecycle",
    "MemoryMetadataStore",
    "MemoryOutbox",
    "MemoryPushSubscriptions",
    "MemoryRateCounts",
    "MemoryReminders",
    "MemorySessions",
    "MemoryUsers",
    "OverlapReranker",
]
