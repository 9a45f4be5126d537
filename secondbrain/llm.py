"""The connection to a language model: one small Protocol and an OpenAI-compatible client.

Answer generation depends only on :class:`ChatLLM`.  :class:`OpenAICompatibleLLM` talks to
any server with an OpenAI-style ``/v1/chat/completions`` endpoint (llama.cpp's server, vLLM,
Ollama, a hosted API) through the ``openai`` package, and turns its many exception types into
the pipeline's two: :class:`LLMUnavailable` (worth retrying later) and :class:`LLMRequestError`
(this request will never succeed as it is).
"""

from __future__ import annotations

import importlib
import importlib.util
import queue
import threading
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import openai
from opentelemetry.trace import Span, SpanKind
from pydantic import SecretStr

from secondbrain import telemetry
from secondbrain.errors import PermanentError, RetryableError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["ChatLLM", "LLMRequestError", "LLMUnavailable", "OpenAICompatibleLLM"]

# Local servers ignore the key, but the openai client insists on one.  An explicit placeholder
# also stops the client from picking up $OPENAI_API_KEY and sending it to an unrelated server.
_NO_KEY = "no-key"

# Errors of the HTTP library under ``openai`` escape unwrapped while a stream is read (a cut
# connection, a read timeout).  openai 1.x is built on httpx, later majors on httpx2: catch both.
_HTTP_MODULES: list[ModuleType] = [importlib.import_module(name) for name in ("httpx", "httpx2")
                                   if importlib.util.find_spec(name) is not None]
_TRANSPORT_ERRORS: tuple[type[Exception], ...] = tuple(m.HTTPError for m in _HTTP_MODULES)
_TIMEOUT_ERRORS: tuple[type[Exception], ...] = tuple(m.TimeoutException for m in _HTTP_MODULES)
_CLIENT_ERRORS: tuple[type[Exception], ...] = (openai.APIError, *_TRANSPORT_ERRORS)


class LLMUnavailable(RetryableError):
    """The language model did not answer (down, too slow, overloaded, 5xx, 429): try again later."""


class LLMRequestError(PermanentError):
    """The language model refused the request (unknown model, context too long, bad key): retrying won't help."""


@runtime_checkable
class ChatLLM(Protocol):
    """A chat model that streams its answer as text deltas."""

    @property
    def model_id(self) -> str:
        """The model's name as the server knows it (recorded next to every answer)."""
        ...

    def stream_chat(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 512,
                    temperature: float = 0.1, stop: Sequence[str] | None = None) -> Iterator[str]:
        """Yield the answer to ``messages`` (``{"role": ..., "content": ...}``) as non-empty text deltas.

        Closing the iterator early (a generator's ``close()``) cancels the request.

        :raises LLMUnavailable: the server did not answer (in time).
        :raises LLMRequestError: the server refused the request.
        """
        ...

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        """Return the whole answer to ``messages`` at once (same errors as :meth:`stream_chat`)."""
        ...


def _server_message(exc: openai.APIStatusError) -> str:
    """The human part of an error response (OpenAI, llama.cpp and FastAPI shapes), else the raw text."""
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str) and error:
            return error
        if body.get("detail"):
            return str(body["detail"])
    text = exc.response.text.strip() if exc.response is not None else ""
    return text[:500] or exc.message


def _as_params(messages: Sequence[Mapping[str, str]]) -> list[ChatCompletionMessageParam]:
    """Plain role/content mappings as the typed dicts the ``openai`` client declares."""
    return [cast("ChatCompletionMessageParam", dict(m)) for m in messages]


class OpenAICompatibleLLM:
    """A :class:`ChatLLM` backed by an OpenAI-compatible HTTP server.

    ``timeout_s`` bounds connecting, sending, the wait for a whole :meth:`complete` answer and
    the silence between two streamed deltas; ``first_token_timeout_s`` (default ``timeout_s``)
    bounds the wait for the first streamed delta, which includes reading the prompt.  Both are
    measured on the text that arrives, so keep-alive pings from a stuck server do not extend
    them.  ``max_retries`` is 0 by default: the caller (the pipeline runner, or a person
    waiting for an answer) decides whether a retry is worth it.
    """

    def __init__(self, base_url: str, model: str, api_key: SecretStr | None = None, *,
                 timeout_s: float = 60, max_retries: int = 0,
                 first_token_timeout_s: float | None = None) -> None:
        if timeout_s <= 0 or (first_token_timeout_s is not None and first_token_timeout_s <= 0):
            raise ValueError("timeouts must be positive")
        self.base_url = base_url.rstrip("/")
        self._model = model
        self.timeout_s = float(timeout_s)
        self.first_token_timeout_s = float(first_token_timeout_s or timeout_s)
        # In a stream the HTTP read timeout only backs up the deadlines enforced in stream_chat;
        # it must not fire before them, or a slow first token would surface as a read error.
        self._stream_timeout = openai.Timeout(self.timeout_s, read=max(self.timeout_s, self.first_token_timeout_s))
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key.get_secret_value() if api_key is not None else _NO_KEY,
            timeout=openai.Timeout(self.timeout_s),
            max_retries=max_retries,
        )

    @property
    def model_id(self) -> str:
        """The model name sent with every request."""
        return self._model

    # ------------------------------------------------------------------ errors

    def _unavailable(self, detail: str) -> LLMUnavailable:
        return LLMUnavailable(f"the language model at {self.base_url} did not answer: {detail}")

    def _translate(self, exc: BaseException) -> Exception:
        """Map an ``openai``/``httpx`` exception to :class:`LLMUnavailable` or :class:`LLMRequestError`."""
        if isinstance(exc, (openai.APITimeoutError, *_TIMEOUT_ERRORS)):
            return self._unavailable(f"no response within {self.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            return self._unavailable(str(cause) if cause is not None and str(cause) else exc.message)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = _server_message(exc)
            if status == 429 or status >= 500:
                return self._unavailable(f"HTTP {status}: {message}")
            kind = "unauthorized" if status in (401, 403) else "permanent"
            return LLMRequestError(
                f"the language model at {self.base_url} refused the request (HTTP {status}): {message}", kind=kind)
        if isinstance(exc, _CLIENT_ERRORS):
            # A stream cut short, or an error event inside a stream that had already started.
            return self._unavailable(str(exc) or type(exc).__name__)
        return exc if isinstance(exc, Exception) else RuntimeError(str(exc))

    # ------------------------------------------------------------------ calls

    def _span(self, max_tokens: int) -> Span:
        """A client span per model call (gen_ai semantic conventions); its tokens are counted at the end."""
        return telemetry.tracer().start_span(f"chat {self._model}", kind=SpanKind.CLIENT, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": self._model,
            "gen_ai.request.max_tokens": max_tokens, "server.address": self.base_url})

    @staticmethod
    def _count(span: Span, prompt: int | None, completion: int | None) -> None:
        """Feed ``secondbrain.llm.tokens`` and the span with what the call used (what is known of it)."""
        if prompt is not None:
            telemetry.LLM_TOKENS.add(prompt, {"kind": "prompt"})
            span.set_attribute("gen_ai.usage.input_tokens", prompt)
        if completion is not None:
            telemetry.LLM_TOKENS.add(completion, {"kind": "completion"})
            span.set_attribute("gen_ai.usage.output_tokens", completion)

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        """Return the whole answer (one non-streamed request)."""
        span = self._span(max_tokens)
        try:
            try:
                response = self._client.chat.completions.create(
                    model=self._model, messages=_as_params(messages), max_tokens=max_tokens,
                    temperature=temperature, stream=False)
            except _CLIENT_ERRORS as exc:
                error = self._translate(exc)
                telemetry.record_exception(span, error)
                raise error from exc
            usage = response.usage
            if usage is not None:
                self._count(span, usage.prompt_tokens, usage.completion_tokens)
        finally:
            span.end()
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

    def stream_chat(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 512,
                    temperature: float = 0.1, stop: Sequence[str] | None = None) -> Generator[str, None, None]:
        """Yield the answer as it is generated (the request is sent on the first ``next()``).

        The HTTP stream is read on a helper thread so that the deadlines hold even while the
        socket is kept busy by keep-alive pings; closing the generator early cancels the request.
        """
        request: dict[str, Any] = {"messages": _as_params(messages), "max_tokens": max_tokens,
                                   "temperature": temperature}
        if stop:
            request["stop"] = list(stop)
        inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        cancelled = threading.Event()
        reader = threading.Thread(target=self._read_stream, args=(request, inbox, cancelled),
                                  name="llm-stream", daemon=True)
        # Started here, in the caller's thread and trace context (the reader thread has neither).
        span = self._span(max_tokens)
        started = time.monotonic()
        deltas, usage = 0, None
        reader.start()
        try:
            first, limit = True, self.first_token_timeout_s
            deadline = time.monotonic() + limit
            while True:
                try:
                    kind, value = inbox.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    what = "first token" if first else "next token"
                    raise self._unavailable(f"no {what} within {limit:g}s") from None
                if kind == "delta":
                    if first:
                        ttft = time.monotonic() - started
                        telemetry.LLM_TTFT.record(ttft)
                        span.set_attribute("sb.llm.ttft_s", round(ttft, 4))
                    deltas += 1
                    yield value
                    # The caller's time between two next() calls is not the server's fault.
                    first, limit = False, self.timeout_s
                    deadline = time.monotonic() + limit
                elif kind == "usage":
                    usage = value
                elif kind == "error":
                    raise value
                else:  # "end"
                    return
        except Exception as exc:
            telemetry.record_exception(span, exc)
            raise
        finally:
            cancelled.set()
            if usage is not None:
                self._count(span, usage.prompt_tokens, usage.completion_tokens)
            elif deltas:
                # The server reports no usage: servers stream one token per delta, so count those.
                span.set_attribute("sb.llm.tokens_estimated", True)
                self._count(span, None, deltas)
            span.end()

    def _read_stream(self, request: dict[str, Any], inbox: queue.SimpleQueue[tuple[str, Any]],
                     cancelled: threading.Event) -> None:
        """Helper thread: send the request, forward each non-empty delta, then "end" or "error"."""
        try:
            # include_usage: servers that support it end the stream with the tokens used (others ignore it).
            stream = self._client.chat.completions.create(
                model=self._model, stream=True, timeout=self._stream_timeout,
                stream_options={"include_usage": True}, **request)
            finished = False
            try:
                for chunk in stream:
                    if cancelled.is_set():
                        return
                    if getattr(chunk, "usage", None) is not None:
                        inbox.put(("usage", chunk.usage))
                    for choice in chunk.choices:
                        text = choice.delta.content if choice.delta is not None else None
                        if text:
                            inbox.put(("delta", text))
                        finished = finished or choice.finish_reason is not None
            finally:
                stream.close()
            if finished:
                inbox.put(("end", None))
            else:
                # Every OpenAI-style stream closes with a finish reason; an empty or cut stream
                # must not pass for a complete (possibly empty) answer.
                inbox.put(("error", self._unavailable(
                    "the answer stream ended without a finish reason (llama.cpp's server does this when the "
                    "prompt is longer than its context window)")))
        except _CLIENT_ERRORS as exc:
            if not cancelled.is_set():
                inbox.put(("error", self._translate(exc)))
        except Exception as exc:  # a bug: hand it to the caller instead of dying silently here
            inbox.put(("error", exc))

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the HTTP connection pool; idempotent."""
        self._client.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self._model!r})"
