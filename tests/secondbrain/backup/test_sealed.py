"""Sealed archives: they open with the passphrase or key file they were made with, and a wrong one or a
changed byte is a sentence saying which."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from secondbrain.backup import sealed
from secondbrain.backup.archive import BackupError
from secondbrain.backup.sealed import OpeningReader, SealedDamaged, SealingWriter, Secret, WrongKey

pytestmark = pytest.mark.fast


@pytest.fixture(autouse=True)
def cheap_scrypt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sealed, "SCRYPT_N", 2**12)  # the same code path, a test-sized cost


def seal(data: bytes, secret: Secret) -> bytes:
    out = io.BytesIO()
    writer = SealingWriter(out, secret)
    for i in range(0, len(data), 300_000):
        writer.write(data[i:i + 300_000])
    writer.close()
    return out.getvalue()


def unseal(blob: bytes, secret: Secret) -> bytes:
    return OpeningReader(io.BytesIO(blob), secret).read()


@pytest.mark.parametrize("size", [0, 1, sealed.BLOCK - 1, sealed.BLOCK, sealed.BLOCK + 1, 3 * sealed.BLOCK + 77])
def test_what_is_sealed_opens_whole(size: int) -> None:
    data = os.urandom(size)
    secret = Secret.passphrase("correct horse battery staple")
    blob = seal(data, secret)
    assert size < 16 or data not in blob
    assert unseal(blob, secret) == data


def test_a_key_file_seals_and_opens(tmp_path: Path) -> None:
    key = tmp_path / "backup.key"
    key.write_bytes(os.urandom(32))
    data = os.urandom(100_000)
    assert unseal(seal(data, Secret.key_file(key)), Secret.key_file(key)) == data
    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(32))
    with pytest.raises(WrongKey, match="this key file does not open the archive"):
        unseal(seal(data, Secret.key_file(key)), Secret.key_file(other))


def test_a_key_file_of_random_bytes_is_taken_as_it_is_and_a_text_key_without_its_newline(tmp_path: Path) -> None:
    key = tmp_path / "backup.key"
    key.write_bytes(b" " + os.urandom(30) + b"\n")  # random bytes may look like white space at either end
    assert Secret.key_file(key).value == key.read_bytes()
    text = tmp_path / "text.key"
    text.write_bytes(b"q1Jd3nL0t8mZ0vYk9e2Xc7RwT4pA6sHb1uNfG5yQ8iE=\n")  # openssl rand -base64 32
    assert Secret.key_file(text).value == text.read_bytes().strip()
    with pytest.raises(BackupError, match="too short"):
        short = tmp_path / "short.key"
        short.write_bytes(b"a short key written by hand\n")
        Secret.key_file(short)


def test_a_wrong_passphrase_is_told_apart_from_damage() -> None:
    blob = seal(os.urandom(50_000), Secret.passphrase("correct horse battery staple"))
    with pytest.raises(WrongKey, match="this passphrase does not open the archive"):
        unseal(blob, Secret.passphrase("correct horse battery stapler"))


def test_a_changed_byte_names_the_block() -> None:
    secret = Secret.passphrase("correct horse battery staple")
    blob = bytearray(seal(os.urandom(3 * sealed.BLOCK + 10), secret))
    blob[len(blob) // 2] ^= 0x01  # inside block 1 of 0-3
    with pytest.raises(SealedDamaged, match="changed or damaged after it was written: block 1"):
        unseal(bytes(blob), secret)


def test_a_cut_or_lengthened_archive_is_refused() -> None:
    secret = Secret.passphrase("correct horse battery staple")
    blob = seal(os.urandom(2 * sealed.BLOCK + 10), secret)
    cut_at_block = len(blob) - (10 + sealed.TAG)  # exactly after the second full block
    for damaged in (blob[:-1], blob[:cut_at_block], blob + b"x"):
        with pytest.raises(SealedDamaged):
            unseal(damaged, secret)


def test_weak_secrets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match="too short"):
        Secret.passphrase("short")
    (tmp_path / "k").write_bytes(b"abc")
    with pytest.raises(BackupError, match="too short to be a key"):
        Secret.key_file(tmp_path / "k")
