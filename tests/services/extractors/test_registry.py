"""The extractor registry: what a worker can extract, and what it says when it cannot."""

from __future__ import annotations

import threading

import pytest

from secondbrain.errors import PermanentError
from secondbrain.settings import Settings
from services.extractors.registry import BackgroundExtractorSet, ExtractorSet, build_extractors
from services.extractors.text import TextExtractor


def test_switched_off_families_fail_with_the_setting_to_change() -> None:
    extractors = build_extractors(Settings(transcriber="none", ocr_enabled=False))
    assert {"text", "html", "pdf", "office"} <= set(extractors.families)
    assert "audio" not in extractors.families and "image" not in extractors.families
    with pytest.raises(PermanentError, match=r"audio files cannot be processed.*SB_TRANSCRIBER=none"):
        extractors.get("audio")
    with pytest.raises(PermanentError, match=r"image files cannot be processed.*SB_OCR_ENABLED=false"):
        extractors.get("image")


def test_a_missing_language_pack_disables_ocr_with_its_name() -> None:
    extractors = build_extractors(Settings(transcriber="none", ocr_languages="eng+zzz"))
    with pytest.raises(PermanentError, match="zzz"):
        extractors.get("image")


def test_background_loading_waits_and_reports_failures() -> None:
    release = threading.Event()

    def slow() -> ExtractorSet:
        release.wait(10)
        return ExtractorSet({"text": TextExtractor()})

    loading = BackgroundExtractorSet(slow)
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(loading.get("text")))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive() and not got  # get() waits for the models
    release.set()
    waiter.join(10)
    assert isinstance(got[0], TextExtractor)

    def broken() -> ExtractorSet:
        raise OSError("libfoo.so: cannot open shared object file")

    failed = BackgroundExtractorSet(broken)
    with pytest.raises(RuntimeError, match=r"could not be loaded: libfoo\.so"):
        failed.wait_ready()
    with pytest.raises(RuntimeError, match="could not be loaded"):
        failed.get("text")
