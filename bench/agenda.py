"""The agenda's precision and recall on its gold set (devtools/agenda_gold.py): every passage read as the
agenda reads it, the items it produced matched against those it should produce and must not.

    .venv/bin/python -m bench.agenda            # the table, then each passage the reader gets wrong
    .venv/bin/python -m bench.agenda --json

Precision: the share of produced items that are expected ones; recall: the share of expected items produced.
Reported for the whole set, by kind of source, and for the passages held out of the tuning of the rules.
"""

from __future__ import annotations

import argparse
import json
import time

from devtools.agenda_gold import CASES, Case, measure


def row(name: str, cases: list[Case]) -> dict[str, object]:
    precision, recall, outcomes = measure(cases)
    return {"set": name, "passages": len(cases), "expected": sum(len(c.expect) for c in cases),
            "must_not": sum(1 for c in cases if not c.expect), "produced": sum(len(o.produced) for o in outcomes),
            "precision": round(precision, 3), "recall": round(recall, 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    t0 = time.perf_counter()
    rows = [row("all", CASES), row("held out", [c for c in CASES if c.held_out]),
            row("tuned on", [c for c in CASES if not c.held_out])]
    rows += [row(source, [c for c in CASES if c.source == source]) for source in ("note", "chat", "transcript", "ocr")]
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"rows": rows, "seconds": round(elapsed, 2)}))
        return
    print(f"{'set':<10} {'passages':>8} {'expected':>8} {'must not':>8} {'produced':>8} {'precision':>9} {'recall':>7}")
    for r in rows:
        print(f"{r['set']:<10} {r['passages']:>8} {r['expected']:>8} {r['must_not']:>8} {r['produced']:>8} "
              f"{r['precision']:>9.3f} {r['recall']:>7.3f}")
    print(f"read in {elapsed:.1f} s ({elapsed / len(CASES) * 1000:.0f} ms a passage, loading included)")
    _, _, outcomes = measure()
    for o in outcomes:
        if o.false or o.hits < len(o.case.expect):
            print(f"- {o.case.id}: expected {list(o.case.expect)}, got {list(o.produced)}")


if __name__ == "__main__":
    main()
