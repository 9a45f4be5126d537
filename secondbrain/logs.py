"""Structured JSON logs: one object per line, keyword fields from ``extra=``, and the ids of the
trace and span the line was written in (``trace_id``, ``span_id``), so a log line leads to its trace."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from secondbrain.telemetry import current_ids

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime"}


class TraceContextFilter(logging.Filter):
    """Stamps each record with the current span's ids (when there is one), at the moment it is made:
    the thread and context of the call, whatever handler formats it later."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add ``trace_id`` and ``span_id`` (hex) unless the record has them already."""
        if not hasattr(record, "trace_id"):
            ids = current_ids()
            if ids is not None:
                record.trace_id, record.span_id = ids
        return True


class JsonFormatter(logging.Formatter):
    """Formats a record as JSON with its ``extra`` fields at the top level."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record."""
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``LEVEL logger: message key=value ...`` for people reading a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record."""
        extras = " ".join(f"{k}={v}" for k, v in vars(record).items()
                          if k not in _STANDARD and not k.startswith("_") and k != "color_message")
        line = f"{record.levelname} {record.name}: {record.getMessage()}{' ' + extras if extras else ''}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(level: str = "INFO", *, json_logs: bool = True) -> None:
    """Configure the root logger once per process (called from ``main()``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_logs else TextFormatter())
    handler.addFilter(TraceContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The Kafka clients are chatty at INFO about every rebalance step.
    for noisy in ("aiokafka", "faust", "mode", "kafka", "uvicorn.access", "httpx", "pgserver"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
