"""Instruction.dpa reproduces every shared vector (../shared/vectors: the
peer model MMA-Sim 2.0.2's outputs and hardware recordings; ../shared/peer:
MMA-Sim 2.1.1's outputs), compared as `mmafuzz check --skip-unknown
--override corpus/findings/h100/peer-superseded.vec --override
corpus/peer/mmasim-2.1.1-superseded.vec` compares them: the NaN rule of
VECTORS.md, with the cases of the two override files (the H100's d, and
MMA-Sim 2.1.1's d for 2.0.2 cases it changed) overriding the peer's d.
Expected values come from those files, never from this package; the counts
asserted (cases superseded, failures without the overrides, cases skipped)
are counted from the override files and the peer file as plain text
(conftest.py)."""
import re

import numpy as np
import pytest

import mmafuzz
from conftest import OVERRIDES, PEER_V2, REMOVED_ROW, cases_under, override_cases

# Every case of the override files, and the 2.0.2 peer lines they name.
OVERRIDE_CASES = [c for p in OVERRIDES for c in override_cases(p)]
PEER_LINES = {c["peer_line"] for c in OVERRIDE_CASES}


def test_override_files_name_distinct_peer_cases():
    # 2 H100 cases + 317 MMA-Sim 2.1.1 cases, each naming its own 2.0.2 line
    assert len(OVERRIDE_CASES) > 0 and None not in PEER_LINES
    assert len(PEER_LINES) == len(OVERRIDE_CASES)


def test_dpa_reproduces_every_shared_vector(shared_vectors):
    table = mmafuzz._override_table(OVERRIDES)
    total, superseded_lines, skipped, failures = 0, set(), {}, []
    for path in shared_vectors:
        # skip_unknown: the 2.0.2 file has REMOVED_ROW, which PTX forbids (conftest.py)
        groups = mmafuzz.read_vec(path, skip_unknown=True)
        for name, n in groups.skipped.items():
            skipped[(path.name, name)] = n
        for g in groups:
            assert g.has_d.all(), f"{path}: a case without d"
            hit = mmafuzz.apply_overrides(g, table)
            if path.name == PEER_V2:
                superseded_lines |= {int(g.line[i]) for i in hit}
            op = mmafuzz.Instruction(g.name)
            got = op.dpa(g.a, g.b, g.c, g.scale_a, g.scale_b)
            assert got.dtype == g.d.dtype and got.shape == g.d.shape
            eq = op.outputs_equal(got, g.d)
            total += len(g)
            for i in np.nonzero(~eq)[0][:5]:
                failures.append(f"{path}:{g.line[i]}: {g.name} => {int(got[i]):x}, expected {int(g.d[i]):x}")
    assert not failures, "\n".join(failures)
    assert total > 0
    # only the removed row's cases are skipped, all of them; the override
    # files' cases supersede exactly the 2.0.2 lines they name
    peer = [p for p in shared_vectors if p.name == PEER_V2]
    assert skipped == ({(PEER_V2, REMOVED_ROW): cases_under(peer[0], REMOVED_ROW)} if peer else {})
    if peer:
        assert superseded_lines == PEER_LINES


def test_check_agrees_and_counts_overrides(shared_vectors):
    res = mmafuzz.check(shared_vectors, override=OVERRIDES, skip_unknown=True)
    assert res.failed == 0, res.failures[:5]
    assert res.passed == sum(len(g) for p in shared_vectors for g in mmafuzz.read_vec(p, skip_unknown=True))
    assert sum(p for p, f in res.per_instruction.values()) == res.passed
    peer = [p for p in shared_vectors if p.name == PEER_V2]
    if peer:
        n = cases_under(peer[0], REMOVED_ROW)
        assert n > 0 and (res.skipped, res.skipped_per_instruction) == (n, {REMOVED_ROW: n})
        assert {s["line"] for s in res.superseded if s["path"] == str(peer[0])} == PEER_LINES


def test_peer_v2_needs_skip_unknown(peer_v2):
    """Without skip_unknown the removed row is an error, not a silent skip."""
    with pytest.raises(mmafuzz.InstructionError, match="unknown instruction '" + re.escape(REMOVED_ROW)):
        mmafuzz.read_vec(peer_v2)


def test_without_override_the_peer_cases_fail(peer_v2):
    """Every case of the override files is a real disagreement with 2.0.2:
    without the overrides it fails at the line it names, the model giving
    the override's d and the peer file holding the override's old= (the
    2.0.2 d, where the file gives it).  So the override test can fail."""
    res = mmafuzz.check(peer_v2, skip_unknown=True, max_failures=10 * len(OVERRIDE_CASES))
    assert res.failed == len(OVERRIDE_CASES)
    by_line = {f["line"]: f for f in res.failures}
    assert set(by_line) == PEER_LINES
    for c in OVERRIDE_CASES:
        f = by_line[c["peer_line"]]
        assert f["name"] == c["instr"] and f["got"] == int(c["d"], 16), (c, f)
        if "old" in c:
            assert f["expected"] == int(c["old"], 16), (c, f)


def test_threads_give_the_same_bits(shared_vectors):
    g = max((g for p in shared_vectors[:3] for g in mmafuzz.read_vec(p, skip_unknown=True)), key=len)
    op = mmafuzz.Instruction(g.name)
    one = op.dpa(g.a, g.b, g.c, g.scale_a, g.scale_b, threads=1)
    two = op.dpa(g.a, g.b, g.c, g.scale_a, g.scale_b, threads=2)
    every = op.dpa(g.a, g.b, g.c, g.scale_a, g.scale_b)
    assert np.array_equal(one, two) and np.array_equal(one, every)
