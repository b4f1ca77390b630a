#!/usr/bin/env python3
"""Prints what the recording NVTX tool saw in the demo: the ranges nvtxcorr produced, as a
short timeline and as a table per label, with categories, colors (what label tables call
color=) and graph marks."""
import collections
import sys


def main(path):
    events = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8")]
    cats = {(e[1], e[2]): e[3] for e in events if e[0] == "category"}
    pushes = [e for e in events if e[0] == "push" and e[2] == "nvtxcorr"]
    pops = [e for e in events if e[0] == "pop" and e[2] == "nvtxcorr"]
    marks = [e for e in events if e[0] == "mark" and e[2] == "nvtxcorr"]

    def attr(e, key):
        return next((x.split("=", 1)[1] for x in e[4:] if x.startswith(key + "=")), "-")

    print(f"nvtxcorr demo: {len(pushes)} ranges in domain 'nvtxcorr', "
          f"{'balanced' if len(pushes) == len(pops) else 'UNBALANCED'}, "
          f"{len(marks)} graph mark(s)\n")
    print("Timeline (first 16 ranges):")
    for e in pushes[:16]:
        print(f"  {e[3]}")
    print("  ...\n")
    print(f"{'label':40} {'count':>5}  {'category':12} color")
    by_label = collections.Counter(e[3] for e in pushes)
    first = {}
    for e in pushes:
        first.setdefault(e[3], e)
    for label, n in by_label.most_common():
        e = first[label]
        cat = cats.get(("nvtxcorr", attr(e, "category")), "-")
        shown = label if len(label) <= 40 else label[:39] + "…"
        print(f"{shown:40} {n:>5}  {cat:12} {attr(e, 'color')}")
    for m in marks:
        print(f"\nmark: {m[3]}")
    return 0 if pushes and len(pushes) == len(pops) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
