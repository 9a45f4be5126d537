"""The BM25 sparse encoder: deterministic, stopword-free, identifier-friendly."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from secondbrain.ports import SparseEncoder, SparseVector
from secondbrain.sparse import ENGLISH_STOPWORDS, Bm25Encoder, stem, term_index
from tests.paths import REPO as ROOT

pytestmark = pytest.mark.fast  # no services: in the fast lane

TEXTS = [
    "Invoice-8391 from ACME Hosting, due 30 March 2024.",
    "The quick brown fox jumps over the lazy dog; the dog sleeps.",
    "Straße, café, naïve: Unicode text with accents and 東京.",
    "",
]


def _as_lists(vectors: list[SparseVector]) -> list[list[list[float]]]:
    return [[list(map(float, v.indices)), v.values] for v in vectors]


def test_implements_protocol() -> None:
    assert isinstance(Bm25Encoder(), SparseEncoder)


def test_same_output_in_another_process() -> None:
    # A fresh interpreter with another hash seed must produce identical vectors: term ids may
    # not depend on Python's randomised hash().
    script = (
        "import json, sys\n"
        "from secondbrain.sparse import Bm25Encoder\n"
        "e = Bm25Encoder()\n"
        "texts = json.loads(sys.stdin.read())\n"
        "docs = e.encode_documents(texts)\n"
        "qs = [e.encode_query(t) for t in texts]\n"
        "print(json.dumps([[[list(map(float, v.indices)), v.values] for v in docs],"
        " [[list(map(float, v.indices)), v.values] for v in qs]]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", script], input=json.dumps(TEXTS), capture_output=True,
                         text=True, env=env, check=True).stdout
    docs, queries = json.loads(out)
    e = Bm25Encoder()
    assert docs == _as_lists(e.encode_documents(TEXTS))
    assert queries == _as_lists([e.encode_query(t) for t in TEXTS])


def test_term_index_is_a_fixed_31_bit_crc() -> None:
    # pinned values: changing the hash would silently orphan every stored sparse vector
    pinned = (1840044315, 1432397132, 304497391)
    assert (term_index("8391"), term_index("invoic"), term_index("東京")) == pinned
    for term in ("8391", "invoic", "東京"):
        assert term_index(term) == zlib.crc32(term.encode()) & 0x7FFFFFFF
        assert 0 <= term_index(term) < 2**31


def test_stopwords_are_dropped() -> None:
    e = Bm25Encoder()
    assert e.tokenize("the of and is it to a") == []
    assert e.encode_query("the of and") == SparseVector([], [])
    assert e.encode_documents(["the of and"]) == [SparseVector([], [])]
    terms = e.tokenize("The fox and the dog")
    assert "the" not in terms and "and" not in terms
    assert {"fox", "dog"} <= set(terms)
    assert {"the", "and", "of"} <= ENGLISH_STOPWORDS


def test_identifiers_are_kept() -> None:
    e = Bm25Encoder()
    terms = e.tokenize("Invoice-8391 and INV8391, ticket #42, version v1.2.3, user foo_bar")
    assert "invoice-8391" in terms and "8391" in terms
    assert "inv8391" in terms and "inv" in terms
    assert "42" in terms
    assert "v1.2.3" in terms
    assert "foo_bar" in terms and "foo" in terms and "bar" in terms
    # a query for the bare number or the words meets the document
    doc = set(e.encode_documents(["Invoice-8391 from ACME"])[0].indices)
    assert set(e.encode_query("invoice 8391").indices) <= doc
    assert set(e.encode_query("8391").indices) <= doc
    assert set(e.encode_query("INVOICE-8391").indices) <= doc


def test_light_stemming_joins_word_forms() -> None:
    e = Bm25Encoder()
    assert e.encode_query("invoices") == e.encode_query("invoice") == e.encode_query("invoiced")
    assert e.encode_query("running") == e.encode_query("run")
    assert e.encode_query("parties") == e.encode_query("party")
    assert stem("bus") == "bus" and stem("glass") == "glass" and stem("sing") == "sing"
    assert Bm25Encoder(stemming=False).tokenize("invoices") == ["invoices"]


def test_unicode_is_lowercased_and_kept() -> None:
    e = Bm25Encoder()
    assert e.tokenize("STRASSE Straße") == ["strass", "strass"]
    assert "東京" in e.tokenize("東京 tower")
    full_width = "\uff21\uff22\uff23\uff11\uff12\uff13"  # "ABC123" in full-width forms
    assert e.tokenize(full_width) == e.tokenize("abc123")  # NFKC folds them


@pytest.mark.parametrize("text", [*TEXTS, "a b c", "word " * 1000])
def test_indices_ascending_unique_and_parallel(text: str) -> None:
    e = Bm25Encoder()
    for vec in (e.encode_documents([text])[0], e.encode_query(text)):
        assert len(vec.indices) == len(vec.values)
        assert all(b > a for a, b in zip(vec.indices, vec.indices[1:], strict=False))
        assert all(isinstance(i, int) and 0 <= i < 2**31 for i in vec.indices)


def test_query_weights_are_one_per_distinct_term() -> None:
    e = Bm25Encoder()
    q = e.encode_query("dog dog dog fox")
    assert len(q.indices) == 2
    assert q.values == [1.0, 1.0]


def test_document_weights_are_saturated_term_frequencies() -> None:
    e = Bm25Encoder(avgdl=4.0)
    doc = e.encode_documents(["dog dog dog fox"])[0]  # dl = 4 = avgdl, so the length factor is 1
    weights = dict(zip(doc.indices, doc.values, strict=True))
    k1 = 1.2
    assert math.isclose(weights[term_index("dog")], 3 * (k1 + 1) / (3 + k1))
    assert math.isclose(weights[term_index("fox")], 1 * (k1 + 1) / (1 + k1))
    # saturation: more repeats add less and less, bounded by k1 + 1
    many = e.encode_documents(["dog " * 50])[0].values[0]
    assert weights[term_index("dog")] < many < k1 + 1
    # longer documents weigh the same tf lower (b = 0.75)
    long_doc = Bm25Encoder(avgdl=4.0).encode_documents(["fox " + "cat " * 40])[0]
    long_fox = dict(zip(long_doc.indices, long_doc.values, strict=True))[term_index("fox")]
    assert long_fox < weights[term_index("fox")]
    # b = 0 ignores the length
    flat = Bm25Encoder(avgdl=4.0, b=0.0).encode_documents(["fox " + "cat " * 40])[0]
    assert math.isclose(dict(zip(flat.indices, flat.values, strict=True))[term_index("fox")], 1.0)


def test_default_parameters_and_validation() -> None:
    e = Bm25Encoder()
    assert (e.k1, e.b, e.avgdl) == (1.2, 0.75, 256.0)
    for bad in ({"k1": -1.0}, {"b": 1.5}, {"avgdl": 0.0}):
        with pytest.raises(ValueError):
            Bm25Encoder(**bad)  # type: ignore[arg-type]


def test_a_word_tie_ranks_the_same_whichever_passage_was_stored_first(tmp_path: Path) -> None:
    # Both passages hold "plan" once at the same length: their BM25 scores tie exactly, and the engine would
    # order them by how they happened to be stored.  Scaled by their ids, they rank alike on every import.
    from secondbrain.ports import VectorPoint
    from secondbrain.sparse import tie_broken
    from secondbrain.stores.vectors_edge import EdgeVectorStore

    enc = Bm25Encoder()
    texts = {"00000000-0000-4000-8000-00000000000a": "The garden plan lists tomatoes.",
             "00000000-0000-4000-8000-00000000000b": "The museum plan lists paintings."}
    store = EdgeVectorStore(tmp_path / "vectors")
    try:
        orders = []
        for user, ids in (("first", list(texts)), ("second", list(texts)[::-1])):
            store.ensure_collection(user, 2)
            for pid in ids:  # one write each, in this order
                store.upsert(user, [VectorPoint(id=pid, dense=[1.0, 0.0], sparse=tie_broken(
                    enc.encode_documents([texts[pid]])[0], pid), payload={
                    "user_id": user, "document_id": pid, "source_id": pid, "chunk_id": pid, "chunk_index": 0,
                    "modality": "note", "title": "t", "text": texts[pid], "captured_at": "2024-01-01T00:00:00Z",
                    "ingested_at": "2024-01-01T00:00:00Z", "char_start": 0, "char_end": 1})])
            hits = store.search(user, dense=None, sparse=enc.encode_query("plan"), limit=2, mode="sparse")
            assert hits[0].score == pytest.approx(hits[1].score, rel=2e-4)  # a tie but for the hair
            orders.append([h.id for h in hits])
        assert orders[0] == orders[1]
    finally:
        store.close()
