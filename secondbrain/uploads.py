"""Reading an upload from the request stream, never holding it whole in memory.

The body is parsed as it arrives (multipart/form-data with python-multipart's push
parser, or a raw body), the file part is hashed and spooled to a temporary file block by
block, and the request is refused with 413 the moment it passes the size limit: a 2 GB
upload against a 100 MB limit costs 100 MB of disk at most, and no memory.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import IO

from fastapi import HTTPException
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

FIELD_LIMIT = 64 * 1024  # a form field (title, captured_at) is small
MAX_FIELDS = 16


@dataclass
class Upload:
    """The file of an upload, spooled to disk, with its size and SHA-256."""

    file: IO[bytes]
    size: int
    sha256: str
    filename: str | None
    content_type: str | None
    fields: dict[str, str] = field(default_factory=dict)

    def close(self) -> None:
        """Delete the spooled copy."""
        self.file.close()


def too_large(limit: int) -> HTTPException:
    """The 413 answer, saying what to do."""
    return HTTPException(413, f"the upload is over the {limit}-byte limit (SB_MAX_UPLOAD_BYTES); "
                              "split the file or raise the limit.")


class _Spool:
    """Hashes and writes file bytes, refusing them past the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.hash = hashlib.sha256()
        self.file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - owned by the Upload

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise too_large(self.limit)
        self.hash.update(data)
        self.file.write(data)


async def read_raw(stream: AsyncIterator[bytes], *, limit: int, filename: str | None,
                   content_type: str | None) -> Upload:
    """A raw request body as the file (``PUT``-style uploads; the name comes from a header)."""
    spool = _Spool(limit)
    try:
        async for block in stream:
            spool.write(block)
    except BaseException:
        spool.file.close()
        raise
    spool.file.seek(0)
    return Upload(spool.file, spool.size, spool.hash.hexdigest(), filename, content_type)


class _FormReader:
    """Callbacks for python-multipart's push parser: file parts to their spools, small fields kept."""

    def __init__(self, limit: int, file_field: str, max_files: int = 1) -> None:
        self.limit = limit
        self.file_field = file_field
        self.max_files = max_files
        self.fields: dict[str, str] = {}
        self.files: list[tuple[_Spool, str | None, str | None]] = []  # spool, file name, declared type
        self.ended = False
        self.error: HTTPException | None = None
        self._headers: dict[bytes, bytes] = {}
        self._hfield = b""
        self._hvalue = b""
        self._name: str | None = None
        self._is_file = False
        self._buf = bytearray()

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self.on_part_begin, "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value, "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished, "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end, "on_end": self.on_end,
        }

    def fail(self, status: int, message: str) -> None:
        if self.error is None:
            self.error = HTTPException(status, message)

    def close(self) -> None:
        for spool, _name, _type in self.files:
            spool.file.close()

    def on_part_begin(self) -> None:
        self._headers, self._name, self._is_file, self._buf = {}, None, False, bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._hfield += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._hvalue += data[start:end]

    def on_header_end(self) -> None:
        self._headers[self._hfield.lower()] = self._hvalue
        self._hfield, self._hvalue = b"", b""

    def on_headers_finished(self) -> None:
        disp, opts = parse_options_header(self._headers.get(b"content-disposition", b""))
        if disp != b"form-data" or b"name" not in opts:
            self.fail(400, "malformed multipart body: a part has no form-data name")
            return
        self._name = opts[b"name"].decode("utf-8", "replace")
        if self._name == self.file_field:
            if len(self.files) >= self.max_files:
                self.fail(400, f"send exactly one '{self.file_field}' part per upload" if self.max_files == 1
                          else f"send at most {self.max_files} '{self.file_field}' parts at once")
                return
            self._is_file = True
            raw_name = opts.get(b"filename")
            ctype = self._headers.get(b"content-type")
            self.files.append((_Spool(self.limit), raw_name.decode("utf-8", "replace") if raw_name is not None
                               else None, ctype.decode("latin-1").strip() if ctype else None))
        elif len(self.fields) >= MAX_FIELDS:
            self.fail(400, "too many form fields")

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.error is not None:
            return
        if self._is_file:
            self.files[-1][0].write(data[start:end])  # raises 413 past the limit, mid-stream
            return
        self._buf.extend(data[start:end])
        if len(self._buf) > FIELD_LIMIT:
            self.fail(413, f"form field {self._name!r} is over {FIELD_LIMIT} bytes")

    def on_part_end(self) -> None:
        if not self._is_file and self._name and self.error is None:
            self.fields[self._name] = self._buf.decode("utf-8", "replace")

    def on_end(self) -> None:
        self.ended = True


async def read_multipart(stream: AsyncIterator[bytes], content_type_header: str, *, limit: int,
                         file_field: str = "file") -> Upload:
    """Parse multipart/form-data as it streams in; the part named ``file_field`` is the file."""
    _fields, uploads = await read_form(stream, content_type_header, limit=limit, file_field=file_field)
    if not uploads:
        raise HTTPException(422, f"no file in the upload: send it as the multipart field '{file_field}'")
    return uploads[0]


async def read_form(stream: AsyncIterator[bytes], content_type_header: str, *, limit: int, file_field: str,
                    max_files: int = 1) -> tuple[dict[str, str], list[Upload]]:
    """The fields and up to ``max_files`` files (parts named ``file_field``, each spooled and hashed, each
    refused with 413 past ``limit``) of a multipart/form-data body, parsed as it streams in."""
    _, params = parse_options_header(content_type_header)
    boundary = params.get(b"boundary")
    if not boundary:
        raise HTTPException(400, "malformed multipart body: the Content-Type has no boundary")
    form = _FormReader(limit, file_field, max_files)
    try:
        try:
            parser = MultipartParser(boundary, form.callbacks())  # type: ignore[arg-type]
        except FormParserError as exc:  # e.g. a boundary over 256 bytes
            raise HTTPException(400, f"malformed multipart body: {exc}") from exc
        async for block in stream:
            try:
                parser.write(block)
            except (HTTPException, OSError):
                raise  # our 413/400, or the server's disk failing: not the client's syntax
            except Exception as exc:  # the parser's own errors: the body is not valid multipart
                raise HTTPException(400, f"malformed multipart body: {exc}") from exc
            if form.error is not None:
                raise form.error
        parser.finalize()
        if form.error is not None:
            raise form.error
        if not form.ended:
            raise HTTPException(400, "malformed multipart body: it ended before its closing boundary")
    except BaseException:
        form.close()
        raise
    uploads = []
    for spool, filename, content_type in form.files:
        spool.file.seek(0)
        uploads.append(Upload(spool.file, spool.size, spool.hash.hexdigest(), filename, content_type, form.fields))
    return form.fields, uploads
