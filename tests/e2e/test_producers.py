"""Other apps as producers, as their developer meets them: the broker address in `secondbrain up`'s
banner, the documented examples (run here exactly as the docs show them) publishing signed events that
become searchable, and a refused event readable with its reason in GET /v1/deadletters."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from secondbrain.infra.ports import free_port, port_accepts
from tests.e2e.harness import REPO, Service, readable_tmp, run_cli

pytestmark = pytest.mark.e2e

EXAMPLES = REPO / "examples"
# Where each example is shown: the docs include the file verbatim after a marker line.
DOCS = {"docs/events.md": ["examples/python_producer.py", "examples/node/producer.js"],
        "schemas/README.md": ["examples/python_producer.py", "examples/codec_producer.py"]}
MARKER = re.compile(r"<!-- example: (\S+) -->\n```(\w+)\n(.*?)```\n", re.S)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str]]:
    """A running `secondbrain up` on a broker port the test chose, and the bootstrap its banner printed."""
    with readable_tmp("sb-producers-") as root:
        port = free_port()
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--kafka-port", str(port)], {},
                      tmp_path_factory.mktemp("producers-logs"))
        svc.start().wait_ready(timeout=180)
        try:
            deadline = time.monotonic() + 30
            while not (found := re.search(r"Kafka broker for other apps on this machine: (\S+)", svc.tail(400))):
                assert time.monotonic() < deadline, svc.tail()
                time.sleep(0.1)
            yield svc, found.group(1)
        finally:
            svc.stop()


def producer_key(svc: Service) -> str:
    with svc.client() as client:
        r = client.post("/v1/keys", json={"name": "calendar", "scope": "producer"})
    assert r.status_code == 201, r.text
    return str(r.json()["api_key"])


def publish(cmd: list[str], bootstrap: str, key: str, *, cwd: Path = REPO) -> tuple[str, float]:
    """Run a producer example; return the event id it printed and when it finished."""
    env = {**os.environ, "SB_KAFKA_BOOTSTRAP": bootstrap, "SB_PRODUCER_KEY": key, "SB_USER_ID": "local",
           "SB_SCHEMA_FILE": str(REPO / "schemas" / "artifact_submitted.v1.avsc"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[-1], time.monotonic()


def searchable(svc: Service, word: str, since: float, timeout: float = 90.0) -> float:
    """Seconds from ``since`` until a search for ``word`` finds it."""
    with svc.client() as client:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hits = client.get("/v1/search", params={"q": word, "mode": "sparse"}).json()["hits"]
            if any(word in h["text"] for h in hits):
                return time.monotonic() - since
            time.sleep(0.25)
    letters = svc.client().get("/v1/deadletters").json()
    raise AssertionError(f"{word} never became searchable; dead letters: {letters}")


def test_the_docs_show_the_example_files_exactly() -> None:
    for doc, expected in DOCS.items():
        text = (REPO / doc).read_text(encoding="utf-8")
        shown = MARKER.findall(text)
        assert [path for path, _, _ in shown] == expected, doc
        for path, _, body in shown:
            assert body == (REPO / path).read_text(encoding="utf-8"), f"{doc} shows an old copy of {path}"
        # Every Python or JavaScript block of the producer sections is one of those included files.
        section = text.split("## Event contract for other apps", 1)[-1].split("\n## Tests", 1)[0]
        code = re.findall(r"```(python|js|javascript)\n", section)
        assert len(code) == len(shown), f"{doc} has a code example that is not an example file the tests run"


def test_an_app_finds_the_broker_from_the_banner_on_loopback_only(up: tuple[Service, str]) -> None:
    svc, bootstrap = up
    host, port = bootstrap.rsplit(":", 1)
    assert host == "127.0.0.1" and port_accepts(int(port))
    with svc.client() as client:
        status = client.get("/v1/status").json()
    assert status["kafka"]["bootstrap"] == bootstrap and status["kafka"]["loopback_only"]
    assert status["kafka"]["topics"]["artifacts"] == "artifacts.submitted"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # this machine's outward address, if any
        try:
            probe.connect(("10.255.255.255", 1))
            outward = probe.getsockname()[0]
        except OSError:
            outward = "127.0.0.1"
    if not outward.startswith("127."):
        assert not port_accepts(int(port), outward), f"the broker answers on {outward}"


def test_a_busy_broker_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli(["up", "--data-dir", str(tmp_path / "d"), "--kafka-port", str(port)], {})
    assert done.returncode == 2 and f"127.0.0.1:{port} is already in use" in done.stderr, done.stderr
    assert "--kafka-port" in done.stderr


def test_the_python_examples_publish_events_that_become_searchable(up: tuple[Service, str]) -> None:
    svc, bootstrap = up
    key = producer_key(svc)
    for example, word in (("python_producer.py", "Quokkaroadmap"), ("codec_producer.py", "Wombatlaunch")):
        _, sent = publish([sys.executable, str(EXAMPLES / example), f"{word}: the importer ships first."],
                          bootstrap, key)
        took = searchable(svc, word, sent)
        print(f"{example}: searchable {took:.1f}s after publishing")


def test_a_refused_event_shows_its_reason_in_deadletters(up: tuple[Service, str]) -> None:
    svc, bootstrap = up
    key = producer_key(svc)
    # Signed with a key that is not the user's: the same bytes, a made-up secret.
    forged = key.rsplit("_", 1)[0] + "_" + "x" * 20
    event_id, _ = publish([sys.executable, str(EXAMPLES / "python_producer.py"), "Never searchable."], bootstrap,
                          forged)
    with svc.client() as client:
        deadline = time.monotonic() + 60
        while not (found := [d for d in client.get("/v1/deadletters").json()["deadletters"]
                             if d["event_id"] == event_id]):
            assert time.monotonic() < deadline, client.get("/v1/deadletters").text
            time.sleep(0.25)
    (letter,) = found
    assert letter["topic"] == "artifacts.submitted" and letter["error_kind"] == "unauthorized"
    assert "signature does not match" in letter["error"] and letter["producer"] == "app:calendar"
    assert letter["failed_at"] and letter["user_id"] == "local"
    listed = run_cli(["deadletters", "--url", svc.url, "--data-dir", str(svc.data_dir)], {})
    assert listed.returncode == 0 and event_id in listed.stdout and "signature does not match" in listed.stdout


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                    reason="node and npm are not installed on this machine (CI has them)")
def test_the_node_example_publishes_an_event_that_becomes_searchable(
        up: tuple[Service, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    svc, bootstrap = up
    app = tmp_path_factory.mktemp("node-app")
    for name in ("package.json", "producer.js"):
        shutil.copy(EXAMPLES / "node" / name, app / name)
    installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=app, capture_output=True,
                               text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    _, sent = publish(["node", "producer.js", "Platypusboiler: the boiler is serviced on Friday."], bootstrap,
                      producer_key(svc), cwd=app)
    took = searchable(svc, "Platypusboiler", sent)
    print(f"node producer: searchable {took:.1f}s after publishing")
