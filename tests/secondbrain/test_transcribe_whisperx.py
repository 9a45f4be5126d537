"""The WhisperX transcriber beyond the shared contract: word alignment, its absence, the VADs.

Needs the ``whisperx`` extra; ``make whisperx`` installs it into .venv-whisperx and runs this.
No wav2vec2 model ships in a package, so the alignment test builds a tiny one with random
weights: it proves the alignment path runs from a local directory (sentence-cut segments,
timed words), not that its times are accurate.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from devtools import gen_audio as gen
from secondbrain.settings import Settings
from secondbrain.transcribe import NO_ALIGNMENT, WhisperXTranscriber, load_transcriber

NOT_INSTALLED = "the whisperx extra is not installed in this environment (make whisperx installs it and runs this)"
pytestmark = [pytest.mark.whisperx,
              pytest.mark.skipif(importlib.util.find_spec("whisperx") is None, reason=NOT_INSTALLED)]


def letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> gen.Recording:
    assert gen.tools_available(), "espeak-ng and sox are required to generate the test recordings"
    return gen.build_recording(tmp_path_factory.mktemp("wx"), gen.SCRIPT[:2], gap_s=2.0, name="wx")


@pytest.fixture(scope="module")
def wav2vec2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight Wav2Vec2ForCTC with an English letter vocabulary, saved like a hub model."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    out = tmp_path_factory.mktemp("wav2vec2")
    vocab = {"<pad>": 0, "|": 1, **{c: i + 2 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz'")}}
    (out / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(out / "vocab.json"), pad_token="<pad>", word_delimiter_token="|")
    features = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16_000, padding_value=0.0, do_normalize=True)
    Wav2Vec2Processor(feature_extractor=features, tokenizer=tokenizer).save_pretrained(out)
    torch.manual_seed(0)
    config = Wav2Vec2Config(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=64, conv_dim=(32,) * 7, num_conv_pos_embeddings=16,
                            num_conv_pos_embedding_groups=4, pad_token_id=0)
    Wav2Vec2ForCTC(config).save_pretrained(out)
    return out


def test_a_local_wav2vec2_model_aligns_every_word(wav2vec2_dir: Path, speech: gen.Recording,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a hub lookup would be a bug: the model is a local directory
    t = load_transcriber("whisperx", None, align_model_dir=str(wav2vec2_dir))
    assert isinstance(t, WhisperXTranscriber) and t.aligned and t.notice is None
    assert t.model_id.endswith(":aligned")
    result = t.transcribe(str(speech.path))
    # alignment re-cuts the VAD chunk into its sentences, and times every word inside its segment
    assert len(result.segments) == 2
    assert "harbor" in letters(result.segments[0].text) and "grandmother" in letters(result.segments[1].text)
    for seg in result.segments:
        assert len(seg.words) >= 8
        assert [w.start for w in seg.words] == sorted(w.start for w in seg.words)
        assert all(seg.start - 0.02 <= w.start <= w.end <= seg.end + 0.02 for w in seg.words)
        assert all(0.0 <= w.start <= result.duration_s for w in seg.words)


def test_without_an_alignment_model_it_says_so_and_keeps_vad_chunks(speech: gen.Recording,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="secondbrain.transcribe"):
        t = WhisperXTranscriber()
    assert not t.aligned and t.notice == NO_ALIGNMENT
    assert "SB_WHISPERX_ALIGN_MODEL_DIR" in t.notice and "SB_WHISPERX_ALIGN_MODEL_DIR" in caplog.text
    result = t.transcribe(str(speech.path))
    assert result.segments and all(seg.words == () for seg in result.segments)
    text = letters(" ".join(s.text for s in result.segments))
    assert "grandmother" in text and "harbor" in text


def test_an_alignment_directory_that_is_not_a_model_is_a_start_up_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"SB_WHISPERX_ALIGN_MODEL_DIR=.* is not a local wav2vec2 model directory"):
        load_transcriber("whisperx", None, align_model_dir=str(tmp_path / "missing"))


def test_the_setting_reaches_the_transcriber(tmp_path: Path) -> None:
    from services.extractors.registry import build_extractors

    settings = Settings(transcriber="whisperx", whisperx_align_model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="SB_WHISPERX_ALIGN_MODEL_DIR"):
        build_extractors(settings)


def test_silero_vad_loads_from_its_package(speech: gen.Recording) -> None:
    t = load_transcriber("whisperx", None, vad="silero")  # whisperx's own silero path fetches it from GitHub
    text = letters(" ".join(s.text for s in t.transcribe(str(speech.path)).segments))
    assert "grandmother" in text and "harbor" in text


def test_padded_vad_chunks_stay_inside_the_recording_and_apart(tmp_path: Path) -> None:
    talk = gen.build_recording(tmp_path, gen.SCRIPT, gap_s=12.0, name="gaps")  # far apart: several chunks
    result = WhisperXTranscriber(vad_pad_s=1.0).transcribe(str(talk.path))
    assert len(result.segments) >= 2
    assert result.segments[0].start >= 0.0 and result.segments[-1].end <= result.duration_s
    assert all(a.end <= b.start for a, b in zip(result.segments, result.segments[1:], strict=False))


def test_an_unknown_vad_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown VAD"):
        WhisperXTranscriber(vad="webrtc")
