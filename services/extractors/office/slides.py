"""PowerPoint (.pptx): one unit per slide, speaker notes after the slide's own text."""

from __future__ import annotations

import io

from services.extractors.document import Block, Extracted
from services.extractors.office.blocks import clean
from services.extractors.office.properties import properties
from services.extractors.office.reading import Reading


def extract_pptx(ex: Reading, raw: bytes) -> Extracted:
    elements = ex.partition("pptx", file=io.BytesIO(raw), include_slide_notes=False, include_page_breaks=False)
    builder = ex.builder("slides")
    for el in elements:
        builder.add(el)
    slides = builder.finish()
    notes = _pptx_notes(raw)
    blocks: list[Block] = []
    for n in range(1, max([len(notes), *(b.page or 0 for b in slides)]) + 1):
        on_slide = [b for b in slides if b.page == n]
        blocks.extend(on_slide)
        if notes.get(n):
            path = on_slide[0].heading_path[:1] if on_slide else ()
            blocks.append(Block("paragraph", notes[n], path, n, attributes={"slide": str(n), "role": "notes"}))
    blocks.extend(b for b in slides if b.page is None)
    count = max([len(notes), *(b.page or 0 for b in blocks)])
    return ex.finish("pptx", blocks, elements, properties(raw, "pptx"), extra_meta={"slides": str(count)})


def _pptx_notes(raw: bytes) -> dict[int, str]:
    """Speaker notes per slide number (unstructured puts them before the slide's own text)."""
    from pptx import Presentation

    notes: dict[int, str] = {}
    prs = Presentation(io.BytesIO(raw))
    for n, slide in enumerate(prs.slides, start=1):
        notes[n] = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes[n] = clean(slide.notes_slide.notes_text_frame.text)
    return notes
