"""Speed of finding the times a passage speaks of, as the chunker does once per passage.

    .venv/bin/python bench/mentions.py [--notes 300] [--repeats 7] [--profile]

Builds ``--notes`` one-page Markdown notes the way ``bench/bulk.py`` does and puts sentences of the
temporal gold suites (``devtools/temporal_suite.py``) into most of them: about a third say no other
time, the rest one or two.  Each note is written at its own instant.  Then ``mentioned_times`` runs
over every note ``--repeats`` times; prints the median passages per second and milliseconds per
passage (CPU time of this process, which other work on the machine disturbs less than the clock), and a
digest of everything found, which must not change when only the speed does.
``--profile`` prints where the time of one more pass goes (cProfile).  Numbers belong to the machine
they ran on; run before and after a change on the same machine, when it is quiet.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import platform
import pstats
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.bulk import note  # noqa: E402
from devtools.temporal_suite import CASES, MENTION_CASES  # noqa: E402
from secondbrain.temporal.mentions import Mention, mentioned_times  # noqa: E402

ZONE = ZoneInfo("Europe/London")


def passages(n: int, seed: int) -> list[tuple[str, datetime]]:
    """``n`` one-page notes, each with the instant it was written."""
    rng = random.Random(seed)
    said = [c.text for c in MENTION_CASES] + [c.question.rstrip("?") + "." for c in CASES]
    out = []
    for i in range(n):
        paragraphs = note(i, rng).split("\n\n")
        for _ in range(rng.choice((0, 0, 1, 1, 1, 2, 2))):
            k = rng.randrange(1, len(paragraphs))
            paragraphs[k] += " " + rng.choice(said)
        at = datetime(2023, 1, 1, 9, tzinfo=UTC) + timedelta(hours=rng.randrange(3 * 365 * 24))
        out.append(("\n\n".join(paragraphs), at))
    return out


def one_pass(corpus: list[tuple[str, datetime]]) -> list[list[Mention]]:
    return [mentioned_times(text, at, ZONE) for text, at in corpus]


def digest(found: list[list[Mention]]) -> str:
    h = hashlib.sha256()
    for ms in found:
        h.update(repr([(m.start.isoformat(), m.end.isoformat(), m.expression, m.span) for m in ms]).encode())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of one more pass")
    charts.docs_option(ap)
    args = ap.parse_args()
    corpus = passages(args.notes, args.seed)
    words = statistics.mean(len(t.split()) for t, _ in corpus)
    found = one_pass(corpus)  # warm up (compiled patterns, zone data)
    times = []
    for _ in range(args.repeats):
        t0 = time.process_time()
        one_pass(corpus)
        times.append(time.process_time() - t0)
    wall = statistics.median(times)
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{len(corpus)} passages, {words:.0f} words each on average; "
          f"{sum(map(len, found))} times found, digest {digest(found)}")
    print(f"median of {args.repeats} passes: {len(corpus) / wall:.0f} passages/s, "
          f"{1000 * wall / len(corpus):.3f} ms per passage "
          f"(fastest {1000 * min(times) / len(corpus):.3f}, slowest {1000 * max(times) / len(corpus):.3f})")
    if args.publish:
        charts.publish("mentions", "Times a passage speaks of", [charts.table(
            ["passages", "words each (mean)", "times found", "passages/s", "ms per passage (fastest, slowest)"],
            [[len(corpus), f"{words:.0f}", sum(map(len, found)), f"{len(corpus) / wall:.0f}",
              f"{1000 * wall / len(corpus):.3f} ({1000 * min(times) / len(corpus):.3f}, "
              f"{1000 * max(times) / len(corpus):.3f})"]])],
            notes=[f"Median of {args.repeats} passes, CPU time of one process; digest of what was found "
                   f"{digest(found)} (it must not change when only the speed does)."])
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(one_pass, corpus)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
