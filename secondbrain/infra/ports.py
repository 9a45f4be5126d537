"""Loopback port helpers shared by the local launchers."""

from __future__ import annotations

import ipaddress
import socket
import subprocess


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    The kernel picks the port (bind to port 0); the socket is closed before returning, so a
    caller racing with other processes must still cope with the port being taken meanwhile.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_bindable(port: int, host: str = "127.0.0.1") -> bool:
    """Whether nothing is listening on ``host:port`` (a bind with ``SO_REUSEADDR`` succeeds).

    ``SO_REUSEADDR`` makes sockets in TIME_WAIT from a previous run not count as busy, the same
    way servers that set it (Tansu, via tokio) see the port.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def port_accepts(port: int, host: str = "127.0.0.1", timeout: float = 0.2) -> bool:
    """Whether a TCP connection to ``host:port`` succeeds within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Ask ``proc`` to exit (SIGTERM), and kill it if it has not within ``timeout`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
