"""The documentation's screenshots, taken from the web page as it is now.

    .venv/bin/python -m devtools.screenshots [--out docs/images]

Starts ``secondbrain up`` in a fresh data directory (no model: answers quote the sources), captures a few
notes and a PDF the way a person would, then drives the web page in the system's Chromium (Playwright, headless):
signs in with a one-time link, asks a question and waits for the answer with its citations.  Writes
``answer.png`` (a wide screen: the answer, its cited sources and the panels beside it; the README opens with
it) and ``phone.png`` (the same on a phone's screen).  Run it when the page changes, and commit the pictures.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from devtools.processes import REPO, Service

CHROMIUM = Path("/usr/bin/chromium")
QUESTION = "When is the Acme invoice due?"
ZONE = "Europe/London"
SIZES = {"answer": (1366, 850), "phone": (390, 844)}


def notes(today: datetime) -> list[dict[str, str]]:
    """What a person might have captured over the last weeks (dates counted from today)."""
    def ago(days: int) -> str:
        return (today - timedelta(days=days)).isoformat()

    due = today + timedelta(days=9)
    return [
        {"title": "Acme invoice", "captured_at": ago(3),
         "text": f"Invoice 8391 from Acme Tools is due on {due.day} {due:%B}: 1,240 EUR for the workshop shelving. "
                 "Pay it from the business account and file the receipt under Workshop."},
        {"title": "Call with Priya", "captured_at": ago(9),
         "text": "Priya says Acme moved their payment terms to 14 days from this month. Late invoices get a 2 % "
                 "fee, so pay before the due date."},
        {"title": "Dentist", "captured_at": ago(1),
         "text": "Dentist appointment with Dr. Osei on Tuesday at 9:30. Bring the insurance card."},
        {"title": "Trip plan", "captured_at": ago(20),
         "text": "# Lisbon trip\n\nThe hotel booking reference is CA-7731. The flight leaves at 07:40 from "
                 "terminal 2; the airport train takes 35 minutes."},
    ]


def shelf_pdf() -> bytes:
    """A one-page PDF, as a scanned or exported document would be."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=13)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Acme Tools - order confirmation\n\nWorkshop shelving, 4 bays, delivered on Monday. "
                         "Invoice 8391 follows by mail; payment within 14 days.")
    return bytes(pdf.output())


def capture(svc: Service) -> None:
    """The notes and the PDF, each until it is searchable."""
    today = datetime.now(UTC).replace(microsecond=0)
    with svc.client(timeout=60) as api:
        jobs = [api.post("/v1/notes", json=n).json()["job_id"] for n in notes(today)]
        jobs.append(api.post("/v1/artifacts", files={"file": ("acme-order.pdf", shelf_pdf(), "application/pdf")})
                    .json()["job_id"])
        deadline = time.monotonic() + 300
        for job in jobs:
            while (status := api.get(f"/v1/jobs/{job}").json()["status"]) not in ("succeeded", "duplicate"):
                if status in ("failed", "superseded") or time.monotonic() > deadline:
                    raise SystemExit(f"a sample capture did not become searchable ({job}: {status})")
                time.sleep(0.3)


def shoot(svc: Service, out: Path) -> list[Path]:
    """Sign in, ask, and photograph the answer at each size."""
    from playwright.sync_api import expect, sync_playwright

    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, (width, height) in SIZES.items():
                context = browser.new_context(viewport={"width": width, "height": height}, timezone_id=ZONE,
                                              color_scheme="light", device_scale_factor=1)
                context.set_default_timeout(30_000)
                page = context.new_page()
                with svc.client() as api:
                    link = api.post("/v1/login-links").json()["path"]
                page.goto(svc.url + link)
                expect(page.locator("body")).to_have_attribute("data-ready", "true")
                box = page.get_by_label("Your question")
                box.fill(QUESTION)
                box.press("Enter")
                turn = page.locator("#thread .turn").last
                expect(turn).not_to_have_attribute("data-state", "streaming", timeout=60_000)
                expect(turn).to_contain_text("[1]")  # the answer cites its sources
                turn.evaluate("el => el.scrollIntoView({block: 'start'})")  # the question, then its answer
                page.evaluate("window.scrollTo(0, 0)")  # (on a wide screen the thread scrolls on its own)
                path = out / f"{name}.png"
                page.screenshot(path=str(path))
                written.append(path)
                context.close()
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "images", help="where the pictures go")
    args = ap.parse_args(argv)
    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is missing: scripts/install.sh --dev installs Chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="sb-shots-"))
    root.chmod(0o755)  # run as root, the embedded PostgreSQL's own user passes through to the data directory
    svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {"SB_TIMEZONE": ZONE}, root / "logs")
    try:
        svc.start().wait_ready(timeout=180)
        capture(svc)
        for path in shoot(svc, args.out):
            print(f"wrote {path}")
    except (httpx.HTTPError, AssertionError) as exc:
        sys.exit(f"the screenshots failed: {exc}\n{svc.tail()}")
    finally:
        svc.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
