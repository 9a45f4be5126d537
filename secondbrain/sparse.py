"""BM25 sparse vectors computed in pure Python.

The store keeps the term-frequency half of BM25 per chunk; the vector collection is created
with the IDF modifier, so the engine multiplies in the inverse document frequency at query
time from its own, always current, corpus statistics.  Term ids are a CRC-32 of the term
(masked to 31 bits): stable across processes, machines and Python versions, unlike ``hash()``.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence

from secondbrain.ports import SparseVector

__all__ = ["ENGLISH_STOPWORDS", "Bm25Encoder", "stem", "term_index"]

_STOPWORDS_TEXT = """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having he her here hers
herself him himself his how i if in into is isn't it it's its itself just let's me more most my
myself no nor not of off on once only or other ought our ours ourselves out over own same she
should shouldn't so some such than that that's the their theirs them themselves then there these
they this those through to too under until up very was wasn't we were weren't what when where
which while who whom why will with won't would wouldn't you your yours yourself yourselves
s t d ll m re ve
"""
#: A small English stopword list (function words only, so content words stay searchable).
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())

# A word is a run of letters/digits; words joined by - _ . / : @ # form one compound token
# (identifiers such as "invoice-8391", "v1.2.3", "foo_bar", "a@b.com").  Apostrophes end a
# word ("john's" -> "john", "s"), and "s" is a stopword.
_WORD = r"[^\W_]+"
_TOKEN_RE = re.compile(rf"{_WORD}(?:[-_./:@#]{_WORD})*")
_PART_RE = re.compile(_WORD)
# Letter/digit boundaries inside one word ("inv8391" -> "inv", "8391").
_ALNUM_SPLIT_RE = re.compile(r"[^\W\d_]+|\d+")
_VOWELS = frozenset("aeiouy")
_MAX_TOKEN_LEN = 64  # longer "words" are base64 blobs or hashes, not terms worth indexing


def term_index(term: str) -> int:
    """The sparse dimension of ``term``: CRC-32 of its UTF-8 bytes masked to 31 bits."""
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def stem(word: str) -> str:
    """A light English suffix stripper (plurals, -ing, -ed, final -e, y/i), applied identically
    to documents and queries, so "invoices", "invoiced" and "invoice" meet on one term.

    Words that are not purely ASCII letters or are shorter than 4 characters are kept as is.
    """
    if len(word) < 4 or not word.isascii() or not word.isalpha():
        return word
    w = word
    # plurals
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "i"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    # -ing / -ed, only when a real stem with a vowel is left ("sing", "bed" stay)
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1] not in _VOWELS:
                w = w[:-1]  # running -> run, stopped -> stop
            break
    # final e and y -> i make "make"/"making" and "party"/"parties" agree
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if w.endswith("y") and len(w) > 3 and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    return w


class Bm25Encoder:
    """A :class:`secondbrain.ports.SparseEncoder` producing BM25 term-frequency weights.

    Documents get ``tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))`` per term (``dl`` is the number
    of terms emitted for the text); queries get 1.0 per distinct term.  ``avgdl`` is a fixed
    constant rather than a corpus statistic so a chunk's vector never changes after indexing.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, avgdl: float = 256.0,
                 stopwords: Iterable[str] | None = None, stemming: bool = True) -> None:
        """Configure the encoder; ``stopwords=None`` uses :data:`ENGLISH_STOPWORDS`."""
        if k1 < 0 or not 0.0 <= b <= 1.0 or avgdl <= 0:
            raise ValueError("need k1 >= 0, 0 <= b <= 1 and avgdl > 0")
        self.k1 = float(k1)
        self.b = float(b)
        self.avgdl = float(avgdl)
        self.stopwords = ENGLISH_STOPWORDS if stopwords is None else frozenset(w.lower() for w in stopwords)
        self.stemming = stemming

    # ------------------------------------------------------------------ tokens

    def tokenize(self, text: str) -> list[str]:
        """The terms of ``text`` in order (with repeats): lowercase, stopwords removed, stemmed.

        A compound identifier yields itself and its parts: ``"Invoice-8391"`` gives
        ``invoice-8391``, ``invoic`` and ``8391``; ``"INV8391"`` gives ``inv8391``, ``inv`` and
        ``8391``.  So both the exact identifier and its number are searchable.
        """
        text = unicodedata.normalize("NFKC", text).casefold()
        terms: list[str] = []
        for match in _TOKEN_RE.finditer(text):
            token = match.group(0)
            parts = _PART_RE.findall(token)
            if len(parts) > 1:
                self._emit(token, terms, compound=True)
            for part in parts:
                self._emit_word(part, terms)
        return terms

    def _emit_word(self, word: str, terms: list[str]) -> None:
        pieces = _ALNUM_SPLIT_RE.findall(word)
        if len(pieces) > 1:
            self._emit(word, terms, compound=True)
            for piece in pieces:
                if len(piece) > 1 or piece.isdigit():
                    self._emit(piece, terms, compound=False)
        else:
            self._emit(word, terms, compound=False)

    def _emit(self, token: str, terms: list[str], *, compound: bool) -> None:
        if len(token) > _MAX_TOKEN_LEN or token in self.stopwords:
            return
        # a single letter carries no meaning; a single digit might ("chapter 7")
        if len(token) == 1 and not token.isdigit():
            return
        terms.append(token if compound or not self.stemming else stem(token))

    # ------------------------------------------------------------------ vectors

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """BM25 term-frequency-saturated weights for stored passages (one vector per text)."""
        return [self._encode_document(text) for text in texts]

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1.0 for each distinct query term (the engine supplies IDF)."""
        indices = sorted({term_index(t) for t in self.tokenize(text)})
        return SparseVector(indices=indices, values=[1.0] * len(indices))

    def _encode_document(self, text: str) -> SparseVector:
        terms = self.tokenize(text)
        if not terms:
            return SparseVector(indices=[], values=[])
        # terms whose hashes collide are one dimension: their frequencies add up
        tf: Counter[int] = Counter(term_index(t) for t in terms)
        norm = self.k1 * (1.0 - self.b + self.b * len(terms) / self.avgdl)
        indices = sorted(tf)
        values = [tf[i] * (self.k1 + 1.0) / (tf[i] + norm) for i in indices]
        return SparseVector(indices=indices, values=values)


#: Word (BM25) scores tie exactly whenever two passages hold the asked words as often at the same length,
#: and the engine breaks such ties by storage order, which follows how the pipeline happened to batch its
#: writes: two fresh imports of the same data gave 29 of 1,982 LoCoMo questions other sources.  Each
#: passage's sparse vector is scaled by 1 plus up to this much, by its id (derived from its content and
#: position), so a tie goes the same way on every import; scores further apart keep their order.
TIE_BREAK = 1e-4


def tie_broken(sparse: SparseVector, point_id: str) -> SparseVector:
    """A passage's ``sparse`` vector scaled by its tie-break factor (see :data:`TIE_BREAK`)."""
    factor = 1.0 + TIE_BREAK * zlib.crc32(point_id.encode()) / 2**32
    return SparseVector(list(sparse.indices), [v * factor for v in sparse.values])
