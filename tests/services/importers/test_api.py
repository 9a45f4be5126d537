"""The import routes on real stores (Postgres, files): what an upload or a batch writes, what a second one
writes (nothing), and how bad input is refused without losing the rest.  The pipeline is not running here:
the jobs wait in the outbox, which is what is checked (the end-to-end tests run the pipeline)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools import gen_exports as gen
from secondbrain import lifecycle
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import ArtifactSubmitted, UrlRequested
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.stores.memory.vectors import MemoryVectorStore
from services.importers.submit import CaptureSubmitter


@pytest.fixture()
def gateway(dsn: str, tmp_path: Path) -> Iterator[tuple[TestClient, Runtime]]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), max_upload_bytes=2 * 1024 * 1024,
        kafka_bootstrap="127.0.0.1:9", topic_prefix=f"im{tmp_path.name[-6:]}.", auth="off", max_pending_jobs=0,
        max_note_chars=4_000_000,
    )
    rt = build_runtime(settings, vectors=False, models=False)
    app = create_app(rt, gateway=True, query=False, relay=None)
    with TestClient(app, base_url="http://localhost") as client:
        yield client, rt
    rt.close()


def zipped(folder: Path) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(folder.parent).as_posix())
    return out.getvalue()


def outbox_events(rt: Runtime) -> list[Any]:
    codec = EventCodec()
    rows = rt.metadata.outbox.claim_outbox(1000)
    rt.metadata.outbox.release_outbox([r.id for r in rows], "read by the test")
    out = []
    for r in rows:
        kind = UrlRequested if r.message.topic.endswith("urls.requested") else ArtifactSubmitted
        out.append(codec.decode(r.message.value, expected=kind))
    return out


def test_an_uploaded_takeout_becomes_dated_notes_and_a_second_upload_adds_nothing(
        gateway: tuple[TestClient, Runtime], tmp_path: Path) -> None:
    client, rt = gateway
    body = zipped(gen.write_keep(tmp_path / "export"))
    r = client.post("/v1/imports", files={"file": ("takeout-001.zip", body, "application/zip")})
    assert r.status_code == 202, r.text
    out = r.json()
    assert (out["format"], out["found"], out["imported"], out["unchanged"]) == ("keep", "6 notes in Takeout/Keep", 5, 0)
    assert {(s["label"], s["reason"]) for s in out["skipped"]} == {
        ("Old idea", "in Keep's trash"),
        ("Broken", "not a readable Keep note: Unterminated string starting at: line 1 column 36 (char 35)")}
    events = {e.title: e for e in outbox_events(rt) if isinstance(e, ArtifactSubmitted)}
    bike = events["Bike lock"]
    assert bike.captured_at == gen.KEEP_CREATED["bike"] and bike.source_uri == "import:keep:Keep/Bike%20lock.json"
    assert bike.attributes == {"kind": "note", "import.format": "keep", "import.file": "Takeout/Keep/Bike lock.json",
                               "import.item": "Keep/Bike lock.json"}
    assert b"3-9-1-7" in rt.objects.get(bike.object_key)
    photo = events["Whiteboard (1b7a9c0d2e.jpg)"]
    assert photo.content_type == "image/png" and photo.filename == "1b7a9c0d2e.jpg"
    jobs_before = len(client.get("/v1/sources", params={"limit": 500}).json()["sources"])
    queued_before = len(outbox_events(rt))

    again = client.post("/v1/imports", files={"file": ("takeout-002.zip", body, "application/zip")}).json()
    assert (again["imported"], again["unchanged"]) == (0, 5)
    assert len(client.get("/v1/sources", params={"limit": 500}).json()["sources"]) == jobs_before
    assert len(outbox_events(rt)) == queued_before  # nothing new was queued
    assert {j["job_id"] for j in again["jobs"]} == {j["job_id"] for j in out["jobs"]}


def test_an_edited_note_imported_again_is_the_next_version_of_its_source(
        gateway: tuple[TestClient, Runtime], tmp_path: Path) -> None:
    client, _rt = gateway
    note = gen.keep_note(title="Plumber", created=datetime(2024, 4, 1, tzinfo=UTC),
                         edited=datetime(2024, 4, 1, tzinfo=UTC), text="The plumber comes on Tuesday.")
    first = client.post("/v1/imports", data={"format": "keep"},
                        files={"file": ("Plumber.json", json.dumps(note).encode(), "application/json")}).json()
    note["textContent"] = "The plumber comes on Wednesday instead."
    second = client.post("/v1/imports", files={"file": ("Plumber.json", json.dumps(note).encode(), "")}).json()
    assert (first["imported"], second["imported"]) == (1, 1)
    rows = [s for s in client.get("/v1/sources").json()["sources"] if s["title"] == "Plumber"]
    assert len(rows) == 2 and len({s["source_id"] for s in rows}) == 1  # one source, two versions


def test_an_item_back_to_what_it_was_before_is_its_current_version_again(dsn: str, tmp_path: Path) -> None:
    """A calendar whose occurrence was cancelled and then restored, a note edited and changed back: the content
    of an earlier version, imported again, is the newest version again (not 'unchanged', which would leave
    the change in place), and importing it once more adds nothing."""
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9", auth="off",
        topic_prefix="back.", max_pending_jobs=0, default_user="reverter")
    rt = build_runtime(settings, vectors=False, models=False)
    note = gen.keep_note(title="Tap", created=datetime(2024, 4, 1, tzinfo=UTC), edited=datetime(2024, 4, 1, tzinfo=UTC),
                         text="The tap washer is 15 mm.")
    first, changed = json.dumps(note).encode(), json.dumps({**note, "textContent": "It is 12 mm."}).encode()
    try:
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            def send(body: bytes) -> dict[str, Any]:
                r = client.post("/v1/imports", data={"format": "keep"}, files={"file": ("Tap.json", body, "")})
                assert r.status_code == 202, r.text
                return dict(r.json())

            def finish(job: str) -> None:  # the pipeline's part: the newest version supersedes the one before
                for stage in ("extract", "chunk", "embed"):
                    rt.metadata.jobs.stage_succeeded("reverter", job, stage)

            a = send(first)
            finish(a["jobs"][0]["job_id"])
            b = send(changed)
            finish(b["jobs"][0]["job_id"])
            back = send(first)
            assert back["imported"] == 1, back  # a new version with the first content
            assert send(first)["imported"] == 0  # and only once
            versions = [s for s in client.get("/v1/sources", params={"limit": 50}).json()["sources"]
                        if s["title"] == "Tap"]
            assert len(versions) == 3 and versions[0]["job_id"] == back["jobs"][0]["job_id"]
    finally:
        rt.close()


def test_bad_uploads_are_refused_with_a_sentence(gateway: tuple[TestClient, Runtime], tmp_path: Path) -> None:
    client, _rt = gateway
    r = client.post("/v1/imports", files={"file": ("random.bin", bytes(range(256)) * 8, "application/octet-stream")})
    assert r.status_code == 422 and "is not an export secondbrain recognises" in r.json()["detail"]
    r = client.post("/v1/imports", data={"format": "evernote"},
                    files={"file": ("clips.txt", gen.write_kindle(tmp_path).read_bytes(), "text/plain")})
    assert r.status_code == 422 and r.json()["detail"].startswith("clips.txt does not look like Evernote")
    r = client.post("/v1/imports", data={"tz": "Mars/Olympus"}, files={"file": ("a.enex", b"<en-export/>", "")})
    assert r.status_code == 422 and "is not a time zone name" in r.json()["detail"]
    r = client.post("/v1/imports", files={"file": ("empty.enex", b"", "")})
    assert r.status_code == 422 and r.json()["detail"] == "the file is empty: there is nothing to import"
    r = client.post("/v1/imports", files={"file": ("big.zip", b"x" * (3 * 1024 * 1024), "application/zip")})
    assert r.status_code == 413


def test_an_uploaded_zip_is_not_unpacked_past_its_limits(gateway: tuple[TestClient, Runtime]) -> None:
    client, _rt = gateway
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("Notes/Big.md", "# Big\n\n" + " " * (3 * 1024 * 1024))  # 3 MB that packs into a few KB
        for i in range(25):
            z.writestr(f"Notes/Filler {i:02d}.md", f"# Filler {i}\n\n" + "x" * (1900 * 1024))
        z.writestr("Notes/Small.md", "# Small\n\nA note that fits.")
    assert len(out.getvalue()) < 200_000
    r = client.post("/v1/imports", files={"file": ("notes.zip", out.getvalue(), "application/zip")})
    assert r.status_code == 202, r.text
    body = r.json()
    reasons = {s["label"]: s["reason"] for s in body["skipped"]}
    assert reasons["Big.md"] == "Notes/Big.md is larger than 2 MB"  # one file past an upload's size
    # 40 MB in all: the files past it are left out, each saying why (the others were imported).
    assert any("the export unpacks to more than 40 MB" in r for r in reasons.values())
    assert 0 < body["imported"] < 26


def test_a_whatsapp_upload_reads_times_in_the_zone_it_is_given(gateway: tuple[TestClient, Runtime],
                                                               tmp_path: Path) -> None:
    client, rt = gateway
    chat = gen.write_whatsapp_android(tmp_path)
    r = client.post("/v1/imports", data={"tz": "America/Sao_Paulo"},
                    files={"file": (chat.name, chat.read_bytes(), "text/plain")})
    assert r.status_code == 202 and r.json()["imported"] == 2
    first = next(e for e in outbox_events(rt) if e.source_uri == "import:whatsapp:Priya#2024-03-12")
    assert first.captured_at == datetime(2024, 3, 12, 11, 56, tzinfo=UTC)  # 08:56 in Sao Paulo
    assert first.content_type == "text/x-chat"


def batch(captures: list[dict[str, Any]], parts: dict[str, bytes]) -> dict[str, Any]:
    return {"data": {"manifest": json.dumps({"format": "notes", "captures": captures})},
            "files": [(name, (name, data, "application/octet-stream")) for name, data in parts.items()]}


def note(uri: str, part: str | None, **more: Any) -> dict[str, Any]:
    return {"source_uri": uri, "kind": "note", "title": uri.rsplit(":", 1)[-1], "part": part,
            "content_type": "text/markdown", "captured_at": "2023-02-03T04:05:06+00:00",
            "attributes": {"kind": "note", "import.format": "notes"}, **more}


def test_a_batch_refuses_bad_captures_one_by_one_and_takes_the_rest(gateway: tuple[TestClient, Runtime]) -> None:
    client, rt = gateway
    captures = [
        note("import:notes:ok.md", "p0"),
        note("note:1234", "p1"),  # would graft onto a note of the gateway's
        note("import:notes:missing.md", "p9"),
        note("import:notes:badtime.md", "p2", captured_at="yesterday"),
        note("import:notes:naive.md", "p2", captured_at="2023-02-03T04:05:06"),
        note("import:notes:attrs.md", "p2", attributes={"kind": "note", "secret.flag": "1"}),
        {"source_uri": "https://example.org/page", "kind": "url", "url": "https://example.org/page",
         "title": "A page", "captured_at": "2019-08-14T12:00:00+00:00", "attributes": {"import.folder": "Sea"}},
        {"source_uri": "http://127.0.0.1:22/", "kind": "url", "url": "http://127.0.0.1:22/"},
        {"source_uri": "import:x", "kind": "poem"},
        "not an object",
        {"source_uri": "file:plain.md", "kind": "file", "part": "p3", "content_type": "text/markdown",
         "filename": "plain.md"},  # named as one upload names it (secondbrain ingest of many files)
        note("file:plain.md", "p2"),  # a note is no file
    ]
    r = client.post("/v1/imports/batch", **batch(captures, {"p0": b"# ok\n\nKept.", "p1": b"graft", "p2": b"x",
                                                           "p3": b"# Plain\n\nA file."}))
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["status"] for x in results] == ["imported", "refused", "refused", "refused", "refused", "refused",
                                              "imported", "refused", "refused", "refused", "imported", "refused"]
    reasons = [x.get("reason") for x in results]
    assert reasons[1] == reasons[11] == ("an imported item's source must be an import: URI (a file's may be a file: "
                                         "URI) of at most 2000 characters")
    assert reasons[2] == "its part 'p9' is not in the batch"
    assert reasons[3] == "captured_at 'yesterday' is not an ISO 8601 time"
    assert reasons[4] == "captured_at must say its zone (an offset or Z)"
    assert reasons[5] == "attribute 'secret.flag' is not an import's (import.*)"
    assert reasons[7].startswith("fetching 127.0.0.1 is not allowed: it is")
    assert reasons[8] == "unknown kind 'poem' (note, chat, file or url)"
    assert reasons[9] == "capture 10 is not an object"
    events = outbox_events(rt)
    page = next(e for e in events if isinstance(e, UrlRequested) and e.url == "https://example.org/page")
    assert page.captured_at == datetime(2019, 8, 14, 12, tzinfo=UTC) and page.attributes == {"import.folder": "Sea"}
    kept = next(e for e in events if isinstance(e, ArtifactSubmitted) and e.source_uri == "import:notes:ok.md")
    assert kept.source_uri == "import:notes:ok.md" and rt.objects.get(kept.object_key) == b"# ok\n\nKept."

    # The same batch again: nothing new; each item imported before says how its job stands.
    again = client.post("/v1/imports/batch", **batch(captures[:1], {"p0": b"# ok\n\nKept."})).json()["results"]
    assert again == [{"label": "ok.md", "source_uri": "import:notes:ok.md", "status": "unchanged",
                      "job_id": results[0]["job_id"], "reason": None, "replaced": 0, "job_status": "queued",
                      "error": None}]


def test_a_synced_file_under_its_file_address_is_one_source_whose_edit_is_its_next_version(
        gateway: tuple[TestClient, Runtime]) -> None:
    """Folder sync (``secondbrain watch``) sends through the batch route: a file named for good by its file:///
    path, and its edit, are two versions of one source; only a file may take such an address."""
    client, rt = gateway
    uri = "file:///home/me/notes/ferries.md"

    def file(part: str) -> dict[str, Any]:
        return {"source_uri": uri, "kind": "file", "label": "notes/ferries.md", "content_type": "text/markdown",
                "filename": "ferries.md", "part": part}

    first = client.post("/v1/imports/batch", **batch([file("p0")], {"p0": b"# Ferries\n\nAt 22:40."})).json()
    second = client.post("/v1/imports/batch", **batch([file("p0")], {"p0": b"# Ferries\n\nAt 23:15."})).json()
    assert [r["status"] for r in first["results"] + second["results"]] == ["imported", "imported"]
    rows = [s for s in client.get("/v1/sources").json()["sources"] if s["source_uri"] == uri]
    assert len(rows) == 2 and len({s["source_id"] for s in rows}) == 1  # one source, two versions
    as_note = client.post("/v1/imports/batch", **batch([{**file("p0"), "kind": "note"}], {"p0": b"x"})).json()
    assert as_note["results"][0]["status"] == "refused"
    # The file deleted (its source with it), then restored as it was: taken again, not found "unchanged".
    user = client.get("/v1/me").json()["user_id"]
    lifecycle.delete_source(rt.metadata, rt.objects, MemoryVectorStore(), user, rows[0]["source_id"])
    again = client.post("/v1/imports/batch", **batch([file("p0")], {"p0": b"# Ferries\n\nAt 23:15."})).json()
    assert again["results"][0]["status"] == "imported"
    assert [s["source_uri"] for s in client.get("/v1/sources").json()["sources"]].count(uri) == 1


def test_a_batch_waits_while_the_pipeline_is_full(dsn: str, tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9", auth="off",
        topic_prefix="full.", max_pending_jobs=2, default_user="full")  # alone in the pipeline
    rt = build_runtime(settings, vectors=False, models=False)
    try:
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            parts = {f"p{i}": f"# n{i}\n\nnote {i} of the full pipeline".encode() for i in range(3)}
            first = client.post("/v1/imports/batch", **batch([note(f"import:notes:full{i}.md", f"p{i}")
                                                              for i in range(3)], parts))
            # As many as the backlog has room for go in; the rest wait, and the answer says when to send them.
            assert first.status_code == 200 and first.headers["retry-after"] == "10", first.text
            statuses = [r["status"] for r in first.json()["results"]]
            assert statuses == ["imported", "imported", "waiting"] and first.json()["waiting"] == 1
            waiting = first.json()["results"][2]["reason"]
            assert "you have 2 captures still being processed (the limit is 2, SB_MAX_PENDING_JOBS)" in waiting
            second = client.post("/v1/imports/batch", **batch([note("import:notes:more.md", "p0")], parts))
            assert second.status_code == 429 and second.headers["retry-after"] == "5"  # full: the next one waits
            assert "you have 2 captures still being processed (the limit is 2)" in second.json()["detail"]
    finally:
        rt.close()


def test_a_batch_that_is_not_one_is_refused(gateway: tuple[TestClient, Runtime]) -> None:
    client, _rt = gateway
    r = client.post("/v1/imports/batch", json={"captures": []})
    assert r.status_code == 415 and "multipart/form-data" in r.json()["detail"]
    r = client.post("/v1/imports/batch", files={"p0": ("a", b"x", "text/plain")})
    assert r.status_code == 422 and r.json()["detail"] == "the batch has no 'manifest' part"
    r = client.post("/v1/imports/batch", files={"manifest": (None, "{not json")})
    assert r.status_code == 422 and r.json()["detail"].startswith("the manifest is not JSON")
    r = client.post("/v1/imports/batch", files={"manifest": (None, json.dumps({"items": []}))})
    assert r.status_code == 422 and r.json()["detail"] == "the manifest must be an object with a 'captures' list"


# --------------------------------------------------------------------------- broken archives


@pytest.mark.parametrize(("kind", "says"), [
    ("crc", "notes.zip: 1 file in it cannot be read. Notes/Tuesday.md: its checksum is wrong (a bad CRC-32)"),
    ("encrypted", "notes.zip: 1 file in it cannot be read. Notes/Tuesday.md: it is encrypted (password-protected)"),
    ("truncated", "notes.zip starts like a zip archive but is incomplete or damaged"),
])
def test_a_zip_that_cannot_be_read_is_refused_naming_what_is_wrong(gateway: tuple[TestClient, Runtime],
                                                                   kind: str, says: str) -> None:
    client, _rt = gateway
    before = len(client.get("/v1/sources", params={"limit": 500}).json()["sources"])
    r = client.post("/v1/imports", files={"file": ("notes.zip", gen.damaged_zip(kind), "application/zip")})
    assert r.status_code == 422, r.text
    assert says in r.json()["detail"]
    assert len(client.get("/v1/sources", params={"limit": 500}).json()["sources"]) == before  # nothing written


def test_the_readable_files_of_a_damaged_zip_go_in_and_the_damaged_one_is_named(
        gateway: tuple[TestClient, Runtime]) -> None:
    client, _rt = gateway
    files = {f"Notes/Day {i}.md": f"# Day {i}\n\nThe crate {i} went to the shed.".encode() for i in range(4)}
    r = client.post("/v1/imports", files={"file": ("notes.zip", gen.damaged_zip("crc", files, bad="Notes/Day 2.md"),
                                                   "application/zip")})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["imported"] == 3
    assert [d["entry"] for d in body["damaged"]] == ["Notes/Day 2.md"]
    assert any("Notes/Day 2.md in the archive cannot be read" in s["reason"] for s in body["skipped"])


# --------------------------------------------------------------------------- identity


def test_five_hundred_keep_notes_made_in_the_same_microsecond_are_five_hundred_sources(
        gateway: tuple[TestClient, Runtime], tmp_path: Path) -> None:
    client, rt = gateway
    body = zipped(gen.write_same_time_keep_notes(tmp_path / "export", 500))
    r = client.post("/v1/imports", files={"file": ("takeout.zip", body, "application/zip")})
    assert r.status_code == 202, r.text
    assert (r.json()["imported"], r.json()["duplicates"], r.json()["kept_apart"]) == (500, 0, [])
    events = [e for e in outbox_events(rt) if isinstance(e, ArtifactSubmitted) and e.title == "Pantry label"]
    assert len({e.source_id for e in events}) == 500


def test_an_upload_files_its_items_many_at_once(gateway: tuple[TestClient, Runtime], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """One write for each 50 items, as the batch route does, not one per item."""
    client, rt = gateway
    intake = rt.metadata.intake
    writes: list[int] = []
    many, one = intake.submit_many, intake.submit

    def counted_many(submissions: Any, **kw: Any) -> Any:
        writes.append(len(submissions))
        return many(submissions, **kw)

    def counted_one(*args: Any, **kw: Any) -> Any:
        writes.append(1)
        return one(*args, **kw)

    monkeypatch.setattr(intake, "submit_many", counted_many)
    monkeypatch.setattr(intake, "submit", counted_one)
    keep = tmp_path / "export" / "Takeout" / "Keep"
    keep.mkdir(parents=True)
    for i in range(120):  # notes no other test of this module imports
        when = datetime(2021, 5, 1, tzinfo=UTC) + timedelta(hours=i)
        note = gen.keep_note(title=f"Shelf box {i}", created=when, edited=when, text=f"Shelf box {i} holds {i} screws.")
        (keep / f"Shelf box {i}.json").write_text(json.dumps(note))
    r = client.post("/v1/imports", files={"file": ("takeout.zip", zipped(keep.parent), "application/zip")})
    assert r.status_code == 202, r.text
    assert r.json()["imported"] == 120
    assert writes == [50, 50, 20]
    events = [e for e in outbox_events(rt)
              if isinstance(e, ArtifactSubmitted) and (e.title or "").startswith("Shelf box")]
    assert len({e.source_id for e in events}) == 120


def test_the_same_item_twice_is_found_equal_and_said_so(gateway: tuple[TestClient, Runtime], tmp_path: Path) -> None:
    client, _rt = gateway
    note = json.dumps(gen.keep_note(title="Spare key", created=datetime(2023, 1, 2, tzinfo=UTC),
                                    edited=datetime(2023, 1, 2, tzinfo=UTC), text="Under the blue pot."))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:  # two Takeouts of one account, unpacked into one zip
        z.writestr("Takeout/Keep/Spare key.json", note)
        z.writestr("Takeout 2/Keep/Spare key.json", note)
        z.writestr("Takeout 2/Keep/Other.json", note.replace("Under the blue pot", "In the shed"))
    r = client.post("/v1/imports", files={"file": ("takeouts.zip", out.getvalue(), "application/zip")})
    assert r.status_code == 202, r.text
    body = r.json()
    assert (body["imported"], body["duplicates"]) == (2, 1)
    (equal,) = body["found_equal"]
    assert equal["equal_to"] == "Spare key" and "found equal to Spare key" in equal["reason"]


# --------------------------------------------------------------------------- the single routes' limits


def test_a_batch_refuses_a_note_over_the_note_limit_like_the_notes_route(dsn: str, tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9", auth="off",
        topic_prefix="lim.", max_pending_jobs=0, max_note_chars=1000, default_user="limits")
    rt = build_runtime(settings, vectors=False, models=False)
    try:
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            parts = {"p0": b"# Long\n\n" + "\u00e9".encode() * 1001, "p1": b"# Short\n\nfits",
                     "p2": b"[10:00] Ann: " + b"x" * 2000}
            r = client.post("/v1/imports/batch", **batch([note("import:notes:long.md", "p0"),
                                                          note("import:notes:short.md", "p1"),
                                                          {**note("import:chat:day", "p2"), "kind": "chat",
                                                           "content_type": "text/x-chat"}], parts))
            assert r.status_code == 200, r.text
            long, short, chat = r.json()["results"]
            assert short["status"] == "imported"
            assert long["status"] == "refused" and "it has 1009 characters; the limit for a note is 1000" in \
                long["reason"] and "SB_MAX_NOTE_CHARS" in long["reason"]
            assert chat["status"] == "refused" and "the limit for a chat is 1000" in chat["reason"]
            single = client.post("/v1/notes", json={"text": "\u00e9" * 1007})
            assert single.status_code == 413  # the same limit as the notes route
    finally:
        rt.close()


# --------------------------------------------------------------------------- the backlog


def test_an_upload_pauses_at_the_backlog_limit_and_goes_on_from_where_it_paused(dsn: str, tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9", auth="off",
        topic_prefix="pause.", max_pending_jobs=4, default_user="pauser")  # no pipeline: the jobs stay queued
    rt = build_runtime(settings, vectors=False, models=False)
    body = zipped(gen.write_many_keep_notes(tmp_path / "export", 6))
    try:
        with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost") as client:
            first = client.post("/v1/imports", files={"file": ("takeout.zip", body, "application/zip")})
            assert first.status_code == 202 and first.headers["retry-after"] == "10", first.text
            paused = first.json()["paused"]
            assert first.json()["imported"] == 4 and paused["resume_from"] == 4
            assert "you have 4 captures still being processed (the limit is 4, SB_MAX_PENDING_JOBS)" in \
                paused["reason"]
            # Full: the next request waits at the door.
            again = client.post("/v1/imports", files={"file": ("takeout.zip", body, "application/zip")},
                                data={"resume_from": "4"})
            assert again.status_code == 429 and again.headers["retry-after"]
            # Once the pipeline took them, it goes on from where it paused, and nothing is sent twice.
            for job in [j["job_id"] for j in first.json()["jobs"]]:
                rt.metadata.jobs.job_failed("pauser", job, "extract", "taken by the test")
            rest = client.post("/v1/imports", files={"file": ("takeout.zip", body, "application/zip")},
                               data={"resume_from": "4"})
            assert rest.status_code == 202 and "retry-after" not in rest.headers, rest.text
            assert (rest.json()["imported"], rest.json()["paused"]) == (2, None)
            assert len([e for e in outbox_events(rt) if e.user_id == "pauser"]) == 6
    finally:
        rt.close()


def test_an_import_whose_client_went_away_stops_at_the_next_item(gateway: tuple[TestClient, Runtime],
                                                                 tmp_path: Path) -> None:
    """The server reads an upload in a worker thread; when the client disconnects, the route sets the import's
    cancel flag and the reading stops at the next item (here: set before the first)."""
    import threading

    from services.importers.api import _until_done_or_gone, import_export
    from services.importers.model import Options

    _client, rt = gateway
    submitter = CaptureSubmitter(rt, None)
    body = zipped(gen.write_many_keep_notes(tmp_path / "export", 5))
    cancel = threading.Event()
    cancel.set()
    out = import_export(submitter, "local", "takeout.zip", io.BytesIO(body), None, Options(), cancel=cancel)
    assert out["items"] == 0 and out["jobs"] == []

    class Gone:  # a request whose client has gone away
        async def is_disconnected(self) -> bool:
            return True

    async def run() -> dict[str, Any]:
        started = threading.Event()
        flag = threading.Event()

        def slow() -> dict[str, Any]:
            started.set()
            assert flag.wait(10), "the import was never told its client went away"
            return {"stopped": True}

        work = asyncio.ensure_future(asyncio.to_thread(slow))
        return await _until_done_or_gone(Gone(), work, flag)  # type: ignore[arg-type]

    assert asyncio.run(run()) == {"stopped": True}


# --------------------------------------------------------------------------- following an import as it goes


def lines_of(answer: Any) -> list[dict[str, Any]]:
    assert answer.status_code == 202, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in answer.text.splitlines() if line.strip()]


def test_an_upload_followed_in_lines_says_how_far_how_fast_and_goes_on_from_any_line_without_a_duplicate(
        gateway: tuple[TestClient, Runtime], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``Accept: application/x-ndjson`` the answer is a line per tick while the items go in (done of total,
    items per second, time left, where to go on, what was done since the line before), then the summary a
    plain request gets.  A client cut off after any line (the server restarted) sends the file again from that
    line's ``resume_from``: what went in after the line is found unchanged, and nothing is filed twice."""
    from services.importers import api

    monkeypatch.setattr(api, "PROGRESS_EVERY_S", 0.02)
    client, rt = gateway
    notes = 150
    body = zipped(gen.write_many_keep_notes(tmp_path / "export", notes))
    follow = {"Accept": "application/x-ndjson"}
    before = len(outbox_events(rt))
    lines = lines_of(client.post("/v1/imports", headers=follow,
                                 files={"file": ("takeout.zip", body, "application/zip")}))
    *ticks, last = lines
    result = last["result"]
    assert (result["format"], result["imported"], result["unchanged"], result["paused"]) == ("keep", notes, 0, None)
    assert ticks and all(set(t["progress"]) == {"done", "total", "rate", "eta_s", "resume_from"} for t in ticks)
    assert ticks[0]["progress"]["done"] == 0 and {t["progress"]["total"] for t in ticks} == {notes}
    done = [t["progress"]["done"] for t in ticks]
    assert done == sorted(done) and all(t["progress"]["resume_from"] == t["progress"]["done"] for t in ticks)
    moving = [k for k, t in enumerate(ticks) if 0 < t["progress"]["done"] < notes]
    assert moving, "no line while the items went in"
    assert all(ticks[k]["progress"]["rate"] > 0 and ticks[k]["progress"]["eta_s"] >= 0 for k in moving)
    # What the lines acknowledged, summed, is what the summary says, item for item.
    parts = [t["part"] for t in ticks]
    assert sum(p["imported"] for p in parts) == done[-1]
    assert [j["job_id"] for p in parts for j in p["jobs"]] == [j["job_id"] for j in result["jobs"]][:done[-1]]

    # A client cut off after a line in the middle goes on from it: the items after that line went in already
    # (the server got further than the client heard), so they are unchanged, and the rest are imported.
    at = moving[len(moving) // 2]
    cut = ticks[at]["progress"]
    heard = sum(p["imported"] for p in parts[:at + 1])
    assert heard == cut["done"]
    again = lines_of(client.post("/v1/imports", headers=follow, data={"resume_from": str(cut["resume_from"])},
                                 files={"file": ("takeout.zip", body, "application/zip")}))
    rest = again[-1]["result"]
    assert again[0]["progress"]["done"] == cut["resume_from"]
    assert (rest["imported"], rest["unchanged"]) == (0, notes - cut["resume_from"])
    assert heard + rest["unchanged"] == notes
    assert len(outbox_events(rt)) - before == notes  # each note filed once


def test_an_upload_followed_in_lines_refused_before_its_first_item_gets_the_plain_refusal(
        gateway: tuple[TestClient, Runtime]) -> None:
    client, _rt = gateway
    stray = io.BytesIO()
    with zipfile.ZipFile(stray, "w") as z:
        z.writestr("photo.bin", bytes(range(256)))
    r = client.post("/v1/imports", headers={"Accept": "application/x-ndjson"},
                    files={"file": ("holiday.zip", stray.getvalue(), "application/zip")})
    assert r.status_code == 422 and "not an export secondbrain recognises" in r.json()["detail"], r.text


def test_an_import_whose_server_stops_is_told_to_stop_at_the_next_item() -> None:
    """A stopping server cancels the open requests (after its grace period): the import's cancel flag is set,
    whether the client asked for lines or for the one summary, so the reading stops and a restart goes on
    from where the client was last told."""
    import threading

    from services.importers.api import Ticker, _lines, _until_done_or_gone

    class Here:  # a client still there
        async def is_disconnected(self) -> bool:
            return False

    class Upload:
        closed = False

        def close(self) -> None:
            self.closed = True

    async def stopped(follow: bool) -> tuple[bool, bool]:
        flag = threading.Event()
        upload = Upload()
        work = asyncio.ensure_future(asyncio.to_thread(lambda: flag.wait(10) and {"stopped": True}))
        if follow:
            async def read() -> None:
                async for _line in _lines(Here(), work, flag, Ticker(), None, upload):  # type: ignore[arg-type]
                    pass
            task = asyncio.ensure_future(read())
        else:
            task = asyncio.ensure_future(_until_done_or_gone(Here(), work, flag))  # type: ignore[arg-type]
        await asyncio.sleep(0.2)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.wait({work}, timeout=10)
        await asyncio.sleep(0)
        return flag.is_set(), upload.closed or not follow

    assert asyncio.run(stopped(follow=False)) == (True, True)
    assert asyncio.run(stopped(follow=True)) == (True, True)  # and the upload closed once the import let go
