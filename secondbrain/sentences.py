"""Sentences of a passage, as a reader would cut them, for quoting in extractive answers.

spaCy's rule-based sentencizer does the cutting: its English tokenizer keeps "Dr.", "a.m.",
"J. R. R.", "3.50" and "9:30" whole, so it never cuts inside them.  Two things are added:
abbreviations its exceptions lack ("approx.", "fig.", "Tel.") are never sentence ends when
what follows starts in lower case or with a digit, and line breaks are read as what they are.
OCR, PDF and transcript text is hard-wrapped: a line break is a sentence end only where a
list item, a heading, a speaker's turn or a table row starts, or (for a blank line) where the
line before ended a sentence.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from spacy.tokenizer import Tokenizer

# A line that starts something new: a list item, a heading, a table row, a time stamp or a
# speaker's turn ("Priya: ...", "[00:12] Sam: ...").
_BULLETS = "-*+\u2022\u00b7\u25aa\u2013"  # - * + and the bullet, middle dot, square and en dash
_LIST_ITEM = re.compile(rf"\s*(?:[{re.escape(_BULLETS)}]\s|\d{{1,3}}[.)]\s)")
_STARTS_ITEM = re.compile(
    rf"\s*(?:[{re.escape(_BULLETS)}]\s|\d{{1,3}}[.)]\s|#{{1,6}}\s|\||\[?\d{{1,2}}:\d{{2}}(?::\d{{2}})?\]?\s"
    r"|(?:[A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*){0,2}|Speaker\s*\d+|SPEAKER_\d+)\s?:\s)")
_ENDS_SENTENCE = re.compile("[.!?\u2026][\"'\u201d\u2019)\\]]*\\s*$")  # then closing quotes or brackets
# Titles spaCy does not know, written before a name (so a capital letter follows them).
_TITLES = ("Sr", "Sra", "Capt", "Lt", "Sgt", "Col", "Maj", "Cmdr", "Adm", "Fr", "Mme", "Mlle", "Messrs",
           "Dept", "Univ", "Ave", "Blvd", "Rd", "Bldg", "Apt", "Ste", "Nr", "Tel", "Ref", "Vol", "Fig", "approx",
           "Approx", "ca", "cf", "fig", "incl", "excl", "dept", "tel", "ref", "nr", "vol", "est", "appt")
_WS = re.compile(r"\s+")


@cache
def _nlp() -> Any:
    import spacy  # imported on first use: loading it takes a moment the query service need not pay at start

    nlp = spacy.blank("en")
    tokenizer = cast("Tokenizer", nlp.tokenizer)
    for t in _TITLES:
        tokenizer.add_special_case(f"{t}.", [{"ORTH": f"{t}."}])
    nlp.add_pipe("sentencizer")
    return nlp


def paragraphs(text: str) -> list[str]:
    """The text's runs of running prose: wrapped lines joined, new items and turns kept apart."""
    out: list[str] = []
    current = ""
    gap = False  # a blank line since the last text line
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            gap = True
            continue
        if current and _continues(current, line, gap):
            current = f"{current} {line}"
        else:
            if current:
                out.append(current)
            current = line
        gap = False
    if current:
        out.append(current)
    return out


def _continues(before: str, line: str, gap: bool) -> bool:
    """Whether ``line`` carries on the sentence of ``before`` (a wrap) rather than starting anew."""
    if _STARTS_ITEM.match(line) or before.startswith(("#", "|")):
        return False
    if gap:  # a blank line: a wrap only if the line before stopped mid-sentence and this one carries on
        return not _ENDS_SENTENCE.search(before) and (
            line[:1].isdigit() or (line[:1].islower() and not before.endswith(":")))
    # after a list item, a line starting in capitals is not part of it
    return not (_LIST_ITEM.match(before) and line[:1].isupper())


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, whitespace collapsed."""
    nlp = _nlp()
    out: list[str] = []
    for para in paragraphs(text):
        pieces = [_WS.sub(" ", s.text).strip() for s in nlp(para).sents]
        merged: list[str] = []
        for piece in pieces:
            if not piece:
                continue
            # A "sentence" starting in lower case or with a digit follows an abbreviation or a
            # number the rules did not know ("approx. 30", "p. 12"): it belongs to the one before.
            if merged and (piece[0].islower() or piece[0].isdigit()):
                merged[-1] = f"{merged[-1]} {piece}"
            else:
                merged.append(piece)
        out.extend(merged)
    return out
