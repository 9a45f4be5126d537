"""Accuracy of the temporal understanding of questions on the gold suite.

    .venv/bin/python bench/temporal.py [--out DIR]

Runs every case of ``devtools/temporal_suite.py`` through ``secondbrain.temporal.understand``
and prints the exact-range accuracy (start and end equal to the expected instants, in the
expected zone, or correctly no time at all) overall and per expression family, the accuracy
of the other fields (vague, time field, query class, pinned semantic queries, partly read
windows), how many of each family's cases are read as a filter, as a preference (partly read,
or vague) or as no time, the confident misreads (a filter on a wrong range: the failure that
hides what was asked for), every failure, and the parsing speed; writes ``temporal.json`` and
``temporal.png`` (exact-range accuracy per family) under ``--out`` (default ``bench/results/``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from devtools.temporal_suite import (  # noqa: E402
    CASES,
    MENTION_CASES,
    Case,
    conventions,
    mention_errors,
    other_errors,
    range_errors,
    run_case,
)
from secondbrain.temporal import understand  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="results directory (default bench/results/)")
    charts.docs_option(ap)
    args = ap.parse_args()
    families: dict[str, list[bool]] = defaultdict(list)
    whole: dict[str, list[bool]] = defaultdict(list)  # every field right
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"filter": 0, "preference": 0, "none": 0})
    exact = full = misread = 0
    failures: list[tuple[Case, list[str]]] = []
    for case in CASES:
        got = run_case(case)
        r_err = range_errors(case, got)
        o_err = other_errors(case, got)
        families[case.family].append(not r_err)
        whole[case.family].append(not (r_err or o_err))
        window = got.time
        kinds[case.family]["none" if window is None else "preference" if window.partial or window.vague
                           else "filter"] += 1
        misread += bool(r_err) and window is not None and not (window.partial or window.vague)
        exact += not r_err
        full += not (r_err or o_err)
        if r_err or o_err:
            failures.append((case, r_err + o_err))
    n = len(CASES)
    print(f"temporal gold suite: {n} cases")
    print(f"exact-range accuracy: {exact}/{n} = {exact / n:.1%}")
    print(f"all fields correct (range, vague, field, query class, semantic query, ambiguity, partly read): "
          f"{full}/{n} = {full / n:.1%}")
    print(f"confident misreads (a filter on a wrong range): {misread}")
    print("\nper family: exact range, all fields, and what the questions became (filter / preference / no time):")
    for family in sorted(families):
        ok, all_ok, k = families[family], whole[family], kinds[family]
        print(f"  {family:<16} {sum(ok):>3}/{len(ok):<3} {sum(ok) / len(ok):6.1%}   {sum(all_ok):>3}/{len(all_ok):<3}"
              f"   {k['filter']:>3} / {k['preference']:>2} / {k['none']:>2}")
    if failures:
        print(f"\nfailures ({len(failures)}):")
        for case, errors in failures:
            print(f"  [{case.family}] {case.question!r} (now {case.now} {case.tz}): " + "; ".join(errors))
    else:
        print("\nno failures")
    # Times inside passages (what the chunker stores as the times a passage speaks of).
    by_family: dict[str, list[bool]] = defaultdict(list)
    for mc in MENTION_CASES:
        errors = mention_errors(mc)
        by_family[mc.family].append(not errors)
        if errors:
            print(f"  passage [{mc.family}] {mc.text!r}: " + "; ".join(errors))
    passed = sum(ok for oks in by_family.values() for ok in oks)
    print(f"\npassage suite (times a passage speaks of): {passed}/{len(MENTION_CASES)} exact; " + ", ".join(
        f"{f} {sum(v)}/{len(v)}" for f, v in sorted(by_family.items())))
    # Speed: how long understanding one question takes.
    questions = [(c.question, datetime.fromisoformat(c.now), ZoneInfo(c.tz), conventions(c)) for c in CASES]
    rounds = 20
    t0 = time.perf_counter()
    for _ in range(rounds):
        for q, now, tz, conv in questions:
            understand(q, now, tz, conventions=conv)
    per = (time.perf_counter() - t0) / (rounds * len(questions))
    print(f"\nspeed: {per * 1e6:.0f} µs per question ({1 / per:,.0f} questions/s, one core)")
    print(f"machine: {charts.machine()}")
    out = charts.out_dir(args.out)
    names = sorted(families)
    charts.save_json(out / "temporal.json", {
        "cases": n, "exact_range": exact, "all_fields": full, "confident_misreads": misread,
        "us_per_question": per * 1e6,
        "families": {f: {"exact": sum(families[f]), "all_fields": sum(whole[f]), "cases": len(families[f]),
                         **kinds[f]} for f in names}})
    charts.bars(out / "temporal.png", f"Temporal parser: exact-range accuracy per family ({exact}/{n} overall)",
                names, {"exact range": [sum(families[f]) / len(families[f]) for f in names]},
                ylabel="accuracy", ylim=(0, 1.1), fmt="{:.2f}")
    print(f"wrote {out / 'temporal.json'} and {out / 'temporal.png'}")
    if args.publish:
        rows = [[f, f"{sum(families[f])}/{len(families[f])}", f"{sum(whole[f])}/{len(whole[f])}",
                 f"{kinds[f]['filter']} / {kinds[f]['preference']} / {kinds[f]['none']}"] for f in names]
        charts.publish("temporal", "Temporal parser", [charts.table(
            ["family", "exact range", "every field", "filter / preference / no time"], rows)], notes=[
            f"{exact}/{n} exact ranges, {full}/{n} with every field right; confident misreads (a filter on a wrong "
            f"range): {misread}.",
            f"Passages (the times a passage speaks of): {passed}/{len(MENTION_CASES)} exact.",
            f"Speed: {per * 1e6:.0f} µs per question, one core."], charts=[out / "temporal.png"],
            headline={"temporal parser: questions read to the exact range (gold suite)": f"{exact}/{n}"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
