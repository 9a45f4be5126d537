"""LoCoMo answers replayed offline: the sources each question got, captured once, answered again by the
extractive answerer of this checkout (seconds instead of a run through the service).

    .venv/bin/python bench/answers_replay.py capture --keep DIR [--captured FILE]
    .venv/bin/python bench/answers_replay.py replay [--captured FILE] [--dump FILE] [--before FILE]

``capture`` opens the index that ``bench/answers.py --keep DIR`` left (the service must be stopped: the vector
engine is one process's) and stores, for every question, what the query service gives its answerer: the
question as planned, the sources (``QueryEngine.sources``, k=6) and whether they bear on it at all
(``QueryEngine.supported``).  ``replay`` answers them again with ``services.query.answerer.quoted_answer``, as
the service does, and prints the figures ``bench/answers.py`` prints (contains, dates either way, false
abstention, category 5 abstains).  Answers equal the service's for the same sources: the answerer is a pure
function of the question, the sources, the zone and the time window.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.answers import MAX_WORDS, abstains, contains, dates_read  # noqa: E402
from bench.locomo import CATEGORIES, DEFAULT_DATA, load  # noqa: E402

UTC = ZoneInfo("UTC")
CAPTURED = REPO / "bench" / "results" / "locomo-sources.pickle"


def capture(keep: Path, out: Path) -> None:
    """Every question's plan and sources, from the kept index (see the module doc)."""
    from app.assembly import build_runtime
    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.settings import Settings
    from services.query.answerer import Answerer

    settings = Settings(data_dir=(keep / "data").resolve())  # type: ignore[call-arg]
    pg = EmbeddedPostgres(settings.postgres_dir).start()
    rows: list[dict[str, Any]] = []
    try:
        from pydantic import SecretStr

        settings = settings.model_copy(update={"postgres_dsn": SecretStr(pg.dsn)})
        rt = build_runtime(settings, vectors=True, models=True)
        engine = Answerer.for_runtime(rt).engine
        for conv in load(DEFAULT_DATA, 10, None):
            user = f"locomo-{conv.sample_id}"
            for q in conv.questions:
                plan = engine.plan(q.text, tz=UTC, now=conv.asked_at)
                sources = engine.sources(user, plan, k=6)
                wider = plan.beyond_window() if not sources else None
                if wider is not None:
                    sources = engine.sources(user, wider, k=6)
                rows.append({"conversation": conv.sample_id, "category": q.category, "question": q.text,
                             "gold": q.gold or "", "now": conv.asked_at, "plan": plan, "sources": sources,
                             "beyond": wider is not None and bool(sources),
                             "supported": engine.supported(user, q.text, sources)})
            print(f"  captured {conv.sample_id}: {len(rows)} questions", file=sys.stderr)
    finally:
        pg.stop()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pickle.dumps(rows))
    print(f"wrote {len(rows)} questions to {out}")


def replay(captured: Path, dump: Path | None, before: Path | None, publish: bool = False) -> None:
    """Answer every captured question again and print the figures (and, with ``before``, the changes)."""
    from datetime import UTC as utc
    from datetime import datetime

    from secondbrain.sparse import Bm25Encoder
    from secondbrain.temporal import Conventions
    from services.query.answerer import beyond_label, quoted_answer
    from services.query.extractive import NOT_FOUND

    rows = pickle.loads(captured.read_bytes())  # written by capture above
    enc = Bm25Encoder()
    scores: dict[int, list[dict[str, float]]] = defaultdict(list)
    answers: list[dict[str, Any]] = []
    for r in rows:
        plan = r["plan"]
        if not r["supported"]:
            text = NOT_FOUND
        else:
            beyond = beyond_label(plan, r["now"] or datetime.now(utc), Conventions()) if r["beyond"] else None
            text = quoted_answer(plan.question, r["sources"], beyond, encoder=enc, tz=UTC, conventions=Conventions(),
                                 window=(plan.start, plan.end)).text
        short = len(text.split()) <= MAX_WORDS
        if r["category"] == 5:
            scores[5].append({"abstains": float(abstains(text))})
        else:
            scores[r["category"]].append({
                "contains": float(contains(text, r["gold"]) and short),
                "dates": float(contains(dates_read(text), dates_read(r["gold"])) and short),
                "false_abstains": float(abstains(text))})
        answers.append({"category": r["category"], "question": r["question"], "gold": r["gold"], "answer": text})
    print(f"{'category':<14}{'n':>5}{'contains':>10}{'dates':>8}{'false abst.':>12}{'abstains':>10}")
    shown: list[list[object]] = []
    for cat in (1, 2, 3, 4, None, 5):
        rows_ = [x for c in ([cat] if cat else [1, 2, 3, 4]) for x in scores[c]]
        label = CATEGORIES[cat] if cat else "1-4"
        if cat == 5:
            print(f"{label:<14}{len(rows_):>5}{'':>30}{_mean(rows_, 'abstains'):>10.3f}")
            shown.append([label + " (abstains)", len(rows_), "", "", "", f"{_mean(rows_, 'abstains'):.3f}"])
        else:
            print(f"{label:<14}{len(rows_):>5}{_mean(rows_, 'contains'):>10.3f}{_mean(rows_, 'dates'):>8.3f}"
                  f"{_mean(rows_, 'false_abstains'):>12.3f}")
            shown.append([label, len(rows_), *(f"{_mean(rows_, k):.3f}" for k in ("contains", "dates",
                                                                                   "false_abstains")), ""])
    if publish:
        five = _mean(scores[5], "abstains")
        false = _mean([x for c in (1, 2, 3, 4) for x in scores[c]], "false_abstains")
        headline = {"LoCoMo answers without a model (replayed): category 5 abstains; false abstention on 1-4":
                    f"{five:.3f}; {false:.3f}"}
        charts.publish("answers_replay", "Answers on LoCoMo, replayed on the captured sources", [charts.table(
            ["category", "n", "contains the gold answer (answer ≤ 60 words)", "a gold date read either way",
             "false abstention", "abstains"], shown)],
            notes=["The sources each question got from `bench/answers.py` (captured once), answered again by this "
                   "checkout's answerer: the service's answers for the same sources."], headline=headline)
    if before is not None:
        old = {(a["question"], a["category"]): a for a in json.loads(before.read_text())}
        changed = [a for a in answers if old.get((a["question"], a["category"]), {}).get("answer") != a["answer"]]
        print(f"changed answers: {len(changed)} of {len(answers)}")
    if dump is not None:
        dump.write_text(json.dumps(answers, indent=1))


def _mean(rows: list[dict[str, float]], key: str) -> float:
    vals = [r[key] for r in rows if key in r]
    return sum(vals) / len(vals) if vals else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("capture", "replay"))
    ap.add_argument("--keep", type=Path, help="the --keep directory of a bench/answers.py run")
    ap.add_argument("--captured", type=Path, default=CAPTURED)
    ap.add_argument("--dump", type=Path, default=None)
    ap.add_argument("--before", type=Path, default=None, help="a --dump of an earlier replay: count what changed")
    charts.docs_option(ap)
    args = ap.parse_args()
    if args.step == "capture":
        if args.keep is None:
            raise SystemExit("capture needs --keep DIR")
        capture(args.keep, args.captured)
    else:
        replay(args.captured, args.dump, args.before, args.publish)


if __name__ == "__main__":
    main()
