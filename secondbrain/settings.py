"""One frozen Settings object per process, built in ``main()`` (never at import).

Every value can come from the environment with the ``SB_`` prefix (``SB_KAFKA_BOOTSTRAP``,
``SB_POSTGRES_DSN`` ...) or from a ``.env`` file; the CLI overrides a few of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Mode = Literal["embedded", "distributed"]
APP_NAME = "secondbrain"


def default_data_dir() -> Path:
    """Where embedded mode keeps a person's data unless told otherwise: the platform's directory for an
    application's user data (``~/.local/share/secondbrain`` on Linux, or ``$XDG_DATA_HOME/secondbrain``;
    ``~/Library/Application Support/secondbrain`` on macOS), never a folder of the checkout, which
    ``git clean`` or deleting the clone would take with it."""
    import platformdirs

    return platformdirs.user_data_path(APP_NAME, appauthor=False)


class Settings(BaseSettings):
    """Configuration of a secondbrain process.  The documentation's configuration page is generated from these
    fields (their ``# --- section`` comments, defaults and descriptions): every field needs a description."""

    model_config = SettingsConfigDict(env_prefix="SB_", env_file=".env", extra="ignore", frozen=True)

    mode: Mode = Field(
        "embedded", description="'embedded' (`secondbrain up`: every piece in one process, with its own broker, "
                                "PostgreSQL and vector engine) or 'distributed' (each piece its own process, against "
                                "Kafka, PostgreSQL, S3 and a Qdrant server).")
    data_dir: Path = Field(default_factory=default_data_dir,
                           description="Embedded mode's data (database, files, vectors, keys). Default: the "
                                       "platform's user data directory, ~/.local/share/secondbrain on Linux.")

    # --- HTTP
    host: str = Field(
        "127.0.0.1", description="The address the HTTP server listens on (`secondbrain up` stays on loopback).")
    port: int = Field(8000, description="The HTTP server's port.")
    default_user: str = Field(
        "local",
        description="User id applied to requests without credentials where that is allowed (see auth).",
    )
    auth: Literal["required", "off"] = Field(
        "required", description="'required': every request but /healthz and /readyz carries an API key (or the "
                                "web page's session cookie), loopback included; 'off' is for tests only and is "
                                "refused unless the server listens on loopback.")
    allowed_hosts: str = Field(
        "", description="Comma-separated DNS names the HTTP services answer to besides 'localhost' and IP "
                        "addresses (a leading dot allows subdomains): the name of a proxy or Ingress in front.")
    allowed_origins: str = Field(
        "", description="Comma-separated origins (https://app.example.org) allowed to make cross-site requests; "
                        "CORS headers are sent for them only.")
    public_url: str | None = Field(
        None, description="The https:// address this server is reached at through a reverse proxy (Caddy) or "
                          "Tailscale Serve, e.g. https://brain.example.org: links (sign-in links, calendar "
                          "feeds) and the installed app's start address use it, and its name and origin are "
                          "allowed like the server's own.")
    lan_address: str | None = Field(
        None, description="`up --lan`: the IPv4 address on the local network to serve HTTPS on (default: the "
                          "private address of the interface this machine's traffic leaves by).")
    watch_dirs: str = Field(
        "", description="Folders `secondbrain up` keeps in sync, separated by the system's path separator "
                        "(':' on Linux and macOS): new, changed, moved and deleted files follow.")
    # --- mail (`secondbrain mail`, and `up` in the background when a host or a Maildir is set)
    mail_host: str = Field("", description="IMAP server `up` takes mail from (with SB_MAIL_USER and "
                                           "SB_MAIL_PASSWORD); empty: none.")
    mail_port: int | None = Field(None, ge=1, le=65535, description="IMAP port (993 for imaps, 143 for starttls).")
    mail_security: Literal["imaps", "starttls"] = Field(
        "imaps", description="'imaps' (TLS from the start, port 993) or 'starttls' (port 143, upgraded before the "
                             "login); there is no plain-text mode.")
    mail_user: str = Field("", description="The IMAP account's user name.")
    mail_password: SecretStr | None = Field(
        None, description="The IMAP account's password (an app password with Gmail or Outlook).")
    mail_ca_file: str = Field("", description="PEM file of the CA (or the self-signed certificate) the IMAP "
                                              "server's certificate is checked against; empty: the system's.")
    mail_folders: str = Field("secondbrain", description="Comma-separated IMAP folders to take mail from.")
    mail_maildir: str = Field("", description="A local Maildir `up` takes mail from (instead of, or besides, IMAP).")
    mail_interval_s: float = Field(300.0, ge=5, description="How often `up` looks for new mail.")
    # --- Reminders by e-mail (`up` sends the reminders of agenda lines when they are due)
    smtp_host: str = Field("", description="SMTP server `up` sends reminders through (with SB_SMTP_TO); empty: "
                                           "reminders are kept but not sent.")
    smtp_port: int | None = Field(None, ge=1, le=65535, description="SMTP port (default: 587 for starttls, 465 for "
                                                                     "tls, 25 for none).")
    smtp_security: Literal["starttls", "tls", "none"] = Field(
        "starttls", description="'starttls' (upgraded before the login), 'tls' (TLS from the start) or 'none' (plain "
                                "text: only for a server on this machine).")
    smtp_user: str = Field("", description="The SMTP account's user name (empty: no login).")
    smtp_password: SecretStr | None = Field(None, description="The SMTP account's password.")
    smtp_from: str = Field("", description="The sender address of reminders (default: SB_SMTP_TO).")
    smtp_to: str = Field("", description="Where reminders are sent: your e-mail address.")
    reminder_interval_s: float = Field(60.0, ge=1, description="How often `up` looks for reminders that are due.")
    digest_day: Literal["", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] = Field(
        "", description="Mail the week's digest (what you saved, what is coming) to SB_SMTP_TO on this day, at "
                        "SB_DIGEST_TIME in SB_TIMEZONE; empty: never.")
    digest_time: str = Field("08:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$",
                             description="The time of day (HH:MM, in SB_TIMEZONE) the weekly digest is mailed.")
    # --- Reminders by web push (to each browser where "Turn on reminders on this device" was chosen)
    push_reminders: bool = Field(True, description="Send due reminders by web push to the browsers that turned them "
                                                   "on (the server's VAPID key pair is kept as vapid.pem in the data "
                                                   "dir, made on first use).")
    push_contact: str = Field("", description="The contact push services may write to about this server's pushes, a "
                                              "mailto: or https: address (default: mailto: SB_SMTP_TO, else the "
                                              "server's public address).")
    # --- Calendars (`secondbrain calendar`, and `up` in the background when addresses are set)
    calendar_urls: SecretStr | None = Field(None, description="Secret iCal addresses (https:// or webcal://, "
                                             "comma-separated) of calendars `up` keeps in step.")
    calendar_interval_s: float = Field(1800.0, ge=5, description="How often `up` refreshes SB_CALENDAR_URLS.")
    calendar_allow_hosts: str = Field("", description="Comma-separated host names (or addresses) calendars may be "
                                                      "fetched from even when they are link-local, unspecified or "
                                                      "multicast addresses (refused otherwise).")
    # --- The web page
    session_days: int = Field(30, ge=1, le=365, description="How long the web page stays signed in with "
                                                              "'remember me' (otherwise until the browser closes, "
                                                              "at most a day).")

    def calendar_hosts(self) -> tuple[str, ...]:
        """SB_CALENDAR_ALLOW_HOSTS as host names, lower case."""
        return tuple(h.strip().lower() for h in self.calendar_allow_hosts.split(",") if h.strip())

    @field_validator("auth", mode="before")
    @classmethod
    def _auth_ok(cls, v: object) -> object:
        # 'auto' (no key on loopback) was the default once; it now means what every mode means: keys required.
        return "required" if v == "auto" else v

    @field_validator("public_url", mode="before")
    @classmethod
    def _public_url_ok(cls, v: object) -> object:
        from urllib.parse import urlsplit

        if v is None or (isinstance(v, str) and not v.strip()):
            return None  # SB_PUBLIC_URL= is unset
        text = str(v).strip().rstrip("/")
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path \
                or parts.query or parts.fragment or parts.username:
            raise ValueError(f"public_url must be an address such as https://brain.example.org (a scheme and a "
                             f"name, no path: the page lives at the root of its address), not {text[:80]!r}")
        return text

    @model_validator(mode="after")
    def _auth_off_only_on_loopback(self) -> Settings:
        from secondbrain.infra.ports import is_loopback

        if self.auth == "off" and not is_loopback(self.host):
            raise ValueError(f"SB_AUTH=off turns API keys off and is only for tests on loopback; refusing it with "
                             f"SB_HOST={self.host}. Remove SB_AUTH (keys are required by default).")
        return self

    # --- Kafka
    kafka_bootstrap: str = Field(
        "127.0.0.1:9092", description="The brokers, comma-separated host:port (distributed mode; embedded mode runs "
                                      "its own).")
    kafka_port: int | None = Field(
        None, ge=1, le=65535,
        description="Embedded mode: the port of the local broker other apps publish to, on 127.0.0.1 only. "
                    "Unset: 9092 when it is free, another free port otherwise (printed by `secondbrain up` "
                    "and reported by GET /v1/status).")
    topic_prefix: str = Field(
        "", description="A prefix for every topic and consumer group (several instances on one cluster).")
    partitions: int = Field(
        4, description="Partitions of each topic when secondbrain creates it (the most worker processes a stage can "
                       "use).")
    replication_factor: int = Field(1, description="Replicas of each topic when secondbrain creates it.")
    consumer_group_prefix: str = Field(
        "secondbrain", description="Each stage's consumer group is '<prefix>.<topic prefix><stage>'.")
    kafka_session_timeout_ms: int = Field(
        6000, description="Consumer group session timeout: how soon a dead worker's partitions move to another.")
    kafka_heartbeat_interval_ms: int = Field(1500, description="Consumer group heartbeat interval.")
    kafka_fetch_max_wait_ms: int = Field(
        1500, ge=1, le=30000,
        description="How long a stage's consumer lets the broker hold a fetch with nothing to return. Kafka "
                    "answers as soon as a record arrives; the embedded broker holds every fetch until this runs out, "
                    "records or not, so `secondbrain up` uses 5 ms and paces fetches itself "
                    "(kafka_fetch_idle_ms).")
    kafka_fetch_idle_ms: int | None = Field(
        None, ge=1, le=60000,
        description="When set, a stage's consumer that fetched nothing waits this long itself before asking again, "
                    "or less when this process publishes to the topic it reads. For a broker that holds every fetch "
                    "for its whole wait (the embedded one: `secondbrain up` sets 1000); unset, the broker's wait "
                    "paces fetches, as Kafka's long polls do.")
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        "PLAINTEXT", description="How services talk to Kafka; production clusters use SASL_SSL.")
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field(
        "SCRAM-SHA-512", description="SASL mechanism for SASL_PLAINTEXT or SASL_SSL clusters.")
    kafka_sasl_username: str | None = Field(None, description="SASL user name.")
    kafka_sasl_password: SecretStr | None = Field(None, description="SASL password.")
    kafka_ssl_cafile: Path | None = Field(None, description="CA bundle for the brokers' certificates (TLS).")
    pipeline_key: SecretStr | None = Field(
        None, description="32 random bytes in base64 that seal the events on the internal topics "
                          "(documents.extracted, chunks.created, chunks.indexed): only processes holding it read "
                          "or write them. The same on every pipeline process; `secondbrain up` keeps one in the "
                          "data directory (pipeline.key).")

    # --- Postgres
    postgres_dsn: SecretStr | None = Field(
        None, description="PostgreSQL connection string (distributed mode, or to use your own server with `up`); "
                          "unset: `up` runs an embedded PostgreSQL in the data directory.")
    postgres_template: Path | None = Field(
        None, description="A stopped, initialised PostgreSQL data directory that a new embedded one starts as a copy "
                          "of, instead of running initdb (about 2 s saved per new data directory; for machines that "
                          "make many, such as a test run). Unset: initdb.")

    # --- Object store
    object_store: Literal["files", "s3"] = Field(
        "files", description="Where raw files live: 'files' (a folder in the data directory) or 's3' (S3 or MinIO).")
    s3_endpoint: str = Field("127.0.0.1:9000", description="S3/MinIO endpoint, host:port.")
    s3_access_key: SecretStr = Field(SecretStr(""), description="S3 access key.")
    s3_secret_key: SecretStr = Field(SecretStr(""), description="S3 secret key.")
    s3_bucket: str = Field("secondbrain", description="The bucket raw files and claim-check objects go to.")
    s3_secure: bool = Field(False, description="Talk to S3 over TLS.")
    s3_region: str | None = Field(None, description="S3 region, where the server needs one.")

    # --- Vector store
    vector_store: Literal["edge", "qdrant"] = Field(
        "edge", description="'edge' (Qdrant's in-process engine, files in the data directory) or 'qdrant' (a Qdrant "
                            "server through qdrant-client).")
    qdrant_url: str = Field("http://127.0.0.1:6333", description="The Qdrant server (vector_store 'qdrant').")
    qdrant_api_key: SecretStr | None = Field(None, description="The Qdrant server's API key.")
    vector_quantization: Literal["none", "int8"] = Field(
        "none", description="'int8': NEW collections keep an int8 copy of the dense vectors in RAM and search "
                            "it, rescoring with the originals (a quarter of the memory for the scan, a small "
                            "recall loss that bench/query.py reports); existing collections keep their config.")
    vector_index_after: int = Field(
        5000, ge=0, description="Embedded vectors: build a collection's HNSW index in a background process once "
                                "this many points were written to it since its last build (0: never).")
    vector_index_quiet_s: float = Field(
        5.0, ge=0, description="Embedded vectors: ...and no write reached the collection for this long.")
    vector_indexing_threshold_kb: int = Field(
        10_000, ge=1, description="Embedded vectors: segments smaller than this (KB of dense vectors; 10 MB is "
                                  "~6,500 384-d vectors) are scanned rather than indexed.")
    vector_sync_s: float = Field(
        5.0, ge=0, description="Embedded vectors: a write is in the engine's write-ahead log at once (a killed "
                               "process loses nothing) and synced to the disk itself within this many seconds, "
                               "which only a crash of the machine needs; the writes of that time share one sync "
                               "(a sync stops the whole process for tens of milliseconds or more). 0: each write.")
    vector_segment_kb: int = Field(
        150_000, ge=0, description="Embedded vectors: an index build indexes at most this many KB of dense vectors "
                                   "per segment (150 MB: 100k 384-d vectors), so it grows linearly with the "
                                   "collection; filters matching under a quarter of a segment are scanned "
                                   "exactly. 0: the engine's own segments (one graph per bulk load).")

    # --- Models
    embedding_model: str = Field(
        "minilm-int8", description="'minilm-int8' (packaged ONNX model) or 'openai:<model name>' served at "
                                   "embedding_base_url. New users get it; others move with `secondbrain reindex`.")
    embed_batch_size: int = Field(16, description="Passages embedded per model call.")
    embedding_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint for 'openai:' embedding models (/v1/embeddings).")
    embedding_api_key: SecretStr | None = Field(None, description="API key for the embedding endpoint.")
    embedding_timeout_s: float = Field(
        60.0, gt=0, description="Per embedding request (a batch of SB_EMBED_BATCH_SIZE texts).")

    @field_validator("embedding_model")
    @classmethod
    def _embedding_model_ok(cls, v: str) -> str:
        v = v.strip()  # the same rule as secondbrain.embedding.check_spec, without importing numpy here
        if v != "minilm-int8" and not (v.startswith("openai:") and v[len("openai:"):].strip()):
            raise ValueError("embedding_model must be 'minilm-int8' or 'openai:<model name>'")
        return v

    # --- Extraction
    ocr_enabled: bool = Field(True, description="OCR scanned PDF pages and images with tesseract.")
    ocr_languages: str = Field("eng", description="Tesseract language codes, e.g. 'eng+deu'.")
    pdf_ocr_dpi: int = Field(200, description="Resolution PDF pages without a text layer are rendered at for OCR.")
    pdf_max_pages: int = Field(2000, description="Longer PDFs are refused with a sentence.")
    image_max_pixels: int = Field(80_000_000, description="Larger images are refused (decompression bombs).")
    transcriber: Literal["faster-whisper", "whisperx", "none"] = Field(
        "faster-whisper", description="Speech to text: 'faster-whisper' (packaged Whisper tiny.en), 'whisperx' (needs "
                                      "the whisperx extra: `make whisperx`) or 'none'.")
    transcriber_model_path: str | None = Field(
        None, description="A local CTranslate2 Whisper model directory (default: the packaged tiny.en).")
    whisperx_align_model_dir: str | None = Field(
        None, description="A local wav2vec2 model directory: with it, the whisperx transcriber aligns every word "
                          "(word times, sentence-sized segments); without it, segments are VAD chunks and carry "
                          "no word times.")
    whisperx_vad: Literal["pyannote", "silero"] = Field(
        "pyannote", description="The whisperx transcriber's voice activity detector (both load from packages).")
    audio_max_duration_s: float = Field(4 * 3600, description="Longer recordings are refused.")
    extract_timeout_s: float = Field(300.0, gt=0, description="Longest one document may take to read (office "
                                                              "formats: its parser is stopped then).")
    extract_max_memory_mb: int = Field(2048, ge=64, description="Most memory one office document's parser may use.")
    extract_max_expanded_mb: int = Field(256, ge=1, description="Largest size a zip-based document (docx, pptx, "
                                                                "xlsx, odt, epub) may unpack to (zip bombs).")
    extract_max_elements: int = Field(20_000, ge=100, description="Most paragraphs one document may hold "
                                                                  "(spreadsheets: 50 times as many rows).")
    vision_base_url: str | None = Field(
        None, description="An OpenAI-compatible endpoint for image captions (none: OCR only).")
    vision_model: str = Field("gpt-4o-mini", description="The model asked for image captions at vision_base_url.")
    vision_api_key: SecretStr | None = Field(None, description="API key for the caption endpoint.")

    # --- Web pages
    fetch_timeout_s: float = Field(20.0, description="A web page fetch gives up after this many seconds.")
    fetch_max_bytes: int = Field(
        20 * 1024 * 1024, description="Largest web page (or linked file) the fetcher downloads.")
    fetch_max_redirects: int = Field(5, description="Redirects the fetcher follows (each one checked again).")
    fetch_respect_robots: bool = Field(True, description="Obey robots.txt when fetching a page.")
    fetch_allow_private: bool = Field(
        False, description="Allow URLs that resolve to loopback/private/link-local addresses (SSRF guard).")
    fetch_allow_networks: str = Field(
        "", description="Comma-separated private networks the fetcher may reach anyway (an intranet wiki at "
                        "10.1.2.0/24); everything else private stays refused.")

    @field_validator("fetch_allow_networks")
    @classmethod
    def _networks_ok(cls, v: str) -> str:
        import ipaddress

        for item in (x.strip() for x in v.split(",")):
            if item:  # a bad entry is a start-up error naming it
                try:
                    ipaddress.ip_network(item, strict=False)
                except ValueError:
                    raise ValueError(f"fetch_allow_networks: {item!r} is not a network such as 10.1.2.0/24") from None
        return v

    # --- Chunking
    chunk_target_tokens: int = Field(300, description="Passage size the chunker aims for.")
    chunk_max_tokens: int = Field(400, description="Longest passage the chunker makes.")
    chunk_min_tokens: int = Field(
        200, description="A shorter passage is joined to its neighbour where the structure allows.")
    chunk_overlap_tokens: int = Field(40, description="Tokens repeated between consecutive passages of running text.")
    max_chunks_per_document: int = Field(
        2000, ge=0, description="A document that would make more passages than this fails with a sentence "
                                "saying so (each passage costs an embedding; 2,000 is about 500,000 words of "
                                "prose or a 700-page PDF). 0: no limit.")

    # --- Query and answers
    timezone: str = Field("UTC", description="The user's time zone for 'yesterday', 'last week'... (IANA name).")
    locale: str = Field("en_US", pattern=r"^(?:[A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,4})*(?:[.@].*)?|C(?:\..*)?|POSIX)$",
                        description="The user's locale (en_US, en_GB, de_DE...): how '3/12' is read and, unless "
                                    "set below, the holiday country and the hemisphere.")
    country: str | None = Field(None, pattern=r"^[A-Za-z]{2}$",
                                description="ISO 3166 country whose holidays 'Thanksgiving', 'Mother's Day'... "
                                            "are (default: the locale's).")
    hemisphere: Literal["north", "south"] | None = Field(
        None, description="For 'last summer', 'this winter' (default: from the country).")
    date_order: Literal["mdy", "dmy", "ymd"] | None = Field(
        None, description="Numeric dates: month or day first (default: from the locale).")
    search_candidates: int = Field(50, ge=1, le=500, description="Dense and BM25 candidates each, before fusion.")
    ask_context_tokens: int = Field(1500, ge=100, description="Token budget of the sources shown to the model.")
    ask_max_chunks_per_document: int = Field(3, ge=1, description="Diversity: at most this many chunks per document.")
    reranker_model_dir: Path | None = Field(
        None, description="A local cross-encoder (ONNX + tokenizer.json) to rerank with; none: the fused order.")
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint for answers (none: extractive answers).")
    llm_model: str = Field("local", description="The model asked for answers (`secondbrain up`: the first the "
                                                "server lists, unless set).")
    llm_discover: str = Field(
        "http://127.0.0.1:11434/v1,http://127.0.0.1:8080/v1,http://127.0.0.1:1234/v1",
        description="Where `secondbrain up` looks for a local model server when no endpoint is set (Ollama, "
                    "llama.cpp, LM Studio), comma-separated; a server counts only if its /v1/models lists a "
                    "model. Empty, or `up --no-llm`: do not look.")
    llm_api_key: SecretStr | None = Field(None, description="API key for the answer endpoint (a hosted API).")
    secrets_key: SecretStr | None = Field(
        None, description="32 random bytes in base64 that encrypt secrets kept in the database (the answer model's "
                          "API key an admin sets); the same on every gateway and query process. Embedded mode keeps "
                          "one in the data directory (secrets.key) when it is not set.")

    @field_validator("secrets_key", mode="before")
    @classmethod
    def _secrets_key_set(cls, v: object) -> object:
        return None if isinstance(v, str) and not v.strip() else v  # SB_SECRETS_KEY= is unset
    llm_timeout_s: float = Field(60.0, description="An answer request to the model gives up after this many seconds.")
    llm_max_tokens: int = Field(512, description="Longest answer the model may write, in tokens.")
    llm_temperature: float = Field(0.1, description="Sampling temperature of the answer model.")

    # --- Pipeline
    stage_concurrency: int = Field(
        4, ge=1, description="Events a stage worker processes at once (one user's events stay in order).")
    stage_buffer: int = Field(
        2048, ge=1, description="Events a stage worker holds in memory while other users' lanes are busy (past "
                                "that it stops reading, for every user): more than one person's backlog of small "
                                "captures (SB_MAX_PENDING_JOBS), so another person's event is still read at once.")
    stage_buffer_bytes: int = Field(
        64 * 1024 * 1024, ge=1,
        description="The most bytes of events a stage worker holds in memory (events of large documents fill it "
                    "before the event count does).")
    stage_progress_after_s: float = Field(
        1.0, ge=0, description="A stage still working on an event after this long shows its job's stage as "
                               "running (faster work records only its end).")

    # --- Pipeline error policy
    max_attempts: int = Field(
        4, description="Tries of a retryable error (a store that does not answer) before the event is dead-lettered.")
    retry_backoff_s: float = Field(0.5, description="First wait between tries; it doubles each time.")
    retry_backoff_max_s: float = Field(10.0, description="Longest wait between tries.")
    publish_timeout_s: float = Field(300.0, gt=0, description="How long a stage keeps trying to publish to a "
                                                              "broker that does not answer before it gives up.")

    # --- Limits
    max_upload_bytes: int = Field(
        100 * 1024 * 1024, description="Largest upload: 413 above it, while it streams in (never buffered whole).")
    max_note_chars: int = Field(1_000_000, ge=1, description="Longest note (POST /v1/notes), in characters.")
    max_json_bytes: int = Field(
        2 * 1024 * 1024, ge=16 * 1024, description="Largest JSON request body but a note's (413 above it, "
                                                   "before it is read).")
    rate_limit_per_minute: int = Field(
        600, ge=0, description="Per user: deletions, link fetches, searches and questions a minute (0: no limit).")
    upload_rate_limit_per_minute: int = Field(
        6000, ge=0, description="Per user: captures (notes, files, pages, import batches) a minute, a budget of their "
                                "own so a person's own import does not wait like a flood of searches; the backlog "
                                "limit (SB_MAX_PENDING_JOBS) still makes a flood wait for its own work (0: no limit).")
    read_rate_limit_per_minute: int = Field(
        6000, ge=0, description="Per user: other reads (job status, source lists) a minute (0: no limit).")
    max_pending_jobs: int = Field(
        1000, ge=0, description="Per user: unfinished jobs before new submissions get 429 (0: no limit).")
    max_header_bytes: int = Field(
        32 * 1024, ge=4096, description="Largest request head (request line and headers) the server reads.")
    header_timeout_s: float = Field(
        10.0, gt=0, description="A request head (request line and headers) must arrive whole within this many "
                                "seconds of the connection's start (or of its first byte, on a kept-alive "
                                "connection); otherwise the connection is closed (slow or silent clients).")
    keep_alive_s: int = Field(
        75, ge=1, description="An idle kept-alive connection is closed after this many seconds.  Longer than "
                                "clients keep idle connections (httpx 5 s, proxies 60 s), so a client never "
                                "reuses one at the instant the server closes it (a reset request).")

    # --- Outbox relay
    relay_batch: int = Field(100, description="Outbox rows the relay publishes per round.")
    relay_poll_s: float = Field(
        0.2, description="How often the outbox relay looks for new rows when idle; after looks that found nothing "
                         "it waits twice as long each time, up to 1.6 s (a capture to this process wakes it "
                         "at once).")

    # --- Data lifecycle
    raw_retention_days: int | None = Field(
        None, ge=0, description="Remove raw files this many days after their jobs finished (the index stays "
                                "searchable); none: keep them forever.")

    # --- Backups (secondbrain.backup; `secondbrain backup` / `restore`, and `up` on a schedule)
    backup_dir: Path | None = Field(
        None, description="Where `secondbrain up` keeps its backups (default: a folder beside the data directory, "
                          "<data dir>-backups). Put it on another disk.")
    backup_interval: str = Field(
        "24h", description="How often `secondbrain up` backs up, e.g. '24h' (the default: daily), '6h', '30m' or "
                           "'1w' ('off': only when asked, with `secondbrain backup` or the web page's 'Back up now').")
    backup_keep_daily: int = Field(7, ge=0, description="Backups kept: the newest of each of the last N days.")
    backup_keep_weekly: int = Field(4, ge=0, description="...and the newest of each of the last M weeks.")
    backup_passphrase: SecretStr | None = Field(
        None, description="Seal `up`'s backups (and `secondbrain backup`'s unless told otherwise) with this "
                          "passphrase (ChaCha20-Poly1305, key from scrypt).")
    backup_key_file: Path | None = Field(
        None, description="Seal backups with the key in this file instead (at least 32 random bytes).")

    @field_validator("backup_interval")
    @classmethod
    def _interval_ok(cls, v: str) -> str:
        parse_interval(v)  # a bad interval is a start-up error naming it
        return v.strip()

    @property
    def backup_interval_s(self) -> float | None:
        """``backup_interval`` in seconds (None: no scheduled backups)."""
        return parse_interval(self.backup_interval)

    @property
    def backups_dir(self) -> Path:
        """Where backups are kept (``backup_dir``, else beside the data directory)."""
        if self.backup_dir is not None:
            return self.backup_dir
        data = self.data_dir
        return data.with_name(f"{data.name.lstrip('.') or 'secondbrain'}-backups") if data.name else Path("backups")

    # --- Telemetry (secondbrain.telemetry)
    otel_endpoint: str | None = Field(
        None, description="OTLP collector base URL (http://collector:4318, or :4317 with grpc); none: no "
                          "traces or metrics are exported.")
    otel_protocol: Literal["grpc", "http/protobuf"] = Field("http/protobuf", description="OTLP transport.")
    stage_stall_s: float = Field(
        300.0, gt=0, description="Liveness fails when a stage read nothing for this long while messages wait "
                                 "for it (and its buffer has room).")

    @field_validator("topic_prefix")
    @classmethod
    def _prefix_ok(cls, v: str) -> str:
        if v and not all(c.isalnum() or c in "._-" for c in v):
            raise ValueError("topic_prefix may contain only letters, digits, '.', '_' and '-'")
        return v

    # Derived locations for embedded mode.
    def auth_required(self) -> bool:
        """Whether every request must carry a valid API key or session (always, unless SB_AUTH=off in tests)."""
        return self.auth != "off"

    @property
    def host_names(self) -> list[str]:
        """``allowed_hosts`` as a list, with the name of ``public_url`` (a proxy passes it on in ``Host``)."""
        names = [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]
        public = self.public_host
        return [*names, public] if public and public not in names else names

    @property
    def public_host(self) -> str | None:
        """The host name of ``public_url``, if one is set."""
        from urllib.parse import urlsplit

        return urlsplit(self.public_url).hostname if self.public_url else None

    @property
    def watch_paths(self) -> list[Path]:
        """``watch_dirs`` as paths."""
        return [Path(d).expanduser() for d in self.watch_dirs.split(os.pathsep) if d.strip()]

    @property
    def origins(self) -> list[str]:
        """``allowed_origins`` as a list."""
        return [o.strip() for o in self.allowed_origins.split(",") if o.strip()]

    @property
    def own_origins(self) -> list[str]:
        """Origins whose pages are this server's own besides the address it is reached at directly: the
        ``public_url`` a proxy serves it at (the proxy speaks plain http to it, so the scheme differs)."""
        return [self.public_url] if self.public_url else []

    @property
    def max_note_body_bytes(self) -> int:
        """Largest body of ``POST /v1/notes`` (and of an MCP call, which may carry a note): room for
        ``max_note_chars`` characters however they are written in JSON (``\\uXXXX``: 6 bytes each)."""
        return max(self.max_json_bytes, 6 * self.max_note_chars + 64 * 1024)

    @property
    def objects_dir(self) -> Path:
        """Where raw artifacts live when the object store is plain files."""
        return self.data_dir / "objects"

    @property
    def vectors_dir(self) -> Path:
        """Where the in-process Qdrant engine keeps its shards."""
        return self.data_dir / "vectors"

    @property
    def postgres_dir(self) -> Path:
        """Where the embedded Postgres keeps its cluster."""
        return self.data_dir / "postgres"

    def dsn(self) -> str:
        """The Postgres DSN; raises with a hint when none is configured."""
        if self.postgres_dsn is None:
            raise RuntimeError(
                "No Postgres configured: set SB_POSTGRES_DSN (distributed mode) or run `secondbrain up`."
            )
        return self.postgres_dsn.get_secret_value()


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_interval(text: str) -> float | None:
    """'24h', '30m', '1d', '90s', '1w' or a number of seconds in seconds; '' / 'off' / '0': None."""
    value = (text or "").strip().lower()
    if value in ("", "off", "0", "none", "never"):
        return None
    unit = value[-1] if value[-1] in _UNITS else "s"
    number = value[:-1] if value[-1] in _UNITS else value
    try:
        seconds = float(number) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"backup_interval {text!r} is not an interval such as 24h, 6h, 30m or 1d") from None
    if seconds < 60:
        raise ValueError(f"backup_interval {text!r} is under a minute; back up at most once a minute")
    return seconds
