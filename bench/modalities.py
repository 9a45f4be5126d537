"""Ingestion throughput per modality, end to end through ``secondbrain up``.

    .venv/bin/python bench/modalities.py [--scale 1]

Starts embedded secondbrain in a fresh data directory, then for each modality uploads a
batch of generated files at once and waits until every job has finished (extracted,
chunked, embedded and searchable).  Reports, per modality, the input size and how fast the
pipeline went through it: MB per minute, pages or minutes of audio per minute, chunks per
second, and how much of the wall time the extract stage took.  The inputs come from the
test generators (espeak-ng speech, fpdf2 PDFs, Pillow photos, python-docx documents).

Next to each modality: the embedder alone on the same machine.  Once the batches are done the
indexed passages are read back (``GET /v1/export``), the server is stopped, and the exact texts
the embedder stage embedded are embedded again in this process with the same model and batch
size.  The pipeline's overhead is the share of the end-to-end wall time not spent embedding:
``1 - embedder-alone seconds / wall seconds`` (extraction, OCR and speech recognition
included, which is why it is large for scans, photos and audio).
Writes ``modalities.json`` and ``modalities.png`` under ``--out`` (default ``bench/results/``).
Numbers belong to the machine they ran on; the script prints it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import free_port, key_headers, start, stop  # noqa: E402
from devtools import gen_audio, gen_pdf_image, gen_web  # noqa: E402


@dataclass
class Batch:
    """Files of one modality and what they hold."""

    name: str
    files: list[tuple[str, bytes, str]]  # (file name, bytes, content type)
    unit: str = ""  # pages | audio min | images
    units: float = 0.0


def text_pdf(pages: int, tag: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=11)
    for p in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, f"Report {tag}, page {p + 1}. " + gen_web.HISTORY_TEXT + " " + gen_web.SIGNALS_TEXT
                       + " " + gen_web.MAINT_TEXT + " " + gen_web.SUBSECTION_TEXT)
    return bytes(pdf.output())


def scanned_pdf(tag: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    for p in range(2):
        pdf.add_page()
        lines = (f"SCAN {tag} PAGE {p + 1}", *gen_pdf_image.SCANNED_LINES, "Inventory checked by the keeper.")
        pdf.image(gen_pdf_image.text_image(lines, size=(1240, 1754), font_px=48), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


def photo(tag: str) -> bytes:
    image = gen_pdf_image.text_image((f"RECEIPT {tag}", *gen_pdf_image.PHOTO_LINES, "Total due 18.40 EUR"),
                                     size=(1600, 900), font_px=64)
    exif = gen_pdf_image.exif(taken="2025:07:14 18:30:00", offset="+02:00")
    return gen_pdf_image.encode(image, "JPEG", exif, quality=90)


def docx(paragraphs: int, tag: str) -> bytes:
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading(f"Field report {tag}", level=1)
    for i in range(paragraphs):
        if i % 10 == 0:
            d.add_heading(f"Section {i // 10 + 1}", level=2)
        d.add_paragraph(f"{tag} {i}: " + gen_web.HISTORY_TEXT)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def build_batches(scale: int, work: Path) -> list[Batch]:
    """Generate the inputs (unique bytes per file: identical files would end as duplicates)."""
    batches: list[Batch] = []
    md = [(f"note-{i}.md", (f"# Notes {i}\n\n" + ("\n\n".join([gen_web.HISTORY_TEXT, gen_web.SIGNALS_TEXT,
                                                                 gen_web.MAINT_TEXT] * 20))).encode(),
           "text/markdown") for i in range(20 * scale)]
    batches.append(Batch("markdown", md))
    pdf_pages = 100
    batches.append(Batch("pdf (text layer)", [(f"report-{i}.pdf", text_pdf(pdf_pages, str(i)), "application/pdf")
                                              for i in range(4 * scale)], "pages", 4 * scale * pdf_pages))
    batches.append(Batch("pdf (scanned, OCR)", [(f"scan-{i}.pdf", scanned_pdf(str(i)), "application/pdf")
                                                for i in range(4 * scale)], "pages", 4 * 2 * scale))
    pages = [(f"article-{i}.html", gen_web.page(repeat=20).replace("Harbour Notes", f"Harbour Notes {i}").encode(),
              "text/html") for i in range(20 * scale)]
    batches.append(Batch("web page (HTML)", pages))
    batches.append(Batch("image (OCR)", [(f"receipt-{i}.jpg", photo(str(i)), "image/jpeg")
                                         for i in range(12 * scale)], "images", 12 * scale))
    batches.append(Batch("office (docx)", [(f"report-{i}.docx", docx(200, str(i)), "application/octet-stream")
                                           for i in range(4 * scale)]))
    recs = []
    minutes = 0.0
    for i in range(4 * scale):
        rec = gen_audio.build_recording(work / f"talk{i}", gen_audio.LONG_SCRIPT, gap_s=1.0 + 0.1 * i, name="talk")
        mp3 = gen_audio.encode(rec.path, rec.path.with_suffix(".mp3"), "libmp3lame", rate=22_050)
        recs.append((f"talk-{i}.mp3", mp3.read_bytes(), "audio/mpeg"))
        minutes += rec.duration_s / 60
    batches.append(Batch("audio (mp3 speech)", recs, "audio min", minutes))
    return batches


def stage_seconds(job: dict[str, object], stage: str) -> float:
    for s in job["stages"]:  # type: ignore[attr-defined]
        if s["stage"] == stage and s["started_at"] and s["finished_at"]:
            return (datetime.fromisoformat(s["finished_at"]) - datetime.fromisoformat(s["started_at"])).total_seconds()
    return 0.0


def run_batch(c: httpx.Client, batch: Batch, progress: Callable[[str], None]) -> dict[str, float]:
    t0 = time.perf_counter()
    jobs = []
    for name, data, ctype in batch.files:
        r = c.post("/v1/artifacts", files={"file": (name, data, ctype)})
        r.raise_for_status()
        jobs.append(r.json()["job_id"])
    done: dict[str, dict[str, object]] = {}
    while len(done) < len(jobs):
        for j in jobs:
            if j not in done:
                view = c.get(f"/v1/jobs/{j}").json()
                if view["status"] in ("succeeded", "failed", "duplicate", "superseded"):
                    done[j] = view
        progress(f"{batch.name}: {len(done)}/{len(jobs)} jobs done")
        if time.perf_counter() - t0 > 1800:
            raise SystemExit(f"{batch.name}: jobs not done after 30 min")
        time.sleep(0.1)
    wall = time.perf_counter() - t0
    failed = [v for v in done.values() if v["status"] != "succeeded"]
    if failed:
        raise SystemExit(f"{batch.name}: {len(failed)} jobs did not succeed: {failed[0].get('error')}")
    chunks = sum(int(s["chunk_count"] or 0) for s in c.get("/v1/sources", params={"limit": 500}).json()["sources"]
                 if s["job_id"] in done)
    mb = sum(len(d) for _, d, _ in batch.files) / 1e6
    extract = sum(stage_seconds(v, "extract") for v in done.values())
    return {"files": len(jobs), "mb": mb, "wall": wall, "chunks": chunks, "extract_s": extract}


def embedding_inputs(c: httpx.Client, batches: list[Batch]) -> dict[str, list[str]]:
    """Per batch, the texts the embedder stage embedded (read back from the export)."""
    from secondbrain.passage import IndexedPassage

    owner = {name: b.name for b in batches for name, _data, _ct in b.files}
    out: dict[str, list[str]] = {b.name: [] for b in batches}
    with c.stream("GET", "/v1/export", timeout=600) as r:
        r.raise_for_status()
        data = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for member in zf.namelist():
            if member.startswith("documents/") and member.endswith(".json"):
                doc = json.loads(zf.read(member))
                batch = owner.get(str(doc.get("metadata", {}).get("filename", "")))
                if batch is not None:
                    out[batch].extend(IndexedPassage.from_payload(ch).embedding_text()
                                      for ch in doc.get("chunks") or [])
    return out


def embedder_alone(texts: dict[str, list[str]]) -> dict[str, float]:
    """Seconds MiniLM alone takes to embed each batch's texts (same model and batch size as the stage)."""
    from secondbrain.embedding import load_embedder
    from secondbrain.settings import Settings

    embedder = load_embedder(batch_size=Settings().embed_batch_size)  # type: ignore[call-arg]
    embedder.embed_documents(["warm-up"])
    out = {}
    for name, items in texts.items():
        t0 = time.perf_counter()
        embedder.embed_documents(items)
        out[name] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=1, help="multiply the number of files per modality")
    ap.add_argument("--out", default=None, help="results directory (default bench/results/)")
    charts.docs_option(ap)
    args = ap.parse_args()
    at_start = charts.machine()
    root = Path(tempfile.mkdtemp(prefix="sb-bench-"))
    root.chmod(0o755)
    port = free_port()

    def progress(msg: str) -> None:
        print(f"\r  {msg:<60}", end="", file=sys.stderr, flush=True)

    results: list[tuple[Batch, dict[str, float]]] = []
    try:
        print("generating inputs...", file=sys.stderr)
        batches = build_batches(args.scale, root / "inputs")
        print("starting secondbrain up...", file=sys.stderr)
        proc, _ = start(root / "data", port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                              headers=key_headers(root / "data")) as c:
                for batch in batches:
                    results.append((batch, run_batch(c, batch, progress)))
                    print(file=sys.stderr)
                texts = embedding_inputs(c, batches)
        finally:
            stop(proc)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("embedding the same passages with the embedder alone...", file=sys.stderr)
    alone = embedder_alone(texts)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          "one embedded process, every stage in it")
    print(f"{'modality':<20}{'files':>6}{'MB':>8}{'wall s':>8}{'MB/min':>8}{'units/min':>18}{'chunks/s':>9}"
          f"{'extract %':>10}{'embedder alone':>16}{'overhead':>10}")
    rows = []
    shown: list[list[str]] = []
    for batch, r in results:
        per_min = f"{batch.units / r['wall'] * 60:.1f} {batch.unit}" if batch.unit else "-"
        share = 100 * r["extract_s"] / r["wall"]  # one user's jobs run one after another (one lane)
        embed_s = alone.get(batch.name, 0.0)
        alone_rate = len(texts[batch.name]) / embed_s if embed_s else float("nan")
        overhead = 100 * (1 - embed_s / r["wall"])
        print(f"{batch.name:<20}{r['files']:>6}{r['mb']:>8.2f}{r['wall']:>8.1f}{r['mb'] / r['wall'] * 60:>8.1f}"
              f"{per_min:>18}{r['chunks'] / r['wall']:>9.1f}{min(100.0, share):>9.0f}%"
              f"{alone_rate:>11.1f} ch/s{overhead:>9.0f}%")
        shown.append([batch.name, f"{r['files']} files, {r['mb']:.2f} MB", f"{r['wall']:.1f} s",
                      f"{batch.units / r['wall'] * 60:.1f} {batch.unit}/min" if batch.unit
                      else f"{r['mb'] / r['wall'] * 60:.1f} MB/min", f"{r['chunks'] / r['wall']:.1f}",
                      f"{min(100.0, share):.0f} %", f"{alone_rate:.1f} chunks/s", f"{overhead:.0f} %"])
        rows.append({"modality": batch.name, **r, "units": batch.units, "unit": batch.unit,
                     "chunks_per_s": r["chunks"] / r["wall"], "embedder_alone_s": embed_s,
                     "embedder_alone_chunks_per_s": alone_rate, "overhead_pct": overhead})
    print("overhead: share of the wall time not spent embedding (1 - embedder-alone seconds / wall seconds)")
    print(f"machine at start: {at_start}")
    print(f"machine at end:   {charts.machine()}")
    out = charts.out_dir(args.out)
    charts.save_json(out / "modalities.json", {"scale": args.scale, "rows": rows})
    names = [batch.name for batch, _r in results]
    charts.bars(out / "modalities.png", "Ingestion end to end: share of the wall time not spent embedding", names,
                {"pipeline overhead (%)": [100 * (1 - alone.get(b.name, 0.0) / r["wall"]) for b, r in results],
                 "extract stage (% of wall)": [min(100.0, 100 * r["extract_s"] / r["wall"]) for _b, r in results]},
                ylabel="% of the wall time", ylim=(0, 110), fmt="{:.0f}", rotate=20)
    print(f"wrote {out / 'modalities.json'} and {out / 'modalities.png'}")
    if args.publish:
        charts.publish("modalities", "Ingestion per modality, next to the embedder alone", [charts.table(
            ["modality", "batch", "wall", "throughput", "chunks/s", "extract stage", "embedder alone", "overhead"],
            shown)], notes=["Overhead: the share of the wall time not spent embedding (1 - embedder-alone seconds / "
                            "wall seconds); one user, so the jobs run one after another.",
                            f"Machine at the start: {at_start}."], charts=[out / "modalities.png"])


if __name__ == "__main__":
    main()
