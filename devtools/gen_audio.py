"""Generate the audio test inputs: synthetic speech with known content and known timing.

Speech comes from ``espeak-ng``; sentences are joined with ``sox`` around stretches of
silence, so the start of every sentence in the recording is known.  The WAV master is then
encoded with PyAV into mp3 (libmp3lame), m4a (AAC), ogg (Opus), webm (Opus) and flac; ogg
Vorbis comes from sox, because FFmpeg's built-in Vorbis encoder is experimental.  Tags
(title, dates) are written into the mp3, m4a and ogg Vorbis files.  Also: silence, a pure
tone, random bytes named ``.mp3`` and a text file named ``.wav``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import wave
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import av

RATE = 22_050  # espeak-ng's native output rate
# no dither, fixed random seed: silence is digital zero and every run writes the same bytes
SOX = ("sox", "-D", "-R")


@dataclass(frozen=True)
class Sentence:
    """A sentence of the script and a few distinctive words tiny.en should hear in it."""

    text: str
    keywords: tuple[str, ...]


SCRIPT: tuple[Sentence, ...] = (
    Sentence("The lighthouse keeper counted purple boats in the harbor.", ("lighthouse", "purple", "harbor")),
    Sentence("My grandmother baked a chocolate cake for the volcano festival.",
             ("grandmother", "chocolate", "volcano")),
    Sentence("Please send the quarterly budget report to the finance department.",
             ("quarterly", "budget", "finance")),
    Sentence("The orchestra rehearsed a beautiful symphony in the old cathedral.",
             ("orchestra", "symphony", "cathedral")),
)

# A longer talk (about 1.5 minutes) for the throughput measurement and the window helper.
LONG_SCRIPT: tuple[Sentence, ...] = (*SCRIPT,
    Sentence("Yesterday the engineers repaired the broken bridge near the river.", ("engineers", "bridge", "river")),
    Sentence("Our garden produced tomatoes, cucumbers and sweet peppers this summer.",
             ("garden", "tomatoes", "peppers")),
    Sentence("The museum opened a new exhibition about ancient Egyptian pottery.", ("museum", "exhibition", "pottery")),
    Sentence("A small dog chased the postman all the way down the street.", ("dog", "postman", "street")),
    Sentence("The train to the mountains leaves every morning at nine o'clock.", ("train", "mountains", "morning")),
    Sentence("Remember to water the plants before you leave for the airport.", ("water", "plants", "airport")),
    Sentence("The students wrote an essay about climate change and renewable energy.",
             ("students", "essay", "energy")),
    Sentence("The doctor recommended more exercise and less sugar in my diet.", ("doctor", "exercise", "sugar")),
    Sentence("We watched the sunset from the balcony of the hotel in Lisbon.", ("sunset", "balcony", "hotel")),
    Sentence("The library will be closed on Monday for the national holiday.", ("library", "monday", "holiday")),
    Sentence("My brother is learning to play the violin and the piano.", ("brother", "violin", "piano")),
    Sentence("The committee approved the plan to build a new swimming pool.", ("committee", "swimming", "pool")),
)

# Short voice memos (about 3 s each): a VAD that crops tightly around speech makes Whisper mishear them.
MEMOS: tuple[Sentence, ...] = (
    Sentence("The plumber arrives at nine on Monday.", ("plumber", "arrive", "monday")),  # "arrived" is close enough
    Sentence("Buy milk, eggs and bread on the way home.", ("milk", "eggs", "bread")),
    Sentence("Call the dentist to move my appointment.", ("dentist", "move", "appointment")),
    Sentence("Remember to renew the car insurance next week.", ("renew", "insurance", "week")),
)


@dataclass(frozen=True)
class Recording:
    """A generated recording: where each sentence starts and ends, in seconds."""

    path: Path
    sentences: tuple[Sentence, ...]
    starts: tuple[float, ...]
    ends: tuple[float, ...]
    duration_s: float
    gap_s: float


def tools_available() -> bool:
    """Whether espeak-ng and sox are on PATH."""
    return shutil.which("espeak-ng") is not None and shutil.which("sox") is not None


def wav_duration(path: Path) -> float:
    """Length of a WAV file in seconds."""
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def espeak(text: str, out: Path, *, speed: int = 150, voice: str = "en-us") -> Path:
    """Synthesize ``text`` to a WAV file (22.05 kHz mono)."""
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(out), text], check=True,
                   capture_output=True)
    return out


def silence(out: Path, seconds: float, *, rate: int = RATE) -> Path:
    """A WAV file of digital silence."""
    subprocess.run([*SOX, "-n", "-r", str(rate), "-c", "1", "-b", "16", str(out), "trim", "0", str(seconds)],
                   check=True, capture_output=True)
    return out


def tone(out: Path, seconds: float, *, freq: int = 440, rate: int = 16_000) -> Path:
    """A WAV file holding a sine tone."""
    subprocess.run([*SOX, "-n", "-r", str(rate), "-c", "1", "-b", "16", str(out), "synth", str(seconds),
                    "sine", str(freq), "vol", "0.3"], check=True, capture_output=True)
    return out


def build_recording(workdir: Path, sentences: Sequence[Sentence], *, gap_s: float = 2.5, lead_s: float = 0.5,
                    speed: int = 150, name: str = "speech") -> Recording:
    """Sentences separated by ``gap_s`` of silence (``lead_s`` before the first), as one WAV."""
    workdir.mkdir(parents=True, exist_ok=True)
    lead = silence(workdir / f"{name}-lead.wav", lead_s)
    gap = silence(workdir / f"{name}-gap.wav", gap_s)
    parts: list[Path] = [lead]
    starts: list[float] = []
    ends: list[float] = []
    t = lead_s
    for idx, sentence in enumerate(sentences):
        wav = espeak(sentence.text, workdir / f"{name}-{idx}.wav", speed=speed)
        if idx:
            parts.append(gap)
            t += gap_s
        parts.append(wav)
        starts.append(t)
        t += wav_duration(wav)
        ends.append(t)
    out = workdir / f"{name}.wav"
    subprocess.run([*SOX, *map(str, parts), str(out)], check=True, capture_output=True)
    return Recording(out, tuple(sentences), tuple(starts), tuple(ends), wav_duration(out), gap_s)


def encode(src: Path, dst: Path, codec: str, *, rate: int | None = None, container_format: str | None = None,
           bit_rate: int | None = None, tags: Mapping[str, str] | None = None) -> Path:
    """Re-encode ``src`` with PyAV into ``dst`` (mono), writing container ``tags``."""
    with av.open(str(src)) as inp, av.open(str(dst), "w", format=container_format) as out:
        in_stream = inp.streams.audio[0]
        out_rate = rate or in_stream.codec_context.sample_rate
        stream = out.add_stream(codec, rate=out_rate)
        assert isinstance(stream, av.audio.stream.AudioStream)
        stream.codec_context.layout = "mono"
        if bit_rate:
            stream.codec_context.bit_rate = bit_rate
        formats = stream.codec_context.codec.audio_formats
        assert formats, f"{codec} states no sample formats"
        sample_fmt = formats[0].name
        stream.codec_context.format = sample_fmt
        for key, value in (tags or {}).items():
            out.metadata[key] = value
        resampler = av.AudioResampler(format=sample_fmt, layout="mono", rate=out_rate)
        for frame in inp.decode(in_stream):
            frame.pts = None
            for rf in resampler.resample(frame):
                out.mux(stream.encode(rf))
        for rf in resampler.resample(None):
            out.mux(stream.encode(rf))
        out.mux(stream.encode(None))
    return dst


def sox_vorbis(src: Path, dst: Path, *, comments: Mapping[str, str] | None = None) -> Path:
    """Ogg Vorbis via sox (with Vorbis comments such as TITLE and DATE)."""
    args = [*SOX, str(src)]
    for key, value in (comments or {}).items():
        args += ["--add-comment", f"{key}={value}"]
    subprocess.run([*args, "-C", "3", str(dst)], check=True, capture_output=True)
    return dst


# Tags written into the generated files, and what the extractor should read back.
M4A_TAGS = {"title": "Harbor meeting", "artist": "Test Speaker", "creation_time": "2024-03-05T14:30:00.000000Z"}
MP3_TAGS = {"title": "Grandmother's festival", "album": "Family", "date": "2023-06-01"}
VORBIS_TAGS = {"TITLE": "Budget call", "DATE": "2022-11-20T09:15:00"}


def make_formats(rec: Recording, outdir: Path) -> dict[str, Path]:
    """The recording in every supported format, keyed by a short label."""
    src = rec.path
    return {
        "wav": src,
        "mp3": encode(src, outdir / "speech.mp3", "libmp3lame", bit_rate=64_000, tags=MP3_TAGS),
        "m4a": encode(src, outdir / "speech.m4a", "aac", container_format="mp4", bit_rate=64_000, tags=M4A_TAGS),
        "ogg-opus": encode(src, outdir / "speech.opus.ogg", "libopus", rate=48_000, container_format="ogg",
                           bit_rate=32_000),
        "ogg-vorbis": sox_vorbis(src, outdir / "speech.ogg", comments=VORBIS_TAGS),
        "webm": encode(src, outdir / "speech.webm", "libopus", rate=48_000, container_format="webm",
                       bit_rate=32_000),
        "flac": encode(src, outdir / "speech.flac", "flac"),
    }


def corrupt_file(out: Path, size: int = 48_000, seed: int = 7) -> Path:
    """Random bytes (named like audio by the caller)."""
    out.write_bytes(random.Random(seed).randbytes(size))
    return out


def text_file(out: Path) -> Path:
    """A plain text file (named like audio by the caller)."""
    out.write_text("This is not a recording.\nIt is a text file with a .wav name.\n" * 40, encoding="utf-8")
    return out
