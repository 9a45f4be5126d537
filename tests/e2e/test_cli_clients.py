"""The command line as a client of a running ``secondbrain up``: it finds the server from what ``up``
recorded on this machine (no ``--url``), a one-shot ``ask`` keeps no conversation unless asked to, and
``watch`` started while the server is down waits for it, as it does while it runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.processes import STATE_HOME, cli_env, run_cli
from secondbrain.infra.ports import free_port
from tests.e2e.harness import REPO, Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e

LOCK = "The combination of the blue bike lock is 4-7-1-9."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with readable_tmp("sb-cli-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        with svc.client() as c:
            wait_jobs(c, [c.post("/v1/notes", json={"title": "Bike lock", "text": LOCK}).json()["job_id"]])
        try:
            yield svc
        finally:
            svc.stop()


def conversations(svc: Service) -> list[str]:
    with svc.client() as c:
        return [x["conversation_id"] for x in c.get("/v1/conversations").json()["conversations"]]


def test_the_cli_finds_the_running_server_from_what_up_recorded(server: Service, tmp_path: Path) -> None:
    # No --url, no SB_URL: `up` recorded its address beside its data directory; --data-dir names it.
    found = run_cli(["search", "bike lock combination", "--data-dir", str(server.data_dir)], {})
    assert found.returncode == 0, found.stderr
    assert "Bike lock" in found.stdout and "4-7-1-9" in found.stdout
    # From anywhere else on the machine, with no data directory of its own: the one server running.
    state = tmp_path / "state"
    (state / "secondbrain").mkdir(parents=True)
    shutil.copy(STATE_HOME / "secondbrain" / f"server-{server.port}", state / "secondbrain")
    found = run_cli(["search", "bike lock combination"], {"XDG_STATE_HOME": str(state)})
    assert found.returncode == 0 and "4-7-1-9" in found.stdout, found.stderr
    # A record left by a server that is gone is not taken for a running one.
    gone = free_port()
    (state / "secondbrain" / f"server-{server.port}").unlink()
    (state / "secondbrain" / f"server-{gone}").write_text(f"{server.data_dir}\nhttp://127.0.0.1:{gone}\n")
    missed = run_cli(["search", "bike lock combination"], {"XDG_STATE_HOME": str(state)})
    assert missed.returncode == 2 and "cannot reach secondbrain at http://127.0.0.1:8000" in missed.stderr
    # A data directory named on the command line is that server's or none (never another one's).
    other = run_cli(["search", "bike lock", "--data-dir", str(tmp_path / "elsewhere")], {})
    assert other.returncode == 2 and "127.0.0.1:8000" in other.stderr


def test_a_one_shot_question_keeps_no_conversation_unless_asked_to(server: Service) -> None:
    before = conversations(server)
    once = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url], {})
    assert once.returncode == 0, once.stderr
    assert "4-7-1-9" in once.stdout and "follow up with" not in once.stderr
    as_json = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url, "--json"], {})
    assert as_json.returncode == 0 and "conversation_id" not in as_json.stdout
    assert conversations(server) == before  # nothing kept
    kept = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url, "--keep"], {})
    assert kept.returncode == 0, kept.stderr
    conversation = kept.stderr.split("secondbrain ask -c ", 1)[1].split()[0]
    assert conversations(server) == [conversation, *before]
    follow = run_cli(["ask", "And what colour is it?", "-c", conversation, "--url", server.url], {})
    assert follow.returncode in (0, 1), follow.stderr  # answered or honestly not found; kept either way
    with server.client() as c:
        turns = c.get(f"/v1/conversations/{conversation}").json()["turns"]
    assert [t["question"] for t in turns] == ["What is the combination of the bike lock?", "And what colour is it?"]


def test_watch_started_while_the_server_is_down_waits_for_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-watch-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)  # its data directory and key exist, as after any earlier run
        assert svc.stop() == 0
        notes = root / "notes"
        notes.mkdir()
        (notes / "plumber.md").write_text("# Plumber\n\nThe plumber comes on Thursday at 8.\n")
        watch = subprocess.Popen([sys.executable, "-m", "app.cli", "watch", str(notes), "--once", "--url", svc.url,
                                  "--data-dir", str(svc.data_dir), "--state", str(root / "watch.json")],
                                 env=cli_env({}), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(5)
            assert watch.poll() is None, watch.communicate()  # still waiting, not given up (it exited with 2)
            svc.start().wait_ready(timeout=180)
            _, err = watch.communicate(timeout=180)
            assert watch.returncode == 0, err
            assert "not reachable" in err and "waiting for it" in err and "in sync: 1 new" in err
            # --once returns when the note is sent; it is searchable once the pipeline has embedded it.
            deadline = time.monotonic() + 90
            while True:
                found = run_cli(["search", "when does the plumber come", "--url", svc.url,
                                 "--data-dir", str(svc.data_dir)], {})
                if "Thursday" in found.stdout or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert "Thursday" in found.stdout, found
        finally:
            if watch.poll() is None:
                watch.kill()
            svc.stop()
