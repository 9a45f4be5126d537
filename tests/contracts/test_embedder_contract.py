"""One behaviour contract for every :class:`secondbrain.ports.Embedder` implementation.

Implementations: the packaged all-MiniLM-L6-v2 (int8 ONNX), :class:`OpenAICompatibleEmbedder`
against a real llama.cpp server (``llama_cpp.server`` in embedding mode, serving the packaged
SmolLM2-135M GGUF, 576-d mean-pooled vectors), and the in-memory twin :class:`HashEmbedder`
(in the fast lane).  Failure modes a real server cannot produce on
demand (nothing listening, 429/503/401/400 answers) come from tiny HTTP servers written here.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from devtools.llm_server import LocalLlamaServer, available
from secondbrain.embedding import (
    EmbedderPool,
    EmbeddingRequestError,
    EmbeddingUnavailable,
    OnnxMiniLMEmbedder,
    OpenAICompatibleEmbedder,
    load_embedder,
)
from secondbrain.errors import classify
from secondbrain.infra.ports import free_port
from secondbrain.ports import Embedder
from secondbrain.stores.memory import HashEmbedder

TEXTS = ["The cat sat on the mat.", "Quarterly revenue grew by 12 percent.", "x", "Straße café 東京",
         "Invoice 8391 from Acme Hosting is due on Friday."]


@pytest.fixture(scope="module")
def llama_embedding_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the embedder contract needs llama-cpp-python and the SmolLM2 model ({why})", pytrace=False)
    log = tmp_path_factory.mktemp("llama-embed") / "server.log"
    with LocalLlamaServer(log_path=log, n_ctx=2048, embedding=True) as server:
        yield server


def _onnx(_: pytest.FixtureRequest) -> Embedder:
    return load_embedder("minilm-int8", batch_size=4)


def _openai_llama(request: pytest.FixtureRequest) -> Embedder:
    server: LocalLlamaServer = request.getfixturevalue("llama_embedding_server")
    return load_embedder(f"openai:{server.model_id}", batch_size=4, base_url=server.base_url)


IMPLEMENTATIONS: dict[str, tuple[Callable[[pytest.FixtureRequest], Embedder], int]] = {
    "onnx-minilm": (_onnx, 384),
    "openai-compatible+llama.cpp": (_openai_llama, 576),
    "hash": (lambda _: HashEmbedder(384), 384),
}


@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.fast) if name == "hash" else name
                                        for name in sorted(IMPLEMENTATIONS)])
def impl(request: pytest.FixtureRequest) -> Iterator[tuple[str, Embedder, int]]:
    make, dimension = IMPLEMENTATIONS[request.param]
    embedder = make(request)
    yield request.param, embedder, dimension
    close = getattr(embedder, "close", None)
    if close is not None:
        close()


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --------------------------------------------------------------------------- the contract


def test_is_an_embedder_with_a_stable_id_and_dimension(impl: tuple[str, Embedder, int]) -> None:
    name, embedder, dimension = impl
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == dimension
    assert embedder.model_id and embedder.model_id == embedder.model_id
    if name.startswith("openai"):
        assert embedder.model_id.startswith("openai:SmolLM2-135M-Instruct.Q4_1@127.0.0.1:")


def test_one_unit_vector_per_text_in_order(impl: tuple[str, Embedder, int]) -> None:
    _, embedder, dimension = impl
    vectors = embedder.embed_documents(TEXTS)
    assert len(vectors) == len(TEXTS)
    for v in vectors:
        assert len(v) == dimension and all(isinstance(x, float) for x in v)
        assert abs(np.linalg.norm(v) - 1.0) < 1e-4
    # the same order: each text's vector is the one it gets alone
    for text, v in zip(TEXTS, vectors, strict=True):
        assert _cos(v, embedder.embed_documents([text])[0]) > 0.999
    assert embedder.embed_documents([]) == []


def test_query_and_document_agree_and_repeat(impl: tuple[str, Embedder, int]) -> None:
    _, embedder, _ = impl
    text = "when must the hosting invoice be paid?"
    assert _cos(embedder.embed_query(text), embedder.embed_documents([text])[0]) > 0.999
    assert _cos(embedder.embed_query(text), embedder.embed_query(text)) > 0.9999


def test_related_texts_are_closer_than_unrelated_ones(impl: tuple[str, Embedder, int]) -> None:
    _, embedder, _ = impl
    cat, cat2, money = embedder.embed_documents(
        ["The cat sat on the mat.", "A cat was sitting on the mat.", "Quarterly revenue grew by 12 percent."])
    assert _cos(cat, cat2) > _cos(cat, money)


def test_blank_and_long_texts_are_embedded(impl: tuple[str, Embedder, int]) -> None:
    _, embedder, dimension = impl
    blank, empty, long = embedder.embed_documents(["   ", "", "budget planning " * 1500])
    for v in (blank, empty, long):
        assert len(v) == dimension and abs(np.linalg.norm(v) - 1.0) < 1e-4


def test_batches_do_not_change_the_vectors(impl: tuple[str, Embedder, int], request: pytest.FixtureRequest) -> None:
    name, embedder, _ = impl
    if name == "onnx-minilm":
        other: Embedder = OnnxMiniLMEmbedder(batch_size=1)
    elif name == "hash":
        other = HashEmbedder(384)
    else:
        server: LocalLlamaServer = request.getfixturevalue("llama_embedding_server")
        other = OpenAICompatibleEmbedder(server.base_url, server.model_id, batch_size=2)
    texts = TEXTS * 2
    for a, b in zip(embedder.embed_documents(texts), other.embed_documents(texts), strict=True):
        assert _cos(a, b) > 0.999


# --------------------------------------------------------------------------- the OpenAI-compatible client's errors


class _Answer(http.server.BaseHTTPRequestHandler):
    status = 503
    body: dict[str, Any] = {"error": {"message": "overloaded"}}

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        data = json.dumps(self.body).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[Callable[[int, dict[str, Any]], str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(status: int, body: dict[str, Any]) -> str:
        handler = type("Handler", (_Answer,), {"status": status, "body": body})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_nothing_listening_is_retryable() -> None:
    with pytest.raises(EmbeddingUnavailable) as info:
        load_embedder("openai:m", base_url=f"http://127.0.0.1:{free_port()}/v1", timeout_s=5)
    assert classify(info.value) == "retryable"
    assert "did not answer" in str(info.value)


@pytest.mark.parametrize(("status", "error", "kind"), [
    (503, EmbeddingUnavailable, "retryable"), (429, EmbeddingUnavailable, "retryable"),
    (401, EmbeddingRequestError, "permanent"), (400, EmbeddingRequestError, "permanent"),
])
def test_server_answers_are_classified(answering: Callable[[int, dict[str, Any]], str], status: int,
                                       error: type[Exception], kind: str) -> None:
    url = answering(status, {"error": {"message": f"told {status}"}})
    embedder = OpenAICompatibleEmbedder(url, "m", SecretStr("sk-test"), timeout_s=5)
    with pytest.raises(error) as info:
        embedder.embed_documents(["hello"])
    assert classify(info.value) == kind
    assert f"told {status}" in str(info.value) and "sk-test" not in str(info.value)
    if status == 401:
        assert getattr(info.value, "kind", None) == "unauthorized"


def test_a_server_returning_too_few_vectors_is_caught(answering: Callable[[int, dict[str, Any]], str]) -> None:
    url = answering(200, {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
                          "data": [{"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}]})
    embedder = OpenAICompatibleEmbedder(url, "m", timeout_s=5)
    assert embedder.embed_documents(["one"]) == [pytest.approx([0.6, 0.8])]
    with pytest.raises(EmbeddingUnavailable, match="returned 1 vectors for 2 texts"):
        embedder.embed_documents(["one", "two"])


def test_specs_are_checked() -> None:
    for bad in ("bert-huge", "openai:", "openai: ", ""):
        with pytest.raises(ValueError, match="unknown embedding model"):
            load_embedder(bad)
    with pytest.raises(ValueError, match="SB_EMBEDDING_BASE_URL"):
        load_embedder("openai:text-embedding-3-small")


# --------------------------------------------------------------------------- the pool


def test_pool_loads_each_model_once_and_retries_failures(tmp_path: Path) -> None:
    default = load_embedder("minilm-int8")
    calls: list[str] = []
    fail = [True]
    gate = threading.Barrier(4)

    def loader(spec: str) -> Embedder:
        calls.append(spec)
        if fail[0]:
            raise EmbeddingUnavailable("down")
        return OnnxMiniLMEmbedder(batch_size=2)

    pool = EmbedderPool(default, loader)
    assert pool.default_spec == "minilm-int8" and pool.get("minilm-int8") is default
    with pytest.raises(EmbeddingUnavailable):
        pool.get("openai:x")
    fail[0] = False
    got: list[Embedder] = []

    def get() -> None:
        gate.wait()
        got.append(pool.get("openai:x"))

    threads = [threading.Thread(target=get) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(e) for e in got}) == 1
    assert calls == ["openai:x", "openai:x"]  # the failed load, then exactly one more
    with pytest.raises(ValueError):
        pool.get("nonsense")
