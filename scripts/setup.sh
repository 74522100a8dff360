#!/usr/bin/env bash
# Install what mmafuzz needs to build and test on a fresh Debian/Ubuntu
# machine, then configure and build into build/.  Safe to run again.
#   MMAFUZZ_SKIP_APT=1   do not call apt-get (packages already there)
set -euo pipefail
cd "$(dirname "$0")/.."

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ "${MMAFUZZ_SKIP_APT:-0}" != 1 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  pkgs="cmake make gcc g++ pkg-config libxxhash-dev xxhash zlib1g-dev clang libclang-rt-dev python3-pip python3-dev python3-venv"
  missing=""
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    need_root apt-get update -qq
    need_root apt-get install -y -qq --no-install-recommends $missing
  fi
  # optional toolchains: the HIP device layer (see devices/hip/README.md)
  if [ -x scripts/setup-hip.sh ]; then scripts/setup-hip.sh || echo "setup: HIP toolchain not installed; the HIP layer will be skipped"; fi
fi
# cuobjdump (with nvdisasm) reads the SASS of the CUDA wrappers, no GPU
# needed; PyPI has no 13.0 build, and 13.2 reads sm_90a cubins.  nvcc itself
# comes with the CUDA toolkit, which is optional.
if command -v nvcc >/dev/null && ! command -v cuobjdump >/dev/null; then
  cuda_tools="nvidia-cuda-cuobjdump==13.2.51 nvidia-cuda-nvdisasm==13.2.51"
  python3 -m pip install -q $cuda_tools 2>/dev/null || python3 -m pip install -q --break-system-packages $cuda_tools || true
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${MMAFUZZ_CMAKE_ARGS:-}
cmake --build build -j"$(nproc)"
