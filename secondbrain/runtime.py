"""What one process depends on: its settings and the ports it uses, built once at start-up.

Which implementation backs each port is decided in :mod:`app.assembly` (embedded and distributed
mode differ only there); everything here and in ``services`` sees the ports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from secondbrain.events.codec import EventCodec
from secondbrain.events.sealing import Sealer
from secondbrain.llm import ChatLLM
from secondbrain.ports import Embedder, MetadataStore, ObjectStore, SparseEncoder, VectorStore
from secondbrain.ports.backup import BackupGate
from secondbrain.settings import Settings
from secondbrain.topic_names import TopicNames

if TYPE_CHECKING:
    from secondbrain.embedding import EmbedderPool


@dataclass
class Runtime:
    """The dependencies of one process, built once at start-up."""

    settings: Settings
    metadata: MetadataStore
    objects: ObjectStore
    codec: EventCodec
    names: TopicNames
    vectors: VectorStore | None = None
    embedder: Embedder | None = None
    sparse: SparseEncoder | None = None
    llm: ChatLLM | None = None  # answers; None means extractive answers
    embedders: EmbedderPool | None = None  # every embedding model in use; ``embedder`` is its default
    sealer: Sealer | None = None  # seals the internal topics' events (needs SB_PIPELINE_KEY)
    gate: BackupGate | None = None  # removals hold it shared, a backup's picture alone (secondbrain.ports.backup)

    def close(self) -> None:
        """Release pools and files."""
        if self.llm is not None and hasattr(self.llm, "close"):
            self.llm.close()
        if self.embedders is not None:
            self.embedders.close()
        if self.vectors is not None:
            self.vectors.close()
        self.metadata.database.close()
