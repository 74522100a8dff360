#!/usr/bin/env bash
# Set up, build and run the whole test suite, then the unit suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer.  Exit 0 only if all pass.
# GPU tests skip without a GPU (set MMAFUZZ_REQUIRE_GPU=1 on GPU runners).
set -euo pipefail
cd "$(dirname "$0")/.."
# every CUDA target when nvcc is here, GPU or not (the SASS checks, label cuda)
MMAFUZZ_CMAKE_ARGS="-DMMAFUZZ_CUDA_TARGETS=all ${MMAFUZZ_CMAKE_ARGS:-}" scripts/setup.sh
jobs=$(nproc)
ctest --test-dir build --output-on-failure -j"$jobs"

# The portable configuration (MMAFUZZ_NO_CLONES: plain C, no AVX2 clones; the
# AFL++ build and the one for non-x86 hosts): it has no clone left, and the
# model, cli and driver tests give the same results as above.
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DMMAFUZZ_NO_CLONES=ON \
      -DMMAFUZZ_WITH_CUDA=OFF -DMMAFUZZ_WITH_HIP=OFF ${MMAFUZZ_CMAKE_ARGS:-}
cmake --build build-portable -j"$jobs"
if nm build-portable/mmafuzz | grep -q '\.avx2'; then echo "build-portable: AVX2 clones left" >&2; exit 1; fi
ctest --test-dir build-portable --output-on-failure -j"$jobs" -L 'model|cli|driver' -LE 'fuzz|gpu'

# The Python package (pyproject.toml, python/) as it would be published: a
# wheel built by `pip wheel`, made a manylinux wheel by `auditwheel repair`
# (scripts/python-wheel.sh), installed in a fresh virtual environment, and the
# pytest suite run from outside the source tree against the installed package.
scripts/python-wheel.sh build-py

# The unit suite again, built by clang with AddressSanitizer + UBSan; the same
# build has libFuzzer, so the coverage-guided targets run here too (label
# fuzz: each 60 s from its seed corpus, -error_exitcode=1).  Tests labelled long
# (the campaign kill tests) or heavy (the same code as other tests over much
# more data: the slow model over every shared vector, the multi-GPU script's
# campaigns) ran above and do not run again here.
CC=clang cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMMAFUZZ_SANITIZE=ON \
      -DMMAFUZZ_WITH_CUDA=OFF -DMMAFUZZ_WITH_HIP=OFF ${MMAFUZZ_CMAKE_ARGS:-}
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'gpu|long|heavy'
