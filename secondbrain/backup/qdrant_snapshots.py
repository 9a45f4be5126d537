"""A Qdrant server's collections, backed up and restored through its snapshot API (REST).

Each of secondbrain's collections (``sb_`` names) gets a snapshot (``POST /collections/{name}/snapshots``),
which is downloaded into the archive as ``vectors/qdrant/<name>.snapshot`` and deleted from the server
again.  A restore uploads each one (``POST /collections/{name}/snapshots/upload?priority=snapshot``) into a
server that does not have that collection yet.  The snapshot is Qdrant's own file, opaque here: a backup of
a Qdrant server restores into a Qdrant server (of the same or a newer version).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from secondbrain.backup.archive import BackupError, inflate_to

PREFIX = "sb_"
PART = "vectors/qdrant/"
TIMEOUT = httpx.Timeout(600.0, connect=10.0)


class QdrantSnapshots:
    """Snapshots of a Qdrant server's secondbrain collections."""

    engine = "qdrant"

    def __init__(self, url: str, api_key: str | None, *, prefix: str = PREFIX) -> None:
        self.url = url.rstrip("/")
        self.headers = {"api-key": api_key} if api_key else {}
        self.prefix = prefix

    def _client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=TIMEOUT)

    @staticmethod
    def _ok(resp: httpx.Response, what: str) -> Any:
        if resp.status_code >= 400:
            try:
                detail = resp.json().get("status", {}).get("error") or resp.text
            except ValueError:
                detail = resp.text
            raise BackupError(f"the Qdrant server refused to {what} (HTTP {resp.status_code}: {str(detail)[:300]})")
        return resp.json().get("result") if resp.headers.get("content-type", "").startswith("application/json") \
            else None

    def collections(self, client: httpx.Client) -> list[str]:
        found = self._ok(client.get("/collections"), "list its collections")
        return sorted(c["name"] for c in found["collections"] if c["name"].startswith(self.prefix))

    def capture(self, dest: Path) -> list[tuple[str, Path]]:
        """A snapshot of every collection, downloaded under ``dest`` (and removed from the server)."""
        dest.mkdir(parents=True, exist_ok=True)
        parts = []
        with self._client() as client:
            for name in self.collections(client):
                made = self._ok(client.post(f"/collections/{name}/snapshots", params={"wait": "true"}),
                                f"snapshot {name}")
                target = dest / f"{name}.snapshot"
                try:
                    with client.stream("GET", f"/collections/{name}/snapshots/{made['name']}") as resp:
                        if resp.status_code != 200:
                            resp.read()
                            self._ok(resp, f"hand over the snapshot of {name}")
                        with target.open("wb") as fh:
                            for block in resp.iter_bytes(1024 * 1024):
                                fh.write(block)
                finally:
                    client.delete(f"/collections/{name}/snapshots/{made['name']}")
                parts.append((f"{PART}{name}.snapshot", target))
        return parts

    def restore(self, opened: Any) -> list[str]:
        """Upload every archived snapshot into the server (which must not hold those collections yet)."""
        if opened.manifest.fields.get("vector_engine") != self.engine:
            raise BackupError("the backup's vectors are the in-process engine's files, and this deployment keeps them "
                              "in a Qdrant server: restore it into a data directory (--data-dir) for `secondbrain up`")
        names = []
        with self._client() as client:
            present = set(self.collections(client))
            for part in opened.manifest.named(PART):
                name = part.name[len(PART):].removesuffix(".snapshot")
                if name in present:
                    raise BackupError(f"the Qdrant server already has the collection {name}: restore into a server "
                                      "without secondbrain's collections")
                path = opened.staging / part.member
                if part.encoding == "zlib":
                    plain = path.with_name(path.name + ".snapshot")
                    with path.open("rb") as packed:
                        inflate_to(packed, plain)
                    path = plain
                with path.open("rb") as fh:
                    self._ok(client.post(f"/collections/{name}/snapshots/upload",
                                         params={"priority": "snapshot", "wait": "true"},
                                         files={"snapshot": (f"{name}.snapshot", fh, "application/octet-stream")}),
                             f"recover {name} from its snapshot")
                names.append(name)
        return names
