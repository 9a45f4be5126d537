"""The faust app a stage runs in: one consumer group per stage, raw bytes in and out, manual acks.

Only the runner builds one; everything here is broker configuration from the process's Settings.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import faust

from secondbrain.pipeline.kafka_security import faust_credentials
from secondbrain.settings import Settings


def faust_brokers(bootstrap: str) -> list[str]:
    """``host:port,host:port`` -> faust broker URLs."""
    return [f"kafka://{b.strip()}" for b in bootstrap.split(",") if b.strip()]


def build_app(settings: Settings, group: str, topic_name: str, agent_name: str,
              agent: Callable[[Any], Awaitable[None]]) -> faust.App:
    """A faust app named ``group`` whose one agent, ``agent``, reads ``topic_name``."""
    s = settings
    scratch = Path(tempfile.gettempdir()) / "secondbrain-faust"
    scratch.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        group,
        # faust writes table state to "<app id>-data" in the working directory by default; the
        # stages keep no faust state (job state lives in Postgres), so keep it out of the way.
        datadir=str(scratch / group),
        broker=faust_brokers(s.kafka_bootstrap),
        processing_guarantee="at_least_once",  # exactly_once needs transactions Tansu lacks
        topic_replication_factor=s.replication_factor,
        topic_partitions=s.partitions,
        topic_allow_declare=False,  # topics are created explicitly by ensure_topics()
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=s.kafka_session_timeout_ms / 1000,
        broker_heartbeat_interval=s.kafka_heartbeat_interval_ms / 1000,
        broker_commit_interval=1.0,
        broker_max_poll_records=50,
        producer_acks=-1,
        web_enabled=False,
        broker_credentials=faust_credentials(s),
        key_serializer="raw",
        value_serializer="raw",
    )
    topic = app.topic(topic_name, key_type=bytes, value_type=bytes)
    app.agent(topic, name=agent_name)(agent)
    return app
