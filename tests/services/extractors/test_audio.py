"""The audio extractor on generated recordings: what was said, when, and what is refused.

Speech is synthesized with espeak-ng from a known script, with known silences between the
sentences, then encoded into every supported format (see devtools/gen_audio.py).  The real Whisper
tiny.en model transcribes it (loaded once for the module).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from devtools import gen_audio as gen
from secondbrain.errors import PermanentError
from secondbrain.ports import Transcriber, Transcript
from secondbrain.transcribe import FasterWhisperTranscriber
from services.chunker.logic import speech_windows
from services.extractors.audio import (
    AudioExtractor,
    _counted_duration,
    human_duration,
    probe_audio,
    stated_times,
    tag_time,
)
from services.extractors.document import Block, Extracted, ExtractionContext, assemble

FORMATS = ("wav", "mp3", "m4a", "ogg-opus", "ogg-vorbis", "webm", "flac")
CODECS = {"wav": {"pcm_s16le"}, "mp3": {"mp3", "mp3float"}, "m4a": {"aac"}, "ogg-opus": {"opus", "libopus"},
          "ogg-vorbis": {"vorbis", "libvorbis"}, "webm": {"opus", "libopus"}, "flac": {"flac"}}


def letters(text: str) -> str:
    """Lower-case letters only, so "light housekeeper" still contains "lighthouse"."""
    return re.sub(r"[^a-z]", "", text.lower())


def heard(sentence: gen.Sentence, text: str) -> list[str]:
    """The sentence's keywords found in ``text``."""
    flat = letters(text)
    return [k for k in sentence.keywords if letters(k) in flat]


def words_of(block: Block) -> list[tuple[str, float, float]]:
    return [(w, float(s), float(e)) for w, s, e in json.loads(block.attributes["words"])]


class SpyTranscriber:
    """Counts calls, delegating to a real transcriber."""

    def __init__(self, inner: Transcriber) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        self.calls += 1
        return self.inner.transcribe(audio_path, language=language)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert gen.tools_available(), "espeak-ng and sox are required to generate the test recordings"
    return tmp_path_factory.mktemp("audio")


@pytest.fixture(scope="module")
def transcriber() -> FasterWhisperTranscriber:
    return FasterWhisperTranscriber()


@pytest.fixture(scope="module")
def recording(workdir: Path) -> gen.Recording:
    return gen.build_recording(workdir, gen.SCRIPT, gap_s=2.5)


@pytest.fixture(scope="module")
def files(recording: gen.Recording, workdir: Path) -> dict[str, Path]:
    return gen.make_formats(recording, workdir)


@pytest.fixture(scope="module")
def extracted(files: dict[str, Path], transcriber: FasterWhisperTranscriber) -> dict[str, Extracted]:
    extractor = AudioExtractor(transcriber)
    return {label: extractor.extract(path.read_bytes(), ExtractionContext("application/octet-stream",
                                                                         filename=path.name))
            for label, path in files.items()}


@pytest.fixture()
def spy(transcriber: FasterWhisperTranscriber) -> Iterator[SpyTranscriber]:
    yield SpyTranscriber(transcriber)


# --------------------------------------------------------------------------- what was said, and when


@pytest.mark.parametrize("label", FORMATS)
def test_every_format_decodes_and_every_sentence_is_heard(label: str, extracted: dict[str, Extracted],
                                                          recording: gen.Recording) -> None:
    doc = extracted[label]
    assert doc.modality == "audio"
    assert all(b.kind == "speech" for b in doc.blocks)
    full = " ".join(b.text for b in doc.blocks)
    for sentence in recording.sentences:
        found = heard(sentence, full)
        assert len(found) >= 2, f"{label}: only {found} of {sentence.keywords} in {full!r}"
    assert doc.metadata["codec"] in CODECS[label]
    assert float(doc.metadata["duration_s"]) == pytest.approx(recording.duration_s, abs=0.15)
    assert doc.metadata["language"] == "en" and doc.language == "en"
    assert doc.metadata["transcriber"] == "faster-whisper:tiny.en:int8"
    assert int(doc.metadata["channels"]) == 1 and int(doc.metadata["sample_rate"]) in (22_050, 48_000)


@pytest.mark.parametrize("label", FORMATS)
def test_sentence_two_starts_after_the_silence(label: str, extracted: dict[str, Extracted],
                                               recording: gen.Recording) -> None:
    doc = extracted[label]
    second = recording.sentences[1]
    block = next(b for b in doc.blocks if len(heard(second, b.text)) >= 2)
    assert block.t_start is not None and block.t_end is not None
    # the recogniser's start may lead the voice by the VAD padding; it must still lie in the gap's second half
    assert block.t_start == pytest.approx(recording.starts[1], abs=0.6)
    assert block.t_start > recording.ends[0] + recording.gap_s / 2
    assert block.t_end == pytest.approx(recording.ends[1], abs=0.8)
    first = next(b for b in doc.blocks if len(heard(recording.sentences[0], b.text)) >= 2)
    assert first.t_end is not None and first.t_end < recording.starts[1]
    duration = float(doc.metadata["duration_s"])
    assert all(b.t_end is not None and b.t_end <= duration for b in doc.blocks)


@pytest.mark.parametrize("label", FORMATS)
def test_word_timestamps_are_monotonic_and_inside_their_segment(label: str,
                                                                extracted: dict[str, Extracted]) -> None:
    last = 0.0
    for block in extracted[label].blocks:
        words = words_of(block)
        assert words, block
        assert letters("".join(w for w, _, _ in words)) == letters(block.text)
        assert block.t_start is not None and block.t_end is not None
        for _, start, end in words:
            assert start >= last - 1e-9 and start <= end
            assert block.t_start - 0.01 <= start and end <= block.t_end + 0.01
            assert round(start, 2) == start and round(end, 2) == end  # compact: two decimals
            last = start


def test_blocks_assemble_into_a_document_with_time_spans(extracted: dict[str, Extracted]) -> None:
    segments, full = assemble(extracted["m4a"].blocks)
    assert [s.t_start for s in segments] == sorted(s.t_start for s in segments if s.t_start is not None)
    for seg in segments:
        assert full[seg.char_start:seg.char_end] == seg.text
        assert "words" in seg.attributes


# --------------------------------------------------------------------------- tags


def test_m4a_creation_time_gives_the_recording_start_and_title(extracted: dict[str, Extracted]) -> None:
    doc = extracted["m4a"]
    assert doc.title == "Harbor meeting"
    when = datetime(2024, 3, 5, 14, 30, tzinfo=UTC)
    assert doc.stated_time == when and doc.stated_time_source == "file_metadata"
    assert doc.recording_start == when
    assert doc.metadata["recording_start"] == "2024-03-05T14:30:00+00:00"
    assert doc.metadata["artist"] == "Test Speaker"


def test_id3_date_without_time_is_stated_but_places_no_second_on_the_clock(
        extracted: dict[str, Extracted]) -> None:
    doc = extracted["mp3"]
    assert doc.title == "Grandmother's festival"
    assert doc.stated_time == datetime(2023, 6, 1, tzinfo=UTC)
    assert doc.recording_start is None and "recording_start" not in doc.metadata
    assert doc.metadata["album"] == "Family"


def test_vorbis_date_with_time_gives_the_recording_start(extracted: dict[str, Extracted]) -> None:
    doc = extracted["ogg-vorbis"]
    assert doc.title == "Budget call"
    assert doc.recording_start == datetime(2022, 11, 20, 9, 15, tzinfo=UTC) == doc.stated_time


def test_untagged_files_state_nothing(extracted: dict[str, Extracted]) -> None:
    doc = extracted["wav"]
    assert doc.title is None and doc.stated_time is None and doc.recording_start is None


def test_tag_dates() -> None:
    assert tag_time("2019") == (None, False)  # a year alone is too coarse to be a stated time
    assert tag_time("1970-01-01T00:00:00Z") == (None, False)  # muxer placeholder
    assert tag_time("2023-06-01") == (datetime(2023, 6, 1, tzinfo=UTC), False)
    assert tag_time("2023-06-01 08:05:09") == (datetime(2023, 6, 1, 8, 5, 9, tzinfo=UTC), True)
    assert tag_time("not a date") == (None, False)
    stated, start = stated_times({"date": "2021-02-03", "creation_time": "2021-02-03T10:00:00Z"})
    assert start == datetime(2021, 2, 3, 10, tzinfo=UTC) == stated


# --------------------------------------------------------------------------- refusals


def test_over_the_duration_limit_is_refused_before_transcription(workdir: Path, spy: SpyTranscriber) -> None:
    tone = gen.tone(workdir / "tone.wav", 10)
    extractor = AudioExtractor(spy, max_duration_s=5)
    with pytest.raises(PermanentError) as err:
        extractor.extract(tone.read_bytes(), ExtractionContext("audio/wav", filename="tone.wav"))
    assert spy.calls == 0  # refused before transcription: no transcriber call (not a clock reading)
    assert err.value.reason.startswith("the recording is 10 s long, over the limit of 5 s (SB_AUDIO_MAX_DURATION_S)")
    assert "split it" in err.value.reason


def test_durations_read_like_a_person_writes_them() -> None:
    assert human_duration(5 * 3600 + 12 * 60 + 3) == "5 h 12 min"
    assert human_duration(4 * 3600) == "4 h"
    assert human_duration(200) == "3 min 20 s"
    assert human_duration(9.6) == "10 s"


def test_silence_is_refused_as_no_speech(workdir: Path, transcriber: FasterWhisperTranscriber) -> None:
    quiet = gen.silence(workdir / "quiet.wav", 6)
    with pytest.raises(PermanentError, match=r"^no speech found in the recording \(6 s\)$"):
        AudioExtractor(transcriber).extract(quiet.read_bytes(), ExtractionContext("audio/wav", filename="quiet.wav"))


@pytest.mark.parametrize("case", ["random-bytes.mp3", "text.wav", "header-only.wav", "empty.m4a",
                                  "truncated.m4a"])
def test_files_that_are_not_decodable_audio_are_refused(case: str, workdir: Path, files: dict[str, Path],
                                                        spy: SpyTranscriber, tmp_path: Path) -> None:
    if case == "random-bytes.mp3":
        raw = gen.corrupt_file(workdir / case).read_bytes()
    elif case == "text.wav":
        raw = gen.text_file(workdir / case).read_bytes()
    elif case == "header-only.wav":
        raw = files["wav"].read_bytes()[:44]
    elif case == "empty.m4a":
        raw = b""
    else:
        raw = files["m4a"].read_bytes()[:5000]  # the moov index sits at the end: nothing is playable
    scratch = tmp_path / "scratch"
    extractor = AudioExtractor(spy, scratch_dir=str(scratch))
    with pytest.raises(PermanentError) as err:
        extractor.extract(raw, ExtractionContext("application/octet-stream", filename=case))
    assert not isinstance(err.value, OSError)
    assert err.value.reason.startswith(("the file is not audio that can be decoded: ", "the file is empty"))
    assert spy.calls == 0
    assert not scratch.exists() or os.listdir(scratch) == []  # the scratch copy is removed


def test_scratch_copy_is_removed_after_success(files: dict[str, Path], transcriber: FasterWhisperTranscriber,
                                               tmp_path: Path) -> None:
    extractor = AudioExtractor(transcriber, scratch_dir=str(tmp_path))
    doc = extractor.extract(files["flac"].read_bytes(), ExtractionContext("audio/flac"))  # no filename: by type
    assert doc.blocks
    assert os.listdir(tmp_path) == []


def test_duration_counted_from_packets_matches_the_header(files: dict[str, Path]) -> None:
    # recorders (browser MediaRecorder webm) often write no duration: the counted one must agree
    for label in ("webm", "ogg-opus", "mp3", "m4a"):
        header = probe_audio(str(files[label])).duration_s
        assert _counted_duration(str(files[label])) == pytest.approx(header, abs=0.1), label


# --------------------------------------------------------------------------- chunk windows


def _check_windows(spans: list[tuple[float, float]], windows: list[list[int]], min_s: float, max_s: float) -> None:
    assert [i for w in windows for i in w] == list(range(len(spans)))  # all, once, in order
    for n, w in enumerate(windows):
        assert w, "no empty window"
        length = max(spans[i][1] for i in w) - spans[w[0]][0]
        if len(w) > 1:
            assert length <= max_s + 1e-9
        if n < len(windows) - 1:
            nxt = windows[n + 1][0]
            with_next = max(length + spans[w[0]][0], spans[nxt][1]) - spans[w[0]][0]
            assert length >= min_s or with_next > max_s, (n, w, length)


def test_speech_windows_properties_on_random_talks() -> None:
    rng = random.Random(42)
    for _ in range(300):
        spans: list[tuple[float, float]] = []
        t = rng.uniform(0, 3)
        for _ in range(rng.randint(0, 80)):
            length = rng.choice([rng.uniform(0.5, 12), rng.uniform(0.5, 30), rng.uniform(60, 140)]) \
                if rng.random() < 0.05 else rng.uniform(0.5, 12)
            spans.append((t, t + length))
            t += length + rng.choice([0.0, rng.uniform(0, 0.6), rng.uniform(0.5, 4)])
        windows = speech_windows(spans, 30, 90)
        _check_windows(spans, windows, 30, 90)


def test_speech_windows_cut_at_the_long_pause() -> None:
    # 5-s segments with short gaps, except a 3-s pause after the segment ending at ~42 s
    spans: list[tuple[float, float]] = []
    t = 0.0
    for i in range(20):
        spans.append((t, t + 5))
        t += 5 + (3.0 if i == 7 else 0.3)
    windows = speech_windows(spans, 30, 90)
    assert windows[0] == list(range(8))
    _check_windows(spans, windows, 30, 90)


def test_a_segment_longer_than_the_maximum_is_its_own_window() -> None:
    spans = [(0.0, 10.0), (10.5, 20.0), (21.0, 140.0), (141.0, 150.0)]
    windows = speech_windows(spans, 30, 90)
    assert [2] in windows
    _check_windows(spans, windows, 30, 90)


# --------------------------------------------------------------------------- a longer talk


def test_a_minute_and_a_half_talk_is_transcribed(workdir: Path, transcriber: FasterWhisperTranscriber) -> None:
    # correctness only: how fast it goes is a bench figure (bench/transcribers.py), not a test
    talk = gen.build_recording(workdir / "talk", gen.LONG_SCRIPT, gap_s=1.2, name="talk")
    assert 70 < talk.duration_s < 120
    doc = AudioExtractor(transcriber).extract(talk.path.read_bytes(), ExtractionContext("audio/wav"))
    full = " ".join(b.text for b in doc.blocks)
    missed = [s.text for s in talk.sentences if len(heard(s, full)) < 2]
    assert not missed, missed
    spans = [(b.t_start or 0.0, b.t_end or 0.0) for b in doc.blocks]
    windows = speech_windows(spans, 20, 40)
    assert len(windows) >= 2
    _check_windows(spans, windows, 20, 40)
