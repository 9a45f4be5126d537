"""Audio recordings -> timed speech blocks (mp3, m4a/mp4, wav, ogg vorbis/opus, webm, flac).

The bytes are written to a scratch file and probed with PyAV *before* any transcription:
a file that is not decodable audio, or that is longer than the configured limit, is refused
in milliseconds instead of after minutes of speech recognition.  Each speech segment becomes
one ``speech`` block with its time span in seconds and its words' time spans, so a chunk and
a citation can point at a second of the recording.  Tags give the title and, when the file
states when it was recorded, the wall-clock time of second 0.

The chunker groups the speech segments into windows of
about 30-90 s, cut at segment boundaries and preferably at a pause.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from secondbrain.errors import PermanentError
from secondbrain.ports import SpeechSegment, Transcriber, Transcript
from services.extractors import dates
from services.extractors.document import Block, Extracted, ExtractionContext

DEFAULT_MAX_DURATION_S = 4 * 3600.0
AUDIO_TYPES = {
    "audio/mpeg": ".mp3", "audio/mp3": ".mp3", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a",
    "audio/m4a": ".m4a", "audio/aac": ".aac", "audio/wav": ".wav", "audio/x-wav": ".wav",
    "audio/wave": ".wav", "audio/ogg": ".ogg", "audio/opus": ".opus", "audio/webm": ".webm",
    "audio/flac": ".flac", "audio/x-flac": ".flac", "video/mp4": ".mp4", "video/webm": ".webm",
}
_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,5}$")
# Tags that may say when the recording was made, most specific first: mp4 ``creation_time``,
# ID3 TDRC / Vorbis DATE / mp4 ©day (all surface as ``date`` in FFmpeg).
_TIME_TAGS = ("creation_time", "date", "tdrc", "recording_time", "tdor", "year")
_PLACEHOLDER_EPOCHS = {datetime(1904, 1, 1, tzinfo=UTC), datetime(1970, 1, 1, tzinfo=UTC)}


# --------------------------------------------------------------------------- probing


@dataclass(frozen=True, slots=True)
class AudioProbe:
    """What PyAV says about a recording before it is transcribed."""

    duration_s: float
    duration_source: str  # container | stream | counted
    codec: str
    sample_rate: int
    channels: int
    tags: dict[str, str]


def _not_audio(why: str) -> PermanentError:
    return PermanentError(f"the file is not audio that can be decoded: {why}")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if "] " in text:  # "[Errno 1094995529] Invalid data found when processing input: '/tmp/...'"
        text = text.split("] ", 1)[1]
    return text.split(": '", 1)[0].rstrip(".")


def probe_audio(path: str) -> AudioProbe:
    """Probe ``path`` with PyAV: duration, codec, sample rate, channels and tags.

    The first audio frames are decoded to prove the stream is decodable.  The duration comes
    from the container, else the stream header, else by counting the demuxed packets (cheap:
    no decoding).  Raises ``PermanentError`` for anything that is not decodable audio.
    """
    import av

    try:
        container = av.open(path, mode="r", metadata_errors="ignore")
    except Exception as exc:  # FFmpegError subclasses include OSError ones: never let them escape
        raise _not_audio(_reason(exc)) from exc
    with container:
        if not container.streams.audio:
            raise _not_audio("it has no audio stream")
        stream = container.streams.audio[0]
        ctx = stream.codec_context
        tags = {str(k).lower(): str(v).strip() for k, v in container.metadata.items() if str(v).strip()}
        for k, v in stream.metadata.items():  # Ogg keeps its Vorbis comments on the stream
            tags.setdefault(str(k).lower(), str(v).strip())
        duration, source = _header_duration(container, stream)
        first_rate = _first_frame_rate(container, stream)
        sample_rate = int(ctx.sample_rate or first_rate)
        channels = int(ctx.channels or 0)
        codec = str(ctx.name)
    if duration is None:
        duration, source = _counted_duration(path), "counted"
    return AudioProbe(duration, source, codec, sample_rate, channels, tags)


def _header_duration(container: Any, stream: Any) -> tuple[float | None, str]:
    """Duration stated by the container or the stream header, if any."""
    import av

    if container.duration is not None and container.duration > 0:
        return container.duration / av.time_base, "container"
    if stream.duration and stream.time_base is not None and stream.duration > 0:
        return float(stream.duration * stream.time_base), "stream"
    return None, ""


def _first_frame_rate(container: Any, stream: Any, max_packets: int = 400) -> int:
    """Decode until the first audio frame with samples; its sample rate.  Proves decodability."""
    last: BaseException | None = None
    try:
        for n, packet in enumerate(container.demux(stream)):
            if n >= max_packets:
                break
            try:
                for frame in packet.decode():
                    if frame.samples:
                        return int(frame.sample_rate)
            except Exception as exc:  # a few broken packets at the start are tolerated
                last = exc
    except Exception as exc:  # the demuxer itself gave up
        raise _not_audio(_reason(exc)) from exc
    if last is not None:
        raise _not_audio(_reason(last))
    raise _not_audio("its audio stream holds no samples")


def _counted_duration(path: str) -> float:
    """Duration from the demuxed packets' timestamps (for streams whose header states none).

    Falls back to decoding and counting samples when the packets carry no timestamps.
    """
    import av

    try:
        with av.open(path, mode="r", metadata_errors="ignore") as container:
            stream = container.streams.audio[0]
            tb = stream.time_base
            first: int | None = None
            last_end: int | None = None
            for packet in container.demux(stream):
                if packet.pts is None:
                    continue
                first = packet.pts if first is None else min(first, packet.pts)
                end = packet.pts + (packet.duration or 0)
                last_end = end if last_end is None else max(last_end, end)
            if tb is not None and first is not None and last_end is not None and last_end > first:
                return float((last_end - first) * tb)
        with av.open(path, mode="r", metadata_errors="ignore") as container:
            samples = 0.0
            for frame in container.decode(audio=0):
                samples += frame.samples / frame.sample_rate
            return samples
    except Exception as exc:
        raise _not_audio(_reason(exc)) from exc


# --------------------------------------------------------------------------- tags


def tag_time(value: str) -> tuple[datetime | None, bool]:
    """Parse a tag's date; returns (datetime in UTC or naive-as-UTC, has a time of day).

    Year-only dates (``2019``) are too coarse to state a time and give ``None``; so do the
    placeholder epochs muxers write when no date was set.
    """
    text = value.strip()
    dt = dates.iso_datetime(text)  # ID3/Vorbis dates carry no zone: read as UTC
    if dt is None:
        text = text[:10]  # "2023-06-01T25:00" still states its day
        dt = dates.iso_datetime(text)
    if dt is None or dt in _PLACEHOLDER_EPOCHS or dt > datetime.now(UTC) + timedelta(days=1):
        return None, False
    return dt, dates.has_time_of_day(text)


def stated_times(tags: Mapping[str, str]) -> tuple[datetime | None, datetime | None]:
    """(stated_time, recording_start) from a recording's tags.

    ``stated_time`` is the first parseable date among the time tags; ``recording_start`` the
    first one with a time of day (a bare date does not place second 0 on the clock).
    """
    stated: datetime | None = None
    start: datetime | None = None
    for key in _TIME_TAGS:
        if key not in tags:
            continue
        dt, has_time = tag_time(tags[key])
        if dt is None:
            continue
        stated = stated or dt
        if has_time and start is None:
            start = dt
    return stated, start


# --------------------------------------------------------------------------- formatting


def human_duration(seconds: float) -> str:
    """``5 h 12 min``, ``3 min 20 s``, ``12 s``."""
    s = max(0, round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    if m:
        return f"{m} min {sec} s" if sec else f"{m} min"
    return f"{sec} s"


def words_attribute(segment: SpeechSegment, limit: float) -> str:
    """The segment's words as compact JSON ``[[word, start, end], ...]`` (2-decimal seconds)."""
    rows = []
    for w in segment.words:
        end = round(min(w.end, limit), 2)
        rows.append([w.text, round(min(w.start, end), 2), end])
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def _suffix(ctx: ExtractionContext) -> str:
    """A file suffix that helps FFmpeg's format probe (the filename's, else the content type's)."""
    if ctx.filename:
        suffix = Path(ctx.filename).suffix
        if _SUFFIX.match(suffix):
            return suffix.lower()
    return AUDIO_TYPES.get(ctx.content_type.split(";")[0].strip().lower(), ".bin")


# --------------------------------------------------------------------------- extractor


class AudioExtractor:
    """Recordings -> one ``speech`` block per recognised segment, with time spans and words."""

    modality = "audio"

    def __init__(self, transcriber: Transcriber, *, max_duration_s: float = DEFAULT_MAX_DURATION_S,
                 scratch_dir: str | None = None) -> None:
        """``max_duration_s`` is SB_AUDIO_MAX_DURATION_S; longer recordings are refused unheard."""
        self._transcriber = transcriber
        self._max_duration_s = max_duration_s
        self._scratch_dir = scratch_dir

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Probe, check the length, transcribe; ``PermanentError`` for bad or silent input."""
        if not raw:
            raise PermanentError("the file is empty: there is nothing to transcribe")
        if self._scratch_dir:
            os.makedirs(self._scratch_dir, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix="sb-audio-", suffix=_suffix(ctx), dir=self._scratch_dir)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            probe = probe_audio(path)
            if probe.duration_s > self._max_duration_s:
                raise PermanentError(
                    f"the recording is {human_duration(probe.duration_s)} long, over the limit of "
                    f"{human_duration(self._max_duration_s)} (SB_AUDIO_MAX_DURATION_S); split it into "
                    "shorter parts and upload them separately"
                )
            transcript = self._transcriber.transcribe(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return self._document(probe, transcript)

    def _document(self, probe: AudioProbe, transcript: Transcript) -> Extracted:
        limit = probe.duration_s if probe.duration_s > 0 else transcript.duration_s
        blocks: list[Block] = []
        for seg in transcript.segments:
            text = seg.text.strip()
            if not text:
                continue
            t_end = round(min(seg.end, limit), 2)
            attrs = {"words": words_attribute(seg, limit)}
            if seg.speaker:
                attrs["speaker"] = seg.speaker
            blocks.append(Block("speech", text, t_start=round(min(seg.start, t_end), 2), t_end=t_end,
                                attributes=attrs))
        if not blocks:
            raise PermanentError(f"no speech found in the recording ({human_duration(probe.duration_s)})")
        stated, start = stated_times(probe.tags)
        meta = {
            "duration_s": f"{probe.duration_s:.2f}",
            "codec": probe.codec,
            "sample_rate": str(probe.sample_rate),
            "channels": str(probe.channels),
            "transcriber": transcript.model_id,
        }
        if transcript.language:
            meta["language"] = transcript.language
        if transcript.language_probability is not None:
            meta["language_probability"] = f"{transcript.language_probability:.3f}"
        if start is not None:
            meta["recording_start"] = start.isoformat()
        for key in ("artist", "album"):
            if probe.tags.get(key):
                meta[key] = probe.tags[key]
        return Extracted(
            title=probe.tags.get("title") or None,
            modality=self.modality,
            blocks=blocks,
            metadata=meta,
            stated_time=stated,
            stated_time_source="file_metadata",
            language=transcript.language,
            recording_start=start,
        )
