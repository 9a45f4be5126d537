"""Long-term conversational memory retrieval on LoCoMo, through the running service.

    .venv/bin/python bench/locomo.py [--conversations 10] [--half first|second] [--limit N]
                                     [--budgets 1000,2000] [--modes hybrid,sparse,dense]
                                     [--no-baseline] [--keep DIR] [--out DIR] [--data PATH] [--dump FILE]

Starts ``secondbrain up`` in a new data directory and creates one user per LoCoMo
conversation (10), so a conversation's questions search only its own data.  Every session is
uploaded as one dated record (``POST /v1/artifacts``, a ``text/x-chat`` transcript, one turn a
line as ``[D3:7] Caroline: ...``, shared images as their caption) with ``captured_at`` = the
session's date and time.  The pipeline keeps each turn's id (``dia_id``) as a segment attribute
and every chunk names the turns it holds (``turn_ids`` of each search hit), so recall
is read from hit metadata, not by matching strings.

Then every question goes through ``GET /v1/search`` three times over the same index:
``mode=hybrid`` (dense + BM25 fused, the service's default), ``mode=sparse`` (BM25 only) and
``mode=dense`` (MiniLM only), ``k=100``, with ``now`` = the day after the conversation's last
session (the questions are asked when the conversation is over: "last year" means the year
before that day; explicit dates such as "in May 2023" become event-time windows).

**Evidence recall within a context budget**: the hits are taken in rank order and their turns
added to a context until the next hit would pass the budget (1,000 and 2,000 tokens, counted
with the chunker's own token counter).  Overlapping conversation windows share turns; a turn
already in the context costs nothing again (the context holds each turn once).  Recall is the
share of a question's evidence turns in that context, averaged per category and overall.
LoCoMo's categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (its
questions have evidence turns too: they are scored like the others and shown in their own row;
"overall" counts all five, "1-4" leaves them out).  A few evidence ids in the data are
malformed ("D:11:26", "D30:05", several ids in one string): they are normalised; ids naming no
turn are dropped, and a question left with none is skipped (the count is printed).

**Naive baseline** (``--no-baseline`` skips it): the index the issue describes, built in this
process: one turn per chunk with the session date in front ("[8 May 2023] Caroline: ..."),
textbook Okapi BM25 (k1 1.5, b 0.75, lowercase word tokens), the same MiniLM model for dense,
and their reciprocal rank fusion (k 60, top 100 of each); each chunk costs its own tokens.

**Held-out halves**: conversations 1-5 are the half every parameter and rule was chosen on;
6-10 are held out.  ``--half first`` runs only the first (what tuning may look at), ``--half
second`` only the held-out one; every run prints each half it holds, and the overall, for every
mode.  ``--keep DIR`` keeps the service's data (and the users' keys) in ``DIR`` and, when it is
there already, asks the questions without ingesting again (for changes on the query side only).

Prints one table per budget and writes ``locomo.json`` and ``locomo.png`` under ``--out``
(default ``bench/results/``).  Takes about 6 minutes on 2 CPUs for the whole set.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import free_port, start, stop  # noqa: E402
from services.chunker.logic import approx_tokens  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = ("hybrid", "sparse", "dense")
MODE_NAMES = {"hybrid": "secondbrain hybrid", "sparse": "secondbrain BM25", "dense": "secondbrain dense"}
NAIVE = ("naive BM25", "naive dense", "naive RRF")
K = 100  # hits asked per question: more than any budget here can hold
TARGETS = {("overall", 1000): 0.87, ("temporal", 1000): 0.90, ("multi-hop", 2000): 0.72}
HALF = 5  # conversations 1-5 are the half parameters are chosen on; 6-10 are held out


# --------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class Turn:
    """One message of a conversation, as indexed."""

    dia_id: str
    speaker: str
    text: str  # one line; a shared image as its caption
    session: int
    at: datetime

    @property
    def line(self) -> str:
        """The turn as it appears in a chunk."""
        return f"{self.speaker}: {self.text}"


@dataclass
class Session:
    """One dated session of a conversation."""

    number: int
    at: datetime
    turns: list[Turn]


@dataclass
class Question:
    """A LoCoMo question with its evidence turns."""

    text: str
    category: int
    evidence: list[str]
    gold: str | None = None  # the expected answer (categories 1-4)


@dataclass
class Conversation:
    """A LoCoMo conversation: two speakers, dated sessions, questions."""

    sample_id: str
    number: int  # 1-based position in the data set: conversations 1-5 are the tuning half
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]
    skipped: int = 0  # questions without a usable evidence id

    @property
    def turns(self) -> dict[str, Turn]:
        """Every turn by its id."""
        return {t.dia_id: t for s in self.sessions for t in s.turns}

    @property
    def asked_at(self) -> datetime:
        """When the questions are asked: the day after the last session."""
        return max(s.at for s in self.sessions) + timedelta(days=1)


def session_time(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime (the data states no zone: UTC)."""
    return datetime.strptime(" ".join(value.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(raw: dict[str, Any]) -> str:
    """A turn's text on one line, a shared image described by its caption."""
    text = " ".join(str(raw.get("text", "")).split())
    if raw.get("blip_caption"):
        text += f" [shares a photo: {raw['blip_caption']}]"
    return text


def evidence_ids(raw: Iterable[str], known: set[str]) -> list[str]:
    """Normalised evidence ids that name a turn of the conversation."""
    out: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D:?(\d+):(\d+)", part.strip())
            if m and (dia := f"D{int(m[1])}:{int(m[2])}") in known:
                out.add(dia)
    return sorted(out)


def load(path: Path, conversations: int, limit: int | None, half: str = "all") -> list[Conversation]:
    """The first ``conversations`` conversations (of them only the tuning half, 1-5, with ``half="first"``,
    or the held-out one, 6-10, with ``"second"``), ``limit`` questions each (all when None)."""
    out = []
    for number, raw in enumerate(json.loads(path.read_text(encoding="utf-8"))[:conversations], start=1):
        if (half == "first" and number > HALF) or (half == "second" and number <= HALF):
            continue
        conv = raw["conversation"]
        sessions = []
        n = 1
        while f"session_{n}_date_time" in conv:
            turns_raw = conv.get(f"session_{n}") or []
            if turns_raw:
                at = session_time(conv[f"session_{n}_date_time"])
                sessions.append(Session(n, at, [Turn(t["dia_id"], t["speaker"], turn_text(t), n, at)
                                                for t in turns_raw]))
            n += 1
        c = Conversation(raw["sample_id"], number, (conv["speaker_a"], conv["speaker_b"]), sessions, [])
        known = set(c.turns)
        for q in raw["qa"]:
            ev = evidence_ids(q.get("evidence") or [], known)
            if ev:
                c.questions.append(Question(q["question"], int(q["category"]), ev,
                                            str(q["answer"]) if q.get("answer") is not None else None))
            else:
                c.skipped += 1
        if limit is not None:
            c.questions = c.questions[:limit]
        out.append(c)
    return out


def transcript(conv: Conversation, session: Session) -> bytes:
    """A session as a chat transcript: a title line, then one ``[id] Speaker: text`` line per turn."""
    a, b = conv.speakers
    lines = [f"# Conversation between {a} and {b}"] + [f"[{t.dia_id}] {t.line}" for t in session.turns]
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------- scoring


@dataclass
class Scores:
    """Recall per (system, budget) and category; and what the context held."""

    recall: dict[tuple[str, int], dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    used_tokens: dict[tuple[str, int], list[int]] = field(default_factory=lambda: defaultdict(list))

    def add(self, system: str, budget: int, category: int, recall: float, used: int) -> None:
        """One question's recall for a system at a budget."""
        self.recall[(system, budget)][category].append(recall)
        self.used_tokens[(system, budget)].append(used)

    def mean(self, system: str, budget: int, which: str) -> float:
        """Mean recall over a category name, ``overall`` (all) or ``1-4``."""
        cats = self.recall[(system, budget)]
        if which == "overall":
            values = [v for c in cats.values() for v in c]
        elif which == "1-4":
            values = [v for k, c in cats.items() if k != 5 for v in c]
        else:
            number = next(k for k, name in CATEGORIES.items() if name == which)
            values = cats.get(number, [])
        return statistics.fmean(values) if values else float("nan")

    def count(self, system: str, budget: int, which: str) -> int:
        """How many questions a mean is over."""
        cats = self.recall[(system, budget)]
        if which == "overall":
            return sum(len(c) for c in cats.values())
        if which == "1-4":
            return sum(len(c) for k, c in cats.items() if k != 5)
        number = next(k for k, name in CATEGORIES.items() if name == which)
        return len(cats.get(number, []))


def context_recall(ranked: Sequence[Sequence[Turn]], evidence: Sequence[str], budget: int) -> tuple[float, int]:
    """Fill a context with the turns of ranked chunks (each turn once) until the next chunk would
    pass ``budget`` tokens; the share of ``evidence`` in it and the tokens used."""
    held: set[str] = set()
    used = 0
    for turns in ranked:
        new = [t for t in turns if t.dia_id not in held]
        cost = sum(approx_tokens(t.line) for t in new)
        if used + cost > budget:
            break
        used += cost
        held.update(t.dia_id for t in new)
    return len(held.intersection(evidence)) / len(evidence), used


# --------------------------------------------------------------------------- the service


@dataclass
class Ingested:
    """What ingestion through the service did."""

    records: int = 0
    turns: int = 0
    chunks: int = 0
    seconds: float = 0.0
    keys: dict[str, str] = field(default_factory=dict)  # sample id -> API key


def create_users(client: httpx.Client, convs: list[Conversation]) -> dict[str, str]:
    """One user (with a key) per conversation, made with the local admin key."""
    keys = {}
    for c in convs:
        r = client.post("/v1/admin/users", json={"user_id": f"locomo-{c.sample_id}", "display_name": c.sample_id})
        r.raise_for_status()
        keys[c.sample_id] = r.json()["key"]["api_key"]
    return keys


def ingest(base: str, admin_key: str, convs: list[Conversation]) -> Ingested:
    """Upload every session of every conversation and wait until all are indexed."""
    out = Ingested()
    with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {admin_key}"}) as admin:
        out.keys = create_users(admin, convs)
    t0 = time.perf_counter()
    jobs: list[tuple[str, str]] = []  # (key, job id)
    for c in convs:
        with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {out.keys[c.sample_id]}"}) \
                as client:
            for s in c.sessions:
                r = client.post("/v1/artifacts", files={"file": (f"{c.sample_id}-session-{s.number}.chat",
                                                                transcript(c, s), "text/x-chat")},
                                data={"captured_at": s.at.isoformat()})
                r.raise_for_status()
                jobs.append((out.keys[c.sample_id], r.json()["job_id"]))
                out.records += 1
                out.turns += len(s.turns)
    pending = dict(enumerate(jobs))
    clients: dict[str, httpx.Client] = {}
    try:
        while pending:
            for i, (key, job) in list(pending.items()):
                client = clients.setdefault(key, httpx.Client(base_url=base, timeout=60,
                                                              headers={"Authorization": f"Bearer {key}"}))
                view = client.get(f"/v1/jobs/{job}").json()
                if view["status"] in ("failed", "dead_lettered", "duplicate", "superseded"):
                    raise SystemExit(f"job {job} ended {view['status']}: {view.get('error')}")
                if view["status"] == "succeeded":
                    del pending[i]
            print(f"\r  ingesting: {len(jobs) - len(pending)}/{len(jobs)} sessions indexed "
                  f"({time.perf_counter() - t0:.0f}s)", end="", file=sys.stderr, flush=True)
            if time.perf_counter() - t0 > 3600:
                raise SystemExit("ingestion not done after an hour")
            time.sleep(0.5)
        out.seconds = time.perf_counter() - t0
        for client in clients.values():
            sources = client.get("/v1/sources", params={"limit": 500}).json()["sources"]
            out.chunks += sum(int(s.get("chunk_count") or 0) for s in sources)
    finally:
        for client in clients.values():
            client.close()
    print(file=sys.stderr)
    return out


@dataclass
class Checks:
    """Facts about the hits, checked while scoring."""

    hits: int = 0
    event_time_ok: int = 0  # hits whose captured_at is the session time of their turns
    without_turns: int = 0  # hits naming no turn id
    windows: int = 0  # questions the plan read a time window from
    windows_by_category: Counter[int] = field(default_factory=Counter)
    search_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    # recall per (mode, half of the data, budget, category): half 0 is conversations 1-5 (where
    # parameters are chosen), half 1 is 6-10 (held out)
    halves: dict[tuple[str, int, int, int], list[float]] = field(default_factory=lambda: defaultdict(list))


def ask_service(base: str, ing: Ingested, convs: list[Conversation], budgets: Sequence[int], scores: Scores,
                checks: Checks, dump: list[dict[str, Any]] | None = None,
                modes: Sequence[str] = MODES) -> None:
    """Every question, every mode, scored at every budget (and, with ``dump``, every ranking kept)."""
    work = [(c, q) for c in convs for q in c.questions]
    turns_of = {c.sample_id: c.turns for c in convs}
    half = {c.sample_id: int(c.number > HALF) for c in convs}
    done = 0
    t0 = time.perf_counter()

    def one(item: tuple[Conversation, Question]) -> list[tuple[str, Question, list[dict[str, Any]], dict[str, Any]]]:
        c, q = item
        out = []
        with httpx.Client(base_url=base, timeout=60,
                          headers={"Authorization": f"Bearer {ing.keys[c.sample_id]}"}) as client:
            for mode in modes:
                t = time.perf_counter()
                r = client.get("/v1/search", params={"q": q.text, "k": K, "mode": mode, "tz": "UTC",
                                                     "now": c.asked_at.isoformat(),
                                                     "everything": "true"})  # rankings, not the cut
                r.raise_for_status()
                body = r.json()
                checks.search_ms[mode].append((time.perf_counter() - t) * 1000)
                out.append((mode, q, body["hits"], body))
        return out

    with ThreadPoolExecutor(max_workers=2) as pool:
        for (c, _q), results in zip(work, pool.map(one, work), strict=True):
            turns = turns_of[c.sample_id]
            if dump is not None:
                dump.append({"conversation": c.sample_id, "question": results[0][1].text,
                             "category": results[0][1].category, "evidence": results[0][1].evidence,
                             "time_range": results[0][3].get("time_range"),
                             "hits": {mode: [{"chunk_id": h["chunk_id"], "document_id": h["document_id"],
                                              "turn_ids": h.get("turn_ids") or [],
                                              "score": h["score"], "token_count": h["token_count"],
                                              "kind": h["kind"]} for h in hits]
                                      for mode, _q, hits, _b in results}})
            for mode, q, hits, body in results:
                if mode == "hybrid" and body.get("time_range"):
                    checks.windows += 1
                    checks.windows_by_category[q.category] += 1
                ranked: list[list[Turn]] = []
                for h in hits:
                    ids = h.get("turn_ids") or []
                    held = [turns[i] for i in ids if i in turns]
                    if mode == "hybrid":
                        checks.hits += 1
                        checks.without_turns += not held
                        at = datetime.fromisoformat(h["captured_at"].replace("Z", "+00:00"))
                        checks.event_time_ok += bool(held) and all(t.at == at for t in held)
                    ranked.append(held)
                for b in budgets:
                    recall, used = context_recall(ranked, q.evidence, b)
                    scores.add(MODE_NAMES[mode], b, q.category, recall, used)
                    checks.halves[(mode, half[c.sample_id], b, q.category)].append(recall)
            done += 1
            if done % 50 == 0 or done == len(work):
                rate = done / (time.perf_counter() - t0)
                print(f"\r  questions: {done}/{len(work)} ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


# --------------------------------------------------------------------------- naive baseline


class Okapi:
    """Textbook BM25 (k1 1.5, b 0.75) over lowercase word tokens, no stopwords, no stemming."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.n = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        avg = float(self.lengths.mean()) if self.n else 1.0
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            norm = k1 * (1 - b + b * self.lengths[i] / avg)
            for term, tf in Counter(doc).items():
                self.postings[term].append((i, tf * (k1 + 1) / (tf + norm)))
        self.idf = {t: math.log(1 + (self.n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def rank(self, query: list[str]) -> list[int]:
        """Documents with a positive score, best first."""
        scores = np.zeros(self.n)
        for term in query:
            for i, w in self.postings.get(term, []):
                scores[i] += self.idf[term] * w
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]


def words(text: str) -> list[str]:
    """Lowercase word tokens."""
    return re.findall(r"\w+", text.lower())


def rrf(rankings: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    """Reciprocal rank fusion."""
    score: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for pos, i in enumerate(ranking):
            score[i] += 1 / (k + pos + 1)
    return sorted(score, key=lambda i: -score[i])


def naive_baseline(convs: list[Conversation], budgets: Sequence[int], scores: Scores) -> float:
    """Score the one-turn-per-chunk index (see the module doc); seconds spent embedding."""
    from secondbrain.embedding import load_embedder

    embedder = load_embedder(batch_size=32)
    embed_s = 0.0
    for c in convs:
        turns = [t for s in c.sessions for t in s.turns]
        texts = [f"[{t.at.day} {t.at:%B %Y}] {t.line}" for t in turns]
        t0 = time.perf_counter()
        vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        queries = np.asarray(embedder.embed_documents([q.text for q in c.questions]), dtype=np.float32)
        embed_s += time.perf_counter() - t0
        bm25 = Okapi([words(t) for t in texts])
        cost = [approx_tokens(t) for t in texts]
        for q, qv in zip(c.questions, queries, strict=True):
            sparse = bm25.rank(words(q.text))
            dense = [int(i) for i in np.argsort(-(vectors @ qv), kind="stable")]
            fused = rrf([dense[:K], sparse[:K]])
            for name, ranking in zip(NAIVE, (sparse, dense, fused), strict=True):
                for b in budgets:
                    held, used = set(), 0
                    for i in ranking:
                        if used + cost[i] > b:
                            break
                        used += cost[i]
                        held.add(turns[i].dia_id)
                    scores.add(name, b, q.category, len(held.intersection(q.evidence)) / len(q.evidence), used)
        print(f"\r  naive baseline: {c.sample_id} done", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return embed_s


# --------------------------------------------------------------------------- report


def table(scores: Scores, systems: Sequence[str], budget: int) -> list[str]:
    """Recall per category (rows) and system (columns) at one budget."""
    rows = [*CATEGORIES.values(), "overall", "1-4"]
    head = f"{'category':<13}{'n':>5}" + "".join(f"{s:>20}" for s in systems)
    lines = [f"evidence recall within {budget:,} tokens", head, "-" * len(head)]
    for which in rows:
        n = scores.count(systems[0], budget, which)
        cells = "".join(f"{scores.mean(s, budget, which):>20.3f}" for s in systems)
        lines.append(f"{which:<13}{n:>5}{cells}")
    return lines


def half_mean(checks: Checks, mode: str, half: int, budget: int, which: str) -> float:
    """Mean recall of one mode on one half (0: conversations 1-5, 1: 6-10) for a category name,
    ``overall`` or ``1-4``."""
    if which == "overall":
        cats = list(CATEGORIES)
    elif which == "1-4":
        cats = [1, 2, 3, 4]
    else:
        cats = [k for k, name in CATEGORIES.items() if name == which]
    values = [v for c in cats for v in checks.halves.get((mode, half, budget, c), [])]
    return statistics.fmean(values) if values else float("nan")


def halves_table(checks: Checks, modes: Sequence[str], budgets: Sequence[int]) -> list[str]:
    """The three targeted figures per mode on each half (1-5 tuned on, 6-10 held out) and both together."""
    low, high = budgets[0], budgets[-1]
    head = (f"{'by half':<22}{'overall@' + str(low):>16}{'temporal@' + str(low):>16}"
            f"{'multi-hop@' + str(high):>16}{'overall@' + str(high):>16}")
    lines = [head, "-" * len(head)]
    for m in modes:
        for h, label in ((0, "1-5 (tuned on)"), (1, "6-10 (held out)")):
            cells = [half_mean(checks, m, h, low, "overall"), half_mean(checks, m, h, low, "temporal"),
                     half_mean(checks, m, h, high, "multi-hop"), half_mean(checks, m, h, high, "overall")]
            if all(math.isnan(v) for v in cells):
                continue
            lines.append(f"{m + ' ' + label:<22}" + "".join(f"{v:>16.3f}" for v in cells))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    ap.add_argument("--conversations", type=int, default=10, help="the first N conversations (1-10)")
    ap.add_argument("--half", choices=("all", "first", "second"), default="all",
                    help="first: conversations 1-5 only (the tuning half); second: 6-10 only (held out)")
    ap.add_argument("--modes", default=",".join(MODES), help="search modes to ask, comma-separated")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the service's data here; when it holds an index already, do not ingest again")
    ap.add_argument("--limit", type=int, default=None, help="at most N questions per conversation")
    ap.add_argument("--budgets", default="1000,2000", help="context budgets in tokens, comma-separated")
    ap.add_argument("--no-baseline", action="store_true", help="skip the naive one-turn-per-chunk baseline")
    ap.add_argument("--out", default=None, help="results directory (default bench/results/)")
    ap.add_argument("--dump", type=Path, default=None,
                    help="also write every question's ranked hits in each mode to this JSON file")
    charts.docs_option(ap)
    args = ap.parse_args()
    if not args.data.exists():
        ap.error(f"{args.data} not found; pass --data PATH/locomo10.json")
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    out = charts.out_dir(args.out)
    started = time.perf_counter()
    load_start = charts.machine()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes takes some of {', '.join(MODES)}")
    convs = load(args.data, args.conversations, args.limit, args.half)
    questions = sum(len(c.questions) for c in convs)
    print(f"LoCoMo: {len(convs)} conversations, {sum(len(c.sessions) for c in convs)} sessions, "
          f"{sum(len(c.turns) for c in convs)} turns, {questions} questions "
          f"({sum(c.skipped for c in convs)} skipped: no evidence id naming a turn)", file=sys.stderr)

    scores, checks = Scores(), Checks()
    root = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="sb-bench-locomo-"))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # the embedded Postgres may run as another system user
    kept = root / "locomo-ingested.json"
    port = free_port()
    try:
        print("starting secondbrain up...", file=sys.stderr)
        # No per-minute request limit: the benchmark asks thousands of questions a minute.
        proc, _ = start(root / "data", port, extra_env={"SB_RATE_LIMIT_PER_MINUTE": "0",
                                                         "SB_READ_RATE_LIMIT_PER_MINUTE": "0"})
        try:
            base = f"http://127.0.0.1:{port}"
            admin_key = (root / "data" / "api-key").read_text().strip()
            if kept.exists():
                ing = Ingested(**json.loads(kept.read_text()))
                if any(c.sample_id not in ing.keys for c in convs):
                    raise SystemExit(f"{root} holds other conversations; use a new --keep directory")
                print(f"  reusing the index in {root} (ingested before)", file=sys.stderr)
            else:
                ing = ingest(base, admin_key, convs)
                if args.keep:
                    kept.write_text(json.dumps(ing.__dict__))
            print(f"  {ing.records} records, {ing.turns} turns -> {ing.chunks} chunks in {ing.seconds:.0f}s "
                  f"({ing.chunks / ing.seconds:.1f} chunks/s)", file=sys.stderr)
            dump: list[dict[str, Any]] | None = [] if args.dump else None
            ask_service(base, ing, convs, budgets, scores, checks, dump, modes)
            if args.dump and dump is not None:
                args.dump.write_text(json.dumps({"turns": {c.sample_id: {i: [t.line, t.at.isoformat()]
                                                                           for i, t in c.turns.items()}
                                                           for c in convs}, "questions": dump}))
                print(f"  wrote every ranking to {args.dump}", file=sys.stderr)
        finally:
            stop(proc)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    embed_s = 0.0 if args.no_baseline else naive_baseline(convs, budgets, scores)

    systems = [MODE_NAMES[m] for m in modes]
    if not args.no_baseline:
        systems += list(NAIVE)
    print(f"\nLoCoMo evidence recall: {len(convs)} conversations, {questions} questions, "
          f"{ing.records} dated records, {ing.turns} turns -> {ing.chunks} chunks")
    for b in budgets:
        print()
        print("\n".join(table(scores, systems, b)))
    print()
    for (which, b), goal in TARGETS.items():
        if b in budgets and "hybrid" in modes:
            got = scores.mean(MODE_NAMES["hybrid"], b, which)
            print(f"target {which} at {b:,} tokens: {got:.3f} (goal {goal:.2f}) {'met' if got >= goal else 'NOT met'}")
    if set(MODES) <= set(modes):
        beats = all(scores.mean(MODE_NAMES["hybrid"], b, "overall") > max(
            scores.mean(MODE_NAMES["sparse"], b, "overall"), scores.mean(MODE_NAMES["dense"], b, "overall"))
            for b in budgets)
        print(f"hybrid beats BM25-only and dense-only overall at every budget: {'yes' if beats else 'NO'}")
    print(f"hits whose captured_at is their session's time: {checks.event_time_ok}/{checks.hits}; "
          f"hits naming no turn: {checks.without_turns}")
    print(f"questions read with a time window (event-time filter): {checks.windows} "
          f"({', '.join(f'{CATEGORIES[k]} {v}' for k, v in sorted(checks.windows_by_category.items()))})")
    print()
    print("\n".join(halves_table(checks, modes, budgets)))
    for mode, ms in checks.search_ms.items():
        print(f"/v1/search mode={mode}: p50 {statistics.median(ms):.0f} ms, p95 "
              f"{sorted(ms)[int(0.95 * (len(ms) - 1))]:.0f} ms (2 requests at a time)")
    print(f"ingestion through the service: {ing.chunks} chunks in {ing.seconds:.0f}s "
          f"({ing.chunks / ing.seconds:.1f} chunks/s)" + ("" if args.no_baseline else
                                                          f"; naive baseline embedding {embed_s:.0f}s"))
    print(f"machine at start: {load_start}")
    print(f"machine at end:   {charts.machine()}")
    print(f"total run time: {time.perf_counter() - started:.0f}s")

    rows = [*CATEGORIES.values(), "overall"]
    result = {"conversations": len(convs), "questions": questions, "records": ing.records, "turns": ing.turns,
              "chunks": ing.chunks, "ingest_seconds": ing.seconds, "budgets": budgets,
              "recall": {f"{s}@{b}": {w: scores.mean(s, b, w) for w in [*rows, "1-4"]} for s in systems
                         for b in budgets},
              "event_time_ok": [checks.event_time_ok, checks.hits], "time_windows": checks.windows,
              "halves": {f"{MODE_NAMES[m]}@{b}": {label: {w: half_mean(checks, m, h, b, w) for w in [*rows, "1-4"]}
                                                  for h, label in ((0, "1-5"), (1, "6-10"))}
                         for m in modes for b in budgets}}
    charts.save_json(out / "locomo.json", result)
    for b in budgets:
        charts.bars(out / f"locomo-{b}.png", f"LoCoMo evidence recall within {b:,} tokens ({questions} questions)",
                    rows, {s: [scores.mean(s, b, w) for w in rows] for s in systems}, ylabel="evidence recall",
                    ylim=(0, 1.08), fmt="{:.2f}")
    print(f"wrote {out / 'locomo.json'} and " + ", ".join(str(out / f"locomo-{b}.png") for b in budgets))
    if args.publish:
        notes = [f"{len(convs)} conversations, {questions} questions; {ing.records} dated records, {ing.turns} turns "
                 f"-> {ing.chunks} chunks, ingested through the service at {ing.chunks / ing.seconds:.1f} chunks/s.",
                 *(f"Target {which} at {b:,} tokens: {scores.mean(MODE_NAMES['hybrid'], b, which):.3f} (goal "
                   f"{goal:.2f}): {'met' if scores.mean(MODE_NAMES['hybrid'], b, which) >= goal else 'missed'}."
                   for (which, b), goal in TARGETS.items() if b in budgets and "hybrid" in modes),
                 *(f"`/v1/search` mode={mode}: p50 {statistics.median(ms):.0f} ms, p95 "
                   f"{sorted(ms)[int(0.95 * (len(ms) - 1))]:.0f} ms (two requests at a time)."
                   for mode, ms in checks.search_ms.items()),
                 f"Machine at the start: {load_start}."]
        publish(scores, checks, systems, modes, budgets, notes, [out / f"locomo-{b}.png" for b in budgets])


def publish(scores: Scores, checks: Checks, systems: Sequence[str], modes: Sequence[str], budgets: Sequence[int],
            notes: list[str], pngs: list[Path]) -> None:
    """The figures for the documentation (``--publish``): recall per budget, the halves, the targets."""
    rows = [*CATEGORIES.values(), "overall"]
    tables = [charts.table(["category", "n", *systems],
                           [[w, scores.count(systems[0], b, w), *(f"{scores.mean(s, b, w):.3f}" for s in systems)]
                            for w in rows], title=f"Evidence recall within {b:,} tokens") for b in budgets]
    low, high = budgets[0], budgets[-1]
    halves = [[f"{m}, conversations {label}", *(f"{half_mean(checks, m, h, b, w):.3f}" for b, w in
                                               ((low, "overall"), (low, "temporal"), (high, "multi-hop"),
                                                (high, "overall")))]
              for m in modes for h, label in ((0, "1-5 (tuned on)"), (1, "6-10 (held out)"))]
    tables.append(charts.table(["by half", f"overall @{low:,}", f"temporal @{low:,}", f"multi-hop @{high:,}",
                                f"overall @{high:,}"], halves, title="By half"))
    hybrid = MODE_NAMES["hybrid"]
    headline = None
    if "hybrid" in modes:
        naive = f" (naive RRF {scores.mean('naive RRF', low, 'overall'):.3f})" if "naive RRF" in systems else ""
        headline = {f"LoCoMo evidence recall within {low:,} tokens, overall":
                    f"{scores.mean(hybrid, low, 'overall'):.3f}{naive}"}
    charts.publish("locomo", "Long-term conversational memory (LoCoMo)", tables, notes=notes, charts=pngs,
                   headline=headline)


if __name__ == "__main__":
    main()
