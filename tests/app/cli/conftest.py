"""What the command-line tests on real stores share: a fresh database, a runtime on it with the models, and
the person ``carol`` with a key for the CLI to send."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.assembly import build_runtime
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from tests.pg import base_dsn, fresh_database


@pytest.fixture()
def keyed(tmp_path: Path) -> Iterator[tuple[Runtime, str]]:
    """The runtime and carol's API key."""
    with base_dsn() as base, fresh_database(base) as dsn:
        settings = Settings(  # type: ignore[call-arg]
            data_dir=tmp_path / "data", postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",
            topic_prefix=f"cli{tmp_path.name[-6:]}.", auth="required")
        rt = build_runtime(settings, vectors=True, models=True)
        try:
            rt.metadata.users.ensure_user("carol")
            yield rt, rt.metadata.api_keys.create_api_key("carol", "cli")[1]
        finally:
            rt.close()
