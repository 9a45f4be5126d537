"""Many people uploading, replacing, deleting, erased and created again, with SIGTERM and kill -9 restarts in
between, on a busy machine with the stages' progress writes racing their finishes: then the memory's
state is checked store by store (Postgres, the object store, every vector collection, conversations,
exports), not only through the API.

Every submission the test makes is answered before a restart (so what was submitted is known), and work
is always still in flight when the process is stopped or killed.  Invariants at the end:

1. no job is queued or running once the pipeline has drained, and no one's pending count is off;
2. every deleted source and everything of an erased user is absent from every store, conversations
   and exports included (an erased and re-created user holds only what was sent after);
3. every surviving source's current version is its last submission (older versions' text is not
   searchable);
4. nothing a forger published unsealed on an internal topic was indexed.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest
from aiokafka import AIOKafkaProducer

from secondbrain import ids
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import Chunk, ChunksCreated
from secondbrain.infra.postgres import EmbeddedPostgres
from secondbrain.ports import VectorFilter
from secondbrain.settings import Settings
from secondbrain.stores.vectors_edge import EdgeVectorStore
from tests.e2e.harness import Service, readable_tmp

pytestmark = pytest.mark.e2e

ROUNDS = ("sigterm", "kill -9", "none")  # how each round ends
USERS = ("ann", "ben", "cas")
ERASED = "cas"  # erased mid-round 1 and created again at once
FILLER = ("pebble", "comet", "lagoon", "thistle", "ember", "walnut", "cedar", "plover")


def token(*parts: object) -> str:
    """A word no other text contains: what the checks look for."""
    return "tok" + "x".join(str(p) for p in parts).replace("-", "")


def text_with(tok: str, seed: int, lines: int = 40) -> bytes:
    rng = random.Random(seed)
    body = [" ".join(rng.choice(FILLER) for _ in range(12)) + "." for _ in range(lines)]
    body.insert(lines // 2, f"The marker of this version is {tok}.")
    return "\n\n".join("\n".join(body[i:i + 5]) for i in range(0, len(body), 5)).encode()


@dataclass
class Ledger:
    """What the test did, so the end state can be judged."""

    last: dict[tuple[str, str], str] = field(default_factory=dict)  # (user, file) -> token of the last upload
    older: set[str] = field(default_factory=set)  # tokens of versions replaced since
    gone: set[str] = field(default_factory=set)  # tokens that must be nowhere (deleted, erased, forged)
    deleted_sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (user, file) -> source id, until
    # the file is uploaded again (a new source of the same id)
    jobs: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # user -> job ids
    conversations: list[tuple[str, str, str]] = field(default_factory=list)  # (user, conversation, gone token)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Busy:
    """A process burning one core for the length of the test: the machine is busy."""

    def __enter__(self) -> Busy:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with readable_tmp("sb-e2e-torture-") as path:
        yield path


def start(root: Path, log_dir: Path, services: list[Service]) -> Service:
    env = {"SB_STAGE_PROGRESS_AFTER_S": "0.05",  # "running" writes race the stages' finishes
           "SB_RATE_LIMIT_PER_MINUTE": "0"}
    svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], env, log_dir).start()
    services.append(svc)  # stopped at the end even if it never becomes ready
    return svc.wait_ready(240)


def keyed(svc: Service, key: str) -> httpx.Client:
    return httpx.Client(base_url=svc.url, headers={"Authorization": f"Bearer {key}"}, timeout=120)


def create_user(admin: httpx.Client, user: str) -> str:
    r = admin.post("/v1/admin/users", json={"user_id": user})
    assert r.status_code == 201, r.text
    return str(r.json()["key"]["api_key"])


def upload(c: httpx.Client, ledger: Ledger, user: str, name: str, tok: str, seed: int) -> None:
    r = c.post("/v1/artifacts", files={"file": (name, text_with(tok, seed), "text/plain")})
    assert r.status_code == 202, r.text
    with ledger.lock:
        ledger.deleted_sources.pop((user, name), None)
        previous = ledger.last.get((user, name))
        if previous is not None:
            ledger.older.add(previous)
        ledger.last[(user, name)] = tok
        ledger.jobs[user].append(r.json()["job_id"])


def user_round(svc: Service, key: str, user: str, rnd: int, ledger: Ledger) -> None:
    """One person's burst: replacements of the same files in quick succession, notes, and a deletion."""
    rng = random.Random(f"{user}{rnd}")
    with keyed(svc, key) as c:
        for k in range(3):
            for v in range(rng.randint(1, 3)):
                upload(c, ledger, user, f"doc{k}.txt", token(user, rnd, k, v), rng.randint(0, 10**6))
                time.sleep(rng.uniform(0.05, 0.3))
        for n in range(2):
            tok = token(user, rnd, "note", n)
            r = c.post("/v1/notes", json={"text": f"Note {n}: the marker is {tok}.", "title": f"Note {rnd}.{n}"})
            assert r.status_code == 202, r.text
            ledger.jobs[user].append(r.json()["job_id"])
        # Delete one file while its versions may still be in flight.
        name = f"doc{rng.randint(0, 2)}.txt"
        sources = c.get("/v1/sources", params={"limit": 500}).json()["sources"]
        found = [s for s in sources if s["source_uri"] == f"file:{name}"]
        if found:
            source_id = found[0]["source_id"]
            assert c.delete(f"/v1/sources/{source_id}").status_code == 204
            with ledger.lock:
                ledger.gone |= {t for (u, f), t in ledger.last.items() if u == user and f == name}
                ledger.gone |= {t for t in ledger.older if t.startswith(token(user))
                                and t.split("x")[2:3] and f"doc{t.split('x')[2]}.txt" == name}
                ledger.last.pop((user, name), None)
                ledger.deleted_sources[(user, name)] = source_id


def forge(bootstrap: str, user: str, tok: str) -> None:
    """An unsealed ChunksCreated naming a user and no job, and one naming a made-up job: a neighbour's try."""
    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
        await producer.start()
        try:
            now = datetime.now(UTC)
            doc = ids.document_id(ids.artifact_id(user, tok))
            for job in ("", str(uuid.uuid4())):
                ev = ChunksCreated(
                    event_id=str(uuid.uuid4()), job_id=job, user_id=user, artifact_id="a", source_id="s",
                    document_id=doc, title="forged", modality="note", content_type="text/plain", captured_at=now,
                    ingested_at=now, chunk_count=1,
                    chunks=[Chunk(chunk_id=ids.chunk_id(doc, 0), index=0, text=f"forged {tok}", char_start=0,
                                  char_end=20, token_count=3, heading_path=[], kind="paragraph")])
                await producer.send_and_wait("chunks.created", EventCodec().encode(ev), key=user.encode(),
                                             headers=list(EventCodec().headers(ev)))
        finally:
            await producer.stop()

    asyncio.run(send())


def ask_citing(svc: Service, key: str, user: str, ledger: Ledger) -> None:
    """A question whose answer quotes a note that is deleted right after."""
    tok = token(user, "secret")
    with keyed(svc, key) as c:
        r = c.post("/v1/notes", json={"text": f"The locker code is {tok}.", "title": "Locker"})
        job = r.json()["job_id"]
        deadline = time.monotonic() + 180
        while c.get(f"/v1/jobs/{job}").json()["status"] != "succeeded":
            assert time.monotonic() < deadline, "the locker note was never indexed"
            time.sleep(0.3)
        asked = c.post("/v1/ask", json={"question": "What is the locker code?"})
        done = [json.loads(line[6:]) for line in asked.text.splitlines() if line.startswith("data: ")][-1]
        assert tok in done.get("answer", "") or tok in json.dumps(done)
        source = next(s for s in c.get("/v1/sources").json()["sources"] if s["job_id"] == job)
        assert c.delete(f"/v1/sources/{source['source_id']}").status_code == 204
    with ledger.lock:
        ledger.gone.add(tok)
        ledger.conversations.append((user, done["conversation_id"], tok))


def drain(svc: Service, keys: dict[str, str], timeout: float = 600.0) -> None:
    """Until no job of anyone is queued or running; a job still so after the pipeline went quiet is stuck."""
    deadline = time.monotonic() + timeout
    while True:
        waiting = {}
        for user, key in keys.items():
            with keyed(svc, key) as c:
                rows = c.get("/v1/sources", params={"limit": 1000}).json()["sources"]
            waiting[user] = [(r["job_id"], r["status"]) for r in rows if r["status"] in ("queued", "running")]
        if not any(waiting.values()):
            return
        assert time.monotonic() < deadline, f"jobs never finished: {waiting}\n{svc.tail(40)}"
        time.sleep(2)


def test_torture(root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    log_dir = tmp_path_factory.mktemp("torture-logs")
    ledger = Ledger()
    services: list[Service] = []  # every process started, stopped whatever happens
    try:
        with Busy():
            svc = start(root, log_dir, services)
            admin = svc.client(timeout=120)
            keys = {"local": svc.key, **{u: create_user(admin, u) for u in USERS}}
            bootstrap = admin.get("/v1/status").json()["kafka"]["bootstrap"]
            ask_citing(svc, keys["ann"], "ann", ledger)
            for rnd, ending in enumerate(ROUNDS):
                threads = [threading.Thread(target=user_round, args=(svc, keys[u], u, rnd, ledger)) for u in USERS]
                for t in threads:
                    t.start()
                if rnd == 1:  # erase a user while their work is in flight, and create them again at once
                    threads[USERS.index(ERASED)].join()  # their submissions answered: what they sent is known
                    assert admin.delete(f"/v1/admin/users/{ERASED}", params={"confirm": ERASED}).status_code == 200
                    with ledger.lock:
                        ledger.gone |= {t for (u, _f), t in ledger.last.items() if u == ERASED}
                        ledger.gone |= {t for t in ledger.older if t.startswith(token(ERASED))}
                        ledger.last = {k: v for k, v in ledger.last.items() if k[0] != ERASED}
                        ledger.jobs[ERASED] = []
                    keys[ERASED] = create_user(admin, ERASED)
                for t in threads:
                    t.join()
                forged = token("forged", rnd)
                forge(bootstrap, "ben", forged)
                ledger.gone.add(forged)
                assert svc.proc is not None
                if ending == "sigterm":
                    os.kill(svc.proc.pid, signal.SIGTERM)
                    assert svc.proc.wait(20) == 0, svc.tail()
                elif ending == "kill -9":
                    os.kill(svc.proc.pid, signal.SIGKILL)
                    svc.proc.wait(10)
                if ending != "none":
                    svc = start(root, log_dir, services)
                    admin = svc.client(timeout=120)
                    bootstrap = admin.get("/v1/status").json()["kafka"]["bootstrap"]
            drain(svc, keys)
            check_through_the_api(svc, keys, ledger)
            svc.stop()
    finally:
        for started in services:
            started.stop()
    check_the_stores(root / "data", keys, ledger)


def check_through_the_api(svc: Service, keys: dict[str, str], ledger: Ledger) -> None:
    for user, key in keys.items():
        with keyed(svc, key) as c:
            rows = c.get("/v1/sources", params={"limit": 1000}).json()["sources"]
            assert not [r for r in rows if r["status"] in ("queued", "running")]
            # 3. each surviving file's current version is its last upload; older versions are not searchable
            for (owner, name), tok in ledger.last.items():
                if owner != user:
                    continue
                hits = c.get("/v1/search", params={"q": tok, "limit": 5}).json()["hits"]
                assert any(tok in h["text"] for h in hits), f"{user}/{name}: its last upload {tok} is not searchable"
            with c.stream("GET", "/v1/export") as r:
                archive = b"".join(r.iter_bytes())
            with zipfile.ZipFile(io.BytesIO(archive)) as zf:
                exported = b"".join(zf.read(n) for n in zf.namelist())
                documents = [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("documents/")]
            for doc in documents:  # the current version of each file holds its last upload's text
                filename = str((doc["metadata"] or {}).get("filename"))
                if doc["superseded_at"] is None and (user, filename) in ledger.last:
                    assert ledger.last[(user, filename)] in (doc["text"] or ""), (user, filename)
            # 2. nothing deleted, erased or forged, in search, in answers or in the export
            for tok in ledger.gone | ledger.older:
                hits = c.get("/v1/search", params={"q": tok, "limit": 10}).json()["hits"]
                assert not [h for h in hits if tok in h["text"]], f"{user}: {tok} is still searchable"
            for tok in ledger.gone:
                assert tok.encode() not in exported, f"{user}: {tok} is still in the export"
            for owner, conversation, tok in ledger.conversations:
                if owner == user:
                    shown = c.get(f"/v1/conversations/{conversation}")
                    assert shown.status_code == 200 and tok not in shown.text
    # 1. (the pending counts are counts of queued and running jobs: the stores' check finds none)


def check_the_stores(data: Path, keys: dict[str, str], ledger: Ledger) -> None:
    """Postgres, the object store and every vector collection, opened directly once `up` has stopped."""
    pg = EmbeddedPostgres(Settings(data_dir=data).postgres_dir).start()  # type: ignore[call-arg]
    try:
        with psycopg.connect(pg.dsn) as conn:
            running = conn.execute("SELECT job_id, status FROM jobs WHERE status IN ('queued', 'running')").fetchall()
            assert running == [], running
            stuck = conn.execute("SELECT job_id, stage FROM job_stages s WHERE status IN ('running', 'retrying') "
                                 "AND EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = s.job_id)").fetchall()
            assert stuck == [], stuck
            for (user, _name), source in ledger.deleted_sources.items():
                for table in ("jobs", "documents", "artifacts"):
                    n = conn.execute(f"SELECT count(*) FROM {table} WHERE user_id = %s AND source_id = %s",
                                     (user, source)).fetchone()
                    assert n is not None and n[0] == 0, (table, user, source)
            for tok in ledger.gone:
                n = conn.execute("SELECT count(*) FROM conversation_turns WHERE content LIKE %s OR meta::text LIKE %s",
                                 (f"%{tok}%", f"%{tok}%")).fetchone()
                assert n is not None and n[0] == 0, tok
                n = conn.execute("SELECT count(*) FROM documents WHERE title LIKE %s OR metadata::text LIKE %s",
                                 (f"%{tok}%", f"%{tok}%")).fetchone()
                assert n is not None and n[0] == 0, tok
            # the re-created user's rows are all from after the erasure: their first jobs are new ones
            old = conn.execute("SELECT count(*) FROM jobs WHERE user_id = %s AND NOT (job_id = ANY(%s))",
                               (ERASED, ledger.jobs[ERASED])).fetchone()
            assert old is not None and old[0] == 0
    finally:
        pg.stop()
    objects = data / "objects"
    for path in objects.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            for tok in ledger.gone:
                assert tok.encode() not in content, f"{tok} left in {path}"
    vectors = EdgeVectorStore(data / "vectors")
    try:
        for (user, _name), source in ledger.deleted_sources.items():
            if user == ERASED:
                continue  # an erased user's collections went whole; the new one is checked below
            for index in vectors.list_indexes(user):
                assert vectors.count(user, VectorFilter(source_ids=[source]), index=index) == 0, (user, source)
        for user in keys:
            for index in vectors.list_indexes(user):
                page: str | None = None
                while True:
                    hits, page = vectors.scroll(user, limit=256, offset=page, index=index)
                    for h in hits:
                        for tok in ledger.gone | ledger.older:
                            assert tok not in str(h.payload.get("text", "")), (user, index, tok)
                    if page is None or not hits:
                        break
    finally:
        vectors.close()
