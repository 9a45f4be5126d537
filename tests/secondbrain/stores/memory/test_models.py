"""What the model twins promise beyond their ports' contracts (``tests/contracts``): the same output in
every process, word overlap as their notion of meaning, and a transcriber a test can tell what was said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from devtools import gen_audio
from devtools import gen_pdf_image as gen_image
from secondbrain.stores.memory import HashCaptioner, HashEmbedder, HashTranscriber, OverlapReranker
from tests.paths import REPO

pytestmark = pytest.mark.fast  # no services: in the fast lane


def test_vectors_are_the_same_in_another_process() -> None:
    texts = ["Invoice 8391 from Acme Hosting", "Straße café 東京", ""]
    here = HashEmbedder(64).embed_documents(texts)
    code = ("import json, sys; from secondbrain.stores.memory import HashEmbedder; "
            "print(json.dumps(HashEmbedder(64).embed_documents(json.loads(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(texts)], cwd=REPO, capture_output=True,
                         text=True, check=True, env={"PYTHONHASHSEED": "123", "PATH": ""}).stdout
    assert json.loads(out) == here


def test_shared_words_bring_texts_together_and_case_and_width_do_not_matter() -> None:
    embedder = HashEmbedder()
    invoice, again, shouted, other = (np.array(v) for v in embedder.embed_documents([
        "the hosting invoice is due", "when is the hosting invoice due?", "THE HOSTING INVOICE IS DUE",
        "grilled sardines by the harbour"]))
    assert invoice @ again > 0.8 > 0.5 > invoice @ other
    assert invoice @ shouted == pytest.approx(1.0)
    assert HashEmbedder(8).dimension == 8 and len(HashEmbedder(8).embed_query("x")) == 8
    with pytest.raises(ValueError):
        HashEmbedder(0)


def test_the_reranker_counts_the_questions_words() -> None:
    scores = OverlapReranker().score("Hosting invoice due?", ["The invoice is due.", "hosting INVOICE due", "cats"])
    assert scores == pytest.approx([2 / 3, 1.0, 0.0])


def test_the_caption_follows_the_bytes() -> None:
    captioner = HashCaptioner()
    png, jpeg = gen_image.wordless_photo("PNG"), gen_image.wordless_photo("JPEG")
    assert captioner.caption(png, "image/png") == captioner.caption(png, "image/png")
    assert captioner.caption(png, "image/png") != captioner.caption(jpeg, "image/jpeg")
    assert captioner.caption(png, "image/png").startswith("A ") and " PNG image (tag " in captioner.caption(
        png, "image/png")


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> gen_audio.Recording:
    assert gen_audio.tools_available(), "espeak-ng and sox are required to generate the test recordings"
    return gen_audio.build_recording(tmp_path_factory.mktemp("twin"), gen_audio.SCRIPT[:3], gap_s=2.0, name="twin")


def test_each_sentence_is_a_segment_with_the_sidecars_words(speech: gen_audio.Recording) -> None:
    Path(f"{speech.path}.txt").write_text("\n".join(s.text for s in speech.sentences) + "\n")
    result = HashTranscriber().transcribe(str(speech.path))
    assert [s.text for s in result.segments] == [s.text for s in speech.sentences]
    for segment, start, end in zip(result.segments, speech.starts, speech.ends, strict=True):
        assert segment.start == pytest.approx(start, abs=0.2)
        assert end - 0.6 <= segment.end <= end + 0.05  # the clip's end includes espeak's trailing silence
        assert [w.text for w in segment.words] == segment.text.split()
        assert segment.words[0].start == segment.start and segment.words[-1].end == pytest.approx(segment.end)


def test_without_a_sidecar_the_words_are_made_up_the_same_way_each_time(speech: gen_audio.Recording) -> None:
    Path(f"{speech.path}.txt").unlink(missing_ok=True)
    first, second = (HashTranscriber().transcribe(str(speech.path)) for _ in range(2))
    assert first == second
    assert len(first.segments) == len(speech.sentences)
    assert len({s.text for s in first.segments}) == len(first.segments)
