"""``secondbrain edit`` and ``secondbrain tags`` against a served app on real stores, the pipeline run in process:
an edit's words become the next version, tags are added, removed and listed, and refusals are sentences."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.parser import main
from app.http import create_app
from secondbrain.runtime import Runtime
from tests.services.ingest_gateway.test_sources_api import Pipeline
from tests.serving import serve_in_thread

MEMO = "Call the plumber about the boiler on Munday."


@pytest.fixture()
def served(keyed: tuple[Runtime, str]) -> Iterator[tuple[str, str, Pipeline]]:
    rt, key = keyed
    with serve_in_thread(create_app(rt, gateway=True, query=True, relay=None)) as (url, _port):
        yield url, key, Pipeline(rt)


def run(capsys: pytest.CaptureFixture[str], served: tuple[str, str, Pipeline], *args: str) -> tuple[int, str]:
    code = main([*args, "--url", served[0], "--api-key", served[1]])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_edit_and_tags_from_the_terminal(served: tuple[str, str, Pipeline], capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    pipeline = served[2]
    code, out = run(capsys, served, "ingest", "--note", MEMO, "--title", "Plumber", "--no-wait", "--json")
    assert code == 0, out
    pipeline.drain()
    code, out = run(capsys, served, "sources", "--json")
    (row,) = json.loads(out.splitlines()[0])
    source = row["source_id"]

    fixed = tmp_path / "fixed.md"
    fixed.write_text("Call the plumber about the boiler on Monday.\n")
    code, out = run(capsys, served, "edit", source, "--text-file", str(fixed), "--tag", "House", "--tag", "todo",
                    "--version", "1", "--no-wait", "--json")
    assert code == 0, out
    pipeline.drain()
    code, out = run(capsys, served, "sources", "show", source, "--json")
    shown = json.loads(out)
    assert (shown["current_version"], shown["tags"]) == (2, ["house", "todo"])

    code, out = run(capsys, served, "edit", source, "--text", "Something else.", "--version", "1")
    assert code == 1 and "now at version 2" in out
    code, out = run(capsys, served, "edit", source, "--untag", "todo", "--title", "Boiler")
    assert code == 0 and "Boiler: version 2, tags: house" in out
    code, out = run(capsys, served, "edit", source)
    assert code == 2 and "nothing to change" in out

    code, out = run(capsys, served, "tags", "add", "urgent", source)
    assert code == 0 and "urgent: added to 1 of 1 sources" in out
    code, out = run(capsys, served, "tags")
    assert code == 0 and [line.split() for line in out.splitlines()] == [["house", "1"], ["urgent", "1"]]
    code, out = run(capsys, served, "sources", "--tag", "urgent")
    assert code == 0 and "Boiler" in out and "#house #urgent" in out
    code, out = run(capsys, served, "tags", "remove", "urgent", source, "no-such-source")
    assert code == 1 and "no such source: no-such-source" in out
