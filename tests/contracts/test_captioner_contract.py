"""One behaviour contract for every :class:`secondbrain.ports.Captioner` implementation.

Implementations: :class:`OpenAICaptioner` against the vision endpoint ``SB_VISION_BASE_URL`` and
``SB_VISION_MODEL`` name (no vision model is packaged: without an endpoint its cases are skipped with
that reason), and the in-memory twin :class:`HashCaptioner` (in the fast lane).  The client's answers to
a failing endpoint are checked in ``tests/services/extractors/test_image.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from pydantic import SecretStr

from devtools import gen_pdf_image as gen
from secondbrain.errors import PermanentError
from secondbrain.ports import Captioner
from secondbrain.stores.memory import HashCaptioner

BASE_URL = os.environ.get("SB_VISION_BASE_URL", "")
NO_ENDPOINT = "no vision model is packaged: set SB_VISION_BASE_URL (and SB_VISION_MODEL) to run these"


def _openai() -> Captioner:
    from services.extractors.image import OpenAICaptioner

    key = os.environ.get("SB_VISION_API_KEY")
    return OpenAICaptioner(BASE_URL, SecretStr(key) if key else None, os.environ.get("SB_VISION_MODEL", "gpt-4o-mini"))


IMPLEMENTATIONS: dict[str, Callable[[], Captioner]] = {"openai-compatible": _openai, "hash": HashCaptioner}


@pytest.fixture(scope="module", params=[
    pytest.param("openai-compatible", marks=pytest.mark.skipif(not BASE_URL, reason=NO_ENDPOINT)),
    pytest.param("hash", marks=pytest.mark.fast),
])
def captioner(request: pytest.FixtureRequest) -> Captioner:
    return IMPLEMENTATIONS[request.param]()


def test_is_a_captioner_with_a_stable_id(captioner: Captioner) -> None:
    assert isinstance(captioner, Captioner)
    assert captioner.model_id and captioner.model_id == captioner.model_id


@pytest.mark.parametrize(("fmt", "content_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg")])
def test_a_photo_gets_a_short_description(captioner: Captioner, fmt: str, content_type: str) -> None:
    caption = captioner.caption(gen.wordless_photo(fmt), content_type)
    assert isinstance(caption, str) and caption and caption == caption.strip()
    assert len(caption) < 2000


def test_bytes_that_are_not_an_image_are_refused(captioner: Captioner) -> None:
    with pytest.raises(PermanentError):
        captioner.caption(b"this is plain text, not a picture", "image/png")
