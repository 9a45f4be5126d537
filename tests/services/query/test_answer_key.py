"""The answer model's API key: kept encrypted, never shown again, and still sent to the model.

The model server (llama.cpp's, on a loopback port) refuses every request without the key, as a
hosted API does, so an answer from it shows the key reached it.  Users who are not admins see that
answers work, not where the model runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from httpx_sse import connect_sse
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.runtime import Runtime
from secondbrain.secret_box import KEY_FILE
from secondbrain.settings import Settings

MODEL_KEY = "sk-model-key-8f3e2a"


@pytest.fixture(scope="module")
def llama() -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    with LocalLlamaServer(n_ctx=1024, api_key=MODEL_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def served(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Runtime, Path]]:
    data_dir = tmp_path_factory.mktemp("answer-key")
    settings = Settings(data_dir=data_dir, postgres_dsn=SecretStr(dsn),  # type: ignore[call-arg]
                        kafka_bootstrap="127.0.0.1:9", llm_max_tokens=8)
    rt = build_runtime(settings, vectors=True, models=True, llm=True)
    for user in ("alice", "bob"):
        rt.metadata.users.ensure_user(user)
    with TestClient(create_app(rt, gateway=False, query=True), base_url="http://127.0.0.1:8000") as client:
        yield client, rt, data_dir
    rt.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def ask(client: TestClient, key: str) -> list[tuple[str, Any]]:
    with connect_sse(client, "POST", "/v1/ask", json={"question": "When does the office open?"},
                     headers=bearer(key)) as stream:
        assert stream.response.status_code == 200
        return [(sse.event, sse.json()) for sse in stream.iter_sse()]


def stored_row(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT api_key FROM answer_endpoint").fetchone()
    assert row is not None and row[0] is not None
    return str(row[0])


def test_the_key_is_encrypted_at_rest_and_still_reaches_the_model(
        served: tuple[TestClient, Runtime, Path], llama: LocalLlamaServer, dsn: str) -> None:
    client, rt, data_dir = served
    _, admin = rt.metadata.api_keys.create_api_key("alice", "admin", "admin")
    _, user = rt.metadata.api_keys.create_api_key("bob", "user")
    # Without the key the model server refuses: the endpoint is not kept.
    r = client.put("/v1/settings/answers", json={"base_url": llama.base_url}, headers=bearer(admin))
    assert r.status_code == 422 and "refused the API key" in r.json()["detail"]

    r = client.put("/v1/settings/answers", json={"base_url": llama.base_url, "api_key": MODEL_KEY},
                   headers=bearer(admin))
    assert r.status_code == 200 and r.json()["api_key_set"] is True and r.json()["state"] == "working"
    # In the database: ciphertext only; the key to it lives in the data directory, readable by its owner only.
    raw = stored_row(dsn)
    assert raw.startswith("sbenc:v1:") and MODEL_KEY not in raw
    assert (data_dir / KEY_FILE).stat().st_mode & 0o077 == 0
    # Never shown again, to anyone.
    for path in ("/v1/settings/answers", "/v1/status"):
        assert MODEL_KEY not in client.get(path, headers=bearer(admin)).text
        assert MODEL_KEY not in client.get(path, headers=bearer(user)).text

    # The answer comes from the model, which only answers with the key.
    events = ask(client, user)
    assert events[0][1]["answer_mode"] == "llm" and events[0][1]["model"] == llama.model_id
    assert events[-1][0] == "done" and not any(name == "error" for name, _ in events)


def test_a_plaintext_key_from_an_earlier_version_still_answers(
        served: tuple[TestClient, Runtime, Path], llama: LocalLlamaServer, dsn: str) -> None:
    client, rt, _ = served
    _, admin = rt.metadata.api_keys.create_api_key("alice", "admin", "admin")
    _, user = rt.metadata.api_keys.create_api_key("bob", "user")
    assert client.delete("/v1/settings/answers", headers=bearer(admin)).status_code == 200  # read afresh next
    with psycopg.connect(dsn) as conn:  # the row as the previous version stored it
        conn.execute("INSERT INTO answer_endpoint (base_url, model, api_key) VALUES (%s, %s, %s)",
                     (llama.base_url, llama.model_id, MODEL_KEY))
    deadline = time.monotonic() + 10  # every query process reads the stored endpoint again within 5 s
    while (events := ask(client, user))[0][1]["answer_mode"] != "llm" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert events[0][1]["answer_mode"] == "llm" and events[-1][0] == "done"
    raw = stored_row(dsn)
    assert raw.startswith("sbenc:v1:") and MODEL_KEY not in raw  # encrypted on that first read
    assert rt.metadata.server_settings.answer_endpoint().api_key == MODEL_KEY  # type: ignore[union-attr]


def test_users_who_are_not_admins_do_not_see_where_the_model_runs(
        served: tuple[TestClient, Runtime, Path], llama: LocalLlamaServer) -> None:
    client, rt, _ = served
    _, admin = rt.metadata.api_keys.create_api_key("alice", "admin", "admin")
    _, user = rt.metadata.api_keys.create_api_key("bob", "user")
    r = client.put("/v1/settings/answers", json={"base_url": llama.base_url, "api_key": MODEL_KEY},
                   headers=bearer(admin))
    assert r.status_code == 200
    seen = client.get("/v1/status", headers=bearer(user))
    answers = seen.json()["components"]["answers"]
    assert answers == {"label": "Answer model", "name": llama.model_id, "state": "working",
                       "message": "Answers come from a model server that is working."}
    assert llama.base_url not in seen.text and f":{llama.port}" not in seen.text
    # An admin sees where it runs.
    admin_view = client.get("/v1/status", headers=bearer(admin)).json()["components"]["answers"]
    assert llama.base_url in admin_view["message"]
