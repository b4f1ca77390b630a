#!/usr/bin/env python3
"""Driver of the launch-overhead benchmark (docs/performance.md describes the method).

Runs the launch-loop programs of tests/bench (bench_launch: cuLaunchKernel, cuLaunchKernelEx,
cuGraphLaunch and a cuGetProcAddress pointer; bench_runtime: cudaLaunchKernel) against the
fake driver and runtime in six configurations -- bare, preloaded but disabled, enabled with no
NVTX tool, enabled with a no-op tool, hand-written NVTX with the same no-op tool, enabled with
the recording tool -- and the scaling runs (label rules, distinct kernels, threads). Runs
that are compared form a block; every repetition runs every block once, blocks and the runs
inside them in a fresh random order, so machine noise hits all alike. A run keeps its fastest
batch; a cell is the median over the repetitions, and an added cost is the median of the
differences between runs of the same repetition's block. Instructions per launch come from
callgrind: two loop lengths, the difference divided by the extra launches, so set-up cost
cancels.

Besides timing it checks correctness, never timing: every run produced its numbers, no launch
failed, the fake driver saw every launch, and a run with the recording tool produced exactly
one balanced range per launch (with the matching label when a table is given).

Prints Markdown tables. --write FILE replaces the block between the markers
<!-- bench:begin --> and <!-- bench:end --> in FILE; nothing is written anywhere else except
temporary files, which are removed.
"""
import argparse
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ENTRIES = [  # (key, program, title)
    ("direct", "bench_launch", "cuLaunchKernel (direct symbol)"),
    ("ex", "bench_launch", "cuLaunchKernelEx (direct symbol)"),
    ("graph", "bench_launch", "cuGraphLaunch (direct symbol)"),
    ("procaddr", "bench_launch", "cuLaunchKernel via cuGetProcAddress"),
    ("runtime", "bench_runtime", "cudaLaunchKernel (shared cudart)"),
]
CONFIGS = [  # (key, title)
    ("bare", "bare"),
    ("disabled", "preloaded, disabled"),
    ("notool", "enabled, no tool"),
    ("noop", "enabled, no-op tool"),
    ("hand", "hand-written NVTX, no-op tool"),
    ("record", "enabled, recording tool"),
    ("profile", "profile mode, no-op tool"),
    ("trace", "trace mode, no-op tool"),
]
# Profile mode (NVTXCORR_PROFILE) and trace mode (NVTXCORR_TRACE) are judged against
# "enabled, no-op tool": what they add on top of the ranges.
PROFILE_CONFIGS = ("profile", "trace")
# GPU time (CUPTI): profile mode without a tool (CUPTI is only used without one), with the fake
# CUPTI against NVTXCORR_GPU=0; on the entry points below.
GPU_CONFIGS = ("profile_nogpu", "profile_gpu")
GPU_ENTRIES = ("direct", "graph", "runtime")
# Profile mode's windows (NVTXCORR_WINDOW=cudaProfilerApi, never started): outside a window,
# no tool, against "enabled, no tool" (what it must not exceed) and profile mode itself.
WINDOW_CONFIGS = ("notool", "window_idle", "profile_nogpu")
WINDOW_ENTRIES = ("direct", "procaddr", "runtime")
TARGETS = {"disabled": 2.0, "notool": 5.0, "hand_ratio": 1.10, "scaling": 0.05,
           "profile": 25.0, "trace": 80.0, "gpu": 150.0, "window_idle": 1.0}

PROFILES = {
    # n: launches per batch; b: batches per run; w: warm-up launches; reps: repetitions;
    # rec_div: the recording tool's runs make n / rec_div launches per batch; ir: the two loop
    # lengths under callgrind, ir_first the two kernel counts for first-launch instructions;
    # rules, kernels, threads: the scaling points; ir_entries: the entry points callgrind
    # measures (None: all)
    "full": dict(n=50000, b=10, w=10000, reps=51, rec_div=20, ir=(1000, 5000),
                 rules=[1, 100, 10000], rules_kernels=1000, kernels=[10, 1000, 100000],
                 threads=[1, 2], ir_entries=None, ir_first=(100, 300),
                 profile_kernels=[10, 10000]),
    "smoke": dict(n=20000, b=2, w=2000, reps=1, rec_div=10, ir=(200, 700),
                  rules=[1, 100, 10000], rules_kernels=100, kernels=[10, 1000, 10000],
                  threads=[1, 2], ir_entries=["direct"], ir_first=(20, 60),
                  profile_kernels=[10, 10000]),
}


class Failure(Exception):
    pass


class Bench:
    def __init__(self, args, prof):
        self.args, self.p = args, prof
        self.build = os.path.abspath(args.build)
        self.fakes = os.path.join(self.build, "fakes")
        self.lib = os.path.abspath(args.lib or os.path.join(self.build, "lib", "libnvtxcorr.so"))
        self.tool = os.path.join(self.fakes, "libnvtx_recorder.so")
        self.cupti = os.path.join(self.fakes, "libfake_cupti.so")
        self.gpu = os.path.exists(self.cupti)  # built with CUPTI headers
        self.bindir = os.path.join(self.build, "tests", "bench")
        self.failures = []
        self.rules_files = {}
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("NVTXCORR", "NVTX_INJECTION", "NVTXREC_", "FAKECUDA_"))
                and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
        base["LD_LIBRARY_PATH"] = self.fakes
        self.base_env = base
        for path in (self.lib, self.tool, self.prog("bench_launch"), self.prog("bench_runtime"),
                     os.path.join(self.build, "libexec", "nvtxcorr", "nvtxcorr-tool")):
            if not os.path.exists(path):
                raise Failure(f"missing {path}: build the 'bench' target first")
        self.tmp = tempfile.mkdtemp(prefix="nvtxcorr-bench-")
        if re.search(r"[\s:]", self.lib):
            # ld.so splits LD_PRELOAD at spaces and colons (a clone under "My Projects"):
            # preload the library through a link in the temporary directory.
            os.symlink(self.lib, os.path.join(self.tmp, "libnvtxcorr.so"))
            self.lib = os.path.join(self.tmp, "libnvtxcorr.so")

    def prog(self, name):
        return os.path.join(self.bindir, name)

    # ---- one run --------------------------------------------------------------------------
    def env_for(self, config, rules=None, record_out=None):
        env = dict(self.base_env)
        if config in ("disabled", "notool", "noop", "record", "window_idle") + PROFILE_CONFIGS + \
                GPU_CONFIGS:
            env["LD_PRELOAD"] = self.lib
        if config in ("notool", "noop", "record", "window_idle") + PROFILE_CONFIGS + GPU_CONFIGS:
            env["NVTXCORR"] = "1"
        if config == "window_idle":
            env["NVTXCORR_PROFILE"] = os.path.join(self.tmp, "profile.%p.json")
            env["NVTXCORR_GPU"] = "0"
            env["NVTXCORR_WINDOW"] = "cudaProfilerApi"
        if config in GPU_CONFIGS:
            env["NVTXCORR_PROFILE"] = os.path.join(self.tmp, "profile.%p.json")
            env["NVTXCORR_GPU"] = "1" if config == "profile_gpu" else "0"
            if self.cupti:
                env["NVTXCORR_CUPTI_LIBRARY"] = self.cupti
        if config in ("noop", "hand", "record") + PROFILE_CONFIGS:
            env["NVTX_INJECTION64_PATH"] = self.tool
        if config in ("noop", "hand") + PROFILE_CONFIGS:
            env["NVTXREC_MODE"] = "noop"
        if config == "profile":
            env["NVTXCORR_PROFILE"] = os.path.join(self.tmp, "profile.%p.json")
        if config == "trace":
            env["NVTXCORR_TRACE"] = os.path.join(self.tmp, "trace.%p.json")
        if config == "record":
            env["NVTXREC_OUT"] = record_out or os.devnull
        if rules:
            env["NVTXCORR_LABELS"] = self.rules_file(rules)
        return env

    def cmd_for(self, entry, config, n, b, w, k=1, t=1):
        program = dict((e[0], e[1]) for e in ENTRIES)[entry]
        cmd = [self.prog(program), entry, "-n", str(n), "-b", str(b), "-w", str(w),
               "-k", str(k), "-t", str(t)]
        if config == "hand":
            cmd.append("-hand")
        return cmd

    def run(self, what, cmd, env, valgrind=False):
        if valgrind:
            cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.devnull] + cmd
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        res = {"batch": []}
        for line in p.stdout.splitlines():
            key, _, val = line.partition(" ")
            if key == "batch":
                res["batch"].append(float(val))
            elif key in ("init", "first"):
                res[key] = float(val)
            elif key in ("launches", "driver", "errors"):
                res[key] = int(val)
        for line in p.stderr.splitlines():
            if "Collected :" in line:
                res["ir"] = int(line.split("Collected :")[1].replace(",", "").strip())
        need = ["launches", "driver", "errors"] + (["ir"] if valgrind else [])
        if p.returncode != 0 or any(k not in res for k in need):
            raise Failure(f"{what}: rc {p.returncode}, output incomplete\n  cmd: "
                          f"{' '.join(cmd)}\n  stdout: {p.stdout[-500:]}\n  stderr: "
                          f"{p.stderr[-1500:]}")
        if res["errors"]:
            self.fail(f"{what}: {res['errors']} launches failed")
        if res["driver"] != res["launches"]:
            self.fail(f"{what}: the driver counted {res['driver']} launches, the program "
                      f"made {res['launches']}")
        self.check_profile_outputs(what, env, res["launches"], valgrind)
        return res

    def check_profile_outputs(self, what, env, launches, valgrind):
        """Profile mode must count every launch; both outputs are removed after each run."""
        for name in os.listdir(self.tmp):
            path = os.path.join(self.tmp, name)
            if name.startswith("profile.") and not valgrind:
                import json
                with open(path) as f:
                    d = json.load(f)
                got = d["totals"]
                if got["launches"] != launches:
                    self.fail(f"{what}: the profile counted {got['launches']} launches, the "
                              f"program made {launches}")
                if env.get("NVTXCORR_GPU") == "1" and (
                        not d["gpu_time"] or got["gpu_kernels"] < launches):
                    self.fail(f"{what}: GPU time missing ({d['gpu_time_note']}, "
                              f"{got['gpu_kernels']} kernels for {launches} launches)")
            if name.startswith(("profile.", "trace.")):
                os.unlink(path)

    def fail(self, msg):
        self.failures.append(msg)
        print("FAIL " + msg, file=sys.stderr)

    # ---- label tables ---------------------------------------------------------------------
    def rules_file(self, count):
        """`count` rules: count-1 realistic rules that match none of the benchmark's kernels
        (exact names, globs with a literal, globs with a set, a few regexes, graph rules),
        then one that matches them all, last, so every first launch reads the whole table."""
        if count in self.rules_files:
            return self.rules_files[count]
        lines = [f"# {count} rules generated by run_bench.py"]
        for i in range(count - 1):
            shape = i % 10
            if shape < 3:
                lines.append(f"sm90_xmma_gemm_f16f16_{i}_tn  \"gemm {{function}}\"  "
                             "category=matmul")
            elif shape < 5:
                lines.append(f"*flash_fwd_{i}_kernel*  attention.prefill  category=attention "
                             "color=#E45756")
            elif shape < 7:
                lines.append(f"triton_poi_fused_{i}_*  elementwise  color=#00ff00")
            elif shape == 7:
                lines.append(f"*[fs]m90_xmma_gemm_f16f16_{i}_t?  matmul.set")
            elif shape == 8:
                lines.append(f"graph:kernels={i}  \"decode {{kernels}}\"  category=graph")
            elif i % 100 == 9:
                lines.append(f"re:^ncclDevKernel_.*_{i}$  comm  category=comm")
            else:
                lines.append(f"\"*vectorized_elementwise_kernel<{i}, *\"  elementwise")
        lines.append("*kernel_* bench.match category=bench color=#4C78A8")
        path = os.path.join(self.tmp, f"rules-{count}.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        # A rejected table would silently fall back to default labels: check it first.
        tool = os.path.join(self.build, "libexec", "nvtxcorr", "nvtxcorr-tool")
        p = subprocess.run([tool, "check", path], capture_output=True, text=True)
        if p.returncode != 0 or " rules OK" not in p.stdout + p.stderr:
            raise Failure(f"generated table {path} rejected:\n{p.stdout}{p.stderr}"[:2000])
        self.rules_files[count] = path
        return path

    # ---- correctness: ranges ----------------------------------------------------------------
    def check_ranges(self):
        """A short run of every entry point with the recording tool: one push and one pop in
        the expected domain per launch, balanced per thread, labelled by the table if one."""
        cases = [(e[0], "record", None, 1, 1) for e in ENTRIES]
        cases += [(e[0], "hand", None, 1, 1) for e in ENTRIES]
        cases += [("direct", "record", 100, 5, 1), ("direct", "record", None, 3, 2)]
        for entry, config, rules, k, t in cases:
            out = os.path.join(self.tmp, "ranges.txt")
            if os.path.exists(out):
                os.unlink(out)
            env = self.env_for("record" if config == "record" else "hand", rules, out)
            if config == "hand":
                env.pop("NVTXREC_MODE", None)
                env["NVTXREC_OUT"] = out
            what = f"ranges {entry}/{config}" + (f"/{rules} rules" if rules else "") + \
                (f"/{t} threads" if t > 1 else "")
            res = self.run(what, self.cmd_for(entry, config, 500, 2, 50, k, t), env)
            domain = "bench" if config == "hand" else "nvtxcorr"
            # The program leaves its primer launch unwrapped; nvtxcorr wraps every launch.
            want = res["launches"] - (1 if config == "hand" else 0)
            pushes, pops, depth, labels = 0, 0, {}, set()
            with open(out, encoding="utf-8", errors="replace") as f:
                for line in f:
                    parts = line.rstrip("\n").split("\t")
                    if parts[0] in ("push", "pop") and parts[2] == domain:
                        d = depth.get(parts[1], 0) + (1 if parts[0] == "push" else -1)
                        if d < 0:
                            self.fail(f"{what}: pop without push on thread {parts[1]}")
                        depth[parts[1]] = d
                        if parts[0] == "push":
                            pushes += 1
                            labels.add(parts[3])
                        else:
                            pops += 1
            if pushes != want or pops != want or any(depth.values()):
                self.fail(f"{what}: {pushes} pushes, {pops} pops for {want} launches")
            if rules and labels - {"bench.match", "bench_primer"}:  # the primer matches no rule
                self.fail(f"{what}: unexpected labels {sorted(labels)[:5]}")
            print(f"  {what}: {pushes} ranges for {want} launches", file=sys.stderr)
            os.unlink(out)

    # ---- timing -----------------------------------------------------------------------------
    def timed_tasks(self):
        """Blocks of runs that are compared with each other: (block, [(key, cmd, env)])."""
        p = self.p
        blocks = []
        for entry, _, _ in ENTRIES:
            runs = []
            for config, _ in CONFIGS:
                n, w = p["n"], p["w"]
                if config == "record":  # formats text per event: fewer launches, same rate
                    n, w = n // p["rec_div"], w // p["rec_div"]
                runs.append((("main", entry, config), self.cmd_for(entry, config, n, p["b"], w),
                             self.env_for(config)))
            blocks.append((("main", entry), runs))
        k, runs = p["rules_kernels"], []
        n = max(p["n"], k)
        for rules in ["bare", 0] + p["rules"]:
            config = "bare" if rules == "bare" else "noop"
            runs.append((("rules", rules), self.cmd_for("direct", config, n, p["b"], p["w"], k),
                         self.env_for(config, rules if config == "noop" else None)))
        blocks.append((("rules",), runs))
        runs = []
        for k in p["kernels"]:
            for config in ("bare", "noop"):
                runs.append((("kernels", k, config),
                             self.cmd_for("direct", config, max(p["n"], k), p["b"], max(p["w"], k),
                                          k), self.env_for(config)))
        blocks.append((("kernels",), runs))
        runs = []
        for k in p["profile_kernels"]:
            for config in ("noop",) + PROFILE_CONFIGS:
                runs.append((("pkernels", k, config),
                             self.cmd_for("direct", config, max(p["n"], k), p["b"], max(p["w"], k),
                                          k), self.env_for(config)))
        blocks.append((("pkernels",), runs))
        runs = []
        for t in p["threads"]:
            for config in ("bare", "disabled", "noop", "hand") + PROFILE_CONFIGS:
                runs.append((("threads", t, config),
                             self.cmd_for("direct", config, p["n"], p["b"], p["w"], 1, t),
                             self.env_for(config)))
        blocks.append((("threads",), runs))
        for entry in WINDOW_ENTRIES:
            runs = [(("window", entry, config), self.cmd_for(entry, config, p["n"], p["b"], p["w"]),
                     self.env_for(config)) for config in ("bare",) + WINDOW_CONFIGS]
            blocks.append((("window", entry), runs))
        if self.gpu:
            for entry in GPU_ENTRIES:
                runs = [(("gpu", entry, config),
                         self.cmd_for(entry, config, p["n"], p["b"], p["w"]), self.env_for(config))
                        for config in ("bare",) + GPU_CONFIGS]
                blocks.append((("gpu", entry),  runs))
        return blocks

    def run_timed(self):
        """Every repetition runs every block once, blocks in a fresh random order and the runs
        of a block back to back in a fresh random order: noise that lasts a second or more
        then hits a block's runs alike, and comparisons are made within a repetition's block
        (Timings.diff, Timings.ratio)."""
        blocks = self.timed_tasks()
        t = Timings(self.p["reps"])
        rng = random.Random(12345)
        started = time.time()
        for rep in range(self.p["reps"]):
            for _, runs in rng.sample(blocks, len(blocks)):
                for key, cmd, env in rng.sample(runs, len(runs)):
                    res = self.run("/".join(map(str, key)), cmd, env)
                    if not res["batch"]:
                        raise Failure(f"{key}: no batch timings")
                    t.add(key, rep, min(res["batch"]), res["first"], res["init"])
            print(f"  timed repetition {rep + 1}/{self.p['reps']} "
                  f"({time.time() - started:.0f} s)", file=sys.stderr)
        return t

    # ---- callgrind ----------------------------------------------------------------------------
    def ir_tasks(self):
        p = self.p
        n1, n2 = p["ir"]
        f1, f2 = p["ir_first"]
        tasks = []  # (key, per, [(cmd, env)] * 2): ir = (ir2 - ir1) / per
        for entry, _, _ in ENTRIES:
            if p["ir_entries"] and entry not in p["ir_entries"]:
                continue
            for config, _ in CONFIGS:
                tasks.append((("main", entry, config), n2 - n1,
                              [(self.cmd_for(entry, config, n, 1, 0), self.env_for(config))
                               for n in (n1, n2)]))
        # Label rules: first launch (per kernel: f2 - f1 more kernels, no batches) and steady
        # state (100 kernels round-robin).
        for rules in [0, "bare"] + p["rules"]:
            config = "bare" if rules == "bare" else "noop"
            env = self.env_for(config, rules if rules != "bare" else None)
            tasks.append((("rules-first", rules), f2 - f1,
                          [(self.cmd_for("direct", config, 0, 0, 0, k), env) for k in (f1, f2)]))
            tasks.append((("rules-steady", rules), n2 - n1,
                          [(self.cmd_for("direct", config, n, 1, 0, 100), env) for n in (n1, n2)]))
        return tasks

    def run_ir(self):
        if self.args.no_callgrind:
            return {}
        if shutil.which("valgrind") is None:
            self.fail("valgrind not found: no instruction counts")
            return {}
        tasks = self.ir_tasks()
        jobs = [(key, i, cmd, env) for key, _, runs in tasks for i, (cmd, env) in enumerate(runs)]
        started = time.time()
        with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
            out = list(pool.map(lambda j: (j[0], j[1], self.run(
                "callgrind " + "/".join(map(str, j[0])), j[2], j[3], valgrind=True)["ir"]), jobs))
        print(f"  callgrind: {len(jobs)} runs ({time.time() - started:.0f} s)", file=sys.stderr)
        irs = {}
        for key, i, ir in out:
            irs.setdefault(key, [0, 0])[i] = ir
        return {key: (irs[key][1] - irs[key][0]) / per for key, per, _ in tasks}


class Timings:
    """Per run: the fastest batch (noise only ever adds time), the mean first launch and the
    process's first launch, indexed by repetition so that runs of one block pair up."""

    def __init__(self, reps):
        self.reps, self.data = reps, {}

    def add(self, key, rep, steady, first, init):
        self.data.setdefault(key, {})[rep] = (steady, first, init)

    def med(self, key, what="steady"):
        i = ("steady", "first", "init").index(what)
        return statistics.median(v[i] for v in self.data[key].values())

    def diff(self, key, base):
        """Median over repetitions of (key - base), both from the same repetition's block."""
        a, b = self.data[key], self.data[base]
        return statistics.median(a[r][0] - b[r][0] for r in a if r in b)

    def est(self, key, base):
        """key's time as base's median plus the paired difference: consistent with the added
        ns shown beside it even when the machine's speed flips between two states."""
        return self.med(base) + self.diff(key, base)

    def ratio(self, key, base):
        a, b = self.data[key], self.data[base]
        return statistics.median(a[r][0] / b[r][0] for r in a if r in b)


# ---- report ----------------------------------------------------------------------------------
def fmt_ns(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def fmt_us(ns):
    if ns < 1000:
        return f"{ns:.0f} ns"
    return f"{ns / 1000:.1f} µs" if ns < 100000 else f"{ns / 1e6:.2f} ms"


def report(b, t, ir):
    p, out = b.p, []
    w = out.append
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    w(f"Measured {time.strftime('%Y-%m-%d')}: {cpu}, {os.cpu_count()} CPUs, Linux "
      f"{platform.release()}, load average at the end {os.getloadavg()[0]:.2f}. Profile "
      f"`{b.args.profile}`: {p['reps']} repetitions; a run times {p['b']} batches of "
      f"{p['n']:,} launches (recording tool: {p['n'] // p['rec_div']:,}) and keeps its fastest. "
      "Fake driver and runtime: a bare launch costs a few ns here, microseconds on a GPU.")
    w("")
    w("### Per launch, by entry point")
    w("")
    w("ns per launch. Bare: the median over the repetitions. In brackets, ns added over bare: "
      "the median of the differences between runs of the same repetition; the other cells are "
      "bare plus that.")
    w("")
    w("| entry point | " + " | ".join(c[1] for c in CONFIGS) + " |")
    w("|---|" + "---:|" * len(CONFIGS))
    for key, _, title in ENTRIES:
        base = ("main", key, "bare")
        cells = [fmt_ns(t.med(base))]
        for config, _ in CONFIGS[1:]:
            k = ("main", key, config)
            cells.append(f"{fmt_ns(t.est(k, base))} ({t.diff(k, base):+.1f})")
        w(f"| {title} | " + " | ".join(cells) + " |")
    w("")
    w("### Against hand-written NVTX (both with the no-op tool)")
    w("")
    w("Total ratio: nvtxcorr's time per launch over the hand-written program's (median of the "
      "repetitions' ratios). Added ratio: nvtxcorr's added ns over the hand-written program's.")
    w("")
    w("| entry point | nvtxcorr ns | hand-written ns | total ratio | nvtxcorr added ns | "
      "hand-written added ns | added ratio |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for key, _, title in ENTRIES:
        base, ours, hand = (("main", key, c) for c in ("bare", "noop", "hand"))
        w(f"| {title} | {fmt_ns(t.est(ours, base))} | {fmt_ns(t.est(hand, base))} | "
          f"{t.ratio(ours, hand):.2f}× | {t.diff(ours, base):.1f} | {t.diff(hand, base):.1f} | "
          f"{added_ratio(t, key)} |")
    if ir:
        w("")
        w("### Instructions per launch (callgrind)")
        w("")
        w(f"Difference between {p['ir'][1]:,} and {p['ir'][0]:,} launches, per launch; in "
          "brackets, added over bare. Deterministic, unlike the times above.")
        w("")
        w("| entry point | " + " | ".join(c[1] for c in CONFIGS) + " |")
        w("|---|" + "---:|" * len(CONFIGS))
        for key, _, title in ENTRIES:
            if ("main", key, "bare") not in ir:
                continue
            bare = ir[("main", key, "bare")]
            cells = [f"{bare:.0f}"] + [f"{ir[('main', key, c)]:.0f} "
                                       f"({ir[('main', key, c)] - bare:+.0f})"
                                       for c, _ in CONFIGS[1:]]
            w(f"| {title} | " + " | ".join(cells) + " |")
    w("")
    k = p["rules_kernels"]
    w(f"### Label rules (cuLaunchKernel, {k:,} kernels round-robin, enabled + no-op tool)")
    w("")
    w("The table's one matching rule is its last. First launch: the mean of each kernel's "
      "first launch (name, demangling, matching, string registration). Instructions: per "
      f"kernel over {p['ir_first'][1] - p['ir_first'][0]} more kernels' first launches; "
      "steady state over 100 kernels.")
    w("")
    w("| rules | first launch | first launch, instructions | steady ns | added ns | "
      "steady instructions |")
    w("|---|---:|---:|---:|---:|---:|")
    for rules in ["bare", 0] + p["rules"]:
        name = {"bare": "bare (no preload)", 0: "no table (default labels)"}.get(rules)
        name = name or f"{rules:,}"
        key = ("rules", rules)
        fi, si = ir.get(("rules-first", rules)), ir.get(("rules-steady", rules))
        w(f"| {name} | {fmt_us(t.med(key, 'first'))} | {f'{fi:,.0f}' if fi else '–'} | "
          f"{fmt_ns(t.est(key, ('rules', 'bare')))} | {t.diff(key, ('rules', 'bare')):+.1f} | "
          f"{f'{si:.0f}' if si else '–'} |")
    w("")
    w("### Distinct kernels (cuLaunchKernel round-robin, default labels, enabled + no-op tool)")
    w("")
    w("| kernels | first launch, bare | first launch, nvtxcorr | steady, bare | "
      "steady, nvtxcorr | added ns |")
    w("|---|---:|---:|---:|---:|---:|")
    for kk in p["kernels"]:
        bare, ours = ("kernels", kk, "bare"), ("kernels", kk, "noop")
        w(f"| {kk:,} | {fmt_ns(t.med(bare, 'first'))} ns | {fmt_us(t.med(ours, 'first'))} | "
          f"{fmt_ns(t.med(bare))} | {fmt_ns(t.est(ours, bare))} | {t.diff(ours, bare):+.1f} |")
    w("")
    w("### Threads (cuLaunchKernel, ns per launch per thread, each thread its own stream)")
    w("")
    w("| threads | bare | preloaded, disabled | enabled, no-op tool | hand-written NVTX | "
      "profile mode | trace mode |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for th in p["threads"]:
        w(f"| {th} | " + " | ".join(fmt_ns(t.med(("threads", th, c)))
                                    for c in ("bare", "disabled", "noop", "hand")
                                    + PROFILE_CONFIGS) + " |")
    w("")
    w("### Profile and trace mode (cuLaunchKernel, no-op tool)")
    w("")
    w("ns added per launch over enabled with the no-op tool (paired, median over the "
      "repetitions); distinct kernels launched round-robin; threads: ns per launch per thread.")
    w("")
    w("| run | enabled, no-op tool | profile mode | added | trace mode | added |")
    w("|---|---:|---:|---:|---:|---:|")
    for kk in p["profile_kernels"]:
        base = ("pkernels", kk, "noop")
        cells = [fmt_ns(t.med(base))]
        for c in PROFILE_CONFIGS:
            cells += [fmt_ns(t.est(("pkernels", kk, c), base)),
                      f"{t.diff(('pkernels', kk, c), base):+.1f}"]
        w(f"| {kk:,} kernels | " + " | ".join(cells) + " |")
    for th in p["threads"]:
        base = ("threads", th, "noop")
        cells = [fmt_ns(t.med(base))]
        for c in PROFILE_CONFIGS:
            cells += [fmt_ns(t.est(("threads", th, c), base)),
                      f"{t.diff(('threads', th, c), base):+.1f}"]
        w(f"| {th} thread{'s' if th > 1 else ''} | " + " | ".join(cells) + " |")
    w("")
    w("### Profile mode outside a window, no tool")
    w("")
    w("NVTXCORR_WINDOW=cudaProfilerApi with no window ever opened (NVTXCORR_GPU=0), against "
      "enabled with no tool (profile mode off) and profile mode itself (NVTXCORR_GPU=0). ns per "
      "launch; added over enabled, no tool: paired median over the repetitions.")
    w("")
    w("| entry point | bare | enabled, no tool | profile mode, outside a window | added | "
      "profile mode |")
    w("|---|---:|---:|---:|---:|---:|")
    for key, _, title in ENTRIES:
        if key not in WINDOW_ENTRIES:
            continue
        base = ("window", key, "bare")
        off, idle, on = (("window", key, c) for c in WINDOW_CONFIGS)
        w(f"| {title} | {fmt_ns(t.med(base))} | {fmt_ns(t.est(off, base))} | "
          f"{fmt_ns(t.est(idle, base))} | {t.diff(idle, off):+.1f} | {fmt_ns(t.est(on, base))} |")
    w("")
    if b.gpu:
        w("### Profile mode with GPU time (CUPTI), no tool")
        w("")
        w("The fake CUPTI (tests/fakes/fake_cupti.c) makes nvtxcorr's launch callbacks at "
          "the entry and exit of each launch call (driver, and runtime for cudaLaunchKernel) "
          "and writes a kernel record per launch (one per kernel node for a graph), charging "
          "nothing for its own work; nvtxcorr aggregates the records as buffers complete. "
          "Against profile mode with NVTXCORR_GPU=0. ns per launch; added: paired median over "
          "the repetitions.")
        w("")
        w("| entry point | bare | profile mode | profile + CUPTI | added by CUPTI |")
        w("|---|---:|---:|---:|---:|")
        for key, _, title in ENTRIES:
            if key not in GPU_ENTRIES:
                continue
            base = ("gpu", key, "bare")
            off, on = ("gpu", key, "profile_nogpu"), ("gpu", key, "profile_gpu")
            w(f"| {title} | {fmt_ns(t.med(base))} | {fmt_ns(t.est(off, base))} | "
              f"{fmt_ns(t.est(on, base))} | {t.diff(on, off):+.1f} |")
        w("")
    w("First launch in the process (cuLaunchKernel, enabled + no-op tool: reading the "
      "environment, loading the NVTX tool and the demangler): "
      f"{fmt_us(t.med(('main', 'direct', 'noop'), 'init'))} (bare: "
      f"{fmt_us(t.med(('main', 'direct', 'bare'), 'init'))}).")
    w("")
    out += targets(p, t)
    return "\n".join(out)


def added_ratio(t, entry):
    base, ours, hand = (("main", entry, c) for c in ("bare", "noop", "hand"))
    h = t.diff(hand, base)
    return f"{t.diff(ours, base) / h:.1f}×" if h > 0.1 else "n/a (hand-written adds ~0)"


def targets(p, t):
    out = ["### Targets", ""]
    if p["reps"] < 5:
        out += [f"({p['reps']} repetition(s): too few for the verdicts below to mean anything.)",
                ""]
    out += ["| target | measured | verdict |", "|---|---|---|"]

    def row(name, measured, ok):
        out.append(f"| {name} | {measured} | {'met' if ok else '**missed**'} |")

    for config, limit, name in (("disabled", TARGETS["disabled"], "preloaded, disabled"),
                                ("notool", TARGETS["notool"], "enabled, no tool")):
        worst = max((t.diff(("main", e[0], config), ("main", e[0], "bare")), e[0])
                    for e in ENTRIES)
        row(f"{name}: ≤ {limit:g} ns added, every entry point",
            f"worst {worst[0]:+.1f} ns ({worst[1]})", worst[0] <= limit)
    for e in ENTRIES:
        r = t.ratio(("main", e[0], "noop"), ("main", e[0], "hand"))
        row(f"enabled + no-op tool ≤ {TARGETS['hand_ratio']:.1f}× hand-written: {e[0]}",
            f"{r:.2f}× total; added ns {added_ratio(t, e[0])}", r <= TARGETS["hand_ratio"])
    for c in PROFILE_CONFIGS:
        worst = max((t.diff(("main", e[0], c), ("main", e[0], "noop")), e[0]) for e in ENTRIES)
        row(f"{c} mode: ≤ {TARGETS[c]:g} ns added over enabled + no-op tool, every entry point",
            f"worst {worst[0]:+.1f} ns ({worst[1]})", worst[0] <= TARGETS[c])
        added = [t.diff(("pkernels", k, c), ("pkernels", k, "noop")) for k in p["profile_kernels"]]
        lo_k, hi_k = p["profile_kernels"][0], p["profile_kernels"][-1]
        row(f"{c} mode flat from {lo_k:,} to {hi_k:,} kernels (added ns within 5 ns)",
            f"{added[0]:+.1f} → {added[-1]:+.1f} ns", abs(added[-1] - added[0]) <= 5)
        added = [t.diff(("threads", th, c), ("threads", th, "noop")) for th in p["threads"]]
        row(f"{c} mode flat from {p['threads'][0]} to {p['threads'][-1]} threads "
            "(added ns per launch per thread within 5 ns)",
            f"{added[0]:+.1f} → {added[-1]:+.1f} ns", abs(added[-1] - added[0]) <= 5)
    if any(k[0] == "window" for k in t.data):
        worst = max((t.diff(("window", e, "window_idle"), ("window", e, "notool")), e)
                    for e in WINDOW_ENTRIES)
        row(f"profile mode outside a window: ≤ {TARGETS['window_idle']:g} ns added over enabled, "
            f"no tool, {', '.join(WINDOW_ENTRIES)}", f"worst {worst[0]:+.1f} ns ({worst[1]})",
            worst[0] <= TARGETS["window_idle"])
    if any(k[0] == "gpu" for k in t.data):
        worst = max((t.diff(("gpu", e, "profile_gpu"), ("gpu", e, "profile_nogpu")), e)
                    for e in GPU_ENTRIES)
        row(f"profile + CUPTI (fake): ≤ {TARGETS['gpu']:g} ns added over profile mode, "
            f"{', '.join(GPU_ENTRIES)}", f"worst {worst[0]:+.1f} ns ({worst[1]})",
            worst[0] <= TARGETS["gpu"])
    lo, hi = p["rules"][0], p["rules"][-1]
    r = t.ratio(("rules", hi), ("rules", lo))
    row(f"steady state, {hi:,} vs {lo:,} rules, within 5%", f"{r:.3f}×",
        abs(r - 1) <= TARGETS["scaling"])
    lo, hi = p["kernels"][0], p["kernels"][-1]
    a, b = ("kernels", lo, "noop"), ("kernels", hi, "noop")
    ba, bb = ("kernels", lo, "bare"), ("kernels", hi, "bare")
    r = t.ratio(b, a)
    row(f"steady state, {hi:,} vs {lo:,} kernels, within 5%",
        f"{r:.2f}× (added over bare {t.diff(a, ba):+.1f} → {t.diff(b, bb):+.1f} ns)",
        abs(r - 1) <= TARGETS["scaling"])
    return out


def write_block(path, text):
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        raise Failure(f"{path} has no {begin} ... {end} block")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory")
    ap.add_argument("--smoke", action="store_true", help="short run for CI: numbers, no judging")
    ap.add_argument("--reps", type=int, help="repetitions of every timed run")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    ap.add_argument("--write", metavar="FILE", help="replace the results block in FILE")
    ap.add_argument("--lib", metavar="SO", help="measure this libnvtxcorr.so instead of the "
                    "build's (a candidate change, built elsewhere)")
    args = ap.parse_args()
    args.profile = "smoke" if args.smoke else "full"
    prof = dict(PROFILES[args.profile])
    if args.reps:
        prof["reps"] = args.reps
    try:
        b = Bench(args, prof)
    except Failure as e:
        print(f"run_bench: {e}", file=sys.stderr)
        return 1
    started = time.time()
    try:
        print("checking ranges", file=sys.stderr)
        b.check_ranges()
        print("timing", file=sys.stderr)
        t = b.run_timed()
        print("counting instructions", file=sys.stderr)
        ir = b.run_ir()
        text = report(b, t, ir)
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"run_bench: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)
    print(text)
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)
    if args.write and not b.failures:
        write_block(args.write, text)
        print(f"wrote the results into {args.write}", file=sys.stderr)
    if b.failures:
        print(f"run_bench: {len(b.failures)} correctness failure(s):", file=sys.stderr)
        for f in b.failures:
            print("  " + f, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
