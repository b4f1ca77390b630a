#!/usr/bin/env python3
"""Real-GPU launch-cost comparison (tests/bench/gpu-bench runs it; it needs a GPU).

The configurations of the fake-driver benchmark (run_bench.py), on the real driver: bare,
preloaded but disabled, enabled with no NVTX tool, enabled with the no-op tool, hand-written
NVTX with the same no-op tool, enabled with the recording tool writing to /dev/null. Programs:
gpu_launch (an empty kernel through cuLaunchKernel and through <<<>>>, host time per launch)
and, when python3 has CUDA-enabled torch, gpu_bench_torch.py (a replayed CUDA graph, host time
per replay). Runs are interleaved as in run_bench.py: each repetition runs every configuration
of a program back to back in a random order; a run keeps its fastest batch; cells are medians
and added ns are medians of the within-repetition differences.

Before timing, one short run per program with the recording tool checks that nvtxcorr made
one balanced range per launch (a correctness check: a failure makes the exit status 1).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_bench import CONFIGS, Timings, fmt_ns  # noqa: E402


def env_for(build, config, out=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NVTXCORR", "NVTX_INJECTION", "NVTXREC_")) and k != "LD_PRELOAD"}
    if config in ("disabled", "notool", "noop", "record"):
        env["LD_PRELOAD"] = os.path.join(build, "lib", "libnvtxcorr.so")
    if config in ("notool", "noop", "record"):
        env["NVTXCORR"] = "1"
    if config in ("noop", "hand", "record"):
        env["NVTX_INJECTION64_PATH"] = os.path.join(build, "fakes", "libnvtx_recorder.so")
    if config in ("noop", "hand"):
        env["NVTXREC_MODE"] = "noop"
    if config == "record":
        env["NVTXREC_OUT"] = out or os.devnull
    return env


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    batches = [float(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("batch ")]
    launches = [int(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("launches ")]
    if p.returncode != 0 or not batches or not launches:
        raise RuntimeError(f"{' '.join(cmd)}: rc {p.returncode}\n{p.stdout[-800:]}"
                           f"{p.stderr[-1500:]}")
    return min(batches), launches[0]


def check_ranges(build, name, cmd, exact):
    """One range per launch in the nvtxcorr domain, pushes and pops balanced. `exact`: the
    program launches nothing else (PyTorch also launches kernels while it sets up)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ranges.txt")
        _, launches = run(cmd, env_for(build, "record", out))
        pushes = pops = 0
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split("\t")
                if len(parts) > 2 and parts[2].strip() == "nvtxcorr":
                    pushes += parts[0] == "push"
                    pops += parts[0] == "pop"
    ok = pushes == pops and (pushes == launches if exact else pushes >= launches)
    print(f"  ranges {name}: {pushes} pushes, {pops} pops for {launches} launches "
          f"{'ok' if ok else 'WRONG'}", file=sys.stderr)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="build directory (lib/, fakes/)")
    ap.add_argument("--program", required=True, help="the gpu_launch binary")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)

    programs = [  # (key, title, command for a config)
        ("driver", "cuLaunchKernel, empty kernel",
         lambda c: [args.program, "driver", "-n", "100000", "-b", "5"] + (["-hand"] if c == "hand" else [])),
        ("runtime", "<<<>>> (shared cudart), empty kernel",
         lambda c: [args.program, "runtime", "-n", "100000", "-b", "5"] + (["-hand"] if c == "hand" else [])),
    ]
    torch_ok = not args.no_torch and subprocess.run(
        [sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
        capture_output=True).returncode == 0
    if torch_ok:
        script = os.path.join(HERE, "gpu_bench_torch.py")
        programs.append(("torch", "PyTorch CUDA-graph replay (decode step)",
                         lambda c: [sys.executable, script, "-n", "4000", "-b", "5"] +
                         (["--hand"] if c == "hand" else [])))
    else:
        print("SKIP pytorch: python3 has no CUDA-enabled torch", file=sys.stderr)

    ok = True
    for key, _, cmd in programs:
        short = cmd("record")
        short[short.index("-n") + 1] = "2000"
        ok &= check_ranges(build, key, short, exact=key != "torch")

    t = Timings(args.reps)
    rng = random.Random(1)
    for rep in range(args.reps):
        for key, _, cmd in rng.sample(programs, len(programs)):
            for config, _ in rng.sample(CONFIGS, len(CONFIGS)):
                steady, _ = run(cmd(config), env_for(build, config))
                t.add((key, config), rep, steady, 0.0, 0.0)
        print(f"  repetition {rep + 1}/{args.reps}", file=sys.stderr)

    print(f"\n### Real GPU: host time per launch (ns), {args.reps} repetitions\n")
    print("Bare: the median. In brackets, added over bare: the median of the differences "
          "between runs of the same repetition; the other cells are bare plus that. Last "
          "column: the median of the repetitions' ratios.\n")
    print("| program | " + " | ".join(c[1] for c in CONFIGS) + " | no-op tool / hand-written |")
    print("|---|" + "---:|" * (len(CONFIGS) + 1))
    for key, title, _ in programs:
        base = (key, "bare")
        cells = [fmt_ns(t.med(base))]
        for config, _ in CONFIGS[1:]:
            cells.append(f"{fmt_ns(t.est((key, config), base))} "
                         f"({t.diff((key, config), base):+.1f})")
        ratio = t.ratio((key, "noop"), (key, "hand"))
        print(f"| {title} | " + " | ".join(cells) + f" | {ratio:.3f}× |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
