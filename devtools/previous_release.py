"""A data directory written by an earlier release of secondbrain, for the upgrade test and for trying an upgrade.

The earlier release is a commit of this repository (:data:`PREVIOUS_RELEASE`: the state of the project at the
end of the round before the one that added migrations 0012 to 0017).  Its tree is taken out of git with
``git archive`` and its own ``secondbrain up`` runs from there, with this checkout's Python environment (its
dependencies are a subset of today's), on a fresh data directory.  It is filled through its HTTP API as a
person would have: notes, a Markdown file and a PDF, a deleted source, a kept and renamed conversation, a
second user with a note of their own, and extra keys; what was made is returned as a :class:`Seeded` record
for the checks after the upgrade.

    python -m devtools.previous_release /tmp/old-data     # then: secondbrain up --data-dir /tmp/old-data
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from devtools import gen_pdf_image
from devtools.processes import REPO, Service

PREVIOUS_RELEASE = "e982e1b42393c0badec9ec6141cfe3a5a7a7820d"
PREVIOUS_SCHEMA = 11  # its newest migration (0011_dead_letters.sql)

BOILER = "The boiler at Alder Street was serviced by Hendrik Visser; the next service is due in September."
GARDEN = ("# Garden plan\n\n## Beds\n\nThe raspberry canes go in the north bed, two feet apart, "
          "after the frost.\n\n## Tools\n\nThe loppers are in the lean-to behind the compost heap.\n")
DELETED = "The old locker code at the swimming pool was 5-5-2-0."
MAYA = "Maya's bicycle is locked with the combination 8-1-3-3 at the station."


@dataclass
class Seeded:
    """What the earlier release was given, by the ids and keys it answered with."""

    data_dir: str
    commit: str
    admin_key: str
    laptop_key: str  # a second key of the local user, made on the page or with POST /v1/keys
    maya_key: str  # another user's key
    sources: dict[str, str] = field(default_factory=dict)  # name -> source id (local user)
    deleted_source: str = ""
    maya_source: str = ""
    conversation: str = ""
    conversation_title: str = "Boiler questions"
    question: str = "Who serviced the boiler at Alder Street?"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2))


def _fetch_history(commit: str) -> None:
    """A shallow clone lacks the earlier release: fetch the rest of its history from where it was cloned."""
    has = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    if has.returncode == 0:
        return
    shallow = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True)
    if shallow.stdout.strip() == "true":
        subprocess.run(["git", "-C", str(REPO), "fetch", "--quiet", "--unshallow"], capture_output=True, timeout=300)


def checkout(commit: str, dest: Path) -> Path:
    """The tree of ``commit`` (from this repository's git history) extracted into ``dest``."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        _fetch_history(commit)
    try:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit], capture_output=True,
                             check=True, timeout=120).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"cannot take release {commit[:10]} out of git in {REPO} (a clone with its history "
                           f"is needed): {exc}") from None
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(dest, filter="data")
    return dest


def wait_done(client: httpx.Client, job_ids: list[str], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    pending = set(job_ids)
    while pending and time.monotonic() < deadline:
        for job in list(pending):
            r = client.get(f"/v1/jobs/{job}")
            if r.status_code == 200 and r.json()["status"] in ("succeeded", "failed", "duplicate"):
                assert r.json()["status"] == "succeeded", r.json()
                pending.discard(job)
        time.sleep(0.3)
    if pending:
        raise TimeoutError(f"the earlier release did not finish {sorted(pending)} in {timeout:.0f} s")


def seed(client: httpx.Client, seeded: Seeded) -> None:
    """Fill the earlier release's server through its HTTP API."""
    def accepted(r: httpx.Response) -> str:
        assert r.status_code == 202, r.text
        return str(r.json()["job_id"])

    jobs = {
        "boiler": accepted(client.post("/v1/notes", json={"title": "Boiler service", "text": BOILER,
                                                          "captured_at": "2026-03-04T10:00:00+01:00"})),
        "garden": accepted(client.post("/v1/artifacts", files={"file": ("garden.md", GARDEN.encode(),
                                                                        "text/markdown")})),
        "logbook": accepted(client.post("/v1/artifacts", files={"file": ("logbook.pdf", gen_pdf_image.text_pdf(),
                                                                         "application/pdf")})),
        "deleted": accepted(client.post("/v1/notes", json={"title": "Locker", "text": DELETED})),
    }
    wait_done(client, list(jobs.values()))
    for name, job in jobs.items():
        source = source_of(client, job)
        if name == "deleted":
            seeded.deleted_source = source
        else:
            seeded.sources[name] = source
    assert client.delete(f"/v1/sources/{seeded.deleted_source}").status_code in (200, 202, 204)
    asked = client.post("/v1/ask", json={"question": seeded.question}, timeout=120)
    assert asked.status_code == 200, asked.text
    conversations = client.get("/v1/conversations").json()["conversations"]
    seeded.conversation = conversations[0]["conversation_id"]
    renamed = client.patch(f"/v1/conversations/{seeded.conversation}", json={"title": seeded.conversation_title})
    assert renamed.status_code == 200, renamed.text
    seeded.laptop_key = client.post("/v1/keys", json={"name": "laptop", "scope": "user"}).json()["api_key"]
    made = client.post("/v1/admin/users", json={"user_id": "maya", "display_name": "Maya", "create_key": True})
    assert made.status_code == 201, made.text
    seeded.maya_key = made.json()["key"]["api_key"]
    with httpx.Client(base_url=str(client.base_url), headers={"Authorization": f"Bearer {seeded.maya_key}"},
                      timeout=60) as maya:
        job = accepted(maya.post("/v1/notes", json={"title": "Bicycle", "text": MAYA}))
        wait_done(maya, [job])
        seeded.maya_source = source_of(maya, job)


def source_of(client: httpx.Client, job: str) -> str:
    """The source a finished job made (that release's jobs name their artifact, its sources too)."""
    artifact = client.get(f"/v1/jobs/{job}").json()["artifact_id"]
    sources = client.get("/v1/sources", params={"limit": 100}).json()["sources"]
    return str(next(s["source_id"] for s in sources if s["artifact_id"] == artifact))


@contextlib.contextmanager
def running_release(data_dir: Path, log_dir: Path, *, commit: str = PREVIOUS_RELEASE) -> Iterator[Service]:
    """Release ``commit``'s own ``secondbrain up`` on ``data_dir``, ready; stopped afterwards (an exit other than
    0 is an error)."""
    with tempfile.TemporaryDirectory(prefix="sb-release-") as tree:
        checkout(commit, Path(tree))
        old = Service("previous-release", ["up", "--data-dir", str(data_dir), "--no-llm"], {}, log_dir,
                      cwd=Path(tree))  # run from its own tree: its packages come first on the path
        old.start().wait_ready(timeout=240)
        try:
            yield old
        finally:
            code = old.stop()
        if code != 0:
            raise RuntimeError(f"the earlier release exited with {code}:\n{old.tail()}")


def write_data_dir(data_dir: Path, log_dir: Path, *, commit: str = PREVIOUS_RELEASE) -> Seeded:
    """Run release ``commit`` on a new ``data_dir``, fill it, stop it; what it was given."""
    with running_release(data_dir, log_dir, commit=commit) as old:
        seeded = Seeded(str(data_dir), commit, admin_key=old.key, laptop_key="", maya_key="")
        with old.client(timeout=60) as client:
            seed(client, seeded)
    return seeded


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data_dir", type=Path, help="a new data directory to write (must not exist)")
    p.add_argument("--commit", default=PREVIOUS_RELEASE, help="the release to run (default: %(default)s)")
    args = p.parse_args(argv)
    if args.data_dir.exists():
        print(f"error: {args.data_dir} exists; name a new folder", file=sys.stderr)
        return 2
    seeded = write_data_dir(args.data_dir.resolve(), args.data_dir.resolve().parent / "previous-release-logs",
                            commit=args.commit)
    print(json.dumps(asdict(seeded), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
