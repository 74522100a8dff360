"""Shared fixtures of the mmafuzz Python tests: where the checkout's data is."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("MMAFUZZ_SHARED_DIR", ROOT.parent / "shared"))
SUPERSEDED = ROOT / "corpus" / "findings" / "h100" / "peer-superseded.vec"


@pytest.fixture(scope="session")
def shared_vectors():
    """Every .vec/.vec.gz file under ../shared/vectors (the peer model's and
    the hardware recordings), or a skip when that folder is absent."""
    d = SHARED / "vectors"
    files = sorted(p for p in d.rglob("*") if p.name.endswith((".vec", ".vec.gz")))
    if not files:
        pytest.skip(f"no shared vectors under {d} (set MMAFUZZ_SHARED_DIR)")
    return files
