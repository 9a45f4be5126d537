"""The import routes fuzzed: an export of every format the importers read, mutated (bits flipped, cut short,
bytes put in or taken out, a file inside the zip changed and packed again, an archive damaged), is answered
with a 2xx or a 4xx and a sentence, never a 5xx; then a good note still goes in.  A batch whose manifest and
parts are mutated likewise.  Hypothesis draws the mutations (a bounded number of examples, so the test runs
in bounded time; its database replays the ones that failed before first)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools import gen_exports as gen
from secondbrain.settings import Settings

EXAMPLES = int(os.environ.get("SB_FUZZ_EXAMPLES", "60"))  # per test; more for a longer search by hand
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _zipped(folder: Path) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(folder.parent).as_posix())
    return out.getvalue()


def _as_upload(path: Path) -> tuple[str, bytes]:
    return (f"{path.name}.zip", _zipped(path)) if path.is_dir() else (path.name, path.read_bytes())


class Corpus(dict[str, tuple[str, bytes]]):
    """One export of each format, as a person would upload it (a folder zipped); shown by its formats only (a
    failing example prints its arguments)."""

    def __repr__(self) -> str:
        return f"Corpus({', '.join(sorted(self))})"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("fuzz-corpus")
    made = {
        "keep": gen.write_keep(root / "keep"), "evernote": gen.write_evernote(root / "evernote"),
        "notion": gen.write_notion(root / "notion"), "notes": gen.write_notes_folder(root / "notes"),
        "bookmarks": gen.write_bookmarks(root / "bookmarks", "https://example.org"),
        "kindle": gen.write_kindle(root / "kindle"), "readwise": gen.write_readwise(root / "readwise"),
        "whatsapp": gen.write_whatsapp_android(root / "whatsapp"), "telegram": gen.write_telegram(root / "telegram"),
        "openmemory": gen.write_openmemory(root / "openmemory"), "mem0": gen.write_mem0_get_all(root / "mem0"),
        "khoj": gen.write_khoj(root / "khoj"), "ics": gen.write_calendar(root / "ics", NOW),
    }
    return Corpus({name: _as_upload(path) for name, path in made.items()})


@pytest.fixture(scope="module")
def client(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings_ = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path_factory.mktemp("fuzz"), postgres_dsn=SecretStr(dsn), max_upload_bytes=2 * 1024 * 1024,
        kafka_bootstrap="127.0.0.1:9", topic_prefix="fuzz.", auth="off", max_pending_jobs=0, default_user="fuzzer")
    rt = build_runtime(settings_, vectors=False, models=False)
    with TestClient(create_app(rt, gateway=True, query=False), base_url="http://localhost",
                    raise_server_exceptions=False) as c:
        yield c
    rt.close()


# --------------------------------------------------------------------------- mutations


def _flip(data: bytes, at: float, bit: int) -> bytes:
    if not data:
        return data
    i = int(at * (len(data) - 1))
    return data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1:]


def _cut(data: bytes, at: float) -> bytes:
    return data[:int(at * len(data))]


def _insert(data: bytes, at: float, junk: bytes) -> bytes:
    i = int(at * len(data))
    return data[:i] + junk + data[i:]


def _delete(data: bytes, at: float, size: int) -> bytes:
    i = int(at * len(data))
    return data[:i] + data[i + size:]


def _inside(data: bytes, pick: int, change: st.DataObject) -> bytes:
    """A file inside the zip changed, and the zip packed again (its checksums right): the format's reader is
    what meets the damage, not the unzipping."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = [(i, z.read(i)) for i in z.infolist() if not i.is_dir()]
    except zipfile.BadZipFile:
        return data
    if not members:
        return data
    which = pick % len(members)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, (info, content) in enumerate(members):
            z.writestr(info.filename, _mutate_bytes(content, change) if n == which else content)
    return out.getvalue()


def _mutate_bytes(data: bytes, draw: st.DataObject) -> bytes:
    for _ in range(draw.draw(st.integers(1, 4), label="changes")):
        kind = draw.draw(st.sampled_from(["flip", "cut", "insert", "delete"]), label="change")
        at = draw.draw(st.floats(0, 1), label="at")
        if kind == "flip":
            data = _flip(data, at, draw.draw(st.integers(0, 7), label="bit"))
        elif kind == "cut":
            data = _cut(data, at)
        elif kind == "insert":
            junk = draw.draw(st.sampled_from([b"\x00", b"\xff\xfe", b'"', b"{", b"]]>", b"\r\n", b"PK\x03\x04",
                                               b"BEGIN:VEVENT\r\n", b"RRULE:FREQ=SECONDLY\r\n", b"\xed\xa0\x80",
                                               b"<", b"99999999999999999999", "\u202e".encode()]), label="junk")
            data = _insert(data, at, junk)
        else:
            data = _delete(data, at, draw.draw(st.integers(1, 64), label="size"))
    return data


def _mutated(corpus: Corpus, draw: st.DataObject) -> tuple[str, str, bytes]:
    fmt = draw.draw(st.sampled_from(sorted(corpus)), label="format")
    name, data = corpus[fmt]
    how = draw.draw(st.sampled_from(["bytes", "inside", "crc", "encrypted", "truncated"]), label="how")
    if how == "bytes":
        data = _mutate_bytes(data, draw)
    elif how == "inside":
        data = _inside(data, draw.draw(st.integers(0, 1000), label="member"), draw)
    elif zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            files = {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}
        bad = draw.draw(st.sampled_from(sorted(files)), label="damaged")
        data = gen.damaged_zip(how, files, bad=bad)
    return fmt, name, data


# --------------------------------------------------------------------------- the routes


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(draw=st.data())
def test_a_mutated_export_of_any_format_is_never_a_server_error(client: TestClient,
                                                               corpus: Corpus,
                                                               draw: st.DataObject) -> None:
    fmt, name, data = _mutated(corpus, draw)
    forced = draw.draw(st.sampled_from(["", fmt]), label="forced")
    r = client.post("/v1/imports", files={"file": (name, data, "application/octet-stream")},
                    data={"format": forced} if forced and fmt not in ("openmemory", "whatsapp") else {})
    assert r.status_code < 500, (fmt, r.status_code, r.text[:500])
    if r.status_code >= 400:
        detail = r.json()["detail"]
        assert isinstance(detail, str) and detail.strip(), (fmt, r.text[:300])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(draw=st.data())
def test_a_mutated_batch_is_never_a_server_error(client: TestClient, draw: st.DataObject) -> None:
    captures = [{"source_uri": "import:notes:a.md", "kind": "note", "title": "A", "part": "p0",
                 "captured_at": "2024-05-01T10:00:00+00:00", "content_type": "text/markdown",
                 "attributes": {"kind": "note", "import.format": "notes"}},
                {"source_uri": "https://example.org/page", "kind": "url", "url": "https://example.org/page",
                 "title": "Page", "attributes": {}},
                {"source_uri": "import:chat:day", "kind": "chat", "part": "p1", "content_type": "text/x-chat"}]
    manifest = json.dumps({"format": "notes", "captures": captures}).encode()
    if draw.draw(st.booleans(), label="mutate manifest"):
        manifest = _mutate_bytes(manifest, draw)
    parts = {"p0": b"# A\n\nThe shed key is under the pot.", "p1": b"[10:00] Ann: see you at 11"}
    if draw.draw(st.booleans(), label="mutate a part"):
        key = draw.draw(st.sampled_from(sorted(parts)), label="part")
        parts[key] = _mutate_bytes(parts[key], draw)
    files: list[tuple[str, tuple[str | None, bytes, str]]] = [("manifest", (None, manifest, "application/json"))]
    files += [(k, (f"{k}.md", v, "text/markdown")) for k, v in parts.items()]
    r = client.post("/v1/imports/batch", files=files)
    assert r.status_code < 500, (r.status_code, r.text[:500])


def test_after_the_fuzzing_a_good_export_still_goes_in(client: TestClient, corpus: Corpus) -> None:
    name, data = corpus["keep"]
    r = client.post("/v1/imports", files={"file": (name, data, "application/zip")})
    assert r.status_code == 202 and r.json()["format"] == "keep", r.text
