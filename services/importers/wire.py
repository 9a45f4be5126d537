"""A batch of captures on the wire (``POST /v1/imports/batch``): ``multipart/form-data`` with a ``manifest``
part (JSON: ``{"format", "captures": [...]}``, each naming the part that holds its bytes) and one part per
capture's bytes.  Read as it streams in: the parts are hashed and spooled (to disk past a few MB), and the
body is refused with 413 the moment it passes the limit.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import IO, Any

from fastapi import HTTPException
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from secondbrain.uploads import too_large

MANIFEST = "manifest"
MAX_PARTS = 1000
MANIFEST_LIMIT = 8 * 1024 * 1024
SPOOL_IN_MEMORY = 4 * 1024 * 1024


@dataclass
class Batch:
    """A batch as received: the manifest and each part's spooled bytes."""

    manifest: dict[str, Any]
    parts: dict[str, IO[bytes]] = field(default_factory=dict)

    def read(self, name: str) -> bytes:
        fh = self.parts[name]
        fh.seek(0)
        return fh.read()

    def close(self) -> None:
        for fh in self.parts.values():
            fh.close()


class _Reader:
    """python-multipart callbacks: every part spooled, the whole body bounded by ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.parts: dict[str, IO[bytes]] = {}
        self.error: HTTPException | None = None
        self.ended = False
        self._headers: dict[bytes, bytes] = {}
        self._field = b""
        self._value = b""
        self._current: IO[bytes] | None = None

    def callbacks(self) -> dict[str, object]:
        return {"on_part_begin": self.begin, "on_header_field": self.header_field,
                "on_header_value": self.header_value, "on_header_end": self.header_end,
                "on_headers_finished": self.headers_done, "on_part_data": self.data, "on_end": self.end}

    def begin(self) -> None:
        self._headers, self._current = {}, None

    def header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def header_end(self) -> None:
        self._headers[self._field.lower()] = self._value
        self._field, self._value = b"", b""

    def headers_done(self) -> None:
        disposition, opts = parse_options_header(self._headers.get(b"content-disposition", b""))
        name = opts.get(b"name", b"").decode("utf-8", "replace")
        if disposition != b"form-data" or not name:
            self.error = self.error or HTTPException(400, "malformed multipart body: a part has no form-data name")
            return
        if name in self.parts or len(self.parts) >= MAX_PARTS:
            self.error = self.error or HTTPException(400, f"a batch has at most {MAX_PARTS} parts, each named once")
            return
        self._current = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - the Batch's
        self.parts[name] = self._current

    def data(self, data: bytes, start: int, end: int) -> None:
        if self.error is not None or self._current is None:
            return
        self.size += end - start
        if self.size > self.limit:
            raise too_large(self.limit)
        self._current.write(data[start:end])

    def end(self) -> None:
        self.ended = True


async def read_batch(stream: AsyncIterator[bytes], content_type_header: str, *, limit: int) -> Batch:
    """Parse a batch as it streams in; 400/413/422 with a sentence when it is not one."""
    kind, params = parse_options_header(content_type_header)
    boundary = params.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise HTTPException(415, "send the batch as multipart/form-data with a 'manifest' part")
    reader = _Reader(limit)
    try:
        try:
            parser = MultipartParser(boundary, reader.callbacks())  # type: ignore[arg-type]
        except FormParserError as exc:
            raise HTTPException(400, f"malformed multipart body: {exc}") from exc
        async for block in stream:
            try:
                parser.write(block)
            except (HTTPException, OSError):
                raise
            except Exception as exc:  # the parser's own errors: the body is not valid multipart
                raise HTTPException(400, f"malformed multipart body: {exc}") from exc
            if reader.error is not None:
                raise reader.error
        parser.finalize()
        if reader.error is not None:
            raise reader.error
        if not reader.ended:
            raise HTTPException(400, "malformed multipart body: it ended before its closing boundary")
        manifest_part = reader.parts.pop(MANIFEST, None)
        if manifest_part is None:
            raise HTTPException(422, "the batch has no 'manifest' part")
        manifest_part.seek(0)
        raw = manifest_part.read(MANIFEST_LIMIT + 1)
        manifest_part.close()
        if len(raw) > MANIFEST_LIMIT:
            raise HTTPException(413, f"the manifest is over {MANIFEST_LIMIT} bytes; send fewer captures a batch")
        try:
            manifest = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise HTTPException(422, f"the manifest is not JSON: {str(exc)[:200]}") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("captures"), list):
            raise HTTPException(422, "the manifest must be an object with a 'captures' list")
    except BaseException:
        for fh in reader.parts.values():
            fh.close()
        raise
    return Batch(manifest, reader.parts)
