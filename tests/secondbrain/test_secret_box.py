"""Secrets at rest: the answer model's API key is stored encrypted, with a key nobody else can read.

Against the real Postgres store: what lands in the answer_endpoint row, where the secrets key comes
from (SB_SECRETS_KEY, else embedded mode's data directory), a plaintext key stored by an earlier
version, and a key encrypted with another secrets key.
"""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pydantic import SecretStr

from app.assembly import build_metadata
from secondbrain.ports import MetadataStore
from secondbrain.secret_box import KEY_FILE, SecretBox, SecretUnavailable, new_key
from secondbrain.settings import Settings
from secondbrain.stores.memory.store import MemoryMetadataStore

URL = "http://127.0.0.1:11434/v1"
KEY = "sk-live-0123456789abcdef"


def settings(dsn: str, data_dir: Path, **extra: object) -> Settings:
    return Settings(data_dir=data_dir, postgres_dsn=SecretStr(dsn), **extra)  # type: ignore[arg-type]


@pytest.fixture()
def stores(dsn: str) -> Iterator[list[MetadataStore]]:
    made: list[MetadataStore] = []
    yield made
    for store in made:
        store.server_settings.clear_answer_endpoint()
        store.close()


def opened(store_list: list[MetadataStore], s: Settings) -> MetadataStore:
    store = build_metadata(s)
    store.migrate()
    store_list.append(store)
    return store


def row(dsn: str) -> str | None:
    with psycopg.connect(dsn) as conn:
        found = conn.execute("SELECT api_key FROM answer_endpoint").fetchone()
    return found[0] if found else None


def test_the_key_is_stored_encrypted_and_read_back(dsn: str, tmp_path: Path, stores: list[MetadataStore]) -> None:
    store = opened(stores, settings(dsn, tmp_path))
    assert not (tmp_path / KEY_FILE).exists()  # made on first use, not at start
    stored = store.server_settings.set_answer_endpoint(URL, "llama3.2", KEY)
    assert stored.api_key == KEY and KEY not in repr(stored)
    raw = row(dsn)
    assert raw is not None and raw.startswith("sbenc:v1:") and KEY not in raw
    key_file = tmp_path / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # Another process of the same deployment (same data directory) reads it; keep_key keeps it encrypted.
    other = opened(stores, settings(dsn, tmp_path))
    assert other.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]
    kept = other.server_settings.set_answer_endpoint(URL, "qwen2.5", None, keep_key=True)
    assert kept.api_key == KEY and row(dsn) == raw
    assert store.server_settings.set_answer_endpoint(URL, "local", None).api_key is None and row(dsn) is None


def test_a_plaintext_key_from_before_is_encrypted_when_first_read(dsn: str, tmp_path: Path,
                                                                  stores: list[MetadataStore]) -> None:
    store = opened(stores, settings(dsn, tmp_path))
    with psycopg.connect(dsn) as conn:  # what an earlier version wrote
        conn.execute("INSERT INTO answer_endpoint (base_url, model, api_key) VALUES (%s, 'm', %s)", (URL, KEY))
    assert store.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]
    raw = row(dsn)
    assert raw is not None and raw.startswith("sbenc:v1:") and KEY not in raw
    assert store.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]


def test_distributed_mode_takes_the_key_from_the_setting(dsn: str, tmp_path: Path, stores: list[MetadataStore],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    secret = new_key()
    gateway = opened(stores, settings(dsn, tmp_path / "g", mode="distributed", secrets_key=SecretStr(secret)))
    query = opened(stores, settings(dsn, tmp_path / "q", mode="distributed", secrets_key=SecretStr(secret)))
    gateway.server_settings.set_answer_endpoint(URL, "m", KEY)
    assert query.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]
    assert not (tmp_path / "g").exists() and not (tmp_path / "q").exists()  # no key file: the setting is the key
    # A process with another key (a misconfigured replica) does not use what it cannot read, and says why.
    stranger = opened(stores, settings(dsn, tmp_path, mode="distributed", secrets_key=SecretStr(new_key())))
    with caplog.at_level(logging.WARNING):
        endpoint = stranger.server_settings.answer_endpoint()
    assert endpoint is not None and endpoint.base_url == URL and endpoint.api_key is None
    assert "encrypted with another secrets key" in caplog.text and KEY not in caplog.text
    # Without any key, no API key is stored in plain text: the admin is told what the operator must set.
    keyless = opened(stores, settings(dsn, tmp_path, mode="distributed"))
    with pytest.raises(SecretUnavailable, match="set SB_SECRETS_KEY"):
        keyless.server_settings.set_answer_endpoint(URL, "m", "sk-other")
    assert query.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]
    keyless.server_settings.set_answer_endpoint(URL, "m", None)  # an endpoint without a key is fine


def test_a_bad_secrets_key_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="32 random bytes in base64"):
        SecretBox.for_settings(Settings(data_dir=tmp_path, secrets_key=SecretStr("hunter2")))  # type: ignore[call-arg]
    (tmp_path / KEY_FILE).write_text("not a key\n")
    box = SecretBox.for_settings(Settings(data_dir=tmp_path))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="does not hold a secrets key"):
        box.seal(KEY, "answer_endpoint.api_key")


def test_the_memory_twin_keeps_the_key_encrypted_too(tmp_path: Path) -> None:
    box = SecretBox.for_settings(Settings(data_dir=tmp_path))  # type: ignore[call-arg]
    store = MemoryMetadataStore(secrets=box)
    assert store.server_settings.set_answer_endpoint(URL, "m", KEY).api_key == KEY
    assert store.server_settings.answer_endpoint().api_key == KEY  # type: ignore[union-attr]
    held = store.database.tables.answer_endpoint
    assert held is not None and held.api_key is not None and held.api_key.startswith("sbenc:v1:")
