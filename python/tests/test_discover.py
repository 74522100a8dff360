"""Discovery with constructed inputs (mmafuzz.discover), without a GPU: the
device is the C kernel model under parameters the discovery is not told,
run through the same code path as a GPU op.  The hidden parameters are
chosen by hand (split 1, 3, 5 and 12; ceil and balanced slices; serial and
tree reductions; promotion every 4 instructions for fp8; K steps 64 and
128), and the models fitted to calls recorded on an H200
(data/kernels/models.tsv) are hidden the same way, the discovered model then
held against those recordings' GPU bits."""
import os

import numpy as np
import pytest

from mmafuzz import discover as D
from mmafuzz import kernels as K
from mmafuzz import recording as R

DATA = os.path.join(os.path.dirname(__file__), "data", "kernels")
ROW = {"f16": "hopper/wgmma.m64n8k16.f32.f16.f16", "bf16": "hopper/wgmma.m64n8k16.f32.bf16.bf16",
       "e4m3": "hopper/wgmma.m64n8k32.f32.e4m3.e4m3", "tf32": "hopper/wgmma.m64n8k8.f32.tf32.tf32",
       "f16-k8": "hopper/mma.m16n8k8.f32.f16.f16.f32"}


def _model(fmt, out, bk, split=1, rule="ceil", red="serial", promote=0):
    return K.format_model({"instr": ROW[fmt], "bk": bk, "split": split, "split_rule": rule, "reduce": red,
                           "promote": promote, "out": out})


def _slices_elems(model, k):
    """The hidden model's slices in elements of K, by hand from its text
    (the rule of docs/kernels.md, not discover.slices_of)."""
    f = K.parse(model)
    bk, s = int(f["bk"]), int(f["split"])
    iters = -(-k // bk)
    out = []
    for i in range(s):
        if f["split_rule"] == "balanced":
            q, r = divmod(iters, s)
            a = i * q + min(i, r)
            b = a + q + (1 if i < r else 0)
        else:
            per = -(-iters // s)
            a, b = i * per, (i + 1) * per
        out.append([min(a * bk, k), min(b * bk, k)])
    return out


HIDDEN = [
    # fmt, out, M, N, K, hidden model
    ("f16", "f16", 16, 16, 4096, _model("f16", "f16", 64, 3)),
    ("f16", "f16", 32, 32, 16384, _model("f16", "f16", 64, 12)),
    ("f16", "f16", 4, 8, 1000, _model("f16", "f16", 64, 1)),
    ("f16", "f16", 16, 16, 4096, _model("f16", "f16", 128, 5, "balanced")),
    ("bf16", "bf16", 16, 16, 4096, _model("bf16", "bf16", 64, 12, "balanced", "tree")),
    ("bf16", "bf16", 16, 16, 8192, _model("bf16", "bf16", 128, 6, "ceil", "tree")),
    ("e4m3", "f32", 16, 8, 4096, _model("e4m3", "f32", 128, 1, promote=4)),
    ("e4m3", "bf16", 16, 16, 16384, _model("e4m3", "bf16", 128, 3, promote=4)),
    # a kernel that issues k8 instructions (mma.sync) where the format's main-loop row is k16
    ("f16", "f16", 16, 16, 2048, _model("f16-k8", "f16", 64, 4, "ceil", "tree")),
]


@pytest.mark.parametrize("fmt,out,m,n,k,hidden", HIDDEN, ids=[f"{h[0]}-{h[2]}x{h[3]}x{h[4]}-" +
                                                              K.parse(h[5])["split"] + K.parse(h[5])["split_rule"][0] +
                                                              K.parse(h[5])["reduce"][0] + "p" + K.parse(h[5])["promote"]
                                                              for h in HIDDEN])
def test_discovers_hidden_model(fmt, out, m, n, k, hidden):
    dev = D.model_device(hidden)
    r = D.discover(dev, m, n, k, fmt, out)
    assert r["from_probes"], r            # the probes' candidates, not the fallback search
    assert r["model"] is not None
    # the hidden model is among those named, and every one named computes
    # what the hidden one does on every output checked
    assert K.canonical(hidden) in r["models"], (r["models"], r["structure"])
    assert r["reproduced"] == r["outputs"] and r["outputs"] >= 3 * min(m * n, 1024)
    # the structure found is the hidden one's: slices (in elements), promotion, reduction
    f = K.parse(hidden)
    want = _slices_elems(hidden, k)
    st = r["structure"]
    assert st is not None, r
    assert st["slices"] == want
    assert st["promote"] == int(f["promote"])
    if int(f["split"]) > 3:      # up to three slices, a tree adds as the serial order does
        assert st["reduce"] == f["reduce"]
    # the instruction's K, measured
    ik = int(f["instr"].split(".m")[1].split("k")[1].split(".")[0])
    assert r["instr_k_seen"] == ik and r["instr"] == f["instr"], (r["instr_k_seen"], r["instr"])
    # cheap: the restart probes fill calls of M x N outputs (three elements an instruction)
    T = -(-k // ik)
    assert r["device_calls"] <= -(-T // (m * n)) + 13, r["device_calls"]
    assert r["summary"] == f"reproduced {r['reproduced']} of {r['outputs']} outputs on {r['calls']} calls"


def test_predict_agrees_with_the_c_model():
    """The symbolic prediction of a probe's survivors (discover.predict) is
    what the C kernel model computes on the constructed operands, for every
    probe of a pool on several structures: the probes' magnitudes keep the
    arithmetic in the regime the prediction assumes."""
    rng = np.random.default_rng(5)
    for fmt, out, k, model in [("f16", "f16", 2048, _model("f16", "f16", 64, 5, "balanced", "tree")),
                               ("e4m3", "f32", 4096, _model("e4m3", "f32", 128, 3, "ceil", "serial", 4)),
                               ("bf16", "bf16", 2048, _model("bf16", "bf16", 64, 7, "ceil", "tree")),
                               ("tf32", "f32", 1024, _model("tf32", "f32", 64, 4, "ceil", "serial"))]:
        f = K.parse(model)
        ik = int(f["instr"].split("k")[-1].split(".")[0])
        T = k // ik
        st = D.Struct(D.slices_of(k, ik, int(f["bk"]), int(f["split"]), f["split_rule"]), int(f["promote"]),
                      f["reduce"])
        probes = []
        for _ in range(120):
            u, v = sorted(int(x) for x in rng.integers(0, T, 2))
            ws = [int(t) for t in rng.choice(T, 8, replace=False) if t not in (u, v)]
            probes.append(D.Probe(u, v, tuple(ws)))
        probes += D.restart_probes(k, ik)[:40]
        got = D.run_probes(D.model_device(model), probes, 8, 8, k, ik, fmt, out)
        for p, g in zip(probes, got):
            assert g == D.predict(st, p), (model, p)


def test_decode_and_pack():
    # a probe output is its bit mask of units: 5 units of 2^-10 in f16 is 0x1D00 (1.25 * 2^-8: biased exponent 7, fraction 0x100)
    assert D.decode(0x1D00, "f16", "f16") == frozenset({0, 2})
    assert D.decode(0x7C00, "f16", "f16") is None          # +Inf: the pair did not cancel
    assert D.pow2_bits("e4m3", -9) == 0x01 and D.pow2_bits("e4m3", 8) == 0x78
    assert D.pow2_bits("f16", 15, True) == 0xF800
    # output (i, j) sees its own probe's terms only: A row i and B column j share no other nonzero element
    probes = [D.Probe(b, b, (b - 1,)) for b in range(1, 20)]
    calls = list(D.pack(probes, 2, 3, 320, 16, "f16"))
    assert sum(len(w) for _, _, w in calls) == 19 and len(calls) == 4
    for A, Bt, where in calls:
        for (i, j), pi in where.items():
            both = np.flatnonzero((A[i] != 0) & (Bt[j] != 0))
            assert len(both) == 3 and {int(x) // 16 for x in both} == {probes[pi].plus, probes[pi].plus - 1}


def test_cache_runs_discovery_once(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hidden = _model("f16", "f16", 64, 3)
    calls = []
    base = D.model_device(hidden)

    def dev(A, Bt):
        calls.append(1)
        return base(A, Bt)
    dev.info = {"gpu": "simulated", "software": "test", "kernels": [], "flags": {"allow_tf32": False}}
    r1 = D.cached(dev, "torch.matmul", 8, 8, 4096, "f16")
    n = len(calls)
    assert not r1["cached"] and n > 0
    assert os.path.exists(tmp_path / "mmafuzz" / "kernels.tsv")
    r2 = D.cached(dev, "torch.matmul", 8, 8, 4096, "f16")
    assert r2["cached"] and len(calls) == n and r2["model"] == r1["model"]
    # another shape is another entry
    D.cached(dev, "torch.matmul", 8, 8, 1024, "f16")
    assert len(calls) > n
    # and reproduce() finds the cached model through the kernel table
    row = K.lookup("torch.matmul", "f16", "f16", 8, 8, 4096, None, "simulated")
    assert K._model_text(row) == r1["model"]


def _shipped():
    with open(os.path.join(DATA, "models.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, model, _ = line.rstrip("\n").split("\t")
            if name.startswith(("matmul-", "scaled_mm-")) and int(name.rsplit("x", 1)[1].split(".")[0]) <= 4096:
                yield name, model.replace("; ", "\n") + "\n"


@pytest.mark.parametrize("name,model", list(_shipped()))
def test_discovered_model_reproduces_the_gpu_recording(name, model):
    """The model fitted to a call recorded on an H200, hidden in a simulated
    device at the recording's shape: what discovery finds from probes alone
    reproduces the GPU's recorded bits."""
    h, arr = R.load(os.path.join(DATA, name))
    r = D.discover(D.model_device(model), h["m"], h["n"], h["k"], h["a_format"], h["d_format"])
    assert r["from_probes"] and r["model"]
    chk = K.check_recording((h, dict(arr)), r["model"])
    assert chk["equal"] == chk["outputs"] == arr["d"].size, (name, r["model"], chk)


def test_discover_grid_script_dry_run(tmp_path):
    """scripts/kernels/discover_grid.py end to end on the C model instead of a
    GPU (--simulate): a result per (op, shape) in the JSON, an exception
    recorded with its traceback (an e4m3 op fed to an f16 model: the
    operands' widths differ) while the grid goes on, and a shape _scaled_mm
    cannot take skipped."""
    import json
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    model = tmp_path / "m.txt"
    model.write_text(_model("f16", "f16", 64, 3))
    out = tmp_path / "r.json"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(D.__file__))] +
                                          [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.run([sys.executable, os.path.join(root, "scripts", "kernels", "discover_grid.py"), str(out),
                        "--simulate", str(model), "--ops", "matmul-f16,scaled_mm-e4m3-f32",
                        "--shapes", "16x16x4096,8x8x1000"], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert [(e["op"], e["m"], e["n"], e["k"]) for e in r] == [
        ("matmul-f16", 16, 16, 4096), ("matmul-f16", 8, 8, 1000),
        ("scaled_mm-e4m3-f32", 16, 16, 4096), ("scaled_mm-e4m3-f32", 8, 8, 1000)]
    ok = r[0]
    assert ok["summary"] == "reproduced 1024 of 1024 outputs on 4 calls" and ok["from_probes"]
    assert K.canonical(ok["model"]) == K.canonical(_model("f16", "f16", 64, 3))
    assert "error" in r[2] and "Traceback" in r[2]["traceback"] and "model" not in r[2]
    assert "multiples of 16" in r[3]["skipped"]
    assert (tmp_path / "cache" / "mmafuzz" / "kernels.tsv").exists()
