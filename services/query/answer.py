"""Extractive answers: the best sentences of the best sources, each cited as [n].

Used when no LLM is configured.  It never writes a sentence that is not in the user's data,
and says so plainly when no source shares a content word with the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from secondbrain.ports import SparseEncoder
from secondbrain.sparse import Bm25Encoder
from services.query.retrieval import SearchHit

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n{2,}|\n(?=\s*[-*•]\s)")
NOT_FOUND = "I could not find anything about that in your data."


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer with the source numbers it cites (1-based, into the sources sent)."""

    text: str
    citations: list[int]
    grounded: bool


def extractive_answer(question: str, hits: list[SearchHit], *, max_sentences: int = 3,
                      encoder: SparseEncoder | None = None) -> Answer:
    """Pick the sentences that share the most question terms, best-ranked sources first."""
    enc = encoder or Bm25Encoder()
    terms = set(enc.tokenize(question))
    if not terms or not hits:
        return Answer(NOT_FOUND, [], False)
    scored: list[tuple[float, int, int, str]] = []
    for n, hit in enumerate(hits, 1):
        for pos, sentence in enumerate(s.strip() for s in _SENTENCE.split(hit.text)):
            if not sentence:
                continue
            overlap = len(terms & set(enc.tokenize(sentence)))
            if overlap:
                # Overlap dominates; among equals prefer better-ranked sources and earlier sentences.
                scored.append((overlap - 0.01 * n - 0.001 * pos, n, pos, sentence))
    if not scored:
        return Answer(NOT_FOUND, [], False)
    best = sorted(scored, reverse=True)[:max_sentences]
    best.sort(key=lambda t: (t[1], t[2]))  # read in source order
    parts = [f"{sentence} [{n}]" for _score, n, _pos, sentence in best]
    return Answer(" ".join(parts), sorted({n for _s, n, _p, _t in best}), True)
