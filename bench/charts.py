"""PNG charts for the benchmarks (matplotlib, no display needed).

Every benchmark writes its table to stdout and, through these helpers, a chart and a JSON file
of the same numbers under ``bench/results/`` (ignored by git) or the ``--out`` directory given.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


def machine() -> str:
    """The machine the numbers come from, in one line."""
    load = os.getloadavg()
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)")


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
