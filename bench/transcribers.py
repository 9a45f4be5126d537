"""Speech to text, transcriber by transcriber: speed, word accuracy, peak memory and model load time.

    .venv-whisperx/bin/python bench/transcribers.py   # faster-whisper and whisperx (make whisperx builds it)
    .venv/bin/python bench/transcribers.py            # faster-whisper only (whisperx is not installed there)

The inputs are synthesised with espeak-ng (devtools/gen_audio.py): the 1.5-minute talk the audio
tests use (16 sentences, 1.2 s pauses) and four short voice memos of about 3 s.  Each
transcriber runs in a process of its own, so its peak memory (ru_maxrss: model, libraries
and one transcription at a time) is its own.  Figures per transcriber:

* model load time: the constructor (imports included, as a service pays them at start-up);
* minutes of audio per minute: the talk's length over the wall time of its transcription;
* word accuracy: 1 - word error rate against the script, over the talk and the memos
  (lower-cased words, letters and digits only; "9" for "nine" counts as an error for both);
* memo word accuracy: the same on the memos alone (where VAD cropping hurts).

Writes ``transcribers.json`` under ``--out`` (default ``bench/results/``).  Numbers belong to the
machine they ran on; the script prints it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from devtools import gen_audio  # noqa: E402


def words(text: str) -> list[str]:
    """Lower-case words, letters and digits only."""
    return re.findall(r"[a-z0-9']+", text.lower().replace("'", ""))


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Word-level Levenshtein distance (substitutions, insertions, deletions)."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i]
        for j, h in enumerate(hyp, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h)))
        prev = cur
    return prev[-1]


def accuracy(pairs: list[tuple[str, str]]) -> float:
    """1 - word error rate over (reference, hypothesis) pairs."""
    errors = sum(edit_distance(words(ref), words(hyp)) for ref, hyp in pairs)
    total = sum(len(words(ref)) for ref, _ in pairs)
    return 1 - errors / total


def child(kind: str, inputs: Path) -> None:
    """Load one transcriber, transcribe the inputs, print one JSON line of figures."""
    from secondbrain.transcribe import load_transcriber

    plan = json.loads((inputs / "plan.json").read_text())
    began = time.perf_counter()
    t = load_transcriber(kind, None, align_model_dir=os.environ.get("SB_WHISPERX_ALIGN_MODEL_DIR"))
    load_s = time.perf_counter() - began
    t.transcribe(plan["memos"][0]["path"])  # warm-up: first-call costs are not speech-to-text throughput
    began = time.perf_counter()
    talk = t.transcribe(plan["talk"]["path"])
    talk_s = time.perf_counter() - began
    talk_text = " ".join(s.text for s in talk.segments)
    memos = [(m["text"], " ".join(s.text for s in t.transcribe(m["path"]).segments)) for m in plan["memos"]]
    print(json.dumps({
        "kind": kind, "model_id": t.model_id, "load_s": load_s, "talk_s": talk_s,
        "audio_min_per_min": plan["talk"]["duration_s"] / talk_s,
        "word_accuracy": accuracy([(plan["talk"]["text"], talk_text), *memos]),
        "memo_word_accuracy": accuracy(memos),
        "memos_heard": [hyp for _ref, hyp in memos],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="results directory (default bench/results/)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--inputs", default=None, help=argparse.SUPPRESS)
    charts.docs_option(ap)
    args = ap.parse_args()
    if args.child:
        child(args.child, Path(args.inputs))
        return
    kinds = ["faster-whisper"] + (["whisperx"] if importlib.util.find_spec("whisperx") else [])
    at_start = charts.machine()
    with tempfile.TemporaryDirectory(prefix="sb-bench-stt-") as tmp:
        work = Path(tmp)
        print("synthesising the talk and the memos...", file=sys.stderr)
        talk = gen_audio.build_recording(work / "talk", gen_audio.LONG_SCRIPT, gap_s=1.2, name="talk")
        memos = [gen_audio.build_recording(work / f"memo{i}", [m], name="memo")
                 for i, m in enumerate(gen_audio.MEMOS)]
        plan = {"talk": {"path": str(talk.path), "duration_s": talk.duration_s,
                         "text": " ".join(s.text for s in talk.sentences)},
                "memos": [{"path": str(m.path), "text": m.sentences[0].text, "duration_s": m.duration_s}
                          for m in memos]}
        (work / "plan.json").write_text(json.dumps(plan))
        rows = []
        for kind in kinds:
            print(f"{kind}...", file=sys.stderr)
            out = subprocess.run([sys.executable, __file__, "--child", kind, "--inputs", str(work)],
                                 check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"talk {talk.duration_s:.1f} s, {len(memos)} memos of {min(m.duration_s for m in memos):.1f}-"
          f"{max(m.duration_s for m in memos):.1f} s")
    print(f"{'transcriber':<34}{'load s':>8}{'audio min/min':>15}{'word acc':>10}{'memo acc':>10}{'peak MB':>9}")
    for r in rows:
        print(f"{r['model_id']:<34}{r['load_s']:>8.1f}{r['audio_min_per_min']:>15.1f}{r['word_accuracy']:>10.3f}"
              f"{r['memo_word_accuracy']:>10.3f}{r['peak_rss_mb']:>9.0f}")
    for r in rows:
        print(f"{r['kind']} heard the memos as: {r['memos_heard']}")
    print(f"machine at start: {at_start}")
    print(f"machine at end:   {charts.machine()}")
    out_dir = charts.out_dir(args.out)
    charts.save_json(out_dir / "transcribers.json", {"talk_s": talk.duration_s, "rows": rows})
    print(f"wrote {out_dir / 'transcribers.json'}")
    if args.publish:
        charts.publish("transcribers", "Speech to text: faster-whisper or WhisperX", [charts.table(
            ["transcriber", "model load", "minutes of audio per minute", "word accuracy (talk + memos)",
             "memo word accuracy", "peak memory"],
            [[r["kind"], f"{r['load_s']:.1f} s", f"{r['audio_min_per_min']:.1f}", f"{r['word_accuracy']:.3f}",
              f"{r['memo_word_accuracy']:.3f}", f"{r['peak_rss_mb']:,.0f} MB"] for r in rows],
            title=f"A {talk.duration_s:.0f}-s talk and {len(memos)} voice memos synthesised with espeak-ng")],
            notes=[f"Machine at the start: {at_start}."])


if __name__ == "__main__":
    main()
