"""The answer endpoint an admin sets at run time, and the status of each model part.

Real stores and the real llama.cpp server (on a port the test picks); the query service starts with
no model, as `secondbrain up --no-llm` does, and follows what the admin sets.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx_sse import connect_sse
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings


@pytest.fixture(scope="module")
def llama() -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    with LocalLlamaServer(n_ctx=1024) as server:
        yield server


class _WebPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def web_page() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def served(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Runtime]]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("settings"), postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", llm_max_tokens=8)
    rt = build_runtime(settings, vectors=True, models=True, llm=True)
    assert rt.llm is None  # no endpoint at start-up: extractive answers
    for user in ("alice", "bob"):
        rt.metadata.users.ensure_user(user)
    with TestClient(create_app(rt, gateway=False, query=True), base_url="http://127.0.0.1:8000") as client:
        yield client, rt
    rt.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def ask_meta(client: TestClient, key: str) -> dict[str, Any]:
    with connect_sse(client, "POST", "/v1/ask", json={"question": "When does the office open?"},
                     headers=bearer(key)) as stream:
        assert stream.response.status_code == 200
        for sse in stream.iter_sse():
            assert sse.event == "meta"
            return dict(sse.json())
    raise AssertionError("no meta event")


def test_an_admin_sets_the_answer_model_and_questions_use_it(
        served: tuple[TestClient, Runtime], llama: LocalLlamaServer, web_page: str) -> None:
    client, rt = served
    _, admin = rt.metadata.api_keys.create_api_key("alice", "admin", "admin")
    _, user = rt.metadata.api_keys.create_api_key("bob", "user")
    status = client.get("/v1/status", headers=bearer(user)).json()["components"]
    assert set(status) == {"answers", "embeddings", "transcriber", "ocr"}
    assert status["answers"]["state"] == "not configured" and "quote your sources" in status["answers"]["message"]
    assert status["embeddings"]["state"] == "working" and status["embeddings"]["name"] == "minilm-int8"
    assert all(c["state"] in ("working", "not configured", "error") and c["message"] for c in status.values())
    assert ask_meta(client, user)["answer_mode"] == "extractive"

    body = {"base_url": llama.base_url, "api_key": "sk-very-secret"}
    # Only admins see or change it.
    for method in ("GET", "PUT", "DELETE"):
        r = client.request(method, "/v1/settings/answers", json=body if method == "PUT" else None,
                           headers=bearer(user))
        assert r.status_code == 403 and "admin key" in r.json()["detail"]
    # A wrong address, or a port with something else on it, is a sentence, and nothing is kept.
    r = client.put("/v1/settings/answers", json={"base_url": web_page}, headers=bearer(admin))
    assert r.status_code == 422 and "not as an OpenAI-compatible server" in r.json()["detail"]
    r = client.put("/v1/settings/answers", json={"base_url": "ftp://example.org/v1"}, headers=bearer(admin))
    assert r.status_code == 422 and "http(s) address" in r.json()["detail"]
    r = client.put("/v1/settings/answers", json={**body, "model": "gpt-9"}, headers=bearer(admin))
    assert r.status_code == 422 and llama.model_id in r.json()["detail"]
    assert client.get("/v1/settings/answers", headers=bearer(admin)).json()["source"] == "none"

    r = client.put("/v1/settings/answers", json=body, headers=bearer(admin))
    assert r.status_code == 200, r.text
    shown = r.json()
    assert (shown["source"], shown["base_url"], shown["model"], shown["api_key_set"], shown["state"]) == (
        "set here", llama.base_url, llama.model_id, True, "working")
    assert "sk-very-secret" not in r.text and "sk-very-secret" not in client.get(
        "/v1/settings/answers", headers=bearer(admin)).text
    meta = ask_meta(client, user)
    assert meta["answer_mode"] == "llm" and meta["model"] == llama.model_id
    assert client.get("/v1/status", headers=bearer(user)).json()["components"]["answers"]["state"] == "working"
    assert client.get("/readyz").json()["checks"]["llm"] == "ok"
    # Changing the model without resending the key keeps the key.
    r = client.put("/v1/settings/answers", json={"base_url": llama.base_url, "model": llama.model_id},
                   headers=bearer(admin))
    assert r.json()["api_key_set"] is True
    stored = rt.metadata.server_settings.answer_endpoint()
    assert stored is not None and stored.api_key == "sk-very-secret"

    r = client.delete("/v1/settings/answers", headers=bearer(admin))
    assert r.status_code == 200 and r.json()["source"] == "none"
    assert ask_meta(client, user)["answer_mode"] == "extractive"
