"""`secondbrain up` finds a local model server, confirmed by its /v1/models answer, never by the port alone.

Against the real llama.cpp server the answer tests use, on a port the test picks; beside it a web
server that answers HTTP but is no model server, and a port where nothing listens.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest

from app.cli.parser import build_parser
from devtools.llm_server import LocalLlamaServer, available
from secondbrain.infra.ports import free_port
from secondbrain.llm_discovery import DEFAULT_CANDIDATES, discover, endpoint_state, resolve_answer_model
from secondbrain.settings import Settings


@pytest.fixture(scope="module")
def llama() -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the local model server cannot run: {why} (run scripts/install.sh --dev)")
    with LocalLlamaServer(n_ctx=512) as server:
        yield server


class _WebPage(http.server.BaseHTTPRequestHandler):
    """A web app on a port a model server could use: every path is an HTML page, /v1/models too."""

    def do_GET(self) -> None:
        body = b"<html><body>My dashboard</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def web_page() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def nothing() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def settings(**kw: object) -> Settings:
    return Settings(**kw)  # type: ignore[arg-type]


def test_the_usual_ports_are_the_default() -> None:
    assert DEFAULT_CANDIDATES == "http://127.0.0.1:11434/v1,http://127.0.0.1:8080/v1,http://127.0.0.1:1234/v1"
    assert Settings().llm_discover == DEFAULT_CANDIDATES  # type: ignore[call-arg]


def test_a_running_model_server_is_found_and_used(llama: LocalLlamaServer, web_page: str, nothing: str) -> None:
    t0 = time.perf_counter()
    found = discover(f"{nothing},{web_page},{llama.base_url}")
    assert time.perf_counter() - t0 < 1.5
    assert found is not None and found.base_url == llama.base_url and found.models == (llama.model_id,)
    update, line = resolve_answer_model(settings(llm_discover=f"{nothing},{web_page},{llama.base_url}"))
    assert update == {"llm_base_url": llama.base_url, "llm_model": llama.model_id}
    assert line == f"answers: an OpenAI-compatible server at {llama.base_url}, model {llama.model_id}"
    # A model named with --llm-model (or SB_LLM_MODEL) is kept.
    update, line = resolve_answer_model(settings(llm_discover=llama.base_url, llm_model="my-model"))
    assert update["llm_model"] == "my-model" and line.endswith("model my-model")


def test_a_web_page_on_the_port_or_nothing_listening_is_not_a_model(web_page: str, nothing: str) -> None:
    t0 = time.perf_counter()
    assert discover(f"{web_page},{nothing}") is None
    update, line = resolve_answer_model(settings(llm_discover=f"{web_page},{nothing}"))
    assert time.perf_counter() - t0 < 2.5  # two lookups, each well under the second start-up allows
    assert update == {}
    assert line == "answers: quoted from your sources (no model found; --llm URL to use one)"
    state, message = endpoint_state(web_page, "local")
    assert state == "error" and "not as an OpenAI-compatible server" in message
    state, message = endpoint_state(nothing, "local")
    assert state == "error" and "Nothing answers" in message and "running" in message


def test_no_llm_does_not_look(llama: LocalLlamaServer) -> None:
    args = build_parser().parse_args(["up", "--no-llm"])
    assert args.no_llm is True
    update, line = resolve_answer_model(settings(llm_discover=llama.base_url), look=not args.no_llm)
    assert update == {} and "--no-llm" in line


def test_an_endpoint_given_is_used_with_its_first_model(llama: LocalLlamaServer) -> None:
    args = build_parser().parse_args(["up", "--llm", llama.base_url])
    assert args.llm == llama.base_url and args.llm_model is None
    update, line = resolve_answer_model(settings(llm_base_url=args.llm, llm_discover=""))
    assert update == {"llm_model": llama.model_id}
    assert line == f"answers: an OpenAI-compatible server at {llama.base_url}, model {llama.model_id}"
    assert endpoint_state(llama.base_url, llama.model_id)[0] == "working"
    state, message = endpoint_state(llama.base_url, "gpt-9")
    assert state == "error" and "does not have the model 'gpt-9'" in message and llama.model_id in message
