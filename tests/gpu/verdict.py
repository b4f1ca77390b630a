#!/usr/bin/env python3
"""One verdict line for a GPU-check scenario from the recording NVTX tool's log:
kernels seen (distinct labels), range count, balance per thread, graph ranges."""
import collections
import sys


def main(name, path, rc):
    try:
        events = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8")]
    except OSError:
        events = []
    stacks = collections.defaultdict(int)
    balanced = True
    labels = collections.Counter()
    for e in events:
        if len(e) > 2 and e[2] == "nvtxcorr":
            if e[0] == "push":
                stacks[e[1]] += 1
                labels[e[3]] += 1
            elif e[0] == "pop":
                stacks[e[1]] -= 1
                balanced &= stacks[e[1]] >= 0
    balanced &= all(v == 0 for v in stacks.values())
    graphs = sum(n for label, n in labels.items() if label.startswith("graph#"))
    ok = rc == "0" and balanced and sum(labels.values()) > 0
    top = ", ".join(f"{label} x{n}" for label, n in labels.most_common(6))
    print(f"{'PASS' if ok else 'FAIL'} {name}: rc={rc} ranges={sum(labels.values())} "
          f"balanced={'yes' if balanced else 'NO'} graph_ranges={graphs} labels: {top}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
