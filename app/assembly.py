"""Builds the concrete stores and models a process needs from its Settings.

Embedded and distributed mode differ only here: which implementation backs each port.
Everything else sees the ports (:mod:`secondbrain.ports`) through :class:`secondbrain.runtime.Runtime`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from secondbrain.events.codec import EventCodec
from secondbrain.events.sealing import Sealer
from secondbrain.llm import ChatLLM
from secondbrain.ports import Embedder, MetadataStore, ObjectStore, VectorStore
from secondbrain.ports.backup import BackupGate
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.topic_names import TopicNames

if TYPE_CHECKING:
    from secondbrain.embedding import EmbedderPool

log = logging.getLogger(__name__)


def build_metadata(settings: Settings) -> MetadataStore:
    """Postgres through psycopg 3 (migrations are applied by the caller at start-up), keeping secrets
    encrypted with the deployment's secrets key."""
    from secondbrain.secret_box import SecretBox
    from secondbrain.stores.metadata_pg import PostgresMetadataStore

    return PostgresMetadataStore(settings.dsn(), secrets=SecretBox.for_settings(settings),
                                 topics=TopicNames(settings.topic_prefix))


def build_objects(settings: Settings) -> ObjectStore:
    """Plain files under the data directory, or S3/MinIO."""
    if settings.object_store == "files":
        from secondbrain.stores.objects_fs import FileObjectStore

        return FileObjectStore(settings.objects_dir)
    from secondbrain.stores.objects_s3 import S3ObjectStore

    return S3ObjectStore(
        settings.s3_endpoint, settings.s3_access_key.get_secret_value(),
        settings.s3_secret_key.get_secret_value(), settings.s3_bucket,
        secure=settings.s3_secure, region=settings.s3_region,
    )


def build_vectors(settings: Settings) -> VectorStore:
    """Qdrant's in-process engine (embedded) or a Qdrant server through qdrant-client."""
    if settings.vector_store == "edge":
        from secondbrain.stores.vectors_edge import EdgeVectorStore

        return EdgeVectorStore(settings.vectors_dir, quantization=settings.vector_quantization,
                               index_after=settings.vector_index_after,
                               index_quiet_s=settings.vector_index_quiet_s,
                               indexing_threshold_kb=settings.vector_indexing_threshold_kb,
                               segment_kb=settings.vector_segment_kb, sync_s=settings.vector_sync_s)
    from secondbrain.stores.vectors_qdrant import QdrantVectorStore

    key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    return QdrantVectorStore.from_url(settings.qdrant_url, api_key=key, quantization=settings.vector_quantization)


def build_embedders(settings: Settings) -> EmbedderPool:
    """The configured embedding model (loaded now) in a pool that loads the models of other index
    versions on first use, with the same endpoint settings."""
    from secondbrain.embedding import EmbedderPool, load_embedder

    def load(spec: str) -> Embedder:
        return load_embedder(spec, batch_size=settings.embed_batch_size, base_url=settings.embedding_base_url,
                             api_key=settings.embedding_api_key, timeout_s=settings.embedding_timeout_s)

    return EmbedderPool(load(settings.embedding_model), load)


def build_llm(settings: Settings) -> ChatLLM | None:
    """The OpenAI-compatible model for answers, when an endpoint is configured."""
    if not settings.llm_base_url:
        return None
    from secondbrain.llm import OpenAICompatibleLLM

    return OpenAICompatibleLLM(base_url=settings.llm_base_url, model=settings.llm_model,
                               api_key=settings.llm_api_key, timeout_s=settings.llm_timeout_s)


def build_sealer(settings: Settings) -> Sealer | None:
    """What seals the internal topics' events, when the process has the pipeline key."""
    if settings.pipeline_key is None:
        return None
    return Sealer.from_text(settings.pipeline_key.get_secret_value())


def build_gate(metadata: MetadataStore) -> BackupGate:
    """The backup gate on the deployment's PostgreSQL (every process shares it), or one process's own."""
    from secondbrain.stores.postgres.base import PostgresDatabase

    if isinstance(metadata.database, PostgresDatabase):
        from secondbrain.stores.postgres.backup_gate import PostgresBackupGate

        return PostgresBackupGate(metadata.database)
    from secondbrain.stores.memory.backup_gate import MemoryBackupGate

    return MemoryBackupGate()


def build_gated_stores(settings: Settings, metadata: MetadataStore, *, vectors: bool
                       ) -> tuple[BackupGate, ObjectStore, VectorStore | None]:
    """The deployment's backup gate and its object store (and vector store), every removal of theirs holding
    that gate: whatever removes objects or vector points (the pipeline, the lifecycle, an admin command, a
    re-index) waits while a backup, in this process or another, takes its picture.  One gate for both, so a
    removal that holds it around several (re-entrant per thread) never waits on itself."""
    from secondbrain.stores.gated import GatedObjectStore, GatedVectorStore

    gate = build_gate(metadata)
    return (gate, GatedObjectStore(build_objects(settings), gate),
            GatedVectorStore(build_vectors(settings), gate) if vectors else None)


def build_runtime(settings: Settings, *, vectors: bool, models: bool, llm: bool = False,
                  migrate: bool = True) -> Runtime:
    """Build stores (and load models when ``models``; the answer model client when ``llm``) for a
    process; apply migrations (unless ``migrate`` is False: a backup reads the data as it is)."""
    from secondbrain.sparse import Bm25Encoder

    metadata = build_metadata(settings)
    applied = metadata.database.migrate() if migrate else []
    if applied:
        log.info("migrations applied", extra={"versions": applied})
    # Every removal of an object or a vector point waits while a backup takes its picture.
    gate, objects, vector_store = build_gated_stores(settings, metadata, vectors=vectors)
    rt = Runtime(
        settings=settings, metadata=metadata, objects=objects, codec=EventCodec(),
        names=TopicNames(settings.topic_prefix), sealer=build_sealer(settings), gate=gate, vectors=vector_store,
    )
    if models:
        rt.embedders = build_embedders(settings)
        rt.embedder = rt.embedders.default
        rt.sparse = Bm25Encoder()
    if llm:
        rt.llm = build_llm(settings)
    return rt
