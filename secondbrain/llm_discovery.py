"""Finding an answer model: a local OpenAI-compatible server on its usual port, and the state of one.

A server counts only when its ``GET /v1/models`` answers with an OpenAI-style list of models
(``{"data": [{"id": ...}, ...]}``): an open port alone proves nothing (a web app on 8080 is common).
The candidates are probed in parallel with short timeouts, so looking costs well under a second.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

if TYPE_CHECKING:
    from secondbrain.settings import Settings

# The servers people run on their own machine, by their default port.
USUAL_SERVERS = {11434: "Ollama", 8080: "llama.cpp", 1234: "LM Studio"}
DEFAULT_CANDIDATES = ",".join(f"http://127.0.0.1:{port}/v1" for port in USUAL_SERVERS)


class NotAModelServer(ValueError):
    """Something answered, but not as an OpenAI-compatible server (or with no model)."""


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A confirmed OpenAI-compatible server and the models it lists (in its order)."""

    name: str
    base_url: str
    models: tuple[str, ...]


def server_name(base_url: str) -> str:
    """What to call a server in messages: the usual program on that port, else a generic name."""
    try:
        port = urlsplit(base_url).port
    except ValueError:
        port = None
    return USUAL_SERVERS.get(port or 0, "an OpenAI-compatible server")


def candidates(spec: str) -> list[str]:
    """The comma-separated base URLs of ``SB_LLM_DISCOVER``, without trailing slashes."""
    return [u.strip().rstrip("/") for u in spec.split(",") if u.strip()]


def list_models(base_url: str, *, api_key: str | None = None, timeout_s: float = 2.0) -> list[str]:
    """The model ids ``base_url`` lists at ``/models``.

    :raises httpx.HTTPError: nothing answered (refused, timed out).
    :raises NotAModelServer: it answered, but not with an OpenAI-style list of models.
    """
    from secondbrain.infra.ports import is_loopback

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    # A proxy from the environment must not stand between us and a server on this machine.
    local = is_loopback(urlsplit(base_url).hostname or "")
    r = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=timeout_s, follow_redirects=False,
                  trust_env=not local)
    if r.status_code in (401, 403):
        raise NotAModelServer(f"{base_url} refused the API key (HTTP {r.status_code})")
    if r.status_code != 200:
        raise NotAModelServer(f"{base_url} answers, but not as an OpenAI-compatible server "
                              f"(GET /models gave HTTP {r.status_code})")
    try:
        body = r.json()
    except ValueError:
        raise NotAModelServer(f"{base_url} answers, but not as an OpenAI-compatible server "
                              "(GET /models is not JSON)") from None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in data):
        raise NotAModelServer(f"{base_url} answers, but not as an OpenAI-compatible server "
                              "(GET /models is not a list of models)")
    if not data:
        raise NotAModelServer(f"{base_url} has no model loaded")
    return [str(m["id"]) for m in data]


def discover(spec: str = DEFAULT_CANDIDATES, *, timeout_s: float = 0.4, budget_s: float = 1.0) -> FoundServer | None:
    """The first candidate of ``spec`` (in its order) that is a confirmed model server, or ``None``.

    All candidates are asked at once; whatever has not answered within ``budget_s`` is not waited for.
    """
    return next(iter(discover_all(spec, timeout_s=timeout_s, budget_s=budget_s, first=True)), None)


def discover_all(spec: str = DEFAULT_CANDIDATES, *, timeout_s: float = 0.4, budget_s: float = 1.0,
                 first: bool = False) -> list[FoundServer]:
    """Every candidate of ``spec`` that is a confirmed model server, in ``spec``'s order (only the first
    one with ``first``).  All are asked at once; whatever has not answered within ``budget_s`` is left out."""
    urls = candidates(spec)
    if not urls:
        return []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="llm-discover")
    futures = [pool.submit(_probe, url, timeout_s) for url in urls]
    deadline = time.monotonic() + budget_s
    found: list[FoundServer] = []
    for future in futures:  # in preference order: an earlier candidate wins even if it answers later
        try:
            server = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            server = None
        if server is not None:
            found.append(server)
            if first:
                break
    pool.shutdown(wait=False, cancel_futures=True)
    return found


def _probe(url: str, timeout_s: float) -> FoundServer | None:
    try:
        return FoundServer(server_name(url), url, tuple(list_models(url, timeout_s=timeout_s)))
    except (httpx.HTTPError, NotAModelServer):
        return None


def endpoint_state(base_url: str | None, model: str, api_key: str | None = None, *,
                   timeout_s: float = 2.0) -> tuple[str, str]:
    """``(state, sentence)`` of an answer endpoint for people: ``working``, ``not configured`` or ``error``."""
    if not base_url:
        return "not configured", ("No language model is connected: answers quote your sources. Start Ollama, "
                                  "llama.cpp or LM Studio, or set one here.")
    try:
        models = list_models(base_url, api_key=api_key, timeout_s=timeout_s)
    except httpx.TimeoutException:
        return "error", f"{base_url} did not answer within {timeout_s:g} s."
    except httpx.HTTPError as exc:
        return "error", f"Nothing answers at {base_url} ({_reason(exc)}). Is the model server running?"
    except NotAModelServer as exc:
        return "error", str(exc).rstrip(".") + "."
    if model not in models:
        shown = ", ".join(models[:5]) + ("..." if len(models) > 5 else "")
        return "error", f"{base_url} does not have the model {model!r} (it has: {shown})."
    return "working", f"{model} at {base_url} ({server_name(base_url)})."


def _reason(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower():
        return "connection refused"
    return text[:120]


def resolve_answer_model(settings: Settings, *, look: bool = True) -> tuple[dict[str, Any], str]:
    """What ``secondbrain up`` answers with: the settings to change and the banner's line.

    An endpoint given (``--llm`` or SB_LLM_BASE_URL) is used as it is, with its first listed model
    unless a model is named; otherwise, when ``look``, the candidates of SB_LLM_DISCOVER are tried.
    """
    named = "llm_model" in settings.model_fields_set
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if settings.llm_base_url:
        url, model = settings.llm_base_url.rstrip("/"), settings.llm_model
        update: dict[str, Any] = {}
        note = ""
        if not named:
            try:
                model = list_models(url, api_key=key, timeout_s=1.0)[0]
                update["llm_model"] = model
            except (httpx.HTTPError, NotAModelServer) as exc:
                note = f" (it does not answer yet: {_reason(exc) if isinstance(exc, httpx.HTTPError) else exc})"
        return update, f"answers: {server_name(url)} at {url}, model {model}{note}"
    if not look:
        return {}, "answers: quoted from your sources (--no-llm; --llm URL to use a model)"
    found = discover(settings.llm_discover)
    if found is None:
        return {}, "answers: quoted from your sources (no model found; --llm URL to use one)"
    model = settings.llm_model if named else found.models[0]
    return ({"llm_base_url": found.base_url, "llm_model": model},
            f"answers: {found.name} at {found.base_url}, model {model}")
