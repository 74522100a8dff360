#!/usr/bin/env bash
# The HIP toolchain from Debian's packages: hipcc (ROCm 5.2) builds the gfx908
# and gfx90a code objects, clang-19 (with lld-19) builds gfx942, and
# llvm-objdump-19 (llvm-19) disassembles them for the opcode checks.
# About 130 MB to download.  No AMD GPU is needed to build or check them.
set -euo pipefail
need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
pkgs="hipcc clang-19 llvm-19 lld-19"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
export DEBIAN_FRONTEND=noninteractive
need_root apt-get update -qq
need_root apt-get install -y -qq $missing
