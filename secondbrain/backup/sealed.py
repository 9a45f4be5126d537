"""Sealed backups: the archive encrypted and authenticated with a passphrase or a key file.

``cryptography``'s ChaCha20-Poly1305 seals the archive in blocks of 1 MiB, each with its own nonce
(a random prefix, the block's number and a last-block flag: the STREAM construction), so a block
that was changed, dropped, moved or cut off fails to open.  The key comes from the passphrase
through scrypt (a random salt per archive) or from a key file through HKDF-SHA256; a separate MAC
key checks the header first, so a wrong passphrase is told apart from a damaged archive.

Layout::

    b"SBSEALED1\\n"  header length (4 bytes)  header (JSON: cipher, kdf, salt, scrypt cost, nonce prefix)
    HMAC-SHA256 of everything before it (32 bytes)
    block 0 ... block n   (each: ciphertext || 16-byte tag; the last one shorter than a full block,
                           or empty when the archive fills whole blocks)
"""

from __future__ import annotations

import base64
import hmac
import io
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from secondbrain.backup.archive import BackupError

MAGIC = b"SBSEALED1\n"
BLOCK = 1024 * 1024
TAG = 16
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1  # about 128 MiB and a few tenths of a second per derivation
MIN_PASSPHRASE = 8
MIN_KEY_FILE = 32
_MAX_HEADER = 4096


class WrongKey(BackupError):
    """The passphrase or key file given does not open this sealed archive."""


class SealedDamaged(BackupError):
    """A sealed archive whose content was changed, cut short or damaged after it was written."""


@dataclass(frozen=True)
class Secret:
    """What seals or opens an archive: a passphrase or the bytes of a key file."""

    kind: str  # "passphrase" | "key-file"
    value: bytes

    @classmethod
    def passphrase(cls, text: str) -> Secret:
        if len(text) < MIN_PASSPHRASE:
            raise BackupError(f"the passphrase is too short: use at least {MIN_PASSPHRASE} characters (a few words "
                              "are best)")
        return cls("passphrase", text.encode("utf-8"))

    @classmethod
    def key_file(cls, path: Path) -> Secret:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise BackupError(f"the key file {path} cannot be read: {exc.strerror or exc}") from None
        # A key written as text (`openssl rand -base64 32 > FILE`) may end in a newline that is not part of it;
        # random bytes are the key as they are (any of them may be a byte that looks like white space).
        material = data.strip() if all(32 <= b < 127 or b in b"\t\r\n" for b in data) else data
        if len(material) < MIN_KEY_FILE:
            raise BackupError(f"the key file {path} is too short to be a key: make one of {MIN_KEY_FILE} random "
                              f"bytes, e.g. `head -c 32 /dev/urandom > {path.name}`")
        return cls("key-file", material)

    def describe(self) -> str:
        return "passphrase" if self.kind == "passphrase" else "key file"


def _keys(secret: Secret, header: dict[str, Any]) -> tuple[bytes, bytes]:
    salt = base64.b64decode(header["salt"])
    if secret.kind == "passphrase":
        master = Scrypt(salt=salt, length=32, n=int(header["n"]), r=int(header["r"]),
                        p=int(header["p"])).derive(secret.value)
    else:
        master = HKDF(hashes.SHA256(), 32, salt, b"secondbrain backup key file").derive(secret.value)
    enc = HKDF(hashes.SHA256(), 32, None, b"secondbrain backup v1 encryption").derive(master)
    mac = HKDF(hashes.SHA256(), 32, None, b"secondbrain backup v1 header").derive(master)
    return enc, mac


def _nonce(prefix: bytes, counter: int, last: bool) -> bytes:
    return prefix + struct.pack(">I", counter) + (b"\x01" if last else b"\x00")


def is_sealed(path: Path) -> bool:
    """Whether the file at ``path`` is a sealed archive."""
    with path.open("rb") as fh:
        return fh.read(len(MAGIC)) == MAGIC


class SealingWriter(io.RawIOBase):
    """A writable stream that seals what is written to it into ``out``; :meth:`close` writes the last block
    (and does not close ``out``)."""

    def __init__(self, out: IO[bytes], secret: Secret) -> None:
        super().__init__()
        self._out = out
        kdf = "scrypt" if secret.kind == "passphrase" else "hkdf-sha256"
        header: dict[str, Any] = {"cipher": "chacha20-poly1305", "block": BLOCK, "kdf": kdf,
                                  "salt": base64.b64encode(os.urandom(16)).decode(),
                                  "nonce": base64.b64encode(os.urandom(7)).decode()}
        if secret.kind == "passphrase":
            header.update(n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P)
        enc, mac = _keys(secret, header)
        self._aead = ChaCha20Poly1305(enc)
        self._prefix = base64.b64decode(header["nonce"])
        body = json.dumps(header).encode()
        start = MAGIC + struct.pack(">I", len(body)) + body
        out.write(start + hmac.new(mac, start, "sha256").digest())
        self._buf = bytearray()
        self._counter = 0

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._buf += data
        while len(self._buf) > BLOCK:  # a full block is never the last: the last is written by close()
            self._block(bytes(self._buf[:BLOCK]), last=False)
            del self._buf[:BLOCK]
        return len(data)

    def _block(self, plain: bytes, *, last: bool) -> None:
        self._out.write(self._aead.encrypt(_nonce(self._prefix, self._counter, last), plain, None))
        self._counter += 1

    def close(self) -> None:
        if not self.closed:
            if len(self._buf) == BLOCK:
                self._block(bytes(self._buf), last=False)
                self._buf.clear()
            self._block(bytes(self._buf), last=True)
            self._buf.clear()
        super().close()


class OpeningReader(io.RawIOBase):
    """A readable stream of the archive inside a sealed one; every block is authenticated before any of its
    bytes are handed on.  Raises :class:`WrongKey` at once when ``secret`` does not open it."""

    def __init__(self, source: IO[bytes], secret: Secret) -> None:
        super().__init__()
        self._source = source
        if source.read(len(MAGIC)) != MAGIC:
            raise BackupError("this is not a sealed secondbrain backup")
        raw_len = source.read(4)
        length = struct.unpack(">I", raw_len)[0] if len(raw_len) == 4 else 0
        body = source.read(length) if 0 < length <= _MAX_HEADER else b""
        try:
            header = json.loads(body)
            enc, mac = _keys(secret, header)
            self._prefix = base64.b64decode(header["nonce"])
            block = int(header["block"])
        except (ValueError, KeyError, TypeError):
            raise SealedDamaged("the sealed archive's header is damaged: it cannot be opened") from None
        check = source.read(32)
        if not hmac.compare_digest(check, hmac.new(mac, MAGIC + raw_len + body, "sha256").digest()):
            raise WrongKey(f"this {secret.describe()} does not open the archive (or its header was changed): check "
                           f"that it is the {secret.describe()} the backup was made with")
        self._aead = ChaCha20Poly1305(enc)
        self._block = block
        self._counter = 0
        self._offset = len(MAGIC) + 4 + len(body) + 32
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._pending and not self._done:
            self._next()
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _next(self) -> None:
        sealed = _read_full(self._source, self._block + TAG)
        last = len(sealed) < self._block + TAG
        if last and len(sealed) < TAG:
            raise SealedDamaged(f"the sealed archive ends early, in block {self._counter}: it was cut short (a copy "
                                "that did not finish?)")
        try:
            plain = self._aead.decrypt(_nonce(self._prefix, self._counter, last), sealed, None)
        except InvalidTag:
            if last:
                raise SealedDamaged(f"the sealed archive ends early or its last block (block {self._counter}, at byte "
                                    f"{self._offset}) was changed: it does not authenticate") from None
            raise SealedDamaged(f"the sealed archive was changed or damaged after it was written: block "
                                f"{self._counter} (bytes {self._offset} to {self._offset + len(sealed)}) does not "
                                "authenticate") from None
        self._offset += len(sealed)
        self._counter += 1
        if last:
            if self._source.read(1):
                raise SealedDamaged("the sealed archive has bytes after its last block: something was added to it")
            self._done = True
        self._pending = plain


def _read_full(source: IO[bytes], size: int) -> bytes:
    parts = []
    left = size
    while left:
        data = source.read(left)
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return b"".join(parts)
