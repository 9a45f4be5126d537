"""Images -> a document made of the text in the picture and, optionally, a description of it.

Text in the image (a screenshot, a photographed receipt, a whiteboard) is read with OCR,
one block per paragraph with its confidence and pixel box.  A vision model, when one is
configured, adds a short description as the first block, so a photo without words can
still be found ("the beach at sunset").  EXIF gives the time the photo was taken, the
camera and the place.

The pixel count is checked from the file header before anything is decoded, so a small
file that would expand into gigabytes (a decompression bomb) is refused cheaply.
"""

from __future__ import annotations

import base64
import io
import math
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageOps

from secondbrain.errors import PermanentError, RetryableError
from secondbrain.ocr import TesseractOcr, flatten
from services.extractors import dates
from services.extractors.document import Block, Extracted, ExtractionContext

if TYPE_CHECKING:
    from pydantic import SecretStr

    from secondbrain.ports import Captioner

_EXIF_IFD = 0x8769
_GPS_IFD = 0x8825
_MAKE, _MODEL, _ORIENTATION = 0x010F, 0x0110, 0x0112
_DATETIME_ORIGINAL, _DATETIME_DIGITIZED = 0x9003, 0x9004
_OFFSET_ORIGINAL, _OFFSET_DIGITIZED = 0x9011, 0x9012
#: Formats vision endpoints accept as they are; anything else is re-encoded as JPEG first.
_WEB_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
_CAPTION_MAX_SIDE = 2048
_CAPTION_MAX_BYTES = 5_000_000
VISION_SETTINGS_HINT = "set SB_VISION_BASE_URL and SB_VISION_MODEL to describe images with a vision model"
DEFAULT_CAPTION_PROMPT = ("Describe this image in one or two sentences for a personal search index: what it shows, "
                          "where, and any clearly visible text. Do not speculate.")


IMAGE_TYPES = {"image/png", "image/jpeg", "image/jpg", "image/pjpeg", "image/webp", "image/gif", "image/tiff",
               "image/bmp", "image/x-ms-bmp", "image/heic", "image/heif", "image/heic-sequence",
               "image/heif-sequence"}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".jfif", ".webp", ".gif", ".tif", ".tiff", ".bmp", ".heic", ".heif")


def supports(content_type: str, filename: str | None) -> bool:
    """Whether this extractor handles the artifact (raster image types; SVG is not a picture to OCR)."""
    ct = content_type.split(";")[0].strip().lower()
    if ct in IMAGE_TYPES:
        return True
    return bool(ct in ("", "application/octet-stream") and filename
                and filename.lower().endswith(IMAGE_EXTENSIONS))


def _gps_decimal(dms: Any, ref: Any) -> float | None:
    """(degrees, minutes, seconds) and "N"/"S"/"E"/"W" -> signed decimal degrees."""
    try:
        d, m, s = (float(v) for v in dms)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    value = d + m / 60 + s / 3600
    if not math.isfinite(value):
        return None
    return -value if str(ref).strip("\x00").upper() in ("S", "W") else value


def _clean_tag(value: Any) -> str:
    return str(value).replace("\x00", "").strip() if value is not None else ""


def exif_metadata(image: Image.Image) -> tuple[dict[str, str], datetime | None]:
    """Camera, place and capture time from an image's EXIF (empty when it has none or it is damaged)."""
    meta: dict[str, str] = {}
    try:
        exif = image.getexif()
        sub = exif.get_ifd(_EXIF_IFD)
        gps = exif.get_ifd(_GPS_IFD)
    except Exception:  # EXIF is optional: a damaged block must not cost the picture
        return meta, None
    for tag, key in ((_MAKE, "camera_make"), (_MODEL, "camera_model")):
        if _clean_tag(exif.get(tag)):
            meta[key] = _clean_tag(exif.get(tag))
    orientation = exif.get(_ORIENTATION)
    if orientation not in (None, 1):
        meta["exif_orientation"] = str(orientation)
    stated: datetime | None = None
    for tag, offset_tag in ((_DATETIME_ORIGINAL, _OFFSET_ORIGINAL), (_DATETIME_DIGITIZED, _OFFSET_DIGITIZED)):
        stated, tz_text = dates.exif_datetime(sub.get(tag), sub.get(offset_tag))
        if stated is not None:
            meta["exif_datetime_original" if tag == _DATETIME_ORIGINAL else "exif_datetime_digitized"] = \
                _clean_tag(sub.get(tag))
            meta["exif_timezone"] = tz_text
            break
    lat, lon = _gps_decimal(gps.get(2), gps.get(1)), _gps_decimal(gps.get(4), gps.get(3))
    if lat is not None and lon is not None and abs(lat) <= 90 and abs(lon) <= 180:
        meta["gps_lat"], meta["gps_lon"] = f"{lat:.6f}", f"{lon:.6f}"
    return meta, stated


def _bomb(width: int | None, height: int | None, pixels: int | None, limit: int) -> PermanentError:
    by = "\N{MULTIPLICATION SIGN}"
    size = f"{width}{by}{height} pixels" if width and height else f"{pixels:,} pixels" if pixels else "many pixels"
    return PermanentError(f"the image is {size}, over the limit of {limit:,} pixels; it looks like a "
                          "decompression bomb or is too large to process")


class ImageExtractor:
    """Extracts images (PNG, JPEG, WebP, GIF, TIFF, BMP, HEIC/HEIF): OCR text, caption, EXIF.

    ``ocr`` and ``captioner`` are both optional, but an image is only indexed when at least
    one of them finds something to say.  Images over ``max_pixels`` are refused before they
    are decoded; images over ``ocr_max_pixels`` are scaled down for OCR (boxes stay in the
    original pixels).
    """

    modality = "image"

    def __init__(self, ocr: TesseractOcr | None, captioner: Captioner | None = None, *,
                 max_pixels: int = 80_000_000, ocr_max_pixels: int = 25_000_000) -> None:
        self.ocr = ocr
        self.captioner = captioner
        self.max_pixels = max_pixels
        self.ocr_max_pixels = ocr_max_pixels
        try:  # HEIC/HEIF (iPhone photos): registered here so importing this module changes nothing
            import pillow_heif

            pillow_heif.register_heif_opener()
            self.heif = True
        except ImportError:  # pragma: no cover - pillow-heif is a dependency; without it HEIC is refused
            self.heif = False

    def _open(self, raw: bytes) -> Image.Image:
        """Open lazily (header only) and refuse oversized images before any pixel is decoded."""
        if not raw:
            raise PermanentError("the file is empty: there is nothing to index")
        try:
            image = Image.open(io.BytesIO(raw))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            m = re.search(r"\((\d+) pixels\)", str(exc))
            raise _bomb(None, None, int(m.group(1)) if m else None, self.max_pixels) from exc
        except Image.UnidentifiedImageError as exc:
            raise PermanentError("the file is not an image in a supported format (PNG, JPEG, WebP, GIF, TIFF, "
                                 "BMP, HEIC); convert it to PNG or JPEG and upload it again") from exc
        except Exception as exc:  # any decoder failure on a header is bad input, never a reason to retry
            raise PermanentError(f"the image is damaged and cannot be read: {exc}") from exc
        width, height = image.size
        if width <= 0 or height <= 0:
            raise PermanentError("the image has no pixels (its width or height is 0)")
        if width * height > self.max_pixels:
            raise _bomb(width, height, None, self.max_pixels)
        return image

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract an image; raise ``PermanentError`` for a damaged, oversized or wordless image."""
        image = self._open(raw)
        fmt = image.format or "unknown"
        metadata: dict[str, str] = {"width": str(image.width), "height": str(image.height), "format": fmt.lower()}
        frames = int(getattr(image, "n_frames", 1) or 1)
        if frames > 1:
            metadata["frames"] = str(frames)  # only the first frame is read
        try:
            image.load()  # decode now, so a truncated file fails here with a clear reason
            exif_meta, stated = exif_metadata(image)
            upright = ImageOps.exif_transpose(image)  # phone photos are stored sideways
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise _bomb(image.width, image.height, None, self.max_pixels) from exc
        except Exception as exc:
            raise PermanentError(f"the image is damaged or truncated and cannot be decoded: {exc}") from exc
        metadata.update(exif_meta)

        blocks: list[Block] = []
        caption_empty = False
        if self.captioner is not None:
            turned = "exif_orientation" in metadata  # endpoints do not all honour EXIF orientation
            payload, content_type = self._caption_payload(raw, fmt, upright, turned)
            caption = self.captioner.caption(payload, content_type).strip()
            if caption:
                blocks.append(Block("paragraph", caption, attributes={"caption_model": self.captioner.model_id}))
            else:
                caption_empty = True
        if self.ocr is not None:
            blocks.extend(self._ocr(upright))
        else:
            metadata["ocr"] = "unavailable"
        if not blocks:
            raise PermanentError(self._nothing_found(caption_empty))
        return Extracted(title=None, modality=self.modality, blocks=blocks, metadata=metadata,
                         stated_time=stated, stated_time_source="file_metadata")

    def _ocr(self, image: Image.Image) -> list[Block]:
        """OCR blocks of the (upright) image; a huge image is read at a reduced size."""
        assert self.ocr is not None
        scale = 1.0
        if image.width * image.height > self.ocr_max_pixels:
            scale = math.sqrt(self.ocr_max_pixels / (image.width * image.height))
            image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))),
                                 Image.Resampling.LANCZOS)
        result = self.ocr.read(image)
        return [Block("ocr", b.text, attributes=b.attributes(1 / scale)) for b in result.blocks]

    def _caption_payload(self, raw: bytes, fmt: str, image: Image.Image, turned: bool) -> tuple[bytes, str]:
        """The bytes to send to the vision model: the original when it is a small, upright web format,
        else an upright JPEG of at most 2048 pixels a side."""
        if fmt in _WEB_FORMATS and not turned and len(raw) <= _CAPTION_MAX_BYTES \
                and max(image.size) <= _CAPTION_MAX_SIDE:
            return raw, _WEB_FORMATS[fmt]
        small = flatten(image).convert("RGB")  # HEIC, TIFF, huge photos: endpoints want small JPEG/PNG
        small.thumbnail((_CAPTION_MAX_SIDE, _CAPTION_MAX_SIDE))
        out = io.BytesIO()
        small.save(out, "JPEG", quality=85)
        return out.getvalue(), "image/jpeg"

    def _nothing_found(self, caption_empty: bool) -> str:
        if self.ocr is None and self.captioner is None:
            return ("the image cannot be indexed: OCR is not installed (install tesseract-ocr) and no captioning "
                    f"model is configured ({VISION_SETTINGS_HINT})")
        if self.captioner is None:
            return f"no text found in the image, and no captioning model is configured ({VISION_SETTINGS_HINT})"
        if caption_empty:
            return "no text found in the image, and the captioning model returned an empty description"
        return "no text found in the image"  # pragma: no cover - a non-empty caption always makes a block


class OpenAICaptioner:
    """Describes images with any OpenAI-compatible vision endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

    The image is sent inline as a ``data:`` URL in a chat completion.  Connection
    problems, time-outs, rate limits and server errors raise ``RetryableError``; an
    endpoint that rejects the image itself raises ``PermanentError``.
    """

    def __init__(self, base_url: str, api_key: SecretStr | None, model: str, timeout_s: float = 60, *,
                 prompt: str = DEFAULT_CAPTION_PROMPT, max_tokens: int = 200) -> None:
        from openai import OpenAI

        self._model = model
        self.prompt = prompt
        self.max_tokens = max_tokens
        # Local servers need no key, but the client insists on one.
        key = api_key.get_secret_value() if api_key is not None and api_key.get_secret_value() else "not-needed"
        self._client = OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=0)  # the runner retries

    @property
    def model_id(self) -> str:
        """The model name as the endpoint knows it."""
        return self._model

    def caption(self, image: bytes, content_type: str) -> str:
        """A one- or two-sentence description of the image ("" when the model says nothing)."""
        import openai

        url = f"data:{content_type};base64,{base64.b64encode(image).decode('ascii')}"
        try:
            response = self._client.chat.completions.create(
                model=self._model,
                max_tokens=self.max_tokens,
                messages=[{"role": "user", "content": [
                    {"type": "text", "text": self.prompt},
                    {"type": "image_url", "image_url": {"url": url}},
                ]}],
            )
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            raise PermanentError(f"the captioning model rejected the image: {exc}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code == 413:
                raise PermanentError("the image is too large for the captioning model") from exc
            raise RetryableError(f"the captioning endpoint answered {exc.status_code}: {exc}") from exc
        except openai.APIError as exc:  # connection refused, time-out, unreadable answer
            raise RetryableError(f"the captioning endpoint did not answer: {exc}") from exc
        if not response.choices:
            return ""
        return (response.choices[0].message.content or "").strip()
