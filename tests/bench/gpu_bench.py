#!/usr/bin/env python3
"""Real-GPU launch-cost comparison (tests/bench/gpu-bench and scripts/gpu-check run it; it
needs a GPU, or the fakes in scripts/gpu-check's own tests).

Configurations (--configs, comma-separated; default: all):
  bare          no preload
  disabled      preloaded, NVTXCORR unset
  notool        NVTXCORR=1, no NVTX tool: ranges with no tool (pass-through)
  noop          + the recorder as a no-op NVTX tool
  hand          no preload; the program's hand-written NVTX loop, the same no-op tool
  record        the recording tool formatting every event (to /dev/null)
  profile       profile mode (NVTXCORR_PROFILE), NVTXCORR_GPU=0: no CUPTI, no tool
  profile_gpu   profile mode with CUPTI's GPU time, no tool
  trace         trace mode (NVTXCORR_TRACE), no tool
Programs: gpu_launch (an empty kernel through cuLaunchKernel and through <<<>>>, host time
per launch) and, when python3 has CUDA-enabled torch, gpu_bench_torch.py (a replayed CUDA
graph, host time per replay). Launches go out in chunks small enough that the loop is bound
by the host, not the GPU. Runs are interleaved: each repetition runs every configuration of a
program back to back in a random order; a run keeps its fastest batch; cells are medians and
added ns medians of the within-repetition differences.

Checks (a failure makes the exit status 1), printed as verdict lines `PASS|FAIL host-ns: ...`:
every run succeeded; one short run per program with the recording tool made one balanced
range per launch; every profile or trace run wrote its file, and a profile counted the
program's launches (graph replays) and, with CUPTI, has GPU time, nothing dropped.
--quick: short runs (what scripts/gpu-check uses); --json OUT: the cells as JSON.
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_bench import Timings, fmt_ns  # noqa: E402

CONFIGS = [  # (key, title)
    ("bare", "bare"),
    ("disabled", "preloaded, disabled"),
    ("notool", "enabled, no tool"),
    ("noop", "enabled, no-op tool"),
    ("hand", "hand-written NVTX, no-op tool"),
    ("record", "enabled, recording tool"),
    ("profile", "profile mode"),
    ("profile_gpu", "profile mode + CUPTI"),
    ("trace", "trace mode"),
]
PRELOADED = ("disabled", "notool", "noop", "record", "profile", "profile_gpu", "trace")


def env_for(args, config, tmp, out=None):
    # The variables each configuration sets are cleared; the caller's others (a label table,
    # NVTXCORR_CUPTI_LIBRARY) stay.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NVTX_INJECTION", "NVTXREC_")) and k not in (
               "LD_PRELOAD", "NVTXCORR", "NVTXCORR_PROFILE", "NVTXCORR_TRACE", "NVTXCORR_GPU")}
    if config in PRELOADED:
        env["LD_PRELOAD"] = args.lib
    if config in PRELOADED and config != "disabled":
        env["NVTXCORR"] = "1"
    if config in ("noop", "hand", "record"):
        env["NVTX_INJECTION64_PATH"] = args.recorder
    if config in ("noop", "hand"):
        env["NVTXREC_MODE"] = "noop"
    if config == "record":
        env["NVTXREC_OUT"] = out or os.devnull
    if config in ("profile", "profile_gpu"):
        env["NVTXCORR_PROFILE"] = os.path.join(tmp, "profile.%p.json")
        env["NVTXCORR_GPU"] = "1" if config == "profile_gpu" else "0"
    if config == "trace":
        env["NVTXCORR_TRACE"] = os.path.join(tmp, "trace.%p.json")
    return env


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    batches = [float(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("batch ")]
    launches = [int(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("launches ")]
    if p.returncode != 0 or not batches or not launches:
        raise RuntimeError(f"{os.path.basename(cmd[0])} {' '.join(cmd[1:2])}: rc {p.returncode}: "
                           f"{p.stdout[-300:]} {p.stderr[-500:]}")
    return min(batches), launches[0]


def check_outputs(config, tmp, launches):
    """What a profile or trace run wrote (None when right); the files are removed."""
    files = glob.glob(os.path.join(tmp, "*.json"))
    try:
        if config not in ("profile", "profile_gpu", "trace"):
            return None
        if len(files) != 1:
            return f"{config}: {len(files)} output files"
        if config == "trace":
            return None
        d = json.load(open(files[0]))
        counted = sum(e["launches"] + e.get("graph_launches", 0) for e in d["labels"])
        if counted < launches:
            return f"{config}: the profile counted {counted} launches, the program made {launches}"
        t = d.get("totals") or {}
        if config == "profile_gpu" and not (d.get("gpu_time") and
                                            t.get("gpu_dropped_records") == 0):
            return (f"profile_gpu: gpu_time {d.get('gpu_time')} ({d.get('gpu_time_note')}), "
                    f"{t.get('gpu_dropped_records')} dropped")
        return None
    except (OSError, ValueError, KeyError) as e:
        return f"{config}: unreadable output: {e}"
    finally:
        for f in files:
            os.unlink(f)


def check_ranges(args, name, cmd, exact):
    """One range per launch in the nvtxcorr domain, pushes and pops balanced. `exact`: the
    program launches nothing else (PyTorch also launches kernels while it sets up)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ranges.txt")
        _, launches = run(cmd, env_for(args, "record", tmp, out))
        pushes = pops = 0
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split("\t")
                if len(parts) > 2 and parts[2].strip() == "nvtxcorr":
                    pushes += parts[0] == "push"
                    pops += parts[0] == "pop"
    ok = pushes == pops and (pushes == launches if exact else pushes >= launches)
    return None if ok else f"ranges {name}: {pushes} pushes, {pops} pops for {launches} launches"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="build directory (lib/, fakes/): --lib and --recorder")
    ap.add_argument("--lib", help="libnvtxcorr.so")
    ap.add_argument("--recorder", help="the recording NVTX tool, libnvtx_recorder.so")
    ap.add_argument("--program", required=True, help="the gpu_launch binary")
    ap.add_argument("--configs", default=",".join(c[0] for c in CONFIGS))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="short runs")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", help="write the cells here")
    args = ap.parse_args()
    if args.build:
        args.lib = args.lib or os.path.join(args.build, "lib", "libnvtxcorr.so")
        args.recorder = args.recorder or os.path.join(args.build, "fakes", "libnvtx_recorder.so")
    if not args.lib or not args.recorder:
        ap.error("--build, or --lib and --recorder")
    configs = [c for c in CONFIGS if c[0] in args.configs.split(",")]
    if not configs or configs[0][0] != "bare":
        ap.error("--configs must include bare")
    n, nt = ("20000", "1000") if args.quick else ("100000", "4000")

    def launch_cmd(mode):
        return lambda c: ([args.program, mode, "-n", n, "-b", "5"] +
                          (["-hand"] if c == "hand" else []))
    programs = [  # (key, title, command for a config)
        ("driver", "cuLaunchKernel, empty kernel", launch_cmd("driver")),
        ("runtime", "<<<>>> (shared cudart), empty kernel", launch_cmd("runtime")),
    ]
    torch_ok = not args.no_torch and subprocess.run(
        [sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
        capture_output=True).returncode == 0
    if torch_ok:
        script = os.path.join(HERE, "gpu_bench_torch.py")
        programs.append(("torch", "PyTorch CUDA-graph replay (decode step)",
                         lambda c: [sys.executable, script, "-n", nt, "-b", "3"] +
                         (["--hand"] if c == "hand" else [])))
    else:
        print("gpu-bench: python3 has no CUDA-enabled torch: no graph-replay row", file=sys.stderr)

    problems = []
    for key, _, cmd in programs:
        short = cmd("record")
        short[short.index("-n") + 1] = "2000" if key != "torch" else "256"
        try:
            problems.append(check_ranges(args, key, short, exact=key != "torch"))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append(f"ranges {key}: {e}")

    t = Timings(args.reps)
    rng = random.Random(1)
    scratch = tempfile.TemporaryDirectory(prefix="gpu-bench-")
    tmp = scratch.name
    for rep in range(args.reps):
        for key, _, cmd in rng.sample(programs, len(programs)):
            for config, _ in rng.sample(configs, len(configs)):
                try:
                    steady, launches = run(cmd(config), env_for(args, config, tmp))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    problems.append(f"{key} {config}: {e}")
                    continue
                problems.append(check_outputs(config, tmp, launches))
                t.add((key, config), rep, steady, 0.0, 0.0)
        print(f"  repetition {rep + 1}/{args.reps}", file=sys.stderr)
    problems = [p for p in problems if p]
    scratch.cleanup()

    print(f"\n### Real GPU: host time per launch (ns), {args.reps} repetitions\n")
    print("Bare: the median. In brackets, added over bare: the median of the differences "
          "between runs of the same repetition; the other cells are bare plus that.\n")
    print("| program | " + " | ".join(c[1] for c in configs) + " |")
    print("|---|" + "---:|" * len(configs))
    cells = {}
    for key, title, _ in programs:
        base = (key, "bare")
        if base not in t.data:
            continue
        row = [fmt_ns(t.med(base))]
        cells[key] = {"bare": t.med(base)}
        for config, _ in configs[1:]:
            if (key, config) not in t.data:
                row.append("-")
                continue
            cells[key][config] = t.est((key, config), base)
            row.append(f"{fmt_ns(t.est((key, config), base))} ({t.diff((key, config), base):+.1f})")
        print(f"| {title} | " + " | ".join(row) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reps": args.reps, "ns": cells, "problems": problems}, f, indent=1)
    summary = "; ".join(f"{k}: " + ", ".join(f"{c} {v:.0f}" for c, v in row.items())
                        for k, row in cells.items())
    print(f"{'FAIL' if problems else 'PASS'} host-ns: "
          + (f"{'; '.join(problems[:3])}; " if problems else "")
          + f"host ns per launch/replay ({args.reps} interleaved repetitions): {summary}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
