"""Write the recordings the `check` tests of tests/cli/CMakeLists.txt read
(docs/recordings.md), from the shipped GPU recordings of
python/tests/data/kernels and with the Python package's generator
(python/mmafuzz/recording.py, NumPy only) as the reference for operands.
Run from the repository root: python3 tests/cli/recordings/make_recordings.py
(needs NumPy; the files it writes are committed, so the tests need none).

- stored-f16-128x128x1000.npz: the H200's torch.matmul f16 128x128x1000 call
  with its operands stored (np.savez: zip members stored, not deflated) and
  d sampled (d_rows, d_cols): the other paths of the reader.
- cublaslt-f16-128x128x4096-split3.npz / -split4.npz: the H200's f16
  128x128x4096 call (its cuBLAS kernel splits K in 3: the fitted model of the
  kernel table) under a header as `mmafuzz gemm --record` writes it, whose
  algorithm says split-K 3 (the model derived from it reproduces the call)
  or 4 (it must not).
- bad-*.npz: damaged recordings, each with what `check` must say.
"""
import importlib.util
import io
import json
import os
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.dirname(os.path.abspath(__file__))
SHIPPED = os.path.join(ROOT, "python", "tests", "data", "kernels")
spec = importlib.util.spec_from_file_location("recording", os.path.join(ROOT, "python", "mmafuzz", "recording.py"))
rec = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rec)


def header_bytes(h):
    return np.frombuffer(json.dumps(h, sort_keys=True).encode(), np.uint8)


# stored operands, d sampled, np.savez (stored members)
h, arr = rec.load(os.path.join(SHIPPED, "matmul-f16-128x128x1000.npz"))
A, Bt = rec.operands(h, arr)
rows = np.array([0, 1, 63, 64, 127], np.int64)
cols = np.array([0, 5, 64, 100, 127], np.int64)
h2 = dict(h)
del h2["inputs"]
np.savez(os.path.join(OUT, "stored-f16-128x128x1000.npz"), header=header_bytes(h2), a=A, b=Bt,
         d=arr["d"][np.ix_(rows, cols)], d_rows=rows, d_cols=cols)

# cuBLASLt-style headers on the split-3 call
h, arr = rec.load(os.path.join(SHIPPED, "matmul-f16-128x128x4096.npz"))
for split in (3, 4):
    h3 = dict(h)
    h3["op"] = "cublasLtMatmul"
    h3["flags"] = {"algo": 0, "b_colmajor": False, "fast_accum": False, "reduction_mask": 0, "workspace": 33554432}
    h3["kernels"] = []
    h3["cublaslt"] = {"algo": {"index": 0, "algo_id": 66, "splitk_num": split, "tile": "test"}}
    h3["env"] = {"gpu": "NVIDIA H200", "sm": "90", "cuda": "13.0", "cublaslt": "13.0.0"}
    np.savez_compressed(os.path.join(OUT, f"cublaslt-f16-128x128x4096-split{split}.npz"), header=header_bytes(h3),
                        d=arr["d"])

# damaged recordings: a small good one first (2 x 2 x 16 f16, stored operands)
good_h = {"format": "mmafuzz-recording", "version": 1, "op": "test", "m": 2, "n": 2, "k": 16, "a_format": "f16",
          "b_format": "f16", "d_format": "f16", "flags": {}, "env": {}}
a = rec.generate("f16", 2, 2, 16, 16)
b = rec.generate("f16", 3, 16, 2, 16, transpose=True)
d = np.zeros((2, 2), np.uint16)


def save(name, compressed=False, **arrays):
    path = os.path.join(OUT, name)
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path


save("bad-no-header.npz", a=a, b=b, d=d)
save("bad-json.npz", header=np.frombuffer(b"{\"format\": not json}", np.uint8), a=a, b=b, d=d)
save("bad-version.npz", header=header_bytes(dict(good_h, version=2)), a=a, b=b, d=d)
save("bad-format.npz", header=header_bytes(dict(good_h, a_format="f8")), a=a, b=b, d=d)
save("bad-no-d.npz", header=header_bytes(good_h), a=a, b=b)
save("bad-d-shape.npz", header=header_bytes(good_h), a=a, b=b, d=np.zeros((2, 3), np.uint16))
save("bad-d-type.npz", header=header_bytes(good_h), a=a, b=b, d=np.zeros((2, 2), np.uint32))
save("bad-a-only.npz", header=header_bytes(good_h), a=a, d=d)
save("bad-d-rows.npz", header=header_bytes(good_h), a=a, b=b, d=d, d_rows=np.array([0, 5], np.int64),
     d_cols=np.array([0, 1], np.int64))
save("bad-fortran.npz", header=header_bytes(good_h), a=a, b=b, d=np.asfortranarray(np.zeros((2, 2), np.uint16).T[:, :]).T.copy(order="F"))
save("bad-bigendian.npz", header=header_bytes(good_h), a=a, b=b, d=d.astype(">u2"))
save("bad-generator.npz", header=header_bytes(dict(good_h, inputs={"generator": "other", "seed_a": 1, "seed_b": 2})), d=d)
save("bad-exp-range.npz", header=header_bytes(dict(good_h, inputs={"generator": "mmafuzz.splitmix64", "seed_a": 1,
                                                                   "seed_b": 2, "exp_lo": -4, "exp_hi": 40})), d=d)
# byte-level damage of a stored file: a flipped byte of d's data (CRC), and the file cut short
p = save("bad-crc.npz", header=header_bytes(good_h), a=a, b=b, d=d)
raw = bytearray(open(p, "rb").read())
z = zipfile.ZipFile(io.BytesIO(bytes(raw)))
info = z.getinfo("d.npy")
start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
local_extra = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
start = info.header_offset + 30 + len(info.filename.encode()) + local_extra
raw[start + info.file_size - 1] ^= 0x01
open(p, "wb").write(bytes(raw))
p = save("bad-truncated.npz", compressed=True, header=header_bytes(good_h), a=a, b=b, d=d)
raw = open(p, "rb").read()
open(p, "wb").write(raw[: len(raw) // 2])
open(os.path.join(OUT, "bad-not-zip.npz"), "w").write("this is not a zip archive\n")
