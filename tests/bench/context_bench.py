#!/usr/bin/env python3
"""Program context's cost (issue 20; docs/performance.md, Program context): side by side in one
run, configurations interleaved, medians over the repetitions.

  NVTX push/pop   the program's own pair (scn_context bench: a registered string in a domain,
                  and an ASCII message in the default domain) with nvtxcorr as the NVTX tool,
                  against the recording tool in no-op mode and against no tool at all;
  per launch      profile mode (no GPU time) with a launch inside two open ranges
                  (scn_context launches), with context (nvtxcorr the tool) and without
                  (no tool: the ranges are NVTX's no-ops), and the plain range path for scale;
  instructions    callgrind's count per launch, the same two profile runs (5,000 minus 1,000
                  launches: the first launches' slow paths cancel out).

  python3 tests/bench/context_bench.py [--build build] [--reps 7] [--n 2000000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"context_bench: {' '.join(cmd)}: rc {p.returncode}\n{p.stderr}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--n", type=int, default=2000000)
    ap.add_argument("--no-callgrind", action="store_true")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    lib = os.path.join(b, "lib", "libnvtxcorr.so")
    recorder = os.path.join(b, "fakes", "libnvtx_recorder.so")
    prog = os.path.join(b, "tests", "e2e", "scenarios", "scn_context")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NVTX", "LD_PRELOAD"))}
    base["LD_LIBRARY_PATH"] = os.path.join(b, "fakes")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctxbench-")
    tools = {"no tool": {}, "no-op tool": {"NVTX_INJECTION64_PATH": recorder,
                                           "NVTXREC_MODE": "noop"},
             "nvtxcorr": {"NVTX_INJECTION64_PATH": lib}}
    profile = {"NVTXCORR": "1", "LD_PRELOAD": lib, "NVTXCORR_GPU": "0",
               "NVTXCORR_PROFILE": os.path.join(tmp, "p.%p.json")}
    launches = {"range path, no-op tool": {"NVTXCORR": "1", "LD_PRELOAD": lib,
                                           "NVTX_INJECTION64_PATH": recorder,
                                           "NVTXREC_MODE": "noop"},
                "profile, no context": profile,
                "profile, context": {**profile, "NVTX_INJECTION64_PATH": lib}}
    pairs = {k: {"ex": [], "a": []} for k in tools}
    per_launch = {k: [] for k in launches}
    for _ in range(a.reps):
        for name, extra in tools.items():
            out = run([prog, "bench", str(a.n)], {**base, **extra})
            pairs[name]["ex"].append(float(re.search(r"pushpop_ex_ns (\S+)", out)[1]))
            pairs[name]["a"].append(float(re.search(r"pushpop_a_ns (\S+)", out)[1]))
        for name, extra in launches.items():
            out = run([prog, "launches", str(a.n // 4)], {**base, **extra})
            per_launch[name].append(float(re.search(r"launch_ns (\S+)", out)[1]))
    med = statistics.median
    print(f"NVTX push/pop pair, ns (median of {a.reps}, {a.n:,} pairs each)\n")
    print("| program's pair | no tool | no-op tool | nvtxcorr as the tool | added over no-op |")
    print("|---|---:|---:|---:|---:|")
    for key, what in (("ex", "nvtxDomainRangePushEx (registered string) + Pop"),
                      ("a", "nvtxRangePushA (ASCII) + nvtxRangePop")):
        m = {k: med(pairs[k][key]) for k in tools}
        print(f"| {what} | {m['no tool']:.1f} | {m['no-op tool']:.1f} | {m['nvtxcorr']:.1f} | "
              f"{m['nvtxcorr'] - m['no-op tool']:+.1f} |")
    print(f"\nPer launch (cuLaunchKernel inside two ranges), ns, median of {a.reps}\n")
    print("| " + " | ".join(launches) + " | context added |")
    print("|" + "---:|" * (len(launches) + 1))
    m = {k: med(v) for k, v in per_launch.items()}
    print("| " + " | ".join(f"{m[k]:.1f}" for k in launches) +
          f" | {m['profile, context'] - m['profile, no context']:+.1f} |")
    if a.no_callgrind:
        return
    ir = {}
    for name in ("profile, no context", "profile, context"):
        counts = []
        for n in (1000, 5000):
            out_file = os.path.join(tmp, f"cg.{len(ir)}.{n}")
            run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", prog,
                 "launches", str(n)], {**base, **launches[name]})
            total = re.search(r"^summary:\s+(\d+)", open(out_file).read(), re.M)
            counts.append(int(total[1]))
        ir[name] = (counts[1] - counts[0]) / 4000
    print("\nInstructions per launch (callgrind, 5,000 minus 1,000 launches)\n")
    print("| profile, no context | profile, context | added |")
    print("|---:|---:|---:|")
    print(f"| {ir['profile, no context']:.0f} | {ir['profile, context']:.0f} | "
          f"{ir['profile, context'] - ir['profile, no context']:+.0f} |")


if __name__ == "__main__":
    main()
