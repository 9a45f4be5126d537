"""The same random sequence of operations, applied to Postgres and to the in-memory twin side by side,
gets the same answers at every step and leaves the same observable state (timestamps compared only
for being set or not).  This reaches combinations the scenario contracts do not spell out: shared
bytes across sources, deletions in the middle of work, requeues, erasures."""

from __future__ import annotations

import dataclasses
import difflib
import pprint
import random
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from secondbrain import ids
from secondbrain.ports import IdempotencyConflict, OutboxMessage
from secondbrain.stages import STAGES
from secondbrain.stores.memory import IntegrityError, MemoryMetadataStore
from secondbrain.stores.metadata_pg import PostgresMetadataStore
from tests.contracts.metadata.helpers import TOPICS, Stores, document, submission, version_of

USERS = ("alice", "bob")
URIS = ("file:a.md", "file:b.md", "file:c.md", "https://example.org/p")
CONTENTS = ("one", "two", "three")  # few: the same bytes come back under other names
OPERATIONS_PER_RUN = 150


def norm(value: Any) -> Any:
    """A result with every timestamp reduced to whether it is set."""
    if isinstance(value, datetime):
        return "<time>"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, {f.name: norm(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        return {k: norm(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [norm(v) for v in value]
    return value


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", norm(call()))
    except (psycopg.IntegrityError, IntegrityError):
        return ("refused",)
    except (IdempotencyConflict, LookupError, ValueError) as exc:
        return ("raised", type(exc).__name__)


class Run:
    """Chooses operations at random and applies each to both stores."""

    def __init__(self, seed: int, stores: dict[str, Stores]) -> None:
        self.rng = random.Random(seed)
        self.stores = stores
        self.jobs: list[tuple[str, str]] = []  # (user, job id)
        self.url_jobs: list[tuple[str, str, str]] = []  # (user, job id, url)
        self.documents: list[tuple[str, str, str]] = []  # (user, document id, source id)
        self.claimed: list[int] = []
        self.n = 0

    def both(self, label: str, call: Callable[[Stores], Any]) -> None:
        results = {kind: outcome(lambda s=store: call(s)) for kind, store in self.stores.items()}
        if results["memory"] != results["postgres"]:
            diff = difflib.unified_diff(pprint.pformat(results["postgres"]).splitlines(),
                                        pprint.pformat(results["memory"]).splitlines(), "postgres", "memory",
                                        lineterm="")
            pytest.fail(f"{label} (operation {self.n}):\n" + "\n".join(diff))

    def pick(self, seq: Any) -> Any:
        return self.rng.choice(seq)

    def artifact(self, user: str, *, submitted_at: datetime | None = None) -> Any:
        return version_of(user, self.pick(URIS[:3]), self.pick(CONTENTS), submitted_at=submitted_at)

    def step(self) -> None:
        r = self.rng
        self.n += 1
        user = self.pick(USERS)
        op = r.choices(
            ["submit", "submit_many", "resubmit", "external", "url", "attach", "transition", "document", "supersede",
             "indexed_many", "chunks", "claim", "publish", "release", "requeue", "delete", "cleaned", "purge", "erase",
             "original"],
            weights=[10, 6, 2, 3, 3, 2, 24, 8, 3, 4, 2, 5, 4, 2, 1, 3, 3, 2, 1, 3])[0]
        if op == "submit":
            art = self.artifact(user)
            job = ids.job_id(user, f"req-{self.n}")
            self.jobs.append((user, job))
            self.both(op, lambda s: s.intake.submit(art, job, [submission(art, job)], request_hash="h"))
        elif op == "resubmit" and self.jobs:
            owner, job = self.pick(self.jobs)
            art = self.artifact(owner)
            request_hash = self.pick(["h", "other", None])
            self.both(op, lambda s: s.intake.submit(art, job, [submission(art, job)], request_hash=request_hash))
        elif op == "submit_many":
            items = []
            for k in range(r.randint(1, 4)):  # new jobs, sometimes an earlier one again, sometimes a source twice
                owner = self.pick(USERS)
                art = self.artifact(owner)
                job = ids.job_id(owner, f"many-{self.n}-{k}") if r.random() < 0.8 or not self.jobs \
                    else self.pick(self.jobs)[1]
                self.jobs.append((owner, job))
                items.append((art, job, [submission(art, job)], self.pick(["h", "other", None])))
            lease = self.pick([None, 60.0])
            self.both(op, lambda s: [type(x).__name__ if isinstance(x, Exception) else x
                                     for x in s.intake.submit_many(items, lease_s=lease)])
        elif op == "external":
            when = datetime.now(UTC) + timedelta(hours=self.pick([-1, 1]))
            art = self.artifact(user, submitted_at=when)
            job = ids.job_id(user, f"ext-{self.n}") if r.random() < 0.7 or not self.jobs else self.pick(self.jobs)[1]
            self.jobs.append((user, job))
            self.both(op, lambda s: s.intake.register_external(art, job))
        elif op == "url":
            job = ids.job_id(user, f"url-{self.n}")
            url = self.pick(["https://example.org/p", "https://example.org/p#x", "https://example.org/q"])
            self.jobs.append((user, job))
            self.url_jobs.append((user, job, url))
            msg = OutboxMessage(topic="sb.urls.requested", key=user.encode(), value=job.encode())
            self.both(op, lambda s: s.intake.request_url(user, job, url, "title", [msg]))
        elif op == "attach" and self.url_jobs:
            owner, job, url = self.pick(self.url_jobs)
            page = dataclasses.replace(version_of(self.pick([owner, user]), url.split("#")[0], self.pick(CONTENTS)))
            self.both(op, lambda s: s.intake.attach_artifact(page, job))
        elif op == "transition" and self.jobs:
            owner, job = self.pick(self.jobs)
            who = owner if r.random() < 0.9 else self.pick(USERS)
            stage = self.pick(STAGES)
            kind = r.choices(["started", "succeeded", "retrying", "failed", "duplicate"], weights=[5, 5, 1, 1, 1])[0]
            attempt, detail, original = r.randint(1, 3), self.pick([None, "ok"]), self.pick(self.jobs)[1]
            calls: dict[str, Callable[[Stores], Any]] = {
                "started": lambda s: s.jobs.stage_started(who, job, stage, attempt),
                "succeeded": lambda s: s.jobs.stage_succeeded(who, job, stage, detail),
                "retrying": lambda s: s.jobs.stage_retrying(who, job, stage, attempt, "slow"),
                "failed": lambda s: s.jobs.job_failed(who, job, stage, "broken"),
                "duplicate": lambda s: s.jobs.job_duplicate(who, job, original),
            }
            self.both(f"{op} {kind}", calls[kind])
        elif op == "document":
            owner = self.pick(USERS)
            art = self.artifact(owner)
            doc = dataclasses.replace(document(art), captured_at=datetime(2024, 1, self.pick([1, 2, 3]), tzinfo=UTC),
                                      chunk_count=self.pick([None, 2]))
            self.documents.append((owner, doc.document_id, doc.source_id))
            self.both(op, lambda s: s.catalog.save_document(doc))
        elif op == "supersede" and self.documents:
            owner, doc_id, source = self.pick(self.documents)
            self.both(op, lambda s: s.catalog.supersede_older(owner, source, doc_id))
        elif op == "indexed_many" and self.documents:
            owner = self.pick(USERS)
            batch = [(doc, source, r.randint(0, 4), self.pick(self.jobs)[1] if self.jobs and r.random() < 0.6 else None)
                     for _o, doc, source in r.sample(self.documents, min(len(self.documents), r.randint(1, 3)))]
            self.both(op, lambda s: [type(x).__name__ if isinstance(x, Exception) else x
                                     for x in s.catalog.documents_indexed(owner, batch)])
        elif op == "chunks" and self.documents:
            owner, doc_id, _ = self.pick(self.documents)
            who = self.pick([owner, user])
            self.both(op, lambda s: s.catalog.set_chunk_count(who, doc_id, 5))
        elif op == "claim":
            limit, lease = r.randint(1, 4), self.pick([-1.0, 60.0])
            results = {kind: store.outbox.claim_outbox(limit, lease) for kind, store in self.stores.items()}
            assert norm(results["memory"]) == norm(results["postgres"]), op
            self.claimed += [row.id for row in results["postgres"]]
        elif op == "publish" and self.claimed:
            chosen = r.sample(self.claimed, min(len(self.claimed), 2))
            self.both(op, lambda s: s.outbox.mark_published(chosen))
        elif op == "release" and self.claimed:
            chosen = r.sample(self.claimed, 1)
            self.both(op, lambda s: s.outbox.release_outbox(chosen, "down"))
        elif op == "requeue":
            self.both(op, lambda s: s.outbox.requeue_unfinished())
        elif op == "delete":
            source = ids.source_id(user, self.pick(URIS))
            self.both(op, lambda s: s.lifecycle.delete_source(user, source))
        elif op == "cleaned":
            source = ids.source_id(user, self.pick(URIS))
            self.both(op, lambda s: s.lifecycle.source_cleaned(user, source))
        elif op == "purge":
            arts = [version_of(user, uri, c).artifact_id for uri in URIS[:1] for c in CONTENTS]
            self.both(op, lambda s: s.catalog.mark_raw_purged(user, arts))
        elif op == "erase":
            self.both(op, lambda s: s.lifecycle.erase_user(user))
        elif op == "original" and self.jobs:
            owner, job = self.pick(self.jobs)
            aid = self.artifact(owner).artifact_id
            self.both(op, lambda s: s.jobs.find_original_job(owner, aid, job))

    def compare_state(self, label: str) -> None:
        later = datetime.now(UTC) + timedelta(hours=2)
        for user in USERS:
            self.both(f"{label}: sources of {user}", lambda s, u=user: s.catalog.list_sources(u, limit=1000))
            self.both(f"{label}: artifacts of {user}", lambda s, u=user: s.catalog.list_artifacts(u))
            self.both(f"{label}: documents of {user}", lambda s, u=user: s.catalog.list_documents(u))
            self.both(f"{label}: current of {user}", lambda s, u=user: s.catalog.documents_between(u, None, None))
            self.both(f"{label}: pending of {user}", lambda s, u=user: s.jobs.pending_jobs(u))
            for uri in URIS:
                source = ids.source_id(user, uri)
                self.both(f"{label}: tombstone {uri}",
                          lambda s, u=user, src=source: s.lifecycle.source_deleted(u, src, None))
        for owner, job in self.jobs:
            self.both(f"{label}: job", lambda s, u=owner, j=job: s.jobs.get_job(u, j))
            self.both(f"{label}: events", lambda s, u=owner, j=job: s.jobs.job_events(u, j))
        for owner, doc_id, _ in self.documents:
            self.both(f"{label}: superseded", lambda s, u=owner, d=doc_id: s.catalog.is_superseded(u, d))
        self.both(f"{label}: expired", lambda s: s.catalog.raw_expired(later))


@pytest.fixture
def side_by_side(pg_dsn: str) -> Iterator[dict[str, Stores]]:
    with (PostgresMetadataStore(pg_dsn, min_size=1, max_size=2, topics=TOPICS) as postgres,
          MemoryMetadataStore(topics=TOPICS) as memory):
        yield {"postgres": postgres, "memory": memory}


@pytest.mark.parametrize("seed", range(6))
def test_postgres_and_memory_answer_alike(side_by_side: dict[str, Stores], seed: int) -> None:
    run = Run(seed, side_by_side)
    for i in range(OPERATIONS_PER_RUN):
        run.step()
        if i % 40 == 39:
            run.compare_state(f"after {i + 1} operations (seed {seed})")
    run.compare_state(f"at the end (seed {seed})")
    # Everything left in the outbox, in order.
    drained = {kind: s.outbox.claim_outbox(10_000) for kind, s in side_by_side.items()}
    assert norm(drained["memory"]) == norm(drained["postgres"])
