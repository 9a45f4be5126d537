"""Answer quality on LoCoMo's questions, through ``POST /v1/ask``.

    .venv/bin/python bench/answers.py [--conversations 10] [--limit N] [--llm-url URL --llm-model NAME]
                                      [--llama] [--service-repo PATH] [--out DIR] [--keep DIR] [--dump FILE]

Starts ``secondbrain up`` in a new data directory, ingests the LoCoMo conversations the way
``bench/locomo.py`` does (one user per conversation, each session a dated chat record), then asks
every question (categories 1-5) through ``POST /v1/ask`` as of the day after the conversation and
reads the streamed answer.  Scored per category, the way the LoCoMo paper normalises answers
(lowercase, no punctuation, no articles):

* **contains**: the gold answer appears in the answer, and the answer is at most 60 words (a longer one
  counts as a miss: quoting everything is not answering);
* **dates either way**: the same, with every written date read as a date first ("7 May 2023",
  "May 7, 2023" and "Sun, May 7, 2023" are one date; LoCoMo's gold answers write some conversations
  day first and others month first, while an answer writes dates the person's way);
* **F1**: token F1 between the answer and the gold answer;
* **abstains** (category 5, whose questions have no answer in the conversation): the answer says
  nothing was found; **false abstention** (categories 1-4, which have an answer): it says so wrongly;
* **lost**: the question's evidence turns were all among the sources given to the answerer, yet the
  answer does not contain the gold answer (the answerer's own loss, not retrieval's);
* **unsupported**: answers without a valid citation (``grounded: false``) that are not abstentions.

Side by side: the service's answer (extractive without a model; the model's with ``--llm-url`` or
``--llama``, which starts the local llama.cpp server with the small SmolLM2-135M model the tests
use: far too small to judge answer quality, it shows the protocol and the citation checks) and a
naive baseline, the first sentence of the top source.  ``--service-repo`` runs the service of
another checkout (an earlier commit) with this same scoring; ``--before FILE`` (the JSON such a run
wrote) prints its figures beside this run's.  ``--keep DIR`` keeps the service's data (and the users'
keys) in ``DIR`` and, when it is there already, asks the questions without ingesting again (for changes on
the query side only: the ingestion is most of a run).  ``--dump FILE`` writes every question with its gold
answer, the answer given and the sources' snippets, to read what fails.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import string
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import backbone, charts  # noqa: E402
from bench.locomo import CATEGORIES, DEFAULT_DATA, Conversation, Ingested, Question, ingest, load  # noqa: E402

NOT_FOUND = ("could not find", "nothing about that", "no information", "not mentioned", "don't know",
             "do not know", "no answer")


def normalise(text: str) -> list[str]:
    """LoCoMo's answer normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = text.lower().replace(",", "")
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return text.split()


def f1(answer: str, gold: str) -> float:
    pred, truth = normalise(answer), normalise(gold)
    common = Counter(pred) & Counter(truth)
    same = sum(common.values())
    if not pred or not truth or same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


MAX_WORDS = 60  # an answer longer than this does not count as containing the gold answer


def contains(answer: str, gold: str) -> bool:
    truth = " ".join(normalise(gold))
    return bool(truth) and truth in " ".join(normalise(answer))


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+(\d{{4}})\b", re.I)
_MDY = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_WEEKDAY = re.compile(r"\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+(?=\d|[a-z]+\s+\d)", re.I)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name.lower()[:3]))


def dates_read(text: str) -> str:
    """Every written date as year-month-day, whichever order it was written in."""
    text = _WEEKDAY.sub("", text)
    text = _DMY.sub(lambda m: f"{m.group(3)}-{_month(m.group(2)):02d}-{int(m.group(1)):02d}", text)
    return _MDY.sub(lambda m: f"{m.group(3)}-{_month(m.group(1)):02d}-{int(m.group(2)):02d}", text)


def abstains(answer: str) -> bool:
    low = answer.lower()
    return any(p in low for p in NOT_FOUND)


def first_sentence(text: str) -> str:
    parts = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)
    return parts[0] if parts else ""


def ask(client: httpx.Client, conv: Conversation, q: Question) -> dict[str, Any]:
    """One question through the SSE endpoint: the answer, its sources and the ``done`` event."""
    events: dict[str, Any] = {}
    with connect_sse(client, "POST", "/v1/ask", json={"question": q.text, "tz": "UTC",
                                                      "now": conv.asked_at.isoformat(), "k": 6}, timeout=600) as stream:
        stream.response.raise_for_status()
        for sse in stream.iter_sse():
            data = sse.json()
            if sse.event == "token":
                events["text"] = events.get("text", "") + data["text"]
            else:
                events[sse.event] = data
    return events


class Scores:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], list[dict[str, float]]] = defaultdict(list)

    def add(self, system: str, category: int, **values: float) -> None:
        self.rows[(system, category)].append(values)

    def mean(self, system: str, category: int | None, key: str) -> float:
        cats = [category] if category is not None else [1, 2, 3, 4]
        vals = [r[key] for c in cats for r in self.rows.get((system, c), []) if key in r]
        return sum(vals) / len(vals) if vals else float("nan")

    def count(self, system: str, category: int) -> int:
        return len(self.rows.get((system, category), []))

    @classmethod
    def load(cls, path: Path) -> Scores:
        """The scores another run saved (``--out``), its answers scored again the same way."""
        saved = json.loads(path.read_text())
        out = cls()
        for key, rows in saved["rows"].items():
            name, cat = key.split("|")
            out.rows[(name, int(cat))] = rows
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--limit", type=int, default=None, help="at most N questions per conversation")
    ap.add_argument("--llm-url", default=None, help="an OpenAI-compatible endpoint for the answers")
    ap.add_argument("--llm-model", default="local")
    ap.add_argument("--llama", action="store_true", help="start the local llama.cpp server with SmolLM2-135M")
    ap.add_argument("--service-repo", type=Path, default=REPO, help="run the service of this checkout")
    ap.add_argument("--out", default=None)
    ap.add_argument("--before", type=Path, default=None, help="answers-*.json of an earlier run, shown beside")
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the service's data here; when it holds an index already, do not ingest again")
    ap.add_argument("--dump", type=Path, default=None, help="write every question, answer and source here")
    charts.docs_option(ap)
    args = ap.parse_args()
    convs = load(args.data, args.conversations, args.limit)
    at_start = charts.machine()
    root = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="sb-bench-answers-"))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # the embedded Postgres may run as another system user
    kept = root / "locomo-ingested.json"
    dump: list[dict[str, Any]] = []
    env = {"SB_RATE_LIMIT_PER_MINUTE": "0", "SB_READ_RATE_LIMIT_PER_MINUTE": "0"}
    server = None
    if args.llama:
        from devtools.llm_server import LocalLlamaServer

        server = LocalLlamaServer(n_ctx=4096).start()
        args.llm_url, args.llm_model = server.base_url, server.model_id
    if args.llm_url:
        env |= {"SB_LLM_BASE_URL": args.llm_url, "SB_LLM_MODEL": args.llm_model}
    system = "model" if args.llm_url else "extractive"
    scores = Scores()
    unsupported = 0
    asked = 0
    backbone.REPO = args.service_repo.resolve()  # start() runs `python -m app.cli up` there
    port = backbone.free_port()
    try:
        proc, _ = backbone.start(root / "data", port, extra_env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            if kept.exists():
                ing = Ingested(**json.loads(kept.read_text()))
                if any(c.sample_id not in ing.keys for c in convs):
                    raise SystemExit(f"{root} holds other conversations; use a new --keep directory")
                print(f"  reusing the index in {root} (ingested before)", file=sys.stderr)
            else:
                ing = ingest(base, (root / "data" / "api-key").read_text().strip(), convs)
                if args.keep:
                    kept.write_text(json.dumps(ing.__dict__))
            t0 = time.perf_counter()
            work = [(c, q) for c in convs for q in c.questions]
            for i, (c, q) in enumerate(work, 1):
                with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {ing.keys[c.sample_id]}"}) as cl:
                    got = ask(cl, c, q)
                answer = got.get("done", {}).get("answer", got.get("text", ""))
                sources = got.get("sources", [])
                gold = q.gold or ""
                held = {t for s in sources for t in s.get("turn_ids") or ()}
                in_sources = bool(q.evidence) and set(q.evidence) <= held
                naive = first_sentence(sources[0]["snippet"]) if sources else ""
                if args.dump:
                    dump.append({"conversation": c.sample_id, "category": q.category, "question": q.text,
                                 "gold": gold, "evidence": q.evidence, "answer": answer, "in_sources": in_sources,
                                 "sources": [{"turn_ids": s.get("turn_ids") or [],
                                              "snippet": s.get("snippet")} for s in sources]})
                asked += 1
                grounded = bool(got.get("done", {}).get("grounded"))
                if not grounded and not abstains(answer):
                    unsupported += 1
                if q.category == 5:
                    scores.add(system, 5, abstains=float(abstains(answer)))
                    scores.add("naive first sentence", 5, abstains=float(not sources))
                else:
                    short = len(answer.split()) <= MAX_WORDS
                    ok = contains(answer, gold) and short
                    either = contains(dates_read(answer), dates_read(gold)) and short
                    scores.add(system, q.category, contains=float(ok), dates=float(either), f1=f1(answer, gold),
                               false_abstains=float(abstains(answer)), words=float(len(answer.split())),
                               **({"lost": float(not ok)} if in_sources else {}))
                    scores.add("naive first sentence", q.category, contains=float(contains(naive, gold)),
                               dates=float(contains(dates_read(naive), dates_read(gold))), f1=f1(naive, gold),
                               false_abstains=0.0, words=float(len(naive.split())))
                if i % 20 == 0 or i == len(work):
                    print(f"\r  questions: {i}/{len(work)} ({i / (time.perf_counter() - t0):.1f}/s)", end="",
                          file=sys.stderr, flush=True)
            print(file=sys.stderr)
        finally:
            backbone.stop(proc)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        if server is not None:
            server.stop()
    print(f"LoCoMo answers through POST /v1/ask: {len(convs)} conversations, {asked} questions; "
          f"service: {system}{' (' + args.llm_model + ')' if args.llm_url else ''}; "
          f"checkout: {'this one' if args.service_repo.resolve() == REPO else args.service_repo}")
    before = Scores.load(args.before) if args.before else None
    for name, source in ((system, scores), *(((f"{system}, before", before),) if before else ()),
                         ("naive first sentence", scores)):
        key = system if name.endswith(", before") else name
        print(f"\n{name}")
        print(f"{'category':<14}{'n':>5}{'contains':>10}{'dates':>7}{'F1':>7}{'lost':>7}{'words':>7}"
              f"{'false abst.':>12}{'abstains':>10}")
        for cat in (1, 2, 3, 4, None, 5):
            label = CATEGORIES[cat] if cat is not None else "1-4"
            n = source.count(key, cat) if cat is not None else sum(source.count(key, c) for c in (1, 2, 3, 4))
            if cat == 5:
                print(f"{label:<14}{n:>5}{'':>52}{source.mean(key, 5, 'abstains'):>10.3f}")
            else:
                lost = source.mean(key, cat, "lost") if key == system else float("nan")
                got, either = source.mean(key, cat, "contains"), source.mean(key, cat, "dates")
                tf1, words = source.mean(key, cat, "f1"), source.mean(key, cat, "words")
                print(f"{label:<14}{n:>5}{got:>10.3f}{either:>7.3f}{tf1:>7.3f}{lost:>7.3f}{words:>7.1f}"
                      f"{source.mean(key, cat, 'false_abstains'):>12.3f}")
    if args.dump:
        args.dump.write_text(json.dumps(dump, indent=1))
        print(f"wrote every answer to {args.dump}")
    print(f"\nanswers without a valid citation that do not abstain: {unsupported}/{asked}")
    print("lost: of the questions whose evidence turns were all in the sources, the share whose answer "
          "missed the gold answer")
    print(f"machine at start: {at_start}\nmachine at end:   {charts.machine()}")
    if args.publish:
        publish(scores, system, asked, unsupported, args.llm_model if args.llm_url else "", at_start)
    out = charts.out_dir(args.out)
    charts.save_json(out / f"answers-{system}.json", {
        "system": system, "questions": asked, "unsupported": unsupported,
        "rows": {f"{s}|{c}": v for (s, c), v in scores.rows.items()}})


def publish(scores: Scores, system: str, asked: int, unsupported: int, model: str, at_start: str) -> None:
    """The figures for the documentation (``--publish``): per category, the way the table prints them."""
    rows = []
    for cat in (1, 2, 3, 4, None, 5):
        label = CATEGORIES[cat] if cat is not None else "1-4"
        n = scores.count(system, cat) if cat is not None else sum(scores.count(system, c) for c in (1, 2, 3, 4))
        if cat == 5:
            rows.append([label + " (abstains)", n, "", "", "", "", f"{scores.mean(system, 5, 'abstains'):.3f}"])
        else:
            rows.append([label, n, *(f"{scores.mean(system, cat, k):.3f}"
                                     for k in ("contains", "dates", "f1", "lost", "false_abstains")), ""])
    one_to_four = f"{scores.mean(system, None, 'contains'):.3f}"
    charts.publish("answers" if system == "extractive" else "answers-model",
                   "Answers on LoCoMo" + (f" with a model ({model})" if model else ", without a model"),
                   [charts.table(["category", "n", "contains the gold answer (answer ≤ 60 words)",
                                  "a gold date read either way", "token F1", "lost", "false abstention",
                                  "abstains"], rows)],
                   notes=[f"Answers without a valid citation that do not abstain: {unsupported}/{asked}.",
                          "Lost: of the questions whose evidence turns were all among the sources, the share whose "
                          "answer missed the gold answer.", f"Machine at the start: {at_start}."],
                   headline={"LoCoMo answers without a model: categories 1-4 contain the gold answer": one_to_four}
                   if system == "extractive" else None, bench="answers")


if __name__ == "__main__":
    main()
