"""One behaviour contract for every :class:`secondbrain.ports.Reranker` implementation.

Implementations: the cross-encoder on ONNX Runtime (:class:`OnnxCrossEncoder`) over the model directory
``SB_RERANKER_MODEL_DIR`` names (none is packaged: without one its cases are skipped with that reason),
and the in-memory twin :class:`OverlapReranker` (in the fast lane).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import pytest

from secondbrain.ports import Reranker
from secondbrain.stores.memory import OverlapReranker

MODEL_DIR = os.environ.get("SB_RERANKER_MODEL_DIR", "")
NO_MODEL = "no cross-encoder is packaged: set SB_RERANKER_MODEL_DIR to an exported ONNX cross-encoder to run these"

QUESTION = "When is the Acme hosting invoice due?"
PASSAGES = ["Invoice 8391 from Acme Hosting is due on Friday.", "The cat sat on the mat.",
            "Quarterly revenue grew by 12 percent.", "Straße café 東京", "x"]


def _cross_encoder() -> Reranker:
    from services.query.rerank import OnnxCrossEncoder

    return OnnxCrossEncoder(MODEL_DIR, batch_size=4)


IMPLEMENTATIONS: dict[str, Callable[[], Reranker]] = {"cross-encoder": _cross_encoder, "overlap": OverlapReranker}


@pytest.fixture(scope="module", params=[
    pytest.param("cross-encoder", marks=pytest.mark.skipif(not MODEL_DIR, reason=NO_MODEL)),
    pytest.param("overlap", marks=pytest.mark.fast),
])
def reranker(request: pytest.FixtureRequest) -> Reranker:
    return IMPLEMENTATIONS[request.param]()


def test_is_a_reranker_with_a_stable_id(reranker: Reranker) -> None:
    assert isinstance(reranker, Reranker)
    assert reranker.model_id and reranker.model_id == reranker.model_id


def test_one_score_per_passage_in_order_and_repeatable(reranker: Reranker) -> None:
    scores = reranker.score(QUESTION, PASSAGES)
    assert len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
    # the same order: each passage's score is the one it gets alone, and again
    for passage, s in zip(PASSAGES, scores, strict=True):
        assert reranker.score(QUESTION, [passage])[0] == pytest.approx(s, abs=1e-4)
    assert reranker.score(QUESTION, PASSAGES) == pytest.approx(scores, abs=1e-6)
    assert reranker.score(QUESTION, []) == []


def test_batches_do_not_change_the_scores(reranker: Reranker) -> None:
    many = [f"{p} ({i})" for i, p in enumerate(PASSAGES * 8)]  # more than one batch of the cross-encoder
    scores = reranker.score(QUESTION, many)
    assert len(scores) == len(many)
    assert scores[:5] == pytest.approx(reranker.score(QUESTION, many[:5]), abs=1e-4)


def test_the_passage_that_answers_scores_highest(reranker: Reranker) -> None:
    scores = reranker.score(QUESTION, PASSAGES)
    assert scores.index(max(scores)) == 0
    assert scores[0] > scores[1]


def test_blank_long_and_unicode_input_is_scored(reranker: Reranker) -> None:
    for question in (QUESTION, "", "   ", "東京のカフェ"):
        scores = reranker.score(question, ["", "   ", "budget planning " * 1500, "Straße café 東京"])
        assert len(scores) == 4 and all(math.isfinite(s) for s in scores)
