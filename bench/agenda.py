"""The agenda's precision and recall on its gold sets (devtools/agenda_gold.py to agenda_gold5.py):
every passage read as the agenda reads it, what several passages say merged into lines, the lines matched
against those each case should produce and must not.

    .venv/bin/python -m bench.agenda                 # every set: the table, then each case the reader gets wrong
    .venv/bin/python -m bench.agenda --set second    # one set (first to fifth)
    .venv/bin/python -m bench.agenda --json

Precision: the share of produced items that are expected ones; recall: the share of expected items produced.
Reported for each set, by kind of source, and for the first set's passages held out of the tuning of the rules.
"""

from __future__ import annotations

import argparse
import json
import time
from importlib import import_module

from bench import charts
from devtools.agenda_gold import Case, Outcome, measure

SETS = {"first": "devtools.agenda_gold", "second": "devtools.agenda_gold2", "third": "devtools.agenda_gold3",
        "fourth": "devtools.agenda_gold4", "fifth": "devtools.agenda_gold5"}
SOURCES = ("note", "chat", "whatsapp", "mail", "transcript", "ocr")


def cases_of(name: str) -> list[Case]:
    """The cases of one gold set (``[]`` for a set not written yet)."""
    try:
        module = import_module(SETS[name])
    except ModuleNotFoundError:
        return []
    return list(module.CASES)


def row(name: str, cases: list[Case]) -> tuple[dict[str, object], list[Outcome]]:
    precision, recall, outcomes = measure(cases)
    return {"set": name, "passages": len(cases), "expected": sum(len(c.expect) for c in cases),
            "must_not": sum(1 for c in cases if not c.expect), "produced": sum(len(o.produced) for o in outcomes),
            "precision": round(precision, 3), "recall": round(recall, 3)}, outcomes


def rows(name: str, cases: list[Case]) -> tuple[list[dict[str, object]], list[Outcome]]:
    whole, outcomes = row(name, cases)
    out = [whole]
    if name == "first":
        out += [row("  held out", [c for c in cases if c.held_out])[0],
                row("  tuned on", [c for c in cases if not c.held_out])[0]]
    out += [row(f"  {source}", picked)[0] for source in SOURCES
            if (picked := [c for c in cases if c.source == source])]
    return out, outcomes


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--set", choices=sorted(SETS), action="append", help="the sets to measure (default: all)")
    p.add_argument("--json", action="store_true")
    charts.docs_option(p)
    args = p.parse_args()
    t0 = time.perf_counter()
    table: list[dict[str, object]] = []
    wrong: list[Outcome] = []
    for name in args.set or list(SETS):
        cases = cases_of(name)
        if cases:
            found, outcomes = rows(name, cases)
            table += found
            wrong += [o for o in outcomes if o.false or o.hits < len(o.case.expect)]
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"rows": table, "seconds": round(elapsed, 2)}))
        return
    print(f"{'set':<12} {'passages':>8} {'expected':>8} {'must not':>8} {'produced':>8} {'precision':>9} {'recall':>7}")
    for r in table:
        print(f"{r['set']:<12} {r['passages']:>8} {r['expected']:>8} {r['must_not']:>8} {r['produced']:>8} "
              f"{r['precision']:>9.3f} {r['recall']:>7.3f}")
    print(f"read in {elapsed:.1f} s")
    if args.publish:
        charts.publish("agenda", "The agenda", [charts.table(
            ["set (by kind of source below it)", "passages", "lines expected", "must stay off", "lines given",
             "precision", "recall"],
            [[str(r["set"]).strip() if not str(r["set"]).startswith(" ") else "· " + str(r["set"]).strip(),
              r["passages"], r["expected"], r["must_not"], r["produced"], f"{r['precision']:.3f}",
              f"{r['recall']:.3f}"] for r in table])],
            notes=["Each set was written before the rules were changed for it; the figures when each was first "
                   "measured, untuned, are on the agenda's page (the fair figure for text never seen).",
                   f"Read in {elapsed:.1f} s."])
    for o in wrong:
        print(f"- {o.case.id}: expected {list(o.case.expect)}, got {list(o.produced)}")


if __name__ == "__main__":
    main()
