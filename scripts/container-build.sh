#!/usr/bin/env bash
# The build steps of the container image (Containerfile runs this script), so
# that the same steps can be checked on a machine without a container engine.
#
#   scripts/container-build.sh                  in the image: apt packages,
#                                               configure, build, install, smoke test
#   scripts/container-build.sh --check BUILD    here: every step short of the base
#                                               image and the compilation (see below)
#
#   MMAFUZZ_GPU_TARGETS   the GPU targets to build wrappers for: sm_XX names of
#                         model/arch_table.def, comma-separated (default sm_90a),
#                         or "all" (every NVIDIA target of the table)
#   MMAFUZZ_PREFIX        where `cmake --install` puts bin/mmafuzz (default /usr/local)
#   MMAFUZZ_BUILD_DIR     the build folder (default build-image)
#
# --check BUILD: the target names are translated (sm_90a, a list, "all", and a
# name the table does not have, which must fail), the configure step runs with
# the image's arguments into a scratch folder (CUDA on when nvcc is found here),
# and the install and smoke steps run on BUILD's existing binary into a scratch
# prefix: nothing is compiled, no apt-get, nothing written outside the scratch
# folder, which is removed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The packages the build needs on Ubuntu 24.04 (the CUDA image's base); the
# CUDA toolkit itself comes with the image.
APT_PACKAGES="cmake make gcc g++ pkg-config libxxhash-dev zlib1g-dev"

# sm_90a,sm_100a -> 90a;100a (CMAKE_CUDA_ARCHITECTURES); all -> every NVIDIA
# row's CUDA_ARCHS of model/arch_table.def.  A name the table has no row for
# is an error.
cuda_archs() {
  local table
  table=$(awk -F', *' '/^MF_ARCH\(/ && $3 == "NVIDIA" && $4 != "\"\"" {gsub(/"/, "", $4); gsub(/"/, "", $5); print $4, $5}' \
          model/arch_table.def)
  if [ "$1" = all ]; then
    printf '%s\n' "$table" | awk '{print $2}' | paste -sd';'
    return
  fi
  local out="" t archs
  for t in ${1//,/ }; do
    archs=$(printf '%s\n' "$table" | awk -v t="$t" '$1 == t {print $2}')
    if [ -z "$archs" ]; then
      echo "container-build: GPU target '$t' is not a target of model/arch_table.def ($(printf '%s\n' "$table" | awk '{print $1}' | paste -sd' '), or all)" >&2
      return 2
    fi
    out="${out:+$out;}$archs"
  done
  printf '%s\n' "$out"
}

configure() {  # BUILD_DIR ARCHS [extra cmake args]
  local dir=$1 archs=$2; shift 2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMMAFUZZ_WITH_HIP=OFF -DBUILD_TESTING=OFF \
        "-DCMAKE_CUDA_ARCHITECTURES=$archs" "$@"
}

smoke() {  # PREFIX: the installed binary runs and knows the table
  "$1/bin/mmafuzz" list --summary | tail -n 1 | grep -q '^all ' ||
    { echo "container-build: $1/bin/mmafuzz list --summary printed no total" >&2; return 1; }
  local z=",0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000"
  "$1/bin/mmafuzz" eval hopper/mma.m16n8k16.f32.f16.f16.f32 c=00000000 a=3c00$z b=3c00$z | grep -q '^d=3f800000 ' ||
    { echo "container-build: $1/bin/mmafuzz eval: 1*1 is not 3f800000" >&2; return 1; }
  echo "container-build: $1/bin/mmafuzz runs"
}

if [ "${1:-}" = --check ]; then
  [ $# -eq 2 ] || { echo "usage: scripts/container-build.sh --check BUILD_DIR" >&2; exit 2; }
  build=$2
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  [ "$(cuda_archs sm_90a)" = 90a ] || { echo "container-build: sm_90a -> '$(cuda_archs sm_90a)', expected 90a" >&2; exit 1; }
  [ "$(cuda_archs sm_80,sm_90a)" = "80;86;90a" ] || { echo "container-build: sm_80,sm_90a -> '$(cuda_archs sm_80,sm_90a)'" >&2; exit 1; }
  all=$(cuda_archs all)
  case ";$all;" in *";90a;"*) ;; *) echo "container-build: all -> '$all' has no 90a" >&2; exit 1;; esac
  if cuda_archs sm_99 2>/dev/null; then echo "container-build: sm_99 was accepted" >&2; exit 1; fi
  echo "container-build: GPU targets: default sm_90a -> 90a, all -> $all"
  cuda=OFF; command -v nvcc >/dev/null && cuda=ON
  configure "$scratch/build" "$(cuda_archs "${MMAFUZZ_GPU_TARGETS:-sm_90a}")" -DMMAFUZZ_WITH_CUDA=$cuda >"$scratch/configure.log" 2>&1 ||
    { cat "$scratch/configure.log"; echo "container-build: configure failed (CUDA $cuda)" >&2; exit 1; }
  echo "container-build: configure with the image's arguments passed (CUDA $cuda)"
  cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
  smoke "$scratch/prefix"
  exit 0
fi

# In the image.
targets=${MMAFUZZ_GPU_TARGETS:-sm_90a}
prefix=${MMAFUZZ_PREFIX:-/usr/local}
dir=${MMAFUZZ_BUILD_DIR:-build-image}
archs=$(cuda_archs "$targets")
if command -v apt-get >/dev/null && [ "${MMAFUZZ_SKIP_APT:-0}" != 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $APT_PACKAGES
  rm -rf /var/lib/apt/lists/*
fi
command -v nvcc >/dev/null || { echo "container-build: no nvcc (the image is the CUDA devel image)" >&2; exit 1; }
echo "container-build: GPU targets $targets (CMAKE_CUDA_ARCHITECTURES $archs)"
configure "$dir" "$archs" -DMMAFUZZ_WITH_CUDA=ON
cmake --build "$dir" -j"$(nproc)"
cmake --install "$dir" --prefix "$prefix"
smoke "$prefix"
