"""An optional cross-encoder reranker loaded from a local model directory.

The directory holds a cross-encoder exported to ONNX (``model.onnx``, e.g. an
ms-marco MiniLM cross-encoder) and its ``tokenizer.json``.  Nothing is downloaded: without a
configured directory the engine keeps the order Qdrant's fusion gave.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


class OnnxCrossEncoder:
    """Scores (query, passage) pairs with a cross-encoder on onnxruntime (CPU)."""

    def __init__(self, model_dir: Path | str, *, max_length: int = 512, batch_size: int = 16) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        root = Path(model_dir)
        model = root / "model.onnx"
        if not model.is_file():
            found = sorted(root.glob("**/*.onnx"))
            if not found:
                raise RuntimeError(f"no model.onnx under {root}: export the cross-encoder to ONNX first "
                                   "(optimum-cli export onnx --task text-classification ...)")
            model = found[0]
        tok_path = root / "tokenizer.json"
        if not tok_path.is_file():
            raise RuntimeError(f"no tokenizer.json in {root}")
        self._tokenizer = Tokenizer.from_file(str(tok_path))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        self._session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch = batch_size
        self._id = f"cross-encoder:{root.name}"

    @property
    def model_id(self) -> str:
        """The directory's name as the model id."""
        return self._id

    def score(self, query: str, passages: list[str]) -> list[float]:
        """Relevance in [0, 1] per passage (sigmoid of the model's logit)."""
        out: list[float] = []
        for i in range(0, len(passages), self._batch):
            batch = passages[i:i + self._batch]
            enc = self._tokenizer.encode_batch([(query, p) for p in batch])
            feed: dict[str, Any] = {}
            if "input_ids" in self._inputs:
                feed["input_ids"] = np.array([e.ids for e in enc], dtype=np.int64)
            if "attention_mask" in self._inputs:
                feed["attention_mask"] = np.array([e.attention_mask for e in enc], dtype=np.int64)
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
            logits = self._session.run(None, feed)[0]
            for row in np.asarray(logits).reshape(len(batch), -1):
                x = float(row[-1])
                out.append(1.0 / (1.0 + math.exp(-x)))
        return out
