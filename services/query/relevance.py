"""Whether a source search found anything: the relevance cut of ``GET /v1/search``.

Fused ranking (dense and BM25 by reciprocal rank) orders every passage, however far from the
query, so a ranked list alone cannot say "nothing matches".  A passage *matches* when it holds
enough of the query's words (its content terms, stemmed, as BM25 reads them) or is close enough
in meaning (cosine of the query to the passage's stored vector).  When none does, the search
says so and shows the closest few, labelled as such.

The two thresholds were chosen on a labelled set of notes and queries
(``tests/services/query/gold_search_cut.py``) with all-MiniLM-L6-v2; the figures are in
docs/reminders-and-search.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from secondbrain.search_hits import SearchHit

# A passage holding at least this share of the query's content terms matches by its words.
MIN_TERM_SHARE = 0.6
# A passage at least this close in meaning matches (cosine, all-MiniLM-L6-v2 scale).
MIN_COSINE = 0.45
CLOSEST = 3  # what is shown, labelled, when nothing matches


@dataclass(frozen=True, slots=True)
class Cut:
    """The hits that match (``matched``), or else none and the ``closest`` few."""

    matched: bool
    hits: list[SearchHit]
    closest: list[SearchHit]


def term_share(query_terms: Iterable[str], text_terms: Iterable[str]) -> float:
    """The share of the query's distinct terms found among the text's."""
    wanted = set(query_terms)
    return len(wanted & set(text_terms)) / len(wanted) if wanted else 0.0


def matches(cosine: float | None, share: float, *, min_cosine: float = MIN_COSINE,
            min_share: float = MIN_TERM_SHARE) -> bool:
    """Whether a passage with this cosine (None: not known) and term share matches the query."""
    return share >= min_share or (cosine is not None and cosine >= min_cosine)


def cut(query: str, hits: list[SearchHit], cosines: dict[str, float], tokenize: Callable[[str], list[str]], *,
        closest: int = CLOSEST) -> Cut:
    """The ranked ``hits`` less those that do not match ``query`` (their order kept); with none left, the first
    ``closest`` of them as the closest.  ``cosines`` are by chunk id."""
    terms = tokenize(query)
    kept = [h for h in hits
            if matches(cosines.get(h.chunk_id), term_share(terms, tokenize(f"{h.title} {h.text}")))]
    if kept:
        return Cut(True, kept, [])
    return Cut(False, [], hits[:closest])
