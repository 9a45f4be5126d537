"""Which server a client command talks to, from what each ``secondbrain up`` recorded on this machine: the
newest running one (listing the others and how to choose when several run), the one keeping a named data
directory, never one that is gone."""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.client import _find_key, unreachable
from app.cli.common import DEFAULT_URL, running_servers, server_url

pytestmark = pytest.mark.fast


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("SB_URL", raising=False)
    monkeypatch.delenv("SB_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    (tmp_path / "state" / "secondbrain").mkdir(parents=True)
    return tmp_path / "state" / "secondbrain"


@pytest.fixture
def listening() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for s in opened:
        s.close()


def server(state: Path, opened: list[socket.socket], data_dir: Path, since: float) -> str:
    """A port that accepts connections, recorded as ``up`` records itself, ``since`` seconds ago."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    opened.append(sock)
    port = sock.getsockname()[1]
    pointer = state / f"server-{port}"
    pointer.write_text(f"{data_dir}\nhttp://127.0.0.1:{port}\n")
    os.utime(pointer, (since, since))
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "api-key").write_text(f"key-of-{data_dir.name}\n")
    return f"http://127.0.0.1:{port}"


def args(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(**{"data_dir": None, "url": None, "api_key": None, **kw})


def test_one_server_running_is_the_one(state: Path, listening: list[socket.socket], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    url = server(state, listening, tmp_path / "home-data", 1_000_000)
    assert server_url(args()) == url
    assert capsys.readouterr().err == ""  # nothing to choose: nothing said
    assert _find_key(args(url=url)) == "key-of-home-data"  # the key of the server talked to


def test_several_running_the_newest_is_used_and_the_others_listed(state: Path, listening: list[socket.socket],
                                                                  tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    older = server(state, listening, tmp_path / "home-data", 1_000_000)
    newest = server(state, listening, tmp_path / "trial-data", 2_000_000)
    assert [s.url for s in running_servers()] == [newest, older]
    assert server_url(args()) == newest
    err = capsys.readouterr().err
    assert f"2 servers are running on this machine; talking to the newest, {newest}" in err
    assert f"{newest}  data in {tmp_path / 'trial-data'}" in err and "<- this one" in err
    assert f"{older}  data in {tmp_path / 'home-data'}" in err
    assert "choose another with --url URL, --data-dir DIR (the one it keeps) or SB_URL=URL" in err
    # The key sent is the newest server's own, not the one in the default place.
    assert _find_key(args(url=newest)) == "key-of-trial-data"
    # Naming a data directory picks the server keeping it, quietly.
    assert server_url(args(data_dir=str(tmp_path / "home-data"))) == older
    assert capsys.readouterr().err == ""
    assert _find_key(args(url=older, data_dir=str(tmp_path / "home-data"))) == "key-of-home-data"


def test_sb_url_and_sb_data_dir_choose_too(state: Path, listening: list[socket.socket], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    older = server(state, listening, tmp_path / "home-data", 1_000_000)
    server(state, listening, tmp_path / "trial-data", 2_000_000)
    monkeypatch.setenv("SB_DATA_DIR", str(tmp_path / "home-data"))
    assert server_url(args()) == older
    monkeypatch.setenv("SB_URL", "http://192.0.2.7:8000")
    assert server_url(args()) == "http://192.0.2.7:8000"


def test_a_server_that_is_gone_is_not_taken_and_the_error_says_what_runs(
        state: Path, listening: list[socket.socket], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (state / "server-9").write_text(f"{tmp_path / 'gone'}\nhttp://127.0.0.1:9\n")  # nothing listens on 9
    assert server_url(args()) == DEFAULT_URL
    # A killed `up` whose port another program took since: its process is gone, so it is not running.
    taken = server(state, listening, tmp_path / "killed", 3_000_000)
    port = taken.rsplit(":", 1)[1]
    no_such_pid = 2 ** 22 + 1  # above the largest pid Linux hands out (pid_max is at most 2**22)
    (state / f"server-{port}").write_text(f"{tmp_path / 'killed'}\n{taken}\n{no_such_pid}\n")
    assert server_url(args()) == DEFAULT_URL
    assert unreachable(args(url=DEFAULT_URL), ConnectionRefusedError("refused")) == 2
    err = capsys.readouterr().err
    assert "No `secondbrain up` is running on this machine: start it with `secondbrain up`" in err
    assert "secondbrain service install" in err
    # A named data directory no server keeps: that server or none; the error lists what does run.
    url = server(state, listening, tmp_path / "home-data", 1_000_000)
    named = args(data_dir=str(tmp_path / "elsewhere"))
    assert server_url(named) == DEFAULT_URL
    unreachable(args(url=DEFAULT_URL, data_dir=str(tmp_path / "elsewhere")), ConnectionRefusedError("refused"))
    err = capsys.readouterr().err
    assert f"none of them keeps {tmp_path / 'elsewhere'}" in err and url in err
    assert "choose one with --url URL, --data-dir DIR or SB_URL=URL" in err
