"""The first steps as the documentation writes them (docs/getting-started.md, and the same commands in the
README), run against a live ``secondbrain up``: every block after a ``<!-- tested: first-steps -->`` line, each
command through a shell exactly as printed (``.venv/bin/secondbrain`` is the checkout's own), in a folder that
holds the files the commands name (``notes/``, ``~/Documents/plan.md``, a Google Keep Takeout in
``~/Downloads``).  The server is found the way a person's would be: it is the one keeping ``SB_DATA_DIR``."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools import gen_exports
from devtools.processes import cli_env
from tests.e2e.harness import REPO, Service, readable_tmp

pytestmark = pytest.mark.e2e

MARKER = re.compile(r"<!-- tested: first-steps -->\n```bash\n(.*?)```", re.S)
SECONDBRAIN = ".venv/bin/secondbrain"


def blocks(doc: str) -> list[list[str]]:
    """The commands of each tested block of ``doc``: one a line, without their comments."""
    text = (REPO / doc).read_text(encoding="utf-8")
    return [[line.split("  #")[0].strip() for line in body.splitlines() if line.strip()]
            for body in MARKER.findall(text)]


@dataclass
class World:
    svc: Service
    home: Path
    work: Path

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """``command`` in a shell, in the folder with the notes, as the person at the terminal."""
        env = cli_env({"HOME": str(self.home), "SB_DATA_DIR": str(self.svc.data_dir)})
        return subprocess.run(["bash", "-c", command], cwd=self.work, env=env, capture_output=True, text=True,
                              timeout=300, check=False)


def files(home: Path, work: Path) -> None:
    """What the commands name: two notes in a folder, a plan in Documents, a Keep Takeout in Downloads."""
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "garden.md").write_text("# Garden\n\nThe quince tree by the shed needs pruning in February.\n")
    (work / "notes" / "boiler.md").write_text("# Boiler\n\nThe boiler service is booked with Kettering Heating.\n")
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "plan.md").write_text("# Plan\n\nMove the team offsite to the Larch Hall in spring.\n")
    takeout = gen_exports.write_many_keep_notes(home / "export", 3)
    (home / "Downloads").mkdir()
    with zipfile.ZipFile(home / "Downloads" / "takeout-20260301.zip", "w") as z:
        for f in sorted(takeout.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(takeout.parent).as_posix())
    # The checkout's command, where the documentation calls it (./.venv/bin/secondbrain).
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / SECONDBRAIN).symlink_to(Path(sys.executable).with_name("secondbrain"))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    start, _clients = blocks("docs/getting-started.md")
    assert start == [f"{SECONDBRAIN} up"], start
    with readable_tmp("sb-first-steps-") as root:
        home, work = root / "home", root / "work"
        files(home, work)
        # `up` as written, with a data directory of its own, no model looked for, and a free port (SB_PORT).
        svc = Service("up", [*shlex.split(start[0])[1:], "--data-dir", str(root / "data"), "--no-llm"], {},
                      tmp_path_factory.mktemp("first-steps-logs"))
        svc.start().wait_ready(timeout=180)
        try:
            yield World(svc, home, work)
        finally:
            svc.stop()


def test_the_readme_and_the_getting_started_page_give_the_same_first_steps() -> None:
    _start, steps = blocks("docs/getting-started.md")
    assert blocks("README.md") == [steps]
    assert [shlex.split(c)[:2] for c in steps] == [[SECONDBRAIN, "ingest"], [SECONDBRAIN, "ingest"],
                                                   [SECONDBRAIN, "search"], [SECONDBRAIN, "ask"],
                                                   [SECONDBRAIN, "import"]]


def test_the_first_steps_run_as_written(world: World) -> None:
    _start, steps = blocks("docs/getting-started.md")
    said = {}
    for command in steps:
        done = world.run(command)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        said[shlex.split(command)[1]] = said.get(shlex.split(command)[1], "") + done.stdout + done.stderr
    assert "Acme invoice" in said["search"] and "Friday" in said["search"]
    assert "Friday" in said["ask"] and "[1]" in said["ask"]  # the answer quotes the note and cites it
    assert re.search(r"\b3 imported\b|imported[: ]+3\b", said["import"]), said["import"]
    # Everything the commands sent is searchable: the note, both files of the folder, the plan, the Keep notes.
    with world.svc.client() as api:
        for words in ("Acme invoice", "quince pruning", "boiler Kettering", "Larch Hall offsite", "plum jam crate"):
            hits = api.get("/v1/search", params={"q": words, "k": 3}).json()["hits"]
            assert hits and any(w.lower() in hits[0]["text"].lower() for w in words.split()), (words, hits[:1])
