"""After a restore: the objects and vector points the restored database does not refer to are removed, and
what it does refer to is checked.

A backup's copies of the objects and vectors are taken just after its PostgreSQL snapshot, so they may
hold more than the dump knows: work that finished after the snapshot (its rows are not in the dump) and
the passages of versions the dump already calls superseded.  Those would be orphans in the restored
instance: the points would even be found by search.  Work the dump shows in flight is left alone: it
runs again when the restored instance starts, as after a crash, and writes the same ids.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from secondbrain.ports import ObjectStore, VectorFilter, VectorStore

log = logging.getLogger(__name__)


@dataclass
class Picture:
    """What the restored database refers to."""

    users: list[str]
    artifact_keys: set[str]
    documents: dict[str, set[str]]  # user -> every document id
    live: dict[str, set[str]]  # user -> documents searchable now (not superseded)
    indexed: dict[str, dict[str, int]]  # user -> document -> passages, for the documents of succeeded jobs
    kept_raw: dict[str, str]  # object key -> source id, artifacts whose raw file should be there


def read_picture(dsn: str) -> Picture:
    """Read what the database refers to."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        users = [r[0] for r in conn.execute("SELECT user_id FROM users ORDER BY user_id")]
        keys = {r[0] for r in conn.execute("SELECT object_key FROM artifacts")}
        kept = {r[0]: r[1] for r in conn.execute("SELECT object_key, source_id FROM artifacts WHERE raw_purged_at IS "
                                                 "NULL")}
        documents: dict[str, set[str]] = defaultdict(set)
        live: dict[str, set[str]] = defaultdict(set)
        for user, doc, superseded in conn.execute("SELECT user_id, document_id, superseded_at FROM documents"):
            documents[user].add(doc)
            if superseded is None:
                live[user].add(doc)
        indexed: dict[str, dict[str, int]] = defaultdict(dict)
        for user, doc, chunks in conn.execute(
                "SELECT d.user_id, d.document_id, d.chunk_count FROM documents d WHERE d.superseded_at IS NULL "
                "AND d.chunk_count > 0 AND EXISTS (SELECT 1 FROM jobs j JOIN artifacts a ON a.artifact_id = "
                "j.artifact_id WHERE a.artifact_id = d.artifact_id AND j.status = 'succeeded')"):
            indexed[user][doc] = int(chunks)
    return Picture(users, keys, dict(documents), dict(live), dict(indexed), kept)


@dataclass
class Reconciled:
    """What was removed, and what the check found missing (empty when whole)."""

    objects_removed: int = 0
    points_removed: int = 0
    missing_raw: list[str] = field(default_factory=list)  # object keys the database says are kept
    missing_points: list[str] = field(default_factory=list)  # documents of succeeded jobs short of passages

    def json(self) -> dict[str, Any]:
        return asdict(self)


def _doc_of_key(key: str) -> tuple[str, str] | None:
    parts = key.split("/")
    if len(parts) >= 4 and parts[0] == "users" and parts[2] == "documents":
        return parts[1], parts[3]
    return None


def prune_objects(objects: ObjectStore, picture: Picture) -> int:
    """Remove objects nothing in the database refers to; how many."""
    removed = 0
    for info in objects.list("users/"):
        key = info.key
        if key in picture.artifact_keys:
            continue
        doc = _doc_of_key(key)
        if doc is not None and doc[1] in picture.documents.get(doc[0], set()):
            continue  # a document's stored segments or chunk list
        objects.delete(key)
        removed += 1
    return removed


def _points(vectors: VectorStore, user: str, index: str) -> dict[str, int]:
    """Passages per document in one collection."""
    per_doc: dict[str, int] = defaultdict(int)
    offset: str | None = None
    while True:
        hits, offset = vectors.scroll(user, limit=1000, offset=offset, index=index)
        for hit in hits:
            per_doc[str(hit.payload.get("document_id"))] += 1
        if offset is None or not hits:
            return per_doc


def prune_points(vectors: VectorStore, picture: Picture, users: list[str]) -> tuple[int, dict[str, dict[str, int]]]:
    """Remove the points of documents the database does not have or calls superseded; how many, and the
    passages per document left in each user's collections."""
    removed = 0
    left: dict[str, dict[str, int]] = {}
    for user in users:
        counts: dict[str, int] = defaultdict(int)
        stale: set[str] = set()
        for index in vectors.list_indexes(user):
            for doc, n in _points(vectors, user, index).items():
                if doc in picture.live.get(user, set()):
                    counts[doc] = max(counts[doc], n)
                else:
                    stale.add(doc)
                    removed += n
        if stale:
            ordered = sorted(stale)
            for i in range(0, len(ordered), 500):
                vectors.delete_where(user, VectorFilter(document_ids=ordered[i:i + 500]))
        left[user] = dict(counts)
    return removed, left


def reconcile(dsn: str, objects: ObjectStore, vectors: VectorStore, *, users: list[str] | None = None) -> Reconciled:
    """Remove the orphans, then check that every searchable document of a succeeded job has its passages
    and every kept raw file is there."""
    picture = read_picture(dsn)
    everyone = sorted(set(picture.users) | set(users or []))
    report = Reconciled(objects_removed=prune_objects(objects, picture))
    report.points_removed, left = prune_points(vectors, picture, everyone)
    present = {info.key for info in objects.list("users/")}
    report.missing_raw = sorted(k for k in picture.kept_raw if k not in present)
    for user, docs in picture.indexed.items():
        have = left.get(user, {})
        report.missing_points += sorted(d for d, n in docs.items() if have.get(d, 0) < n)
    if report.objects_removed or report.points_removed:
        log.info("orphans removed after restore", extra=report.json())
    return report
