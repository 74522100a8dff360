#!/usr/bin/env python3
"""Make the kernel table (python/mmafuzz/data/kernels.tsv, docs/kernels.md)
from fits (scripts/kernels/fit_recordings.py) and their recordings: one row
per (GPU, software, op, formats, flags, shape) whose fitted kernel model
reproduces every recorded output, with that model and the evidence.

    python3 scripts/kernels/kernel_table.py RECDIR FITS.tsv... > kernels.tsv
"""
import csv
import json
import os
import sys

from mmafuzz import recording as R

COLUMNS = ["gpu", "software", "op", "a_format", "d_format", "flags", "m", "n", "k", "reproduced", "outputs",
           "model", "kernel"]


FIT_COLUMNS = ["file", "op", "formats", "m", "n", "k", "kernel", "reproduced", "outputs", "model", "seconds"]


def flags_text(flags):
    return ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in sorted(flags.items())) or "-"


def main():
    recdir, fits = sys.argv[1], sys.argv[2:]
    rows = {}
    for path in fits:
        with open(path) as f:
            for fields in csv.reader(f, delimiter="\t"):
                r = dict(zip(FIT_COLUMNS, fields))
                if len(fields) != len(FIT_COLUMNS) or not r["outputs"].isdigit():
                    continue   # the header lines of each fit run
                key = r["file"]
                ok = r["reproduced"] == r["outputs"] and int(r["outputs"]) > 0
                if key in rows and not ok:
                    continue   # a later fit that reproduces wins over an earlier one that did not
                rows[key] = r if ok else None
    out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    out.writerow(COLUMNS)
    lines = []
    for name, r in rows.items():
        if r is None:
            continue
        h, _ = R.load(os.path.join(recdir, name))
        env = h["env"]
        model = r["model"].split(" (and ")[0].strip()
        lines.append([env.get("gpu", "?"), f"torch {env.get('torch')} cuda {env.get('cuda')}", h["op"], h["a_format"],
                      h["d_format"], flags_text(h.get("flags", {})), h["m"], h["n"], h["k"], r["reproduced"],
                      r["outputs"], model, r["kernel"][:120]])
    for line in sorted(lines, key=lambda x: (x[2], x[3], x[4], x[5], x[6], x[7], x[8])):
        out.writerow(line)


if __name__ == "__main__":
    main()
