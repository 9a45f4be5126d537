"""The models the pipeline calls: embedders, the BM25 encoder, a reranker, speech to text and image captions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from secondbrain.ports.vectors import SparseVector


@runtime_checkable
class Embedder(Protocol):
    """Turns text into dense vectors. Loaded once at start-up, never at import."""

    @property
    def model_id(self) -> str:
        """A stable identifier of the model (used in collection versions and payloads)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every returned vector."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages (L2-normalised vectors, one per text, same order)."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (L2-normalised)."""
        ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Turns text into a BM25-style sparse vector (the engine applies IDF)."""

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """Term-frequency-saturated weights for stored passages."""
        ...

    def encode_query(self, text: str) -> SparseVector:
        """Weights for a query (each distinct term once)."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """The terms the vectors are built from (lower-cased, stemmed, stopwords dropped)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, passage) pairs; higher is more relevant.  Loaded once at start-up, never at import."""

    @property
    def model_id(self) -> str:
        """A stable identifier of the model."""
        ...

    def score(self, query: str, passages: list[str]) -> list[float]:
        """One score per passage, same order."""
        ...


@dataclass(frozen=True, slots=True)
class Word:
    """One transcribed word with its time span in seconds from the start of the recording."""

    text: str
    start: float
    end: float
    probability: float | None = None


@dataclass(frozen=True, slots=True)
class SpeechSegment:
    """A stretch of speech as the recogniser segmented it."""

    text: str
    start: float
    end: float
    words: tuple[Word, ...] = ()
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """The transcription of one recording."""

    segments: tuple[SpeechSegment, ...]
    language: str | None
    language_probability: float | None
    duration_s: float
    model_id: str


@runtime_checkable
class Transcriber(Protocol):
    """Speech to text with segment and word timestamps (faster-whisper here; whisperx where it runs).

    Loaded once at start-up, never at import.  ``audio_path`` is a local file in any format
    the decoder reads (wav, mp3, m4a, ogg, webm...).
    """

    @property
    def model_id(self) -> str:
        """A stable identifier of the model."""
        ...

    def transcribe(self, audio_path: str, *, language: str | None = None) -> Transcript:
        """Transcribe one recording; raise ``PermanentError`` when it cannot be decoded."""
        ...


@runtime_checkable
class Captioner(Protocol):
    """Describes an image in a sentence or two (any OpenAI-compatible vision endpoint)."""

    @property
    def model_id(self) -> str:
        """A stable identifier of the model."""
        ...

    def caption(self, image: bytes, content_type: str) -> str:
        """A short description of the image; raise ``RetryableError`` when the endpoint is down."""
        ...
