"""Where raw artifacts and large payloads are kept: a key-value object store (files or S3)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What an object store knows about one stored object."""

    key: str
    size: int
    content_type: str
    etag: str | None = None
    last_modified: datetime | None = None


class ObjectNotFound(KeyError):
    """Raised when a key does not exist in the object store."""


@runtime_checkable
class ObjectStore(Protocol):
    """Raw artifact bytes, addressed by key (``users/<user_id>/...``)."""

    def put(self, key: str, data: bytes | IO[bytes], *, size: int | None = None,
            content_type: str = "application/octet-stream") -> ObjectInfo:
        """Store ``data`` under ``key`` (overwriting). A stream is read to its end; ``size`` may be -1/None
        when unknown."""
        ...

    def put_many(self, objects: Sequence[tuple[str, bytes, str]]) -> list[ObjectInfo]:
        """Store each ``(key, data, content_type)`` (overwriting), in order; each one's info.  What an error
        leaves behind is only whole objects of the batch."""
        ...

    def get(self, key: str) -> bytes:
        """Return the whole object; raise :class:`ObjectNotFound` when absent."""
        ...

    def open(self, key: str) -> Iterator[bytes]:
        """Stream the object in chunks; raise :class:`ObjectNotFound` when absent."""
        ...

    def stat(self, key: str) -> ObjectInfo | None:
        """Metadata of ``key`` or ``None`` when absent."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error."""
        ...

    def list(self, prefix: str) -> list[ObjectInfo]:
        """All objects whose key starts with ``prefix``, sorted by key."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Remove every object under ``prefix``; return how many were removed."""
        ...

    def check(self) -> None:
        """Raise if the store cannot serve requests (readiness probe)."""
        ...
