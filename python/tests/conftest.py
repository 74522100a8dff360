"""Shared fixtures of the mmafuzz Python tests: where the checkout's data is,
and what the override files say, read as plain text (not through mmafuzz)."""
import gzip
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("MMAFUZZ_SHARED_DIR", ROOT.parent / "shared"))
# The override files `mmafuzz check --override` takes for the shared vectors
# (docs/user-guide.md "Checking the model against recordings"): peer cases whose d the
# H100 supersedes, and MMA-Sim 2.0.2 cases whose d MMA-Sim 2.1.1 changed.
SUPERSEDED = ROOT / "corpus" / "findings" / "h100" / "peer-superseded.vec"
SUPERSEDED_2_1_1 = ROOT / "corpus" / "peer" / "mmasim-2.1.1-superseded.vec"
OVERRIDES = [SUPERSEDED, SUPERSEDED_2_1_1]
# The MMA-Sim 2.0.2 peer vectors, whose cases the override files name.
PEER_V2 = "mmasim-v2-public.vec.gz"
# A row the 2.0.2 peer vectors have and the table no longer has: PTX allows
# ue4m3 scales only with .scale_vec::4X (block16), so the row was removed
# (docs/findings.md); its cases are skipped, and counted, as by
# `mmafuzz check --skip-unknown`.
REMOVED_ROW = "rtx_blackwell/mma.block_scale.m16n8k64.block32.f32.e2m1.e2m1.f32.ue4m3"


def _lines(path):
    data = pathlib.Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode().splitlines()


def override_cases(path):
    """The cases of an override file as dicts: instr, its fields (d, old,
    src, rule, ... as strings) and peer_line, the line of the peer file its
    preceding `# peer line N` comment names."""
    out, instr, peer_line = [], None, None
    for ln in _lines(path):
        s = ln.strip()
        m = re.match(r"# peer line (\d+)", s)
        if m:
            peer_line = int(m.group(1))
        elif s.startswith("instr "):
            instr = s.split()[1]
        elif s and not s.startswith("#"):
            fields = dict(f.split("=", 1) for f in s.split())
            out.append({"instr": instr, "peer_line": peer_line, **fields})
            peer_line = None
    return out


def cases_under(path, instr):
    """How many case lines of a .vec(.gz) file stand under `instr NAME`."""
    n, cur = 0, None
    for ln in _lines(path):
        s = ln.strip()
        if s.startswith("instr "):
            cur = s.split()[1]
        elif s and not s.startswith("#") and cur == instr:
            n += 1
    return n


@pytest.fixture(scope="session")
def shared_vectors():
    """Every .vec/.vec.gz file under ../shared/vectors (MMA-Sim 2.0.2's
    outputs and the hardware recordings) and ../shared/peer (MMA-Sim
    2.1.1's), or a skip when there are none."""
    files = sorted(p for d in (SHARED / "vectors", SHARED / "peer") for p in d.rglob("*")
                   if p.name.endswith((".vec", ".vec.gz")))
    if not files:
        pytest.skip(f"no shared vectors under {SHARED}/vectors or {SHARED}/peer (set MMAFUZZ_SHARED_DIR)")
    return files


@pytest.fixture(scope="session")
def peer_v2(shared_vectors):
    """The MMA-Sim 2.0.2 peer file, or a skip when it is absent."""
    peer = [p for p in shared_vectors if p.name == PEER_V2]
    if not peer:
        pytest.skip(f"the peer vectors {PEER_V2} are absent")
    return peer[0]
