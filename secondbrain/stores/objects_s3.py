"""An :class:`~secondbrain.ports.ObjectStore` on S3 / MinIO through the ``minio`` SDK."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import IO, Any, BinaryIO, cast

from minio import Minio
from minio.deleteobjects import DeleteObject
from minio.error import S3Error

from secondbrain.ports import ObjectInfo, ObjectNotFound
from secondbrain.stores.objects_fs import validate_key, validate_prefix

PART_SIZE = 16 * 1024 * 1024  # multipart part size; also the SDK's in-memory buffer per part
STREAM_BLOCK = 1024 * 1024
DEFAULT_CONTENT_TYPE = "application/octet-stream"
_MISSING_CODES = frozenset({"NoSuchKey", "NoSuchObject", "ResourceNotFound"})
_BUCKET_EXISTS_CODES = frozenset({"BucketAlreadyOwnedByYou", "BucketAlreadyExists"})


class _CountingReader(io.RawIOBase):
    """Wraps a stream to count what the SDK reads (the size is unknown up front)."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__()
        self._stream = stream
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        block = self._stream.read(-1 if size is None else size)
        if isinstance(block, str):
            raise TypeError("stream must be opened in binary mode")
        self.count += len(block)
        return block


class S3ObjectStore:
    """Objects in one bucket of an S3-compatible service.

    ``endpoint`` is ``host:port`` without a scheme (``secure`` selects https).  With
    ``create_bucket`` the bucket is created when missing (at construction).  Keys follow
    the same rules as :class:`~secondbrain.stores.objects_fs.FileObjectStore` so both
    modes accept the same keys.
    """

    def __init__(self, endpoint: str, access_key: str, secret_key: str, bucket: str, *,
                 secure: bool = False, region: str | None = None, create_bucket: bool = True,
                 part_size: int = PART_SIZE, client: Minio | None = None) -> None:
        self.endpoint = endpoint
        self.bucket = bucket
        self.region = region
        self.part_size = part_size
        self.client = client or Minio(endpoint, access_key=access_key, secret_key=secret_key,
                                      secure=secure, region=region)
        if create_bucket:
            self.ensure_bucket()

    def ensure_bucket(self) -> None:
        """Create the bucket when missing (a concurrent creator is not an error)."""
        if self.client.bucket_exists(self.bucket):
            return
        try:
            if self.region:
                self.client.make_bucket(self.bucket, location=self.region)
            else:
                self.client.make_bucket(self.bucket)
        except S3Error as exc:
            if exc.code not in _BUCKET_EXISTS_CODES:
                raise

    # ------------------------------------------------------------------ writes

    def put(self, key: str, data: bytes | IO[bytes], *, size: int | None = None,
            content_type: str = DEFAULT_CONTENT_TYPE) -> ObjectInfo:
        """Upload ``data``; a stream of unknown size goes up in ``part_size`` multipart parts.

        With ``size`` given (>= 0) the stream must deliver exactly that many bytes, else
        ``ValueError`` / ``OSError`` and nothing new is stored.
        """
        validate_key(key)
        content_type = content_type or DEFAULT_CONTENT_TYPE
        if isinstance(data, bytes | bytearray | memoryview):
            payload = bytes(data)
            stream: IO[bytes] = io.BytesIO(payload)
            length = len(payload)
        elif callable(getattr(data, "read", None)):
            stream = data
            length = size if size is not None and size >= 0 else -1
        else:
            raise TypeError(f"data must be bytes or a binary stream, not {type(data).__name__}")
        reader = _CountingReader(stream)
        result = self.client.put_object(self.bucket, key, cast(BinaryIO, reader), length=length,
                                        content_type=content_type, part_size=self.part_size)
        # With a known length the SDK stops reading at it; surplus data means a wrong size.
        if length >= 0 and stream.read(1):
            self.delete(key)
            raise ValueError(f"stream for {key!r} is longer than the given size {length}")
        return ObjectInfo(key=key, size=reader.count, content_type=content_type,
                          etag=_clean_etag(result.etag), last_modified=_as_datetime(result.last_modified))

    def put_many(self, objects: Sequence[tuple[str, bytes, str]]) -> list[ObjectInfo]:
        """Upload each ``(key, data, content_type)``, one request each (every one is durable when S3 answers)."""
        return [self.put(key, data, size=len(data), content_type=content_type) for key, data, content_type in objects]

    # ------------------------------------------------------------------ reads

    def _get_response(self, key: str) -> Any:
        validate_key(key)
        try:
            return self.client.get_object(self.bucket, key)
        except S3Error as exc:
            if exc.code in _MISSING_CODES:
                raise ObjectNotFound(key) from None
            raise

    def get(self, key: str) -> bytes:
        """Return the whole object; raise :class:`ObjectNotFound` when absent."""
        response = self._get_response(key)
        try:
            return bytes(response.read())
        finally:
            response.close()
            response.release_conn()

    def open(self, key: str) -> Iterator[bytes]:
        """Stream the object in 1 MiB chunks; raise :class:`ObjectNotFound` at once when absent.

        The HTTP connection goes back to the pool when the iterator ends or is closed.
        """
        return _stream(self._get_response(key))

    def stat(self, key: str) -> ObjectInfo | None:
        """Metadata of ``key`` or ``None`` when absent."""
        validate_key(key)
        try:
            obj = self.client.stat_object(self.bucket, key)
        except S3Error as exc:
            if exc.code in _MISSING_CODES:
                return None
            raise
        return ObjectInfo(key=key, size=int(obj.size or 0),
                          content_type=obj.content_type or DEFAULT_CONTENT_TYPE,
                          etag=_clean_etag(obj.etag), last_modified=obj.last_modified)

    def list(self, prefix: str) -> list[ObjectInfo]:
        """All objects whose key starts with ``prefix``, sorted by key.

        Listings carry no content type on plain S3, so it is taken from MinIO's user-metadata
        extension when present and otherwise fetched with one HEAD per object.
        """
        validate_prefix(prefix)
        infos: list[ObjectInfo] = []
        for obj in self.client.list_objects(self.bucket, prefix=prefix, recursive=True,
                                            include_user_meta=True):
            if obj.is_dir or obj.object_name is None:
                continue
            content_type = _content_type_from(obj.metadata)
            if content_type is None:
                info = self.stat(obj.object_name)
                if info is None:  # deleted since the listing
                    continue
                infos.append(info)
                continue
            infos.append(ObjectInfo(key=obj.object_name, size=int(obj.size or 0), content_type=content_type,
                                    etag=_clean_etag(obj.etag), last_modified=obj.last_modified))
        infos.sort(key=lambda info: info.key)
        return infos

    # ------------------------------------------------------------------ deletes

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error (S3 semantics)."""
        validate_key(key)
        self.client.remove_object(self.bucket, key)

    def delete_prefix(self, prefix: str) -> int:
        """Remove every object under ``prefix`` with batched multi-object deletes; return the count.

        Raises ``OSError`` listing the keys the service refused to delete.
        """
        validate_prefix(prefix)
        # Collect first: deleting while paging through the same listing can skip keys.
        listing = self.client.list_objects(self.bucket, prefix=prefix, recursive=True)
        names = [obj.object_name for obj in listing if obj.object_name is not None and not obj.is_dir]
        if not names:
            return 0
        # remove_objects is lazy: nothing is deleted until its error iterator is consumed.
        errors = list(self.client.remove_objects(self.bucket, (DeleteObject(name) for name in names)))
        if errors:
            detail = "; ".join(f"{e.name}: {e.code} {e.message}" for e in errors[:10])
            raise OSError(f"failed to delete {len(errors)} of {len(names)} objects under {prefix!r}: "
                          f"{detail}")
        return len(names)

    # ------------------------------------------------------------------ extras

    def presigned_get(self, key: str, expires_seconds: int = 3600) -> str:
        """A URL that lets anyone holding it download ``key`` for ``expires_seconds``."""
        validate_key(key)
        return str(self.client.presigned_get_object(self.bucket, key,
                                                    expires=timedelta(seconds=expires_seconds)))

    def check(self) -> None:
        """Raise unless the service answers and the bucket exists."""
        if not self.client.bucket_exists(self.bucket):
            raise RuntimeError(f"bucket {self.bucket!r} does not exist at {self.endpoint}")

    def __repr__(self) -> str:
        return f"S3ObjectStore(endpoint={self.endpoint!r}, bucket={self.bucket!r})"


def _stream(response: Any) -> Iterator[bytes]:
    try:
        yield from response.stream(STREAM_BLOCK)
    finally:
        response.close()
        response.release_conn()


def _clean_etag(etag: str | None) -> str | None:
    return etag.strip('"') if etag else None


def _as_datetime(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None


def _content_type_from(metadata: Any) -> str | None:
    """Content type from MinIO's ``metadata=true`` listing extension, if present."""
    if not metadata:
        return None
    try:
        items = metadata.items()
    except AttributeError:
        return None
    for name, value in items:
        if str(name).lower() == "content-type" and value:
            return str(value)
    return None
