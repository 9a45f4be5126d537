"""Running secondbrain processes: the embedded all-in-one and each distributed piece.

Both modes run the same code: the same stages, runners, relay and HTTP app.  Embedded
mode only differs in what it starts first (a local broker and Postgres) and in which
store implementations the runtime builds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import uvicorn

from app.assembly import build_runtime
from app.http import create_app
from secondbrain import telemetry
from secondbrain.addresses import parse_networks
from secondbrain.pipeline.kafka_security import aiokafka_options
from secondbrain.pipeline.runner import StageRunner
from secondbrain.pipeline.stage import Stage
from secondbrain.pipeline.topics import ensure_topics
from secondbrain.pipeline.topology import EMBED
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from secondbrain.stages import STAGES
from secondbrain.temporal import Conventions
from services.fetcher.fetch import FetchPolicy

log = logging.getLogger(__name__)

RETENTION_INTERVAL_S = 3600.0  # raw-file retention runs at start, then hourly, in the gateway process
GRACEFUL_HTTP_S = 2  # how long a stopping server lets open requests finish


def fetch_policy(s: Settings) -> FetchPolicy:
    """The web fetcher's limits from the settings."""
    return FetchPolicy(timeout_s=s.fetch_timeout_s, connect_timeout_s=min(10.0, s.fetch_timeout_s),
                       max_bytes=s.fetch_max_bytes, max_redirects=s.fetch_max_redirects,
                       respect_robots=s.fetch_respect_robots, allow_private=s.fetch_allow_private,
                       allow_networks=parse_networks(s.fetch_allow_networks))


def build_stages(rt: Runtime, names: list[str]) -> list[Stage[Any]]:
    """Instantiate the named stages with the runtime's stores and models (loaded here, at start-up)."""
    from services.chunker.logic import ChunkingConfig
    from services.chunker.stage import ChunkerStage
    from services.embedder.stage import EmbedderStage
    from services.extractors.registry import BackgroundExtractorSet, build_extractors
    from services.extractors.stage import ExtractorStage
    from services.fetcher.stage import FetcherStage

    s = rt.settings
    m = rt.metadata
    out: list[Stage[Any]] = []
    for name in names:
        if name == "fetch":
            out.append(FetcherStage(rt.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                    fence=m.fence, catalog=m.catalog, lifecycle=m.lifecycle, policy=fetch_policy(s)))
        elif name == "extract":
            extractors = BackgroundExtractorSet(functools.partial(build_extractors, s))
            out.append(ExtractorStage(rt.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                      fence=m.fence, catalog=m.catalog, lifecycle=m.lifecycle, extractors=extractors,
                                      max_bytes=s.max_upload_bytes))
        elif name == "chunk":
            cfg = ChunkingConfig(target=s.chunk_target_tokens, max_tokens=s.chunk_max_tokens,
                                 min_tokens=s.chunk_min_tokens, overlap=s.chunk_overlap_tokens)
            calendar = Conventions.for_locale(s.locale, country=s.country, hemisphere=s.hemisphere,
                                              date_order=s.date_order)
            out.append(ChunkerStage(rt.objects, cfg, fence=m.fence, zone=ZoneInfo(s.timezone), conventions=calendar,
                                    max_chunks=s.max_chunks_per_document))
        elif name == "embed":
            assert rt.vectors is not None and rt.embedder is not None and rt.sparse is not None
            out.append(EmbedderStage(rt.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                                     vectors=rt.vectors, embedder=rt.embedder, sparse=rt.sparse,
                                     embedders=rt.embedders))
        else:
            raise ValueError(f"unknown stage {name!r}; stages are {', '.join(STAGES)}")
    return out


@dataclass
class Process:
    """What a running process holds, so it can be stopped cleanly."""

    rt: Runtime
    runners: list[StageRunner] = field(default_factory=list)
    relay: Any = None
    server: uvicorn.Server | None = None
    retention: asyncio.Task[None] | None = None
    reindex: Any = None  # the ReindexWorker of a process that embeds
    backups: Any = None  # `up`'s backup folder and schedule (services.backups.service.Backups)
    backup_loop: asyncio.Task[None] | None = None
    reminder_loop: asyncio.Task[None] | None = None  # `up` sends the reminders that are due (mail, push)

    def liveness(self) -> str | None:
        """A reason to restart this process, or None."""
        for r in self.runners:
            if not r.healthy:
                return f"stage {r.step.name} stopped consuming ({r.app.state})"
            stalled = r.stalled()
            if stalled:
                return stalled
        return None


async def start_process(settings: Settings, *, gateway: bool, query: bool, stages: list[str],
                        embedded: bool = False) -> Process:
    """Build the runtime, create topics, start stage runners and the relay (not the HTTP server)."""

    # The gateway deletes and exports sources, indexed passages included: it reaches the vectors too.
    needs_vectors = query or gateway or "embed" in stages
    needs_models = query or "embed" in stages
    t0 = time.perf_counter()
    rt = await asyncio.to_thread(build_runtime, settings, vectors=needs_vectors, models=needs_models, llm=query)
    log.info("runtime built", extra={"ms": round((time.perf_counter() - t0) * 1000)})
    proc = Process(rt=rt)

    async def topics_ready(timeout_s: float = 30.0) -> None:
        await ensure_topics(settings.kafka_bootstrap, rt.names, partitions=settings.partitions,
                            replication=settings.replication_factor, timeout_s=timeout_s,
                            client_options=aiokafka_options(settings))

    try:
        await _start_pieces(proc, settings, topics_ready, gateway=gateway, stages=stages, embedded=embedded)
    except BaseException:
        await stop_process(proc)  # release what did start: pools, shards, consumer groups
        raise
    return proc


async def _start_pieces(proc: Process, settings: Settings, topics_ready: Callable[..., Awaitable[None]], *,
                        gateway: bool, stages: list[str], embedded: bool) -> None:
    from secondbrain.pipeline.relay import OutboxRelay

    rt = proc.rt
    if stages:
        await topics_ready()  # consumers need their topics; a gateway does not (its outbox waits)
    if embedded:
        await asyncio.to_thread(rt.metadata.users.ensure_user, settings.default_user, "Local user")
        # The embedded broker keeps messages in memory: work that was in flight when the
        # last run stopped is queued again from Postgres (ids are deterministic, so a
        # replay cannot duplicate anything).
        requeued = await asyncio.to_thread(rt.metadata.outbox.requeue_unfinished)
        if requeued:
            log.info("resuming unfinished jobs", extra={"jobs": requeued})
    t0 = time.perf_counter()

    async def start_stage(name: str) -> None:
        # Loading a stage's models (off the event loop) and joining its consumer group dominate
        # start-up; the stages do both side by side, so the extractors load while others join.
        (stage,) = await asyncio.to_thread(build_stages, rt, [name])
        runner = StageRunner(stage, settings=settings, codec=rt.codec, jobs=rt.metadata.jobs, names=rt.names,
                             dead_letters=rt.metadata.dead_letters, sealer=rt.sealer)
        proc.runners.append(runner)  # before start(): a failed start-up still stops it
        await runner.start()

    await asyncio.gather(*(start_stage(name) for name in stages))
    proc.runners.sort(key=lambda r: STAGES.index(r.step.name))
    if EMBED.name in stages:  # the process that embeds also finishes re-indexing
        proc.reindex = start_reindex_worker(rt)
        await proc.reindex.start()
    log.info("stages started", extra={"stages": stages, "ms": round((time.perf_counter() - t0) * 1000)})
    if gateway:
        # A short topic-creation timeout: while the broker is down the relay's own backoff paces retries.
        prepare = None if stages else functools.partial(topics_ready, 5.0)
        proc.relay = OutboxRelay(rt.metadata, settings.kafka_bootstrap, batch=settings.relay_batch,
                                 poll_s=settings.relay_poll_s, prepare=prepare,
                                 client_options=aiokafka_options(settings))
        await proc.relay.start()
        if settings.raw_retention_days is not None:
            proc.retention = asyncio.create_task(retention_loop(rt, settings.raw_retention_days))
    if embedded and rt.vectors is not None:  # `up` backs the whole instance up (SB_BACKUP_*)
        from app.backups import backups_for

        proc.backups = backups_for(rt, settings.data_dir)
        if proc.backups.interval_s is not None:
            proc.backup_loop = asyncio.create_task(proc.backups.loop())
    if embedded:
        from services.agenda.push import push_configured
        from services.agenda.reminders import mail_configured

        if mail_configured(settings) or push_configured(settings):
            proc.reminder_loop = asyncio.create_task(reminder_loop(rt, settings))


async def stop_process(proc: Process) -> None:
    """Stop runners, relay and stores (in reverse order of start)."""
    if proc.reminder_loop is not None:
        proc.reminder_loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proc.reminder_loop
    if proc.backup_loop is not None:
        proc.backup_loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proc.backup_loop
    if proc.reindex is not None:
        await proc.reindex.stop()
    if proc.retention is not None:
        proc.retention.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proc.retention
    if proc.relay is not None:
        await proc.relay.stop()
    await asyncio.gather(*(r.stop() for r in proc.runners), return_exceptions=True)
    await asyncio.to_thread(proc.rt.close)


def start_reindex_worker(rt: Runtime) -> Any:
    """A worker that fills and switches the re-indexes ``secondbrain reindex`` recorded (see
    :mod:`services.embedder.reindex`), in the process that owns the vectors."""
    from services.embedder.reindex import Reindexer, ReindexWorker

    assert rt.vectors is not None and rt.embedders is not None and rt.sparse is not None
    return ReindexWorker(Reindexer(rt.metadata, rt.vectors, rt.embedders, rt.sparse,
                                   batch_size=max(rt.settings.embed_batch_size, 32)))


async def retention_loop(rt: Runtime, days: int, interval_s: float = RETENTION_INTERVAL_S) -> None:
    """Remove expired raw files now and then every ``interval_s`` (until cancelled); a failed run
    is logged and tried again at the next tick."""
    from secondbrain.lifecycle import purge_expired_raw

    while True:
        try:
            report = await asyncio.to_thread(purge_expired_raw, rt.metadata, rt.objects, days, gate=rt.gate)
            log.info("raw-file retention ran", extra={"days": days, **report.to_json()})
        except Exception as exc:
            log.warning("raw-file retention failed; trying again later", extra={"error": repr(exc)})
        await asyncio.sleep(interval_s)


async def reminder_loop(rt: Runtime, settings: Settings) -> None:
    """Send the reminders that are due every SB_REMINDER_INTERVAL_S (until cancelled), and the weekly digest on its
    day (SB_DIGEST_DAY); a failed send (the mail server away) is logged and tried again at the next tick, so no
    reminder is lost."""
    from services.agenda.digest import send_digest_if_due
    from services.agenda.reminders import send_due
    from services.agenda.service import Agenda
    from services.http_helpers import calendar_conventions

    store, push = rt.metadata.reminders, rt.metadata.push_subscriptions
    agenda = Agenda(rt.vectors, rt.metadata) if rt.vectors is not None else None
    while True:
        try:
            sent = await asyncio.to_thread(send_due, store, settings, None, push)
            if sent:
                log.info("reminders sent", extra={"sent": sent})
        except Exception as exc:
            log.warning("sending reminders failed; trying again later", extra={"error": repr(exc)})
        if agenda is not None and settings.digest_day:
            try:
                await asyncio.to_thread(send_digest_if_due, agenda, settings, datetime.now(UTC),
                                        calendar_conventions(settings))
            except Exception as exc:
                log.warning("mailing the weekly digest failed; trying again later", extra={"error": repr(exc)})
        await asyncio.sleep(settings.reminder_interval_s)


class _Server(uvicorn.Server):
    """uvicorn's server, telling the process the moment a stop is asked for (SIGINT or SIGTERM)."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_stop = on_stop

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self._on_stop is not None:
            self._on_stop()
        super().handle_exit(sig, frame)


def http_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """How a process serves HTTP: h11 bounds the request head it buffers (httptools does not; the app
    answers 431 below twice that, with a sentence, and h11 drops anything larger), and a head must be
    complete within SB_HEADER_TIMEOUT_S (:mod:`app.http_protocol`), so slow or silent connections
    do not pile up; an idle kept-alive connection lives SB_KEEP_ALIVE_S, longer than clients keep theirs.
    ``overrides``: other uvicorn options (the LAN listener's address and certificate)."""
    from app.http_protocol import head_timeout_protocol

    options: dict[str, Any] = {"host": settings.host, "port": settings.port, **overrides}
    return uvicorn.Config(app, log_config=None, access_log=False,
                          lifespan="off", http=head_timeout_protocol(settings.header_timeout_s),
                          timeout_keep_alive=settings.keep_alive_s,
                          h11_max_incomplete_event_size=2 * settings.max_header_bytes, **options)


@dataclass(frozen=True)
class LanListener:
    """``up --lan``: HTTPS on this address and port of the local network, besides plain HTTP on loopback."""

    host: str
    port: int
    cert_file: Path
    key_file: Path


class _Listener(uvicorn.Server):
    """A second server of the same process: the first one owns the signals and stops this one after it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def lan_config(app: Any, settings: Settings, lan: LanListener) -> uvicorn.Config:
    """The LAN listener: the same app behind the exact Host rule, TLS with the kept certificate, and no
    X-Forwarded-* taken from anyone (no proxy stands between the phone and this listener)."""
    from secondbrain.http_security import OnlyAuthority

    return http_config(OnlyAuthority(app, lan.host, lan.port), settings, host=lan.host, port=lan.port,
                       ssl_certfile=str(lan.cert_file), ssl_keyfile=str(lan.key_file), proxy_headers=False)


async def serve(settings: Settings, *, gateway: bool, query: bool, stages: list[str], embedded: bool = False,
                on_ready: Callable[[Process, float], None] | None = None,
                on_stop: Callable[[], None] | None = None, lan: LanListener | None = None) -> None:
    """Run a process until SIGINT/SIGTERM: stages, relay and the HTTP server on settings.host:port (and
    HTTPS on ``lan``'s address too, when given).  ``on_stop`` is called (on the signal) the moment a stop
    is asked for."""
    t0 = time.perf_counter()
    # Before anything connects: the database instrumentation wraps connections as they are made.
    telemetry.setup_telemetry(settings, telemetry.service_name_for(gateway=gateway, query=query, stages=stages,
                                                                   embedded=embedded))
    try:
        await _serve(settings, t0, gateway=gateway, query=query, stages=stages, embedded=embedded,
                     on_ready=on_ready, on_stop=on_stop, lan=lan)
    finally:
        await asyncio.to_thread(telemetry.shutdown_telemetry)  # flush what is still buffered


async def _serve(settings: Settings, t0: float, *, gateway: bool, query: bool, stages: list[str], embedded: bool,
                 on_ready: Callable[[Process, float], None] | None, on_stop: Callable[[], None] | None,
                 lan: LanListener | None) -> None:
    proc = await start_process(settings, gateway=gateway, query=query, stages=stages, embedded=embedded)
    second: _Listener | None = None
    second_serving: asyncio.Task[None] | None = None
    try:
        app = create_app(proc.rt, gateway=gateway, query=query, relay=proc.relay, liveness=proc.liveness,
                         backups=proc.backups)
        config = http_config(app, settings)
        # A stop does not wait long for open connections (a streamed answer, a slow client): the pipeline
        # and the stores still have to stop within the process's stop deadline.
        config.timeout_graceful_shutdown = GRACEFUL_HTTP_S
        proc.server = _Server(config, on_stop)
        serving = asyncio.create_task(proc.server.serve())
        if lan is not None:
            lan_cfg = lan_config(app, settings, lan)
            lan_cfg.timeout_graceful_shutdown = GRACEFUL_HTTP_S
            second = _Listener(lan_cfg)
            second_serving = asyncio.create_task(second.serve())
        servers: list[tuple[uvicorn.Server, asyncio.Task[None], str]] = [
            (proc.server, serving, f"{settings.host}:{settings.port}")]
        if lan is not None and second is not None and second_serving is not None:
            servers.append((second, second_serving, f"{lan.host}:{lan.port}"))
        while not all(srv.started for srv, _, _ in servers) and not any(task.done() for _, task, _ in servers):
            await asyncio.sleep(0.05)
        for _, task, where in servers:
            if task.done():
                proc.server.should_exit = True  # the other one, when only one failed
                await task  # re-raise a bind error
                raise RuntimeError(f"the HTTP server on {where} stopped at start-up (is the port free?)")
        if on_ready:
            on_ready(proc, time.perf_counter() - t0)
        await serving
    finally:
        if second is not None and second_serving is not None:
            second.should_exit = True  # the loopback server stopped (a signal): the LAN one follows
            with contextlib.suppress(Exception):
                await second_serving
        await stop_process(proc)
