"""Structured JSON logs: one object per line, keyword fields from ``extra=``."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime"}


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
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The Kafka clients are chatty at INFO about every rebalance step.
    for noisy in ("aiokafka", "faust", "mode", "kafka", "uvicorn.access", "httpx", "pgserver"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
