"""One behaviour contract for every ObjectStore implementation.

Parametrised over the filesystem store, S3 against moto (in-process) and S3 against a
MinIO container (only generated when a Docker engine is reachable).
"""

from __future__ import annotations

import io
import os
import shutil
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devtools.s3 import (
    MinioContainerHandle,
    MotoS3Server,
    docker_available,
    try_testcontainers_minio,
)
from secondbrain.ports import ObjectNotFound, ObjectStore
from secondbrain.stores.objects_fs import BLOCK_SIZE, FileObjectStore
from secondbrain.stores.objects_s3 import S3ObjectStore

MiB = 1024 * 1024
# 5 MiB is S3's minimum part size: 12 MiB objects then really take the multipart path.
TEST_PART_SIZE = 5 * MiB

BACKENDS = ["fs", "s3-moto"] + (["s3-minio"] if docker_available() else [])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[MotoS3Server]:
    with MotoS3Server() as server:
        yield server


@pytest.fixture(scope="session")
def minio_s3() -> Iterator[MinioContainerHandle]:
    handle = try_testcontainers_minio()
    if handle is None:
        pytest.skip("Docker socket present but the MinIO container did not start")
    with handle:
        yield handle


def _s3_store(conn: MotoS3Server | MinioContainerHandle) -> S3ObjectStore:
    return S3ObjectStore(conn.endpoint, conn.access_key, conn.secret_key, f"sb-test-{uuid.uuid4().hex[:12]}",
                         secure=conn.secure, region=conn.region, part_size=TEST_PART_SIZE)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ObjectStore]:
    if request.param == "fs":
        yield FileObjectStore(tmp_path / "objects")
        return
    conn = request.getfixturevalue("moto_s3" if request.param == "s3-moto" else "minio_s3")
    s3 = _s3_store(conn)
    yield s3
    # Each test has its own bucket; empty and drop it so a shared server stays small.
    s3.delete_prefix("")
    s3.client.remove_bucket(s3.bucket)


@pytest.fixture
def fs_store(tmp_path: Path) -> FileObjectStore:
    return FileObjectStore(tmp_path / "objects")


class ChunkedStream(io.BytesIO):
    """A non-seekable stream serving ``data``; records read sizes; may fail after ``fail_after`` bytes.

    (A BytesIO subclass only so that it type-checks as ``IO[bytes]``; all reads go through
    :meth:`read`.)
    """

    def __init__(self, data: bytes, fail_after: int | None = None) -> None:
        super().__init__()
        self._data = memoryview(data)
        self._pos = 0
        self._fail_after = fail_after
        self.read_sizes: list[int] = []

    def seekable(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> bytes:
        self.read_sizes.append(-1 if size is None else size)
        if self._fail_after is not None and self._pos >= self._fail_after:
            raise ConnectionResetError("client went away")
        end = len(self._data) if size is None or size < 0 else self._pos + size
        block = bytes(self._data[self._pos:end])
        self._pos += len(block)
        return block


def payload(n: int) -> bytes:
    # Not all-zero, so a misplaced block would change the content.
    return (os.urandom(4096) * (n // 4096 + 1))[:n]


# --------------------------------------------------------------------------- contract


def test_is_an_object_store(store: ObjectStore) -> None:
    assert isinstance(store, ObjectStore)


def test_put_get_bytes(store: ObjectStore) -> None:
    info = store.put("users/u1/hello.txt", b"hello world", content_type="text/plain")
    assert info.key == "users/u1/hello.txt"
    assert info.size == 11
    assert info.content_type == "text/plain"
    assert store.get("users/u1/hello.txt") == b"hello world"


def test_put_many_stores_each_in_order(store: ObjectStore) -> None:
    store.put("users/u1/b", b"old b")
    objects = [(f"users/u1/{name}", f"bytes of {name}".encode(), "text/plain") for name in ("a", "b", "c")]
    objects.append(("users/u1/d", b"", "application/pdf"))
    infos = store.put_many(objects)
    assert [(i.key, i.size, i.content_type) for i in infos] == [
        ("users/u1/a", 10, "text/plain"), ("users/u1/b", 10, "text/plain"), ("users/u1/c", 10, "text/plain"),
        ("users/u1/d", 0, "application/pdf")]
    assert [store.get(k) for k, _d, _t in objects] == [d for _k, d, _t in objects]  # b overwritten
    assert [store.stat(k).content_type for k, _d, _t in objects] == [i.content_type for i in infos]  # type: ignore[union-attr]
    assert store.put_many([]) == []


def test_put_empty_object(store: ObjectStore) -> None:
    store.put("users/u1/empty", b"")
    assert store.get("users/u1/empty") == b""
    info = store.stat("users/u1/empty")
    assert info is not None and info.size == 0


@pytest.mark.parametrize("size_known", [True, False], ids=["sized", "unknown-size"])
def test_put_large_stream(store: ObjectStore, size_known: bool) -> None:
    data = payload(12 * MiB)
    stream = ChunkedStream(data)
    info = store.put("users/u1/big.bin", stream, size=len(data) if size_known else None)
    assert info.size == len(data)
    assert store.get("users/u1/big.bin") == data
    stat = store.stat("users/u1/big.bin")
    assert stat is not None and stat.size == len(data)
    assert -1 not in stream.read_sizes, "the stream must never be read whole"
    if isinstance(store, S3ObjectStore):
        assert info.etag is not None and info.etag.endswith("-3"), "expected a 3-part multipart upload"


def test_put_unknown_size_minus_one(store: ObjectStore) -> None:
    data = payload(3 * MiB + 17)
    info = store.put("users/u1/m1.bin", ChunkedStream(data), size=-1)
    assert info.size == len(data)
    assert store.get("users/u1/m1.bin") == data


def test_put_stream_shorter_than_size_fails(store: ObjectStore) -> None:
    with pytest.raises((ValueError, OSError)):
        store.put("users/u1/short.bin", ChunkedStream(b"x" * 100), size=200)
    assert store.stat("users/u1/short.bin") is None


def test_put_stream_longer_than_size_fails(store: ObjectStore) -> None:
    with pytest.raises(ValueError):
        store.put("users/u1/long.bin", ChunkedStream(b"y" * 300), size=200)
    assert store.stat("users/u1/long.bin") is None


def test_get_missing_raises(store: ObjectStore) -> None:
    with pytest.raises(ObjectNotFound):
        store.get("users/u1/missing")
    with pytest.raises(KeyError):  # ObjectNotFound is a KeyError
        store.get("users/u1/missing")


def test_open_missing_raises_at_call(store: ObjectStore) -> None:
    with pytest.raises(ObjectNotFound):
        store.open("users/u1/missing")


def test_stat(store: ObjectStore) -> None:
    assert store.stat("users/u1/doc.md") is None
    store.put("users/u1/doc.md", b"# title\n", content_type="text/markdown")
    info = store.stat("users/u1/doc.md")
    assert info is not None
    assert (info.key, info.size, info.content_type) == ("users/u1/doc.md", 8, "text/markdown")
    assert info.last_modified is not None
    assert info.etag


def test_overwrite(store: ObjectStore) -> None:
    store.put("users/u1/k", b"first version", content_type="text/plain")
    store.put("users/u1/k", b"2nd", content_type="application/json")
    assert store.get("users/u1/k") == b"2nd"
    info = store.stat("users/u1/k")
    assert info is not None
    assert (info.size, info.content_type) == (3, "application/json")
    assert [i.key for i in store.list("users/u1/")] == ["users/u1/k"]


def test_content_type_kept(store: ObjectStore) -> None:
    store.put("users/u1/a.pdf", b"%PDF-1.7", content_type="application/pdf")
    store.put("users/u1/b", b"raw")
    by_key = {i.key: i.content_type for i in store.list("users/u1/")}
    assert by_key == {"users/u1/a.pdf": "application/pdf", "users/u1/b": "application/octet-stream"}
    info = store.stat("users/u1/a.pdf")
    assert info is not None and info.content_type == "application/pdf"


def test_list_prefix_sorted_and_isolated(store: ObjectStore) -> None:
    keys = ["users/a/z", "users/ab/1", "users/a/2/x", "users/b/1", "users/a/1", "users/a/10"]
    for key in keys:
        store.put(key, key.encode())
    assert [i.key for i in store.list("users/a/")] == ["users/a/1", "users/a/10", "users/a/2/x", "users/a/z"]
    assert [i.key for i in store.list("users/ab/")] == ["users/ab/1"]
    assert [i.key for i in store.list("users/a")] == [
        "users/a/1", "users/a/10", "users/a/2/x", "users/a/z", "users/ab/1"]
    assert [i.key for i in store.list("users/a/1")] == ["users/a/1", "users/a/10"]
    assert [i.key for i in store.list("")] == sorted(keys)
    assert store.list("users/c/") == []
    sizes = {i.key: i.size for i in store.list("users/")}
    assert sizes == {k: len(k) for k in keys}


def test_delete_idempotent(store: ObjectStore) -> None:
    store.put("users/u1/x", b"x")
    store.delete("users/u1/x")
    assert store.stat("users/u1/x") is None
    store.delete("users/u1/x")
    store.delete("users/u1/never-existed")
    with pytest.raises(ObjectNotFound):
        store.get("users/u1/x")


def test_delete_prefix(store: ObjectStore) -> None:
    for key in ["users/a/1", "users/a/sub/2", "users/a/sub/deeper/3", "users/ab/1", "users/b/1"]:
        store.put(key, b"data")
    assert store.delete_prefix("users/a/") == 3
    assert store.list("users/a/") == []
    assert [i.key for i in store.list("users/")] == ["users/ab/1", "users/b/1"]
    assert store.delete_prefix("users/a/") == 0
    assert store.delete_prefix("nothing/here/") == 0


def test_open_streams_content(store: ObjectStore) -> None:
    data = payload(3 * MiB + 123)
    store.put("users/u1/stream.bin", data)
    chunks = list(store.open("users/u1/stream.bin"))
    assert b"".join(chunks) == data
    assert len(chunks) > 1, "a 3 MiB object must arrive in several chunks"
    # Abandoning a stream half-way must not break later requests (connection released).
    it = store.open("users/u1/stream.bin")
    next(it)
    close = getattr(it, "close", None)
    if close is not None:
        close()
    assert store.get("users/u1/stream.bin") == data


def test_check(store: ObjectStore) -> None:
    store.check()


def test_interrupted_write_leaves_no_object(store: ObjectStore) -> None:
    data = payload(12 * MiB)
    with pytest.raises(ConnectionResetError):
        store.put("users/u1/partial.bin", ChunkedStream(data, fail_after=6 * MiB))
    assert store.stat("users/u1/partial.bin") is None
    assert store.list("users/u1/") == []
    # An existing object survives a failed overwrite unchanged.
    store.put("users/u1/keep.bin", b"old content", content_type="text/plain")
    with pytest.raises(ConnectionResetError):
        store.put("users/u1/keep.bin", ChunkedStream(data, fail_after=2 * MiB), content_type="image/png")
    assert store.get("users/u1/keep.bin") == b"old content"
    info = store.stat("users/u1/keep.bin")
    assert info is not None and info.content_type == "text/plain"


# --------------------------------------------------------------------------- filesystem only

BAD_KEYS = ["", "/etc/passwd", "../outside", "users/../../outside", "users/u1/..", "a\\b", "..\\x",
            "a\x00b", "a//b", "./a", "a/./b", "a/", ".sb~meta-x", "users/.sb~tmp-1"]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_fs_rejects_unsafe_keys(fs_store: FileObjectStore, key: str) -> None:
    operations: list[Callable[[], object]] = [
        lambda: fs_store.put(key, b"x"),
        lambda: fs_store.get(key),
        lambda: fs_store.open(key),
        lambda: fs_store.stat(key),
        lambda: fs_store.delete(key),
    ]
    for operation in operations:
        with pytest.raises(ValueError):
            operation()
    assert not (fs_store.root.parent / "outside").exists()


@pytest.mark.parametrize("prefix", ["../", "/etc", "users/../", "a\\", "a\x00"])
def test_fs_rejects_unsafe_prefixes(fs_store: FileObjectStore, prefix: str) -> None:
    with pytest.raises(ValueError):
        fs_store.list(prefix)
    with pytest.raises(ValueError):
        fs_store.delete_prefix(prefix)


def test_fs_internal_files_invisible(fs_store: FileObjectStore) -> None:
    fs_store.put("users/u1/a.txt", b"a", content_type="text/plain")
    fs_store.put("users/u1/b.meta.json", b"{}", content_type="application/json")
    on_disk = sorted(p.name for p in (fs_store.root / "users" / "u1").iterdir())
    assert len(on_disk) == 4, on_disk  # two objects and two sidecars
    # A leftover temp file from a crashed writer is not an object either.
    (fs_store.root / "users" / "u1" / ".sb~tmp-deadbeef").write_bytes(b"half")
    assert [i.key for i in fs_store.list("")] == ["users/u1/a.txt", "users/u1/b.meta.json"]
    info = fs_store.stat("users/u1/b.meta.json")
    assert info is not None and info.content_type == "application/json"


def test_fs_reads_streams_in_blocks(fs_store: FileObjectStore) -> None:
    data = payload(5 * MiB + 1)
    stream = ChunkedStream(data)
    fs_store.put("users/u1/blocks.bin", stream)
    assert stream.read_sizes and max(stream.read_sizes) <= BLOCK_SIZE
    assert all(len(chunk) <= BLOCK_SIZE for chunk in fs_store.open("users/u1/blocks.bin"))


def test_fs_interrupted_write_leaves_no_files(fs_store: FileObjectStore) -> None:
    with pytest.raises(ConnectionResetError):
        fs_store.put("users/u1/partial.bin", ChunkedStream(payload(4 * MiB), fail_after=2 * MiB))
    assert list(fs_store.root.rglob("*")) == []  # no temp file, no sidecar, no empty directory


def test_fs_batch_refused_midway_leaves_no_files(fs_store: FileObjectStore) -> None:
    fs_store.put("users/u1/a", b"file")
    with pytest.raises(ValueError):  # the third key lies under the object "a": nothing of the batch is kept
        fs_store.put_many([("users/u1/x/1", b"one", "text/plain"), ("users/u2/y", b"two", "text/plain"),
                           ("users/u1/a/b", b"three", "text/plain")])
    assert sorted(str(p.relative_to(fs_store.root)) for p in fs_store.root.rglob("*") if p.is_file()) == [
        "users/u1/.sb~meta-a", "users/u1/a"]
    assert fs_store.stat("users/u1/x/1") is None and fs_store.stat("users/u2/y") is None


def test_fs_delete_prefix_removes_empty_dirs(fs_store: FileObjectStore) -> None:
    fs_store.put("users/u1/docs/a", b"a")
    fs_store.put("users/u1/docs/deep/b", b"b")
    fs_store.put("users/u2/c", b"c")
    assert fs_store.delete_prefix("users/u1/") == 2
    assert not (fs_store.root / "users" / "u1").exists()
    assert (fs_store.root / "users" / "u2" / "c").exists()
    fs_store.delete("users/u2/c")
    assert list(fs_store.root.iterdir()) == []


def test_fs_object_and_directory_conflict(fs_store: FileObjectStore) -> None:
    fs_store.put("users/u1/a", b"file")
    with pytest.raises(ValueError):
        fs_store.put("users/u1/a/b", b"nested")
    fs_store.put("users/u1/d/e", b"nested")
    with pytest.raises(ValueError):
        fs_store.put("users/u1/d", b"dir")
    assert fs_store.stat("users/u1/d") is None
    assert fs_store.get("users/u1/a") == b"file"


def test_fs_stale_sidecar_ignored(fs_store: FileObjectStore) -> None:
    fs_store.put("users/u1/x", b"old", content_type="text/plain")
    # Simulate a crash between the two renames: data replaced, sidecar from the old version.
    path = fs_store.root / "users" / "u1" / "x"
    tmp = path.with_name("replacement")
    tmp.write_bytes(b"new data")
    os.replace(tmp, path)
    info = fs_store.stat("users/u1/x")
    assert info is not None
    assert (info.size, info.content_type, info.etag) == (8, "application/octet-stream", None)


def test_fs_check_fails_without_root(fs_store: FileObjectStore) -> None:
    fs_store.check()
    shutil.rmtree(fs_store.root)
    with pytest.raises(OSError):
        fs_store.check()


# --------------------------------------------------------------------------- S3 only


def test_s3_presigned_get(moto_s3: MotoS3Server) -> None:
    s3 = _s3_store(moto_s3)
    s3.put("users/u1/shared.txt", b"shared bytes", content_type="text/plain")
    url = s3.presigned_get("users/u1/shared.txt", expires_seconds=60)
    assert url.startswith(f"http://{moto_s3.endpoint}/")
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.read() == b"shared bytes"


def test_s3_check_fails_for_missing_bucket(moto_s3: MotoS3Server) -> None:
    s3 = S3ObjectStore(moto_s3.endpoint, moto_s3.access_key, moto_s3.secret_key, "sb-test-never-created",
                       region=moto_s3.region, create_bucket=False)
    with pytest.raises(RuntimeError):
        s3.check()
