#!/usr/bin/env bash
# Define a campaign once (on the login node, or as a job step).
#   scripts/slurm/init.sh CAMPAIGN_DIR [more `mmafuzz campaign init` flags]
# Environment: MMAFUZZ (the binary, default mmafuzz), MMAFUZZ_DEVICE (default
# cuda; model:ARCH runs the model of ARCH as the device, for tests without
# GPUs), MMAFUZZ_RUNS (the budget in dot products, default 10^11), MMAFUZZ_SEED.
# An identical init again is harmless (it reports the existing id); the
# campaign id is printed.
set -euo pipefail
dir=${1:?usage: init.sh CAMPAIGN_DIR [flags]}
shift
exec "${MMAFUZZ:-mmafuzz}" campaign init "$dir" --device "${MMAFUZZ_DEVICE:-cuda}" \
    -runs "${MMAFUZZ_RUNS:-100000000000}" -seed "${MMAFUZZ_SEED:-1}" "$@"
