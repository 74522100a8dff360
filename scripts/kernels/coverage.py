#!/usr/bin/env python3
"""The coverage tables of docs/kernels.md, made from the kernel table
(python/mmafuzz/data/kernels.tsv): for each op, formats and flags, a grid of
M x N (rows) by K (columns) whose cells say what the fitted kernel model
found: `1` no split of K, `sS` K split in S slices, `pP` promotion every P
instructions, `.` no model reproduces the call (or it was not recorded), `*`
fewer than 64 outputs recorded (a weak identification: with one output, a
wrong model can reproduce it by chance).

    python3 scripts/kernels/coverage.py [kernels.tsv] [--check docs/kernels.md]

Prints the markdown; with --check, exits 1 when the block between the
GENERATED markers of the page differs from it.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "python", "mmafuzz", "data", "kernels.tsv")
BEGIN = "<!-- BEGIN KERNEL COVERAGE: scripts/kernels/coverage.py -->"
END = "<!-- END KERNEL COVERAGE -->"
SHORT = {"allow_fp16_reduced_precision_reduction=0": "fp16 reduced-precision reduction off",
         "use_fast_accum=1": "use_fast_accum=True"}


def cell(model):
    f = dict(part.strip().split(None, 1) for part in model.split(";") if part.strip())
    s, p = int(f["split"]), int(f["promote"])
    out = f"s{s}" if s > 1 else "1"
    if p:
        out = (out + " " if s > 1 else "") + f"p{p}"
    if s > 1 and f.get("reduce") == "tree":
        out += " tree"
    return out


def render(path):
    rows = list(csv.DictReader(open(path, newline=""), delimiter="\t"))
    groups = {}
    for r in rows:
        flags = [x for x in r["flags"].split(",") if x in SHORT]
        key = (r["gpu"], r["software"], r["op"], r["a_format"], r["d_format"], ", ".join(SHORT[x] for x in flags))
        c = cell(r["model"]) + ("*" if int(r["outputs"]) < 64 else "")
        groups.setdefault(key, {})[(int(r["m"]), int(r["n"]), int(r["k"]))] = c
    out = [f"{len(rows)} calls reproduced bit for bit, every recorded output of each "
           f"(python/mmafuzz/data/kernels.tsv).", ""]
    for key in sorted(groups):
        gpu, sw, op, a, d, fl = key
        g = groups[key]
        ks = sorted({k for (_, _, k) in g})
        mns = sorted({(m, n) for (m, n, _) in g})
        out.append(f"**{op}** {a} -> {d}{' (' + fl + ')' if fl else ''}, {gpu}, {sw}: {len(g)} calls")
        out.append("")
        out.append("| M x N | " + " | ".join(f"K {k}" for k in ks) + " |")
        out.append("|---" * (len(ks) + 1) + "|")
        for (m, n) in mns:
            out.append(f"| {m} x {n} | " + " | ".join(g.get((m, n, k), ".") for k in ks) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main():
    args = sys.argv[1:]
    check = None
    if "--check" in args:
        i = args.index("--check")
        check = args[i + 1]
        del args[i:i + 2]
    text = render(args[0] if args else DEFAULT)
    if check is None:
        sys.stdout.write(text)
        return 0
    page = open(check).read()
    if BEGIN not in page or END not in page:
        print(f"{check}: no {BEGIN} ... {END} block", file=sys.stderr)
        return 1
    have = page.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"
    if have != text:
        print(f"{check}: the coverage block differs from what scripts/kernels/coverage.py makes of the kernel "
              f"table; run it and paste its output between the markers", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
