"""Extraction budgets: zip bombs and element floods refused up front, slow or greedy parsers stopped.

The pre-checks read a container's own directory and count paragraph tags as the bytes stream by;
the office parser runs in a child process that is killed when a document passes its time or
memory budget, and the next document gets a fresh one.
"""

from __future__ import annotations

import functools
import io
import re
import time
import zipfile
from collections.abc import Iterator

import pytest

from devtools import gen_office as g
from secondbrain.errors import PermanentError
from services.extractors.budget import MB, Budget, _count, check_container
from services.extractors.document import ExtractionContext
from services.extractors.isolation import IsolatedExtractor

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@functools.cache
def bomb() -> bytes:
    return g.make_docx_bomb(1 << 30)


def test_a_zip_bomb_is_refused_from_its_directory_in_milliseconds() -> None:
    raw = bomb()
    assert len(raw) < 2 * MB
    started = time.perf_counter()
    with pytest.raises(PermanentError, match=r"would unpack to 1\.0 GiB .* zip bomb"):
        check_container(raw, "docx", Budget(), ".docx file")
    assert time.perf_counter() - started < 0.5


def test_a_flood_of_empty_paragraphs_is_refused_before_parsing() -> None:
    raw = g.make_docx_with_empty_paragraphs(20_001)
    with pytest.raises(PermanentError, match=r"more than 20,000 paragraphs.*SB_EXTRACT_MAX_ELEMENTS"):
        check_container(raw, "docx", Budget(), ".docx file")
    check_container(g.make_docx_with_empty_paragraphs(500), "docx", Budget(), ".docx file")  # within budget
    check_container(g.make_docx(), "docx", Budget(), ".docx file")


def test_tags_are_counted_across_read_blocks() -> None:
    body = b"".join(b"x" * (i % 7) + b"<w:p>" for i in range(200_000))  # tags land on every block boundary
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", body)
    with zipfile.ZipFile(buf) as z:
        assert _count(z, z.getinfo("word/document.xml"), re.compile(rb"<w:p[\s>/]")) == 200_000


def test_not_a_zip_is_left_to_the_parser() -> None:
    check_container(b"plain text, not a container", "docx", Budget(), ".docx file")


# --------------------------------------------------------------------------- the parser in a child


@pytest.fixture(scope="module")
def isolated() -> Iterator[IsolatedExtractor]:
    extractor = IsolatedExtractor("tests.services.extractors.misbehaving:Misbehaving",
                                  Budget(timeout_s=3.0, max_memory_bytes=400 * MB), kwargs={"greeting": "hi"},
                                  label=".docx file")
    yield extractor
    extractor.close()


def ctx() -> ExtractionContext:
    return ExtractionContext(content_type=DOCX, filename="report.docx")


def test_the_work_happens_in_a_warm_child(isolated: IsolatedExtractor) -> None:
    first = isolated.extract(b"ok", ctx())
    second = isolated.extract(b"ok", ctx())
    assert first.blocks[0].text.startswith("hi from process") and first.blocks == second.blocks  # same child
    assert f"process {__import__('os').getpid()}" not in first.blocks[0].text


def test_a_slow_document_is_stopped_and_the_next_one_is_read(isolated: IsolatedExtractor) -> None:
    started = time.perf_counter()
    with pytest.raises(PermanentError, match=r"took longer than 3 s \(SB_EXTRACT_TIMEOUT_S\)"):
        isolated.extract(b"slow", ctx())
    assert time.perf_counter() - started < 10
    assert isolated.extract(b"ok", ctx()).blocks[0].text.startswith("hi from process")


def test_a_greedy_document_is_stopped_at_its_memory_budget(isolated: IsolatedExtractor) -> None:
    with pytest.raises(PermanentError, match=r"more than 400 MiB of memory \(SB_EXTRACT_MAX_MEMORY_MB\)"):
        isolated.extract(b"hog", ctx())
    assert isolated.extract(b"ok", ctx()).title == "report.docx"


def test_a_crash_and_the_parsers_own_errors_are_sentences(isolated: IsolatedExtractor) -> None:
    with pytest.raises(PermanentError, match="crashed its reader"):
        isolated.extract(b"crash", ctx())
    with pytest.raises(PermanentError, match="the test extractor refuses this"):
        isolated.extract(b"refuse", ctx())
    with pytest.raises(PermanentError, match=r"could not be read \(ValueError: a library failed\)"):
        isolated.extract(b"boom", ctx())
    assert isolated.extract(b"ok", ctx()).blocks


def test_a_warm_child_that_cannot_build_its_extractor_fails_the_document_with_the_reason() -> None:
    """The warm child imports beside the worker's start-up (construction does not wait for it); a broken install
    fails the first document saying why, and the next document tries a fresh child."""
    broken = IsolatedExtractor("tests.services.extractors.no_such_module:Nothing", Budget(timeout_s=3.0),
                               label=".docx file")
    try:
        for _ in range(2):
            with pytest.raises(RuntimeError, match="could not start: ModuleNotFoundError"):
                broken.extract(b"ok", ctx())
    finally:
        broken.close()


def test_the_real_office_parser_refuses_the_bomb_in_its_child() -> None:
    office = IsolatedExtractor("services.extractors.office:OfficeExtractor", Budget(), kwargs={"budget": Budget()},
                               label=".docx file")
    try:
        with pytest.raises(PermanentError, match="zip bomb"):
            office.extract(bomb(), ctx())
        with pytest.raises(PermanentError, match="paragraphs"):
            office.extract(g.make_docx_with_empty_paragraphs(25_000), ctx())
        doc = office.extract(g.make_docx(), ctx())
        assert doc.blocks and doc.modality == "office"
    finally:
        office.close()
