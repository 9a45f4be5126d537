"""Folder sync's side of the batch route, against a twin of the server: new and changed files go in batches
through the connectors' one sender, each under its file:// address; a file too large for a batch is refused
alone, said, and recorded so that it is not sent again until it changes.  (The real server: test_folders.py.)"""

from __future__ import annotations

import json
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from connectors.folders import FolderSync, file_uri
from secondbrain import ids

pytestmark = pytest.mark.fast

LIMIT = 4000  # the twin's body limit (SB_MAX_UPLOAD_BYTES)


class Twin:
    """The routes folder sync calls, with the batch route's body limit and answers."""

    def __init__(self) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.jobs = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/me":
            return httpx.Response(200, json={"user_id": "u"})
        if request.url.path == "/v1/jobs":
            return httpx.Response(200, json={"jobs": [{"job_id": i, "status": "succeeded"}
                                                      for i in request.url.params.get_list("id")], "unknown": []})
        assert (request.method, request.url.path) == ("POST", "/v1/imports/batch"), request.url
        body = request.read()
        if len(body) > LIMIT:
            return httpx.Response(413, json={"detail": f"the upload is over {LIMIT} bytes (SB_MAX_UPLOAD_BYTES)"})
        head = b"Content-Type: " + request.headers["content-type"].encode() + b"\r\n\r\n"
        parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                 for p in BytesParser().parsebytes(head + body).get_payload()}
        captures = json.loads(parts["manifest"])["captures"]
        self.batches.append([{**c, "bytes": parts[c["part"]]} for c in captures])
        results = []
        for c in captures:
            self.jobs += 1
            results.append({"label": c["label"], "source_uri": c["source_uri"], "status": "imported",
                            "job_id": f"j{self.jobs}"})
        return httpx.Response(200, json={"results": results, "pending": 0, "max_pending": 0, "waiting": 0})


def test_files_go_in_one_batch_under_their_file_address_and_one_too_large_is_refused_alone(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe ferry leaves at 22:40.\n")
    (folder / "b.md").write_text("# B\n\nThe bins go out on Thursday.\n")
    (folder / "big.md").write_text("# Big\n\n" + "An orchard needs pruning. " * 200)
    twin, said = Twin(), []
    state = tmp_path / "state.json"
    with httpx.Client(transport=httpx.MockTransport(twin), base_url="http://sb") as client:
        sync = FolderSync(client, [folder], state, say=said.append)
        first = sync.sync()
        # The three together pass the limit: sent again one by one, the big one refused with the server's reason.
        assert sorted(c["label"] for batch in twin.batches for c in batch) == ["notes/a.md", "notes/b.md"]
        assert all(len(batch) == 1 for batch in twin.batches)
        a = next(batch[0] for batch in twin.batches if batch[0]["label"] == "notes/a.md")
        assert (a["source_uri"], a["kind"], a["filename"]) == (file_uri(folder / "a.md"), "file", "a.md")
        assert a["bytes"] == (folder / "a.md").read_bytes() and a["content_type"] == "text/markdown"
        assert (first.added, first.failed) == (2, [f"notes/big.md: HTTP 413: the upload is over {LIMIT} bytes "
                                                   "(SB_MAX_UPLOAD_BYTES)"])
        assert "new: notes/a.md" in said and any(line.startswith("refused: notes/big.md: HTTP 413") for line in said)
        recorded = json.loads(state.read_text())["files"]
        assert recorded[str(folder / "a.md")]["source_id"] == ids.source_id("u", file_uri(folder / "a.md"))
        assert recorded[str(folder / "big.md")]["source_id"] is None  # not sent again until it changes

        # An edit and a new file, in one batch: the edit under the same address again (the server makes it the
        # source's next version); nothing else is sent.
        (folder / "a.md").write_text("# A\n\nThe ferry now leaves at 23:15.\n")
        (folder / "c.md").write_text("# C\n\nThe boiler was serviced.\n")
        twin.batches.clear()
        second = sync.sync()
        assert len(twin.batches) == 1 and sorted((c["label"], c["source_uri"]) for c in twin.batches[0]) == [
            ("notes/a.md", file_uri(folder / "a.md")), ("notes/c.md", file_uri(folder / "c.md"))]
        assert (second.added, second.updated, second.unchanged, second.failed) == (1, 1, 2, [])


def test_a_file_is_streamed_from_disk_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A watched folder may hold a film or a disk image: the watcher must not hold one in memory to send it.
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe ferry leaves at 22:40.\n")

    def whole(self: Path) -> bytes:
        raise AssertionError(f"{self} read whole")

    monkeypatch.setattr(Path, "read_bytes", whole)
    twin = Twin()
    with httpx.Client(transport=httpx.MockTransport(twin), base_url="http://sb") as client:
        report = FolderSync(client, [folder], tmp_path / "state.json", say=lambda _line: None).sync()
    assert (report.added, report.failed) == (1, [])
    assert twin.batches[0][0]["bytes"] == b"# A\n\nThe ferry leaves at 22:40.\n"
