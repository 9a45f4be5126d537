"""A question's words matched to what was said in another tense: the irregular verbs' past forms read as their
present ("met" for "meet", "went" for "go"), which the stemmer leaves apart."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from secondbrain.ports import SparseEncoder, SparseVector

# Irregular verbs whose past forms the stemmer leaves apart from the present ("met" for "meet", "went" for
# "go"): a question asks in one tense ("how did they meet?") and the person said it in another.
IRREGULAR = {
    "begin": "began begun", "buy": "bought", "bring": "brought", "build": "built", "come": "came",
    "catch": "caught", "choose": "chose chosen", "draw": "drew drawn", "drive": "drove driven",
    "eat": "ate eaten", "fall": "fell fallen", "feel": "felt", "fight": "fought", "find": "found",
    "fly": "flew flown", "forget": "forgot forgotten", "give": "gave given", "go": "went gone",
    "get": "got gotten", "grow": "grew grown", "hear": "heard", "hold": "held", "keep": "kept",
    "know": "knew known", "lead": "led", "leave": "left", "lend": "lent", "lose": "lost", "make": "made",
    "mean": "meant", "meet": "met", "pay": "paid", "ride": "rode ridden", "run": "ran", "sing": "sang sung",
    "sit": "sat", "see": "saw seen", "sell": "sold", "send": "sent", "sleep": "slept", "spend": "spent",
    "speak": "spoke spoken", "stand": "stood", "swim": "swam swum", "teach": "taught", "think": "thought",
    "tell": "told", "take": "took taken", "throw": "threw thrown", "wake": "woke woken", "win": "won",
    "wear": "wore worn", "write": "wrote written", "break": "broke broken",
}


@functools.lru_cache(maxsize=8)
def past_forms(encoder: SparseEncoder) -> dict[str, str]:
    """The encoder's term of each irregular past form mapped to its present's: once per encoder, not per
    question (the engine keeps one encoder for its lifetime)."""
    base: dict[str, str] = {}
    for present, pasts in IRREGULAR.items():
        stem = encoder.tokenize(present)
        for past in pasts.split():
            form = encoder.tokenize(past)
            if stem and form and form != stem:
                base[form[0]] = stem[0]
    return base


class Lemmas:
    """An encoder's terms with the irregular verbs' past forms read as their present: for matching a question
    to what was said only (the index keeps the encoder's own terms)."""

    def __init__(self, encoder: SparseEncoder) -> None:
        self.encoder = encoder
        self.base = past_forms(encoder)  # type: ignore[arg-type]  # encoders hash by identity

    def tokenize(self, text: str) -> list[str]:
        return [self.base.get(t, t) for t in self.encoder.tokenize(text)]

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return self.encoder.encode_documents(texts)

    def encode_query(self, text: str) -> SparseVector:
        return self.encoder.encode_query(text)
