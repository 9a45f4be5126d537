"""PNG charts for the benchmarks (matplotlib, no display needed), and their figures for the documentation.

Every benchmark writes its table to stdout and, through these helpers, a chart and a JSON file
of the same numbers under ``bench/results/`` (ignored by git) or the ``--out`` directory given.
With ``--publish`` it also writes its latest figures, the machine and the date to
``docs/benchmarks/<name>.json`` (and copies its charts there): the documentation's benchmark page
and the README's table of headline figures are generated from those files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
DOCS = REPO / "docs" / "benchmarks"


def memory_gb() -> float | None:
    """The machine's memory in GB (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):
        return None


def machine() -> str:
    """The machine the numbers come from, in one line."""
    load = os.getloadavg()
    memory = memory_gb()
    return (f"{platform.machine()}, {os.cpu_count()} CPUs{f', {memory:.0f} GB' if memory else ''}, "
            f"Python {platform.python_version()}, "
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)")


def machine_short() -> str:
    """The machine in a few words, for a table cell ("2-CPU x86_64")."""
    return f"{os.cpu_count()}-CPU {platform.machine()}"


def docs_option(ap: argparse.ArgumentParser) -> None:
    """``--publish``: also write the figures to ``docs/benchmarks/`` (see :func:`publish`)."""
    ap.add_argument("--publish", action="store_true",
                    help="also write these figures, the machine and the date to docs/benchmarks/ for the "
                         "documentation (commit the file to publish them)")


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> dict[str, Any]:
    """One table of figures for :func:`publish`; numbers should already be formatted as they are printed."""
    return {"title": title, "columns": list(columns), "rows": [[str(v) for v in row] for row in rows]}


def command_line() -> str:
    """How this benchmark was run, from the checkout's root (``--publish`` left out, a path of this machine written
    as PATH: the command is published, the machine's files are not)."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO).as_posix() if script.is_relative_to(REPO) else script.name
    return " ".join(["python", shown, *("PATH" if Path(a).is_absolute() else a for a in sys.argv[1:]
                                        if a != "--publish")])


def publish(name: str, title: str, tables: Sequence[Mapping[str, Any]], *, notes: Sequence[str] = (),
            charts: Sequence[Path] = (), headline: Mapping[str, str] | None = None, bench: str | None = None,
            docs: Path = DOCS) -> Path:
    """Write ``docs/benchmarks/<name>.json``: the figures of this run with the machine, its load and the date,
    and copy ``charts`` beside it.  ``headline`` (label -> figure) goes to the README's table of headline
    figures; ``bench`` names the script when it is not ``bench/<name>.py``.  A later run replaces the file:
    earlier figures stay in git's history."""
    docs.mkdir(parents=True, exist_ok=True)
    for chart in charts:
        shutil.copyfile(chart, docs / chart.name)
    payload = {"bench": bench or name, "title": title, "command": command_line(),
               "measured_at": datetime.now(UTC).date().isoformat(), "machine": machine(),
               "machine_short": machine_short(),
               "headline": [{"label": k, "value": v} for k, v in (headline or {}).items()],
               "tables": [dict(t) for t in tables], "notes": list(notes), "charts": [c.name for c in charts]}
    path = docs / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path} for the documentation")
    return path


def out_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The results directory (created)."""
    path = Path(given) if given else RESULTS
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_json(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` with the machine and the time it was measured."""
    payload = {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(), **data}
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def bars(path: Path, title: str, groups: Sequence[str], series: Mapping[str, Sequence[float]], *,
         ylabel: str, ylim: tuple[float, float] | None = None, note: str = "", fmt: str = "{:.2f}",
         hline: dict[str, float] | None = None, rotate: int = 0) -> Path:
    """Grouped bars: one group per entry of ``groups``, one bar per series (values in group order)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 0.35 * len(groups) * n + 2)), 4.5))
    for k, (name, values) in enumerate(series.items()):
        xs = [g + (k - (n - 1) / 2) * width for g in range(len(groups))]
        rects = ax.bar(xs, list(values), width, label=name)
        ax.bar_label(rects, labels=[fmt.format(v) for v in values], fontsize=7, padding=1)
    for label, y in (hline or {}).items():
        ax.axhline(y, linestyle="--", linewidth=0.8, color="grey")
        ax.text(len(groups) - 0.5, y, f" {label}", va="bottom", ha="right", fontsize=7, color="grey")
    ax.set_xticks(range(len(groups)), list(groups), rotation=rotate, ha="right" if rotate else "center")
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
    fig.text(0.01, 0.01, (note + "  " if note else "") + machine(), fontsize=6, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def lines(path: Path, title: str, xs: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str,
          ylabel: str, note: str = "") -> Path:
    """One line per series over ``xs``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for name, values in series.items():
        ax.plot(list(xs), list(values), marker="o", label=name)
        for x, v in zip(xs, values, strict=True):
            ax.annotate(f"{v:.1f}", (x, v), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, (note + "  " if note else "") + machine(), fontsize=6, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
