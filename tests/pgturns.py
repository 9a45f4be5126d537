"""A TCP proxy in front of PostgreSQL that counts round trips: how often a client spoke and then waited.

A round trip is counted each time a client sends after the server last sent on that connection (or
after connecting): several statements sent together in pipeline mode, then one wait, count once;
statements sent one by one count once each.  Nothing is parsed: this measures the network turns
the application actually takes, whatever its code says.
"""

from __future__ import annotations

import selectors
import socket
import threading


class TurnCountingProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target`` and counts client turns (see the module doc)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._lock = threading.Lock()
        self.turns = 0
        self.connections = 0
        self.log: list[bytes] = []  # the first bytes of each turn (for finding where round trips go)
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self._server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        client_turn_open = False  # the client has spoken since the server last answered
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(timeout=0.5):
                    src: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = src.recv(65536)
                    if not data:
                        return
                    if src is client:
                        if not client_turn_open:
                            client_turn_open = True
                            with self._lock:
                                self.turns += 1
                                self.log.append(data[:300])
                    else:
                        client_turn_open = False
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            sel.close()
            client.close()
            upstream.close()

    def count(self) -> int:
        """Round trips so far, over every connection."""
        with self._lock:
            return self.turns

    def close(self) -> None:
        """Stop accepting and forwarding."""
        self._stop.set()
        self._server.close()
