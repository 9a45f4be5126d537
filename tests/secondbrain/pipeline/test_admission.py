"""Who may put events into the pipeline: signed by the user's key, or queued by secondbrain itself."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from secondbrain import ids
from secondbrain.errors import PermanentError
from secondbrain.events import signing
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import UrlRequested
from secondbrain.pipeline.admission import Unauthorized, admit
from secondbrain.ports import ArtifactRecord
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from services.fetcher.fetch import FetchPolicy
from services.fetcher.stage import FetcherStage
from tests.pg import base_dsn, fresh_database

VALUE = b"\xc3\x01 some avro bytes"


@pytest.fixture(scope="module")
def store() -> Iterator[PostgresMetadataStore]:
    with base_dsn() as base, fresh_database(base) as dsn:
        s = PostgresMetadataStore(dsn)
        s.migrate()
        for user in ("alice", "bob"):
            s.users.ensure_user(user)
        yield s
        s.close()


def headers_for(value: bytes, key: str) -> dict[str, str]:
    return {k: v.decode() for k, v in signing.sign(value, key)}


def anything(_job: object) -> bool:
    return True


def test_a_signature_with_a_live_key_of_the_user_admits(store: PostgresMetadataStore) -> None:
    info, key = store.api_keys.create_api_key("alice", "calendar", "producer")
    got = admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=None, value=VALUE,
                headers=headers_for(VALUE, key),
                produced_here=anything)
    assert got == info.key_id


@pytest.mark.parametrize("scope", ["user", "admin"])
def test_any_scope_of_the_users_own_keys_may_sign(store: PostgresMetadataStore, scope: str) -> None:
    info, key = store.api_keys.create_api_key("alice", "k", scope)  # type: ignore[arg-type]
    assert admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=None, value=VALUE,
                 headers=headers_for(VALUE, key),
                 produced_here=anything) == info.key_id


def test_refusals_say_why_and_never_whose_key_it_was(store: PostgresMetadataStore) -> None:
    _, bobs = store.api_keys.create_api_key("bob", "bob's app", "producer")
    info, alices = store.api_keys.create_api_key("alice", "app", "producer")
    cases = {
        "another user's key": headers_for(VALUE, bobs),
        "an unknown key": headers_for(VALUE, "sb_000000000000_madeup"),
        "a tampered value": headers_for(VALUE + b"!", alices),
        "no signature value": {signing.KEY_ID_HEADER: info.key_id},
    }
    for what, headers in cases.items():
        with pytest.raises(Unauthorized) as err:
            admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=None, value=VALUE, headers=headers,
                  produced_here=anything)
        assert err.value.kind == "unauthorized", what
        assert "bob" not in err.value.reason, what
    store.api_keys.revoke_api_key("alice", info.key_id)
    with pytest.raises(Unauthorized, match="not a live key"):
        admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=None, value=VALUE,
              headers=headers_for(VALUE, alices),
              produced_here=anything)


def test_unsigned_events_need_a_job_secondbrain_queued_for_exactly_them(store: PostgresMetadataStore) -> None:
    job = ids.job_id("alice", str(uuid.uuid4()))
    art = ArtifactRecord(artifact_id=ids.artifact_id("alice", "ab" * 32), user_id="alice", source_id="s",
                         source_uri="note:x", object_key="users/alice/artifacts/x", content_type="text/plain",
                         size_bytes=1, sha256="ab" * 32, filename=None, title=None, captured_at=None,
                         submitted_at=datetime.now(UTC), producer="gateway", attributes={})
    store.intake.submit(art, job, [])

    def same_artifact(artifact_id: str | None) -> bool:
        try:
            admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=job, value=VALUE, headers={},
                  produced_here=lambda j: j.artifact_id == artifact_id)
            return True
        except Unauthorized as exc:
            assert "not signed" in exc.reason
            return False

    assert same_artifact(art.artifact_id)
    assert not same_artifact("some-other-artifact")
    with pytest.raises(Unauthorized, match="not signed"):  # the job is alice's, not bob's
        admit(store.users, store.api_keys, store.jobs, user_id="bob", job_id=job, value=VALUE, headers={},
              produced_here=anything)
    with pytest.raises(Unauthorized, match="not signed"):
        admit(store.users, store.api_keys, store.jobs, user_id="alice", job_id=None, value=VALUE, headers={},
              produced_here=anything)
    with pytest.raises(Unauthorized, match="unknown user"):
        admit(store.users, store.api_keys, store.jobs, user_id="nobody", job_id=job, value=VALUE, headers={},
              produced_here=anything)
    with pytest.raises(PermanentError) as err:
        admit(store.users, store.api_keys, store.jobs, user_id="../x", job_id=job, value=VALUE, headers={},
              produced_here=anything)
    assert err.value.kind == "malformed"


def test_a_signed_url_request_from_another_app_gets_its_own_job(store: PostgresMetadataStore, tmp_path: Path) -> None:
    from secondbrain.stores.objects_fs import FileObjectStore

    stage = FetcherStage(FileObjectStore(tmp_path), users=store.users, api_keys=store.api_keys, intake=store.intake,
                         jobs=store.jobs,
                         fence=store.fence, catalog=store.catalog, lifecycle=store.lifecycle, policy=FetchPolicy())
    _, key = store.api_keys.create_api_key("alice", "reader app", "producer")
    job = ids.job_id("alice", str(uuid.uuid4()))
    ev = UrlRequested(event_id=str(uuid.uuid4()), job_id=job, user_id="alice", url="https://example.org/a#top",
                      requested_at=datetime.now(UTC), producer="app:reader", title="A page")
    value = EventCodec().encode(ev)
    with pytest.raises(Unauthorized):  # unsigned and no job: refused, and no job appears
        stage.admit(ev, value, {})
    assert store.jobs.get_job("alice", job) is None
    stage.admit(ev, value, headers_for(value, key))
    view = store.jobs.get_job("alice", job)
    assert view is not None and view.status == "queued" and view.stages[0].stage == "fetch"
    stage.admit(ev, value, {})  # now the job exists for this URL: a redelivery is admitted unsigned too
