"""One behaviour contract for every Transcriber implementation.

Parametrised over faster-whisper (bundled tiny.en) and WhisperX, or only the one named by
``SB_TRANSCRIBER``.  WhisperX needs the ``whisperx`` extra (torch 2.8 with torchaudio), which
``make whisperx`` installs into .venv-whisperx and runs this suite in; in the main environment
its cases are skipped with that reason, and a test checks that asking for it fails at
start-up with a sentence that says what to do instead.  The in-memory twin
(:class:`HashTranscriber`) runs the same suite in the fast lane, all but the checks that words were heard.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import gen_audio as gen
from secondbrain.errors import PermanentError
from secondbrain.ports import Transcriber
from secondbrain.stores.memory import HashTranscriber
from secondbrain.transcribe import TRANSCRIBER_KINDS, load_transcriber


def letters(text: str) -> str:
    """Lower-case letters only, so "light housekeeper" still contains "lighthouse"."""
    return re.sub(r"[^a-z]", "", text.lower())


WHISPERX_INSTALLED = importlib.util.find_spec("whisperx") is not None
NOT_INSTALLED = "the whisperx extra is not installed in this environment (make whisperx installs it and runs this)"
CHOSEN = os.environ.get("SB_TRANSCRIBER", "")
KINDS = [
    pytest.param(k, marks=[pytest.mark.whisperx, pytest.mark.skipif(not WHISPERX_INSTALLED, reason=NOT_INSTALLED)])
    if k == "whisperx" else k
    for k in TRANSCRIBER_KINDS if CHOSEN not in TRANSCRIBER_KINDS or k == CHOSEN
]
if CHOSEN not in TRANSCRIBER_KINDS:
    KINDS.append(pytest.param("hash", marks=pytest.mark.fast))


@pytest.fixture(scope="module", params=KINDS)
def transcriber(request: pytest.FixtureRequest) -> Iterator[Transcriber]:
    yield HashTranscriber() if request.param == "hash" else load_transcriber(request.param, None)


def hears(transcriber: Transcriber) -> bool:
    """Whether the words said are checked: recognising speech is what only a model does (the twin finds
    the stretches of sound and makes up their words, so it meets every other promise here)."""
    return not isinstance(transcriber, HashTranscriber)


def test_an_absent_whisperx_is_a_clear_start_up_error() -> None:
    if WHISPERX_INSTALLED:
        assert isinstance(load_transcriber("whisperx", None), Transcriber)
        return
    with pytest.raises(RuntimeError, match=r"whisperx is not installed or cannot load here.*make whisperx"):
        load_transcriber("whisperx", None)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert gen.tools_available(), "espeak-ng and sox are required to generate the test recordings"
    return tmp_path_factory.mktemp("transcriber")


@pytest.fixture(scope="module")
def speech(workdir: Path) -> gen.Recording:
    return gen.build_recording(workdir, gen.SCRIPT[:2], gap_s=2.0, name="contract")


def test_is_a_transcriber_with_a_stable_model_id(transcriber: Transcriber) -> None:
    assert isinstance(transcriber, Transcriber)
    assert transcriber.model_id and transcriber.model_id == transcriber.model_id


def test_transcript_segments_words_language_and_duration(transcriber: Transcriber, speech: gen.Recording) -> None:
    result = transcriber.transcribe(str(speech.path))
    assert result.model_id == transcriber.model_id
    assert result.language
    assert result.language_probability is None or 0.0 <= result.language_probability <= 1.0
    assert result.duration_s == pytest.approx(speech.duration_s, abs=0.05)
    assert result.segments
    previous = 0.0
    for seg in result.segments:
        assert seg.text.strip() == seg.text and seg.text
        assert previous - 1e-6 <= seg.start <= seg.end <= result.duration_s + 0.05  # ordered, inside the file
        previous = seg.start
        last_word = seg.start
        for word in seg.words:
            assert word.text
            assert seg.start - 0.02 <= word.start <= word.end <= seg.end + 0.02  # words inside their segment
            assert word.start >= last_word - 1e-6  # and in order
            last_word = word.start
    if not hears(transcriber):
        return
    text = letters(" ".join(s.text for s in result.segments))
    for sentence in speech.sentences:  # tiny.en mishears a word now and then: two of three keywords
        assert sum(letters(k) in text for k in sentence.keywords) >= 2, (sentence.keywords, text)
    second = next(s for s in result.segments if "grandmother" in s.text.lower())
    if second.words:  # word-timed segments are cut at the sentence
        assert second.start == pytest.approx(speech.starts[1], abs=0.6)
    else:  # whisperx without an alignment model: a VAD chunk that holds the sentence
        assert second.start <= speech.starts[1] + 0.6 and second.end >= speech.ends[1] - 0.6


def test_short_memos_are_heard(transcriber: Transcriber, workdir: Path) -> None:
    # whisperx's VAD crops to the speech: tiny.en mishears 3-s memos under some settings (bench/transcribers.py)
    for i, memo in enumerate(gen.MEMOS):
        rec = gen.build_recording(workdir / f"memo{i}", [memo], name="memo")
        result = transcriber.transcribe(str(rec.path))
        assert result.segments
        assert all(0.0 <= s.start <= s.end <= result.duration_s for s in result.segments)
        if hears(transcriber):
            text = letters(" ".join(s.text for s in result.segments))
            assert sum(letters(k) in text for k in memo.keywords) >= 2, (memo.keywords, text)


def test_the_same_recording_gives_the_same_words(transcriber: Transcriber, workdir: Path) -> None:
    # the memo tiny.en finds hardest: sampling fallbacks once made it three different texts in six runs
    rec = gen.build_recording(workdir / "again", [gen.MEMOS[0]], name="memo")
    heard = {tuple(s.text for s in transcriber.transcribe(str(rec.path)).segments) for _ in range(4)}
    assert len(heard) == 1, heard


def test_a_minute_and_a_half_talk(transcriber: Transcriber, workdir: Path) -> None:
    talk = gen.build_recording(workdir / "talk", gen.LONG_SCRIPT, gap_s=1.2, name="talk")
    result = transcriber.transcribe(str(talk.path))
    assert result.duration_s == pytest.approx(talk.duration_s, abs=0.05)
    starts = [s.start for s in result.segments]
    assert starts == sorted(starts) and all(s.end <= result.duration_s + 0.05 for s in result.segments)
    assert result.segments[-1].end >= talk.ends[-1] - 1.0  # the end of the talk is not lost
    if not hears(transcriber):
        return
    text = letters(" ".join(s.text for s in result.segments))
    missed = [s.text for s in talk.sentences if sum(letters(k) in text for k in s.keywords) < 2]
    assert not missed, missed


def test_silence_gives_no_segments(transcriber: Transcriber, workdir: Path) -> None:
    quiet = gen.silence(workdir / "quiet.wav", 5)
    result = transcriber.transcribe(str(quiet))
    assert result.segments == ()
    assert result.duration_s == pytest.approx(5.0, abs=0.05)


@pytest.mark.parametrize("name", ["random.mp3", "text.wav"])
def test_undecodable_input_raises_permanent_error(transcriber: Transcriber, workdir: Path, name: str) -> None:
    path = gen.corrupt_file(workdir / name) if name.endswith(".mp3") else gen.text_file(workdir / name)
    with pytest.raises(PermanentError, match="not audio that can be decoded"):
        transcriber.transcribe(str(path))
