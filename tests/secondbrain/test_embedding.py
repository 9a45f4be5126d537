"""The production dense embedder: all-MiniLM-L6-v2 (int8 ONNX) with mean pooling and L2 norm."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from secondbrain.embedding import MAX_TOKENS, OnnxMiniLMEmbedder, load_embedder
from secondbrain.ports import Embedder


@pytest.fixture(scope="module")
def embedder() -> Iterator[OnnxMiniLMEmbedder]:
    yield load_embedder(batch_size=16)


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_implements_the_embedder_protocol(embedder: OnnxMiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 384
    assert embedder.model_id == "all-MiniLM-L6-v2-int8"


def test_unknown_model_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown embedding model"):
        load_embedder("bert-huge")


def test_vectors_are_384d_and_unit_length(embedder: OnnxMiniLMEmbedder) -> None:
    texts = ["The cat sat on the mat.", "Quarterly revenue grew by 12 percent.", "x", "Straße café 東京"]
    vectors = embedder.embed_documents(texts)
    assert len(vectors) == len(texts)
    for v in vectors:
        assert len(v) == 384
        assert all(isinstance(x, float) for x in v)
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)
        assert np.all(np.isfinite(v))
    q = embedder.embed_query("where did the cat sit?")
    assert len(q) == 384 and np.linalg.norm(q) == pytest.approx(1.0, abs=1e-4)


def test_similar_sentences_score_higher_than_unrelated(embedder: OnnxMiniLMEmbedder) -> None:
    a, b, c = embedder.embed_documents([
        "The invoice from the hosting company is due at the end of March.",
        "Our web hosting bill has to be paid by late March.",
        "My grandmother bakes apple pie every Sunday afternoon.",
    ])
    assert _cos(a, b) > _cos(a, c) + 0.2
    assert _cos(a, b) > 0.5
    q = embedder.embed_query("when must the hosting invoice be paid?")
    assert _cos(q, a) > _cos(q, c)
    assert _cos(q, b) > _cos(q, c)


def test_query_and_document_embeddings_agree(embedder: OnnxMiniLMEmbedder) -> None:
    """MiniLM uses no query prefix: a query is embedded exactly like a one-text batch."""
    text = "budget for the trip to Lisbon"
    assert np.allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-5)


def test_batch_order_preserved_across_batch_boundaries(embedder: OnnxMiniLMEmbedder) -> None:
    # 37 texts of very different lengths: three batches of 16, 16 and 5 with padding in each.
    texts = [f"Sentence number {i} about " + " ".join(["topic"] * (i % 7)) + f" item {i * 13}."
             for i in range(37)]
    texts[5] = "A much longer passage. " * 30
    batched = embedder.embed_documents(texts)
    single = [embedder.embed_documents([t])[0] for t in texts]
    assert len(batched) == 37
    for i, (x, y) in enumerate(zip(batched, single, strict=True)):
        assert np.max(np.abs(np.array(x) - np.array(y))) < 1e-4, f"text {i} differs when batched"
    # and the vectors really are different per text (no repeated row)
    assert len({tuple(np.round(v, 4)) for v in batched}) == 37


def test_batch_size_does_not_change_vectors() -> None:
    texts = [f"note {i}: meeting with team {i % 3} about the roadmap" for i in range(9)]
    small = OnnxMiniLMEmbedder(batch_size=2).embed_documents(texts)
    big = OnnxMiniLMEmbedder(batch_size=32).embed_documents(texts)
    assert np.allclose(small, big, atol=1e-4)


def test_empty_input_list_gives_no_vectors(embedder: OnnxMiniLMEmbedder) -> None:
    assert embedder.embed_documents([]) == []


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_empty_or_blank_text_gives_a_valid_vector(embedder: OnnxMiniLMEmbedder, blank: str) -> None:
    vectors = embedder.embed_documents(["hello world", blank, "goodbye"])
    assert len(vectors) == 3
    v = vectors[1]
    assert len(v) == 384 and np.all(np.isfinite(v))
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)
    # the neighbours are not disturbed by the blank text in their batch
    assert np.allclose(vectors[0], embedder.embed_query("hello world"), atol=1e-4)
    q = embedder.embed_query(blank)
    assert len(q) == 384 and np.all(np.isfinite(q))


def test_long_text_is_truncated_not_rejected(embedder: OnnxMiniLMEmbedder) -> None:
    long_text = "word " * 2000
    assert len(embedder._tokenizer.encode(long_text).ids) == MAX_TOKENS  # the model sees the first 256
    (v,) = embedder.embed_documents([long_text])
    assert len(v) == 384 and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)


def test_deterministic(embedder: OnnxMiniLMEmbedder) -> None:
    text = "Deterministic embeddings make replays idempotent."
    assert embedder.embed_query(text) == embedder.embed_query(text)

