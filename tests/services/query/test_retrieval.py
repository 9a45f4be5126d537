"""The retriever over the in-memory vector twin: what one search returns of a source edited a moment ago."""

from __future__ import annotations

import pytest

from secondbrain.ports import VectorPoint
from secondbrain.sparse import Bm25Encoder
from secondbrain.stores.memory import HashEmbedder
from secondbrain.stores.memory.vectors import MemoryVectorStore
from services.query.retrieval import Retriever

pytestmark = pytest.mark.fast

USER = "alice"


def points(embedder: HashEmbedder, sparse: Bm25Encoder, source: str, document: str, ingested_at: str,
           texts: list[str]) -> list[VectorPoint]:
    dense, words = embedder.embed_documents(texts), sparse.encode_documents(texts)
    return [VectorPoint(id=f"{document}-{i}", dense=dense[i], sparse=words[i], payload={
        "user_id": USER, "document_id": document, "source_id": source, "chunk_id": f"{document}-{i}",
        "chunk_index": i, "modality": "note", "title": "Ferries", "text": text, "captured_at": ingested_at,
        "ingested_at": ingested_at, "char_start": 0, "char_end": len(text)}) for i, text in enumerate(texts)]


def test_an_edited_note_shows_only_its_new_words_while_the_old_version_is_still_leaving_the_index() -> None:
    # The embedder writes a new version before the older one leaves the index: between the two, a search
    # that matches both must show the new words only, and other sources as they are.
    embedder, sparse, store = HashEmbedder(dimension=32), Bm25Encoder(), MemoryVectorStore()
    store.ensure_collection(USER, 32)
    store.upsert(USER, points(embedder, sparse, "ferries", "v1", "2026-03-02T09:00:00.000000Z",
                              ["The night ferry to Quillon leaves at 22:40 from pier 9."]))
    store.upsert(USER, points(embedder, sparse, "ferries", "v2", "2026-03-02T09:05:00.000000Z",
                              ["The night ferry to Quillon now leaves at 23:15 from pier 4."]))
    store.upsert(USER, points(embedder, sparse, "timetable", "t1", "2026-03-01T08:00:00.000000Z",
                              ["Quillon ferry timetable for the winter: the night ferry is cancelled."]))
    retriever = Retriever(store, embedder, sparse)
    for mode in ("hybrid", "dense", "sparse"):
        texts = [h.text for h in retriever.search(USER, "Quillon night ferry", k=10, mode=mode)]  # type: ignore[arg-type]
        assert not any("22:40" in t for t in texts), mode
        assert any("23:15" in t for t in texts) and any("timetable" in t for t in texts), mode
