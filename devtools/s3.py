"""Local S3-compatible endpoints for tests and development.

:class:`MotoS3Server` runs moto's S3 emulation in a thread of this process (memory only,
no Docker); :func:`try_testcontainers_minio` starts a real MinIO container when a Docker
engine is reachable.  Both expose ``endpoint`` / ``access_key`` / ``secret_key`` /
``secure`` / ``region`` so callers can build an ``S3ObjectStore`` from either.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)


class MotoS3Server:
    """moto's S3 server on a free loopback port, in a daemon thread of this process.

    moto keeps its state in module globals, so every ``MotoS3Server`` of one process sees
    the same buckets; use distinct bucket names per test.  ``moto[server]`` is a dev
    dependency and is imported only in :meth:`start`.
    """

    access_key = "secondbrain-test"
    secret_key = "secondbrain-test-secret"
    secure = False
    region = "us-east-1"

    def __init__(self, port: int | None = None) -> None:
        self._requested_port = port
        self.port: int = port or 0
        self._server: Any = None

    @property
    def endpoint(self) -> str:
        """``host:port`` as the minio SDK expects it (no scheme)."""
        if not self.port:
            raise RuntimeError("MotoS3Server not started")
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The endpoint as an ``http://`` URL (for boto3 and friends)."""
        return f"http://{self.endpoint}"

    def start(self) -> MotoS3Server:
        """Start serving; returns once the socket is bound."""
        if self._server is not None:
            return self
        try:
            from moto.server import ThreadedMotoServer
        except ImportError as exc:
            raise RuntimeError("MotoS3Server needs the dev dependency 'moto[server]'") from exc
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=self._requested_port or 0, verbose=False)
        server.start()
        self._server = server
        self.port = int(server.get_host_and_port()[1])
        return self

    def stop(self) -> None:
        """Shut the server down (stored objects stay in moto's process-wide memory)."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> MotoS3Server:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class MinioContainerHandle:
    """A running testcontainers MinIO container; call :meth:`stop` (or use ``with``) to remove it."""

    secure = False
    region: str | None = None

    def __init__(self, container: Any) -> None:
        self._container = container
        config = container.get_config()
        self.endpoint: str = config["endpoint"]
        self.access_key: str = config["access_key"]
        self.secret_key: str = config["secret_key"]

    def stop(self) -> None:
        """Stop and remove the container; idempotent."""
        container, self._container = self._container, None
        if container is not None:
            container.stop()

    def __enter__(self) -> MinioContainerHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def docker_available(timeout: float = 1.0) -> bool:
    """Whether a Docker engine socket accepts connections (cheap; never waits on docker-py retries)."""
    host = os.environ.get("DOCKER_HOST", "")
    if host:
        parsed = urlparse(host)
        if parsed.scheme == "unix":
            return _unix_socket_accepts(parsed.path, timeout)
        if parsed.scheme in ("tcp", "http", "https") and parsed.hostname:
            try:
                with socket.create_connection((parsed.hostname, parsed.port or 2375), timeout=timeout):
                    return True
            except OSError:
                return False
        # ssh:// and other transports: let docker-py decide.
        return True
    candidates = [Path("/var/run/docker.sock"), Path.home() / ".docker" / "run" / "docker.sock"]
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir:
        candidates.append(Path(runtime_dir) / "docker.sock")
    return any(_unix_socket_accepts(str(p), timeout) for p in candidates)


def _unix_socket_accepts(path: str, timeout: float) -> bool:
    if not hasattr(socket, "AF_UNIX") or not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            return False
    return True


def try_testcontainers_minio(image: str | None = None) -> MinioContainerHandle | None:
    """Start a MinIO container through testcontainers when a Docker engine is reachable.

    Returns ``None`` at once when there is no Docker socket (or testcontainers is not
    installed), and ``None`` with a warning when the container fails to start.
    """
    if not docker_available():
        return None
    try:
        from testcontainers.community.minio import MinioContainer
    except ImportError:
        try:
            from testcontainers.minio import MinioContainer
        except ImportError:
            return None
    container = MinioContainer(image) if image else MinioContainer()
    try:
        container.start()
        return MinioContainerHandle(container)
    except Exception as exc:
        log.warning("testcontainers MinIO did not start: %s", exc)
        with contextlib.suppress(Exception):
            container.stop()
        return None
