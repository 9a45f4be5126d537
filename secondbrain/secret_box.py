"""Secrets kept at rest (an answer model's API key), encrypted with the deployment's secrets key.

A stored secret is ``sbenc:v1:`` followed by base64 of ``nonce (12 bytes) || ciphertext || tag``:
AES-256-GCM under the secrets key, with the secret's purpose (``answer_endpoint.api_key``) as the
associated data, so a value cannot be moved to another column.  The key:

* ``SB_SECRETS_KEY`` (32 random bytes in base64, the same on every gateway and query process), else
* embedded mode: ``<data dir>/secrets.key``, made on first use (mode 0600), else
* none (distributed mode without the setting): nothing secret can be stored, and a stored one is unreadable.

A value without the prefix is a plaintext one stored before encryption: it is read as it is, and the
stores write it back encrypted (read-through migration).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

if TYPE_CHECKING:
    from secondbrain.settings import Settings

log = logging.getLogger(__name__)

PREFIX = "sbenc:v1:"
ANSWER_API_KEY = "answer_endpoint.api_key"  # what the answer model's stored API key is sealed for
KEY_FILE = "secrets.key"
KEY_BYTES = 32
_NONCE = 12
HOW_TO_MAKE_A_KEY = "`python -c \"import base64,os; print(base64.b64encode(os.urandom(32)).decode())\"`"


class SecretUnavailable(RuntimeError):
    """There is no secrets key, so a secret cannot be stored encrypted."""


class SecretUnreadable(ValueError):
    """A stored secret does not open with this deployment's secrets key."""


def new_key() -> str:
    """A fresh secrets key, as ``SB_SECRETS_KEY`` takes it (32 random bytes, base64)."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def parse_key(text: str) -> bytes:
    """The 32 bytes of a secrets key given in base64 (``ValueError`` saying what to do otherwise)."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ValueError(f"SB_SECRETS_KEY must be 32 random bytes in base64 (make one with {HOW_TO_MAKE_A_KEY})")
    return raw


def key_file(path: Path) -> bytes:
    """The key kept in ``path``, made there first (mode 0600, never replaced) when there is none."""
    try:
        return _key_in(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(new_key() + "\n")
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile: theirs counts
            os.link(tmp, path)
    finally:
        tmp.unlink()
    return _key_in(path)


def _key_in(path: Path) -> bytes:
    try:
        return parse_key(path.read_text())
    except ValueError:
        raise ValueError(f"{path} does not hold a secrets key (32 random bytes in base64): restore it from a "
                         "backup, or remove it and set the answer model's API key again") from None


def is_sealed(stored: str) -> bool:
    """Whether a stored value is encrypted (else it is a plaintext one from before)."""
    return stored.startswith(PREFIX)


class SecretBox:
    """Seals and opens small secrets with the secrets key, which is read (or, embedded, made) on first use."""

    def __init__(self, key: bytes | None = None, *, key_path: Path | None = None, missing: str = "") -> None:
        if key is not None and len(key) != KEY_BYTES:
            raise ValueError(f"a secrets key is {KEY_BYTES} bytes")
        self._key = key
        self._key_path = key_path
        self._missing = missing or ("no secrets key is configured: set SB_SECRETS_KEY (32 random bytes in base64, "
                                    f"the same on every gateway and query process; make one with "
                                    f"{HOW_TO_MAKE_A_KEY})")
        self._aead: AESGCM | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_settings(cls, settings: Settings) -> SecretBox:
        """``SB_SECRETS_KEY``; else, embedded, the data directory's key file; else a box without a key."""
        if settings.secrets_key is not None:
            return cls(parse_key(settings.secrets_key.get_secret_value()))
        if settings.mode == "embedded":
            return cls(key_path=settings.data_dir / KEY_FILE)
        return cls()

    @property
    def has_key(self) -> bool:
        """Whether secrets can be sealed and opened (a key is set, or kept in a file)."""
        return self._key is not None or self._key_path is not None

    def _cipher(self) -> AESGCM:
        with self._lock:
            if self._aead is None:
                if self._key is None and self._key_path is not None:
                    self._key = key_file(self._key_path)
                if self._key is None:
                    raise SecretUnavailable(self._missing)
                self._aead = AESGCM(self._key)
            return self._aead

    def seal(self, secret: str, purpose: str) -> str:
        """``secret`` encrypted for storage (``SecretUnavailable`` without a key)."""
        nonce = os.urandom(_NONCE)
        sealed = nonce + self._cipher().encrypt(nonce, secret.encode("utf-8"), purpose.encode())
        return PREFIX + base64.b64encode(sealed).decode("ascii")

    def open(self, stored: str, purpose: str) -> str:
        """The secret a stored value holds; a plaintext value (stored before encryption) as it is."""
        if not is_sealed(stored):
            return stored
        try:
            raw = base64.b64decode(stored[len(PREFIX):], validate=True)
            cipher = self._cipher()
        except (binascii.Error, ValueError, SecretUnavailable) as exc:
            raise SecretUnreadable(f"the stored {purpose} cannot be read: {exc}") from None
        try:
            return cipher.decrypt(raw[:_NONCE], raw[_NONCE:], purpose.encode()).decode("utf-8")
        except (InvalidTag, ValueError):
            raise SecretUnreadable(f"the stored {purpose} was encrypted with another secrets key (SB_SECRETS_KEY, "
                                   "or the data directory's secrets.key); store it again") from None
