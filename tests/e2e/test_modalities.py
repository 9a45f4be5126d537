"""Every modality through the running pipeline (``secondbrain up``), found by search with its provenance.

The files are generated here: a PDF with a scanned page, a web page served by a local
HTTP server (fetched through ``POST /v1/urls``) and the same page uploaded as a file,
speech synthesised with espeak-ng, a photo with EXIF written by the test and a Word
document.  Bad inputs of every kind must end as failed jobs with a readable reason while
the good ones go through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from devtools import gen_audio, gen_office, gen_pdf_image, gen_web
from secondbrain.events.models import WORD_TIMES, WordTime
from secondbrain.word_times import quoted_second
from tests.e2e.harness import Service, Site, readable_tmp, run_cli, wait_jobs

pytestmark = pytest.mark.e2e

AUDIO_LIMIT_S = 60


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    env = {"SB_MAX_UPLOAD_BYTES": str(6 * 1024 * 1024), "SB_AUDIO_MAX_DURATION_S": str(AUDIO_LIMIT_S),
           "SB_FETCH_TIMEOUT_S": "2", "SB_MAX_ATTEMPTS": "2", "SB_RETRY_BACKOFF_S": "0.2",
           "SB_FETCH_ALLOW_PRIVATE": "true",  # the test site listens on loopback
           "SB_TIMEZONE": "Europe/Paris"}  # time words inside passages are read in the person's zone
    with readable_tmp("sb-modal-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data")], env, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        yield svc
        svc.stop()


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client() as c:
        yield c


def upload(client: httpx.Client, name: str, data: bytes, content_type: str = "application/octet-stream",
           **fields: str) -> str:
    r = client.post("/v1/artifacts", files={"file": (name, data, content_type)}, data=fields)
    assert r.status_code == 202, r.text
    return str(r.json()["job_id"])


def search(client: httpx.Client, query: str, k: int = 5) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": query, "k": k})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[gen_audio.Recording, bytes]:
    rec = gen_audio.build_recording(tmp_path_factory.mktemp("audio"), gen_audio.SCRIPT)
    mp3 = gen_audio.encode(rec.path, rec.path.with_suffix(".mp3"), "libmp3lame", rate=22_050)
    return rec, mp3.read_bytes()


def test_every_modality_is_searchable_with_provenance(client: httpx.Client, site: Site,
                                                      recording: tuple[gen_audio.Recording, bytes]) -> None:
    rec, mp3 = recording
    # fixed date: the recording's and the photo's own past times, read back as written
    spoken_at = datetime(2026, 3, 4, 9, 15, tzinfo=UTC)
    photo = gen_pdf_image.text_photo("JPEG", gen_pdf_image.exif(taken="2025:07:14 18:30:00", offset="+02:00"))
    jobs = {
        "pdf": upload(client, "logbook.pdf", gen_pdf_image.scanned_pdf(), "application/pdf"),
        "url": client.post("/v1/urls", json={"url": f"{site.base}/article"}).json()["job_id"],
        "html": upload(client, "saved-article.html", gen_web.page_time_itemprop(), "text/html"),
        "audio": upload(client, "standup.mp3", mp3, "audio/mpeg", captured_at=spoken_at.isoformat()),
        "image": upload(client, "receipt.jpg", photo, "image/jpeg"),
        "docx": upload(client, "survey-report.docx", gen_office.make_docx()),
    }
    final = wait_jobs(client, list(jobs.values()), timeout=240)
    for name, job_id in jobs.items():
        assert final[job_id]["status"] == "succeeded", (name, final[job_id])
    url_job = final[jobs["url"]]
    assert [s["stage"] for s in url_job["stages"]] == ["fetch", "extract", "chunk", "embed"]

    # PDF: the text pages and the scanned page, each cited by its page number.
    hit = search(client, gen_pdf_image.PAGE_SENTENCES[3])[0]
    assert (hit["modality"], hit["page"], hit["title"]) == ("pdf", 3, gen_pdf_image.PDF_TITLE)
    assert at(hit["captured_at"]) == gen_pdf_image.PDF_CREATED  # the PDF's CreationDate
    hit = search(client, "brass lanterns polished before the storm")[0]
    assert (hit["modality"], hit["page"]) == ("pdf", 2)

    # Web page fetched by URL: main content only, cited by URL, dated by its stated publish date.
    hits = [h for h in search(client, "concentric rings of glass prisms Fresnel", k=10) if h["modality"] == "web"]
    fetched = [h for h in hits if h["source_uri"] == f"{site.base}/article"]
    assert fetched, hits
    assert fetched[0]["captured_at_source"] == "published"
    assert not search_has(client, gen_web.NAV_WORDS.split()[-1])  # "Zebrafish" lives only in the navigation
    assert any(h["source_uri"] == "file:saved-article.html" for h in hits)

    # Audio: the chunk holding sentence 3 spans its time in the recording, with absolute times.
    hit = next(h for h in search(client, "quarterly budget report finance department") if h["modality"] == "audio")
    assert hit["t_start"] <= rec.starts[2] + 1.0 and hit["t_end"] >= rec.ends[2] - 1.0
    assert 0 <= hit["t_start"] < hit["t_end"] <= rec.duration_s + 0.5
    assert at(hit["at_start"]) == spoken_at + timedelta(seconds=hit["t_start"])
    # ... and its words' times: a word of sentence 3 is cited at a second inside the sentence (spreading the
    # passage's span over its text can land in the pause before it)
    assert hit["word_times"] and WORD_TIMES in hit["attributes"], hit  # typed, and shown as before too
    words = hit["text"].casefold()
    said = quoted_second([WordTime(**w) for w in hit["word_times"]], hit["t_start"], hit["t_end"], len(words),
                         words.index("quarterly"))
    assert said is not None and rec.starts[2] < said < rec.ends[2], (said, rec.starts, rec.ends)
    assert at(hit["captured_at"]) == spoken_at and hit["captured_at_source"] == "user"

    # Photo: found by the text in it, dated by EXIF DateTimeOriginal with its offset.
    # fixed date: the photo's own EXIF time, read back
    hit = search(client, "invoice number 4471 Blue Heron Paper")[0]
    assert hit["modality"] == "image"
    assert at(hit["captured_at"]) == datetime(2025, 7, 14, 16, 30, tzinfo=UTC)
    assert hit["captured_at_source"] == "file_metadata"

    # Word document: its table cell is searchable, in the right section.
    hit = search(client, "hydrophone INV-8391 420 EUR")[0]
    assert hit["modality"] == "office" and hit["title"] == gen_office.DOC_TITLE
    assert "INV-8391" in hit["text"] and gen_office.DOC_SECTION_2 in hit["heading_path"]


def test_a_reminder_in_a_voice_memo_is_on_the_agenda(client: httpx.Client, tmp_path: Path) -> None:
    """A spoken note to self, transcribed, is on the agenda at the day it names, read from the moment it was
    said (an hour ago: counted from today)."""
    from zoneinfo import ZoneInfo

    paris = ZoneInfo("Europe/Paris")
    spoken = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    wav = gen_audio.espeak("Voice memo. Note to self. The gas safety check is booked for next Wednesday afternoon.",
                           tmp_path / "memo.wav", speed=140)
    job = upload(client, "memo.wav", wav.read_bytes(), "audio/wav", captured_at=spoken.isoformat())
    final = wait_jobs(client, [job], timeout=240)
    assert final[job]["status"] == "succeeded", final[job]
    said_day = spoken.astimezone(paris).date()
    wednesday = said_day + timedelta(days=(2 - said_day.weekday()) % 7 or 7)
    r = client.get("/v1/agenda", params={"tz": "Europe/Paris", "days": 15})
    assert r.status_code == 200, r.text
    lines = [e for d in r.json()["days"] for e in d["events"] if "safety check" in e["quote"].lower()]
    assert [e["date"] for e in lines] == [wednesday.isoformat()], r.json()
    assert lines[0]["source"]["modality"] == "audio" and lines[0]["source"]["position"] is not None


def test_a_chat_record_is_found_by_the_time_it_speaks_of(client: httpx.Client) -> None:
    """A chat of Wednesday 29 April looking forward to "the weekend" answers a question about that
    weekend, read in the server's zone (Paris), through the running service."""
    # fixed date: the chat's own day, and the question's "now" fixed with now=
    chat = (b"Caroline: I can't wait for the weekend, we're going to the ceramics fair in Annecy!\n"
            b"Melanie: Bring me back a bowl!\n")
    job = upload(client, "fair.chat", chat, "text/x-chat", captured_at="2026-04-29T18:00:00+02:00")
    assert wait_jobs(client, [job])[job]["status"] == "succeeded"
    r = client.get("/v1/search", params={"q": "where did Caroline go the first weekend of May?", "k": 5,
                                         "tz": "Europe/Paris", "now": "2026-06-01T12:00:00+02:00"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mentioned_times"] is True
    top = body["hits"][0]
    assert "ceramics fair" in top["text"]
    assert [(m["expression"], at(m["start"]), at(m["end"])) for m in top["mentions"]] == [
        ("the weekend", datetime(2026, 5, 1, 22, tzinfo=UTC), datetime(2026, 5, 3, 22, tzinfo=UTC))]


def search_has(client: httpx.Client, word: str) -> bool:
    return any(word.lower() in h["text"].lower() for h in search(client, word, k=20))


def test_same_file_again_is_a_duplicate_and_a_new_version_replaces(client: httpx.Client) -> None:
    first = upload(client, "plan.md", b"# Plan\n\nThe offsite moves to Porto in September.", "text/markdown")
    wait_jobs(client, [first])
    again = upload(client, "plan-copy.md", b"# Plan\n\nThe offsite moves to Porto in September.", "text/markdown")
    dup = wait_jobs(client, [again])[again]
    assert (dup["status"], dup["duplicate_of"]) == ("duplicate", first)
    newer = upload(client, "plan.md", b"# Plan\n\nThe offsite moves to Lisbon in October.", "text/markdown")
    assert wait_jobs(client, [newer])[newer]["status"] == "succeeded"
    texts = [h["text"] for h in search(client, "where does the offsite move", k=10) if "offsite" in h["text"]]
    assert texts and all("Lisbon" in t for t in texts)  # the old version left the index


BAD_INPUTS: list[tuple[str, str, str]] = [
    # (name, content type, words the failure reason must contain)
    ("broken.pdf", "application/pdf", "damaged"),
    ("locked.pdf", "application/pdf", "password"),
    ("setup.exe", "application/x-msdownload", "unsupported"),
    ("report.pdf", "application/pdf", "PNG image"),
    ("long-talk.wav", "audio/wav", "over the limit"),
    ("bomb.png", "image/png", "decompression bomb"),
    ("garbage.txt", "text/plain", "encoding"),
]


def bad_bytes(name: str, tmp: Path) -> bytes:
    if name == "broken.pdf":
        return gen_pdf_image.truncated_pdf()
    if name == "locked.pdf":
        return gen_pdf_image.encrypted_pdf()
    if name == "setup.exe":
        return b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff" + bytes(range(256)) * 4
    if name == "report.pdf":
        return gen_pdf_image.text_photo("PNG")
    if name == "long-talk.wav":
        return gen_audio.tone(tmp / "long.wav", AUDIO_LIMIT_S + 15, rate=8000).read_bytes()
    if name == "bomb.png":
        return gen_pdf_image.bomb_png(30_000, 30_000)
    if name == "garbage.txt":
        # Bytes that are neither UTF-8 nor Windows-1252 (0x81, 0x8d, 0x8f, 0x90, 0x9d are unassigned).
        return b"Notes \x81\x8d\x8f\x90\x9d " * 40
    raise AssertionError(name)


def test_bad_inputs_fail_with_reasons_and_good_ones_still_pass(client: httpx.Client, service: Service, site: Site,
                                                               tmp_path: Path) -> None:
    bad = {name: upload(client, name, bad_bytes(name, tmp_path), ctype) for name, ctype, _ in BAD_INPUTS}
    bad["slow-url"] = client.post("/v1/urls", json={"url": f"{site.base}/slow"}).json()["job_id"]
    bad["robots"] = client.post("/v1/urls", json={"url": f"{site.base}/private/diary"}).json()["job_id"]
    # Legacy text is not bad input: Windows-1252 is read as such, nothing lost.
    good = upload(client, "café.txt", "Le café crème coûte 3,50 € à Zoë.".encode("cp1252"), "text/plain")
    final = wait_jobs(client, [*bad.values(), good], timeout=180)
    expected = {name: words for name, _, words in BAD_INPUTS} | {"slow-url": "timed out", "robots": "robots.txt"}
    for name, job_id in bad.items():
        job = final[job_id]
        assert job["status"] == "failed", (name, job)
        assert expected[name].lower() in (job["error"] or "").lower(), (name, job["error"])
    assert final[good]["status"] == "succeeded"
    assert any("coûte 3,50 €" in h["text"] for h in search(client, "café crème Zoë"))

    # Every failure that came through Kafka left a dead letter (the log records each one).
    letters = [json.loads(line) for line in service.log_path.read_text().splitlines()
               if line.startswith("{") and '"dead-lettered"' in line]
    lettered = {rec.get("job_id") for rec in letters}
    assert set(bad.values()) <= lettered


def test_upload_over_the_limit_and_empty_file_are_refused_at_the_door(client: httpx.Client) -> None:
    r = client.post("/v1/artifacts", files={"file": ("huge.bin", b"\0" * (7 * 1024 * 1024), "application/pdf")})
    assert r.status_code == 413 and "SB_MAX_UPLOAD_BYTES" in r.json()["detail"]
    r = client.post("/v1/artifacts", files={"file": ("empty.md", b"", "text/markdown")})
    assert r.status_code == 422 and "empty" in r.json()["detail"]
    r = client.post("/v1/urls", json={"url": "ftp://example.org/file"})
    assert r.status_code == 422


def test_cli_ingests_a_web_page_and_a_refetch_is_a_duplicate(service: Service, site: Site) -> None:
    env = {"SB_URL": service.url}
    first = run_cli(["ingest", f"{site.base}/article", "--json"], env)
    assert first.returncode == 0, first.stderr
    second = run_cli(["ingest", f"{site.base}/article#comments", "--json"], env)
    assert second.returncode == 0, second.stderr
    (job,) = json.loads(second.stdout)["jobs"]
    # The same page, unchanged: stored once, the new job points to the one that indexed it.
    assert job["status"] == "duplicate" and job["duplicate_of"]
    assert [s["stage"] for s in job["stages"]] == ["fetch", "extract", "chunk", "embed"]
