"""Which extractor handles which family of formats, built once at start-up from Settings.

Models and external programs (the Whisper model, tesseract) load here, when the extract
worker starts, never at import.  A family whose dependency is missing or switched off is
not silently dropped: artifacts of that family fail with a reason that says what to turn on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from secondbrain import sniff
from secondbrain.errors import PermanentError
from secondbrain.ports import Captioner, Transcriber
from secondbrain.settings import Settings
from services.extractors.budget import MB, Budget
from services.extractors.document import Extractor

log = logging.getLogger(__name__)


class ExtractorSet:
    """The extractors of one worker, by family (text, html, pdf, image, audio, office)."""

    def __init__(self, extractors: Mapping[str, Extractor], disabled: Mapping[str, str] | None = None) -> None:
        self._extractors = dict(extractors)
        self._disabled = dict(disabled or {})

    def wait_ready(self) -> None:
        """Block until the models are loaded (they are, for a set built directly)."""

    def get(self, family: str) -> Extractor:
        """The extractor for ``family``; ``PermanentError`` naming what is missing otherwise."""
        found = self._extractors.get(family)
        if found is not None:
            return found
        reason = self._disabled.get(family, f"no extractor for {family} is installed")
        raise PermanentError(f"{family} files cannot be processed by this deployment: {reason}", retry_helps=True)

    @property
    def families(self) -> list[str]:
        """The families this worker can extract."""
        return sorted(self._extractors)

    @property
    def disabled(self) -> dict[str, str]:
        """Families switched off, with the reason."""
        return dict(self._disabled)


class BackgroundExtractorSet(ExtractorSet):
    """An :class:`ExtractorSet` whose models load on a thread started at construction.

    Start-up overlaps loading the models (seconds: unstructured, spaCy, Whisper) with the
    stage joining its consumer group; :meth:`wait_ready` (called at start-up) re-raises a
    load failure so a broken install still stops the worker before it takes any work.
    """

    def __init__(self, factory: Callable[[], ExtractorSet]) -> None:
        super().__init__({})
        self._error: BaseException | None = None
        self._loaded = threading.Event()

        def load() -> None:
            try:
                built = factory()
                self._extractors, self._disabled = dict(built._extractors), dict(built._disabled)
            except BaseException as exc:  # handed to wait_ready/get on the caller's thread
                self._error = exc
            finally:
                self._loaded.set()

        threading.Thread(target=load, name="load-extractors", daemon=True).start()

    def wait_ready(self) -> None:
        """Block until loaded; raise what loading raised."""
        self._loaded.wait()
        if self._error is not None:
            raise RuntimeError(f"the extractors could not be loaded: {self._error}") from self._error

    def get(self, family: str) -> Extractor:
        """The extractor for ``family`` once the models are loaded."""
        self.wait_ready()
        return super().get(family)

    @property
    def families(self) -> list[str]:
        """The families this worker can extract (after loading)."""
        self.wait_ready()
        return super().families


def extraction_budget(settings: Settings) -> Budget:
    """What one artifact may cost to extract, from the settings."""
    return Budget(max_expanded_bytes=settings.extract_max_expanded_mb * MB, max_elements=settings.extract_max_elements,
                  timeout_s=settings.extract_timeout_s, max_memory_bytes=settings.extract_max_memory_mb * MB)


def build_extractors(settings: Settings, *, transcriber: Transcriber | None = None,
                     captioner: Captioner | None = None) -> ExtractorSet:
    """Every extractor the settings ask for, with models loaded; see :class:`ExtractorSet`."""
    from services.extractors.html import HtmlExtractor
    from services.extractors.isolation import IsolatedExtractor
    from services.extractors.pdf import PdfExtractor
    from services.extractors.text import TextExtractor

    budget = extraction_budget(settings)
    # Office documents are parsed in child processes: a hostile file costs its own budget of time and
    # memory, never the worker's (see services.extractors.isolation).
    office: Extractor = IsolatedExtractor("services.extractors.office:OfficeExtractor", budget,
                                          kwargs={"budget": budget}, workers=min(2, settings.stage_concurrency),
                                          label="document")
    extractors: dict[str, Extractor] = {sniff.TEXT: TextExtractor(), sniff.HTML: HtmlExtractor(),
                                        sniff.OFFICE: office}
    disabled: dict[str, str] = {}

    ocr = None
    if settings.ocr_enabled:
        from secondbrain.ocr import TesseractOcr

        candidate = TesseractOcr(languages=settings.ocr_languages)
        ok, why = candidate.available()  # also catches a missing language pack
        if ok:
            ocr = candidate
        else:
            disabled[sniff.IMAGE] = why
            log.warning("OCR unavailable: scanned PDF pages are skipped and images refused", extra={"reason": why})
    else:
        disabled[sniff.IMAGE] = "OCR is switched off (SB_OCR_ENABLED=false) and images need it"
    extractors[sniff.PDF] = PdfExtractor(ocr, ocr_dpi=settings.pdf_ocr_dpi, max_pages=settings.pdf_max_pages)

    if captioner is None and settings.vision_base_url:
        from services.extractors.image import OpenAICaptioner

        captioner = OpenAICaptioner(base_url=settings.vision_base_url, api_key=settings.vision_api_key,
                                    model=settings.vision_model)
    if ocr is not None or captioner is not None:
        from services.extractors.image import ImageExtractor

        extractors[sniff.IMAGE] = ImageExtractor(ocr, captioner, max_pixels=settings.image_max_pixels)
        disabled.pop(sniff.IMAGE, None)

    if transcriber is None and settings.transcriber != "none":
        from secondbrain.transcribe import load_transcriber

        transcriber = load_transcriber(settings.transcriber, settings.transcriber_model_path,
                                       align_model_dir=settings.whisperx_align_model_dir,
                                       vad=settings.whisperx_vad)
    if transcriber is not None:
        from services.extractors.audio import AudioExtractor

        extractors[sniff.AUDIO] = AudioExtractor(transcriber, max_duration_s=settings.audio_max_duration_s)
    else:
        disabled[sniff.AUDIO] = "audio transcription is switched off (SB_TRANSCRIBER=none)"
    log.info("extractors ready", extra={"families": sorted(extractors), "disabled": sorted(disabled)})
    return ExtractorSet(extractors, disabled)
