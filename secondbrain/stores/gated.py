"""Object and vector stores whose removals hold the backup gate (:mod:`secondbrain.ports.backup`).

Every removal in the pipeline, the lifecycle and the re-index goes through the stores a process is given,
so wrapping them here gates them all: a removal waits while a backup takes its picture.  Everything but
the removals passes straight through.
"""

from __future__ import annotations

from typing import Any

from secondbrain.ports import VectorFilter
from secondbrain.ports.backup import BackupGate


class _Gated:
    def __init__(self, inner: Any, gate: BackupGate) -> None:
        self.inner = inner
        self.gate = gate

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class GatedObjectStore(_Gated):
    """An :class:`~secondbrain.ports.ObjectStore` whose deletions hold the backup gate."""

    def put(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.put(*args, **kwargs)

    def put_many(self, objects: Any) -> Any:
        return self.inner.put_many(objects)

    def get(self, key: str) -> bytes:
        data: bytes = self.inner.get(key)
        return data

    def open(self, key: str) -> Any:
        return self.inner.open(key)

    def stat(self, key: str) -> Any:
        return self.inner.stat(key)

    def list(self, prefix: str) -> Any:
        return self.inner.list(prefix)

    def check(self) -> None:
        self.inner.check()

    def delete(self, key: str) -> None:
        with self.gate.removing():
            self.inner.delete(key)

    def delete_prefix(self, prefix: str) -> int:
        with self.gate.removing():
            removed: int = self.inner.delete_prefix(prefix)
            return removed


class GatedVectorStore(_Gated):
    """A :class:`~secondbrain.ports.VectorStore` whose deletions hold the backup gate."""

    def ensure_collection(self, user_id: str, dense_size: int, *, index: str | None = None) -> str:
        name: str = self.inner.ensure_collection(user_id, dense_size, index=index)
        return name

    def upsert(self, *args: Any, **kwargs: Any) -> None:
        self.inner.upsert(*args, **kwargs)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.search(*args, **kwargs)

    def scroll(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.scroll(*args, **kwargs)

    def count(self, *args: Any, **kwargs: Any) -> int:
        found: int = self.inner.count(*args, **kwargs)
        return found

    def list_indexes(self, user_id: str) -> list[str]:
        names: list[str] = self.inner.list_indexes(user_id)
        return names

    def check(self) -> None:
        self.inner.check()

    def close(self) -> None:
        self.inner.close()

    def delete_where(self, user_id: str, flt: VectorFilter) -> None:
        with self.gate.removing():
            self.inner.delete_where(user_id, flt)

    def drop_user(self, user_id: str) -> None:
        with self.gate.removing():
            self.inner.drop_user(user_id)

    def drop_index(self, user_id: str, index: str) -> None:
        with self.gate.removing():
            self.inner.drop_index(user_id, index)
