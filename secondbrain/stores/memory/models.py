"""The in-memory twins of the model ports: deterministic, seeded by hashes, nothing to load.

They keep every structural promise the contract suites (``tests/contracts``) check against the real
models -- dimension, unit length, determinism, batch = one by one, order, errors -- so stage and query
logic can run on them in tests without ONNX Runtime, Whisper or a vision endpoint.  What only a model
can do (a paraphrase lands near its original, speech becomes the words said) they imitate with the
shared words of the texts, or not at all.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from secondbrain.errors import PermanentError
from secondbrain.ports import SpeechSegment, Transcript, Word

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the twins compare them: NFKC-normalised, case-folded runs of word characters."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def _seed(*parts: str | bytes) -> int:
    h = hashlib.blake2b(digest_size=8)  # not hash(): that one changes between processes
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\x00")
    return int.from_bytes(h.digest(), "big")


@lru_cache(maxsize=65_536)
def _direction(dimension: int, token: str) -> np.ndarray:
    vector = np.random.default_rng(_seed(str(dimension), token)).standard_normal(dimension)
    vector.flags.writeable = False  # shared through the cache
    return vector


def _norm(vector: np.ndarray) -> float:
    return math.sqrt(math.fsum(x * x for x in vector.tolist()))


class HashEmbedder:
    """Each word is a fixed random direction (seeded by its hash); a text is the sum of its words' directions,
    L2-normalised.  Texts that share words are closer than texts that share none; a text without words
    gets one fixed direction of its own."""

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        """``hash-<dimension>``."""
        return f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        """Vector length."""
        return self._dimension

    def _embed(self, text: str) -> list[float]:
        words = tokens(text) or [""]  # "" never comes out of tokens(): the blank text's own direction
        # Added one by one and the norm summed exactly: numpy's reductions pick SIMD paths by memory alignment,
        # which changed the last bit between processes on some CPUs; element-wise adds do not.
        total = np.zeros(self._dimension)
        for w in words:
            total = total + _direction(self._dimension, w)
        norm = _norm(total)
        if norm < 1e-12:  # the directions cancelled out (practically never): the first word's alone
            total = _direction(self._dimension, words[0])
            norm = _norm(total)
        return [float(x) for x in total / norm]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, same order."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The same vector the text gets as a document (like MiniLM, no query prefix)."""
        return self._embed(text)


class OverlapReranker:
    """Scores a passage by the share of the question's distinct words it contains, in [0, 1]."""

    @property
    def model_id(self) -> str:
        """``token-overlap``."""
        return "token-overlap"

    def score(self, query: str, passages: list[str]) -> list[float]:
        """One score per passage, same order: 1.0 when every word of the question occurs in it."""
        wanted = set(tokens(query))
        if not wanted:
            return [0.0 for _ in passages]
        return [len(wanted & set(tokens(p))) / len(wanted) for p in passages]


class HashCaptioner:
    """Describes an image by what the bytes say of it: its format, its size and a tag from its hash.

    The same bytes always get the same caption; bytes that are not an image are refused with
    ``PermanentError``, as a vision endpoint refuses them.
    """

    @property
    def model_id(self) -> str:
        """``hash-captioner``."""
        return "hash-captioner"

    def caption(self, image: bytes, content_type: str) -> str:
        """``"A 640x480 PNG image (tag 1a2b3c4d)."``"""
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(image)) as img:
                width, height, fmt = img.width, img.height, img.format or content_type
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise PermanentError("the captioning model rejected the image: it is not an image it can read") from exc
        return f"A {width}x{height} {fmt} image (tag {hashlib.sha256(image).hexdigest()[:8]})."


SIDECAR_SUFFIX = ".txt"
FRAME_S = 0.03  # energy is measured per 30 ms frame
SPEECH_RMS = 0.01  # frames louder than this are speech (espeak and microphones alike are far above it)
PAUSE_S = 0.7  # quieter stretches shorter than this stay inside one segment (pauses between words)
_VOCABULARY = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
               "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")


class HashTranscriber:
    """Finds the stretches of sound in a recording and gives each a deterministic text.

    The audio is decoded as the real transcriber decodes it (so undecodable files fail the same way)
    and cut into segments where it is louder than :data:`SPEECH_RMS`; silence gives no segments.
    The text of the n-th segment is the n-th non-blank line of a sidecar file (the recording's path
    plus ``.txt``) when there is one, so a test can say what was spoken, else words drawn from a
    fixed vocabulary, seeded by the segment's samples.  Words are spread evenly over their segment.
    """

    @property
    def model_id(self) -> str:
        """``hash-transcriber``."""
        return "hash-transcriber"

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Segments and word times for one recording; ``PermanentError`` when it cannot be decoded."""
        from secondbrain.transcribe import SAMPLE_RATE, decode_for_whisper

        samples = np.asarray(decode_for_whisper(audio_path), dtype=np.float32)
        spans = _loud_spans(samples, SAMPLE_RATE)
        sidecar = Path(audio_path + SIDECAR_SUFFIX)
        said = [line.strip() for line in sidecar.read_text().splitlines() if line.strip()] if sidecar.is_file() else []
        segments = []
        for i, (start, end) in enumerate(spans):
            if i < len(said):
                text = said[i] if i < len(spans) - 1 else " ".join(said[i:])  # the last span takes what is left
            else:
                text = _made_up_text(samples[int(start * SAMPLE_RATE):int(end * SAMPLE_RATE)].tobytes(), end - start)
            segments.append(SpeechSegment(text, start, end, _spread(text, start, end)))
        return Transcript(segments=tuple(segments), language=language or "en", language_probability=None,
                          duration_s=len(samples) / SAMPLE_RATE, model_id=self.model_id)


def _loud_spans(samples: np.ndarray, rate: int) -> list[tuple[float, float]]:
    """(start, end) in seconds of each stretch louder than SPEECH_RMS, pauses under PAUSE_S bridged."""
    frame = max(1, int(FRAME_S * rate))
    count = len(samples) // frame
    if count == 0:
        return []
    rms = np.sqrt(np.mean(samples[:count * frame].reshape(count, frame).astype(np.float64) ** 2, axis=1))
    spans: list[list[int]] = []
    for i in np.flatnonzero(rms > SPEECH_RMS):
        if spans and (i - spans[-1][1]) * FRAME_S <= PAUSE_S:
            spans[-1][1] = int(i) + 1
        else:
            spans.append([int(i), int(i) + 1])
    return [(a * frame / rate, b * frame / rate) for a, b in spans]


def _made_up_text(data: bytes, seconds: float) -> str:
    rng = np.random.default_rng(_seed(data))
    count = max(1, round(seconds * 2.5))  # about the pace of speech
    return " ".join(_VOCABULARY[int(i)] for i in rng.integers(0, len(_VOCABULARY), count)).capitalize() + "."


def _spread(text: str, start: float, end: float) -> tuple[Word, ...]:
    words = text.split()
    step = (end - start) / len(words)
    return tuple(Word(w, start + i * step, start + (i + 1) * step) for i, w in enumerate(words))
