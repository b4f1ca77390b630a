"""Harness for the end-to-end scenarios: real programs run with LD_PRELOAD=libnvtxcorr.so and environment
variables, exactly as users run them, against the fake driver and runtime (tests/fakes) and
the recording NVTX tool. Each scenario asserts on what the recorder saw (ranges, labels,
colours, categories, marks, balance per thread), on the fake driver's per-variant counters
(so a swapped _ptsz/legacy variant is caught), and on the program's own return codes compared
with a run without the library.

The scenarios live in test_*.py beside this file; run_tests.py runs them.
"""
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIOS = {}
# Built by nvcc: absent when the build had no CUDA toolkit (headers from the wheels).
NVCC_PROGRAMS = ("app_shared", "app_ptds", "app_static", "libmodel.so")


class Skip(Exception):
    """A scenario that cannot run here; the runner prints "skipped: <reason>"."""


def scenario(fn):
    SCENARIOS[fn.__name__.replace("test_", "").replace("_", "-")] = fn
    return fn


class Run:
    def __init__(self, rc, out, err, events, counts):
        self.rc, self.out, self.err, self.events, self.counts = rc, out, err, events, counts

    def pushes(self, domain="nvtxcorr"):
        return [e for e in self.events if e["kind"] == "push" and e["domain"] == domain]

    def labels(self, domain="nvtxcorr"):
        return [e["text"] for e in self.pushes(domain)]

    def marks(self, domain="nvtxcorr"):
        return [e["text"] for e in self.events if e["kind"] == "mark" and e["domain"] == domain]

    def categories(self, domain="nvtxcorr"):
        return {e["id"]: e["name"] for e in self.events
                if e["kind"] == "category" and e["domain"] == domain}

    def rcs(self):
        return re.findall(r"^rc (\S+) (-?\d+)$", self.out, re.M)

    def count(self, name):
        return self.counts.get(name, 0)


def parse_events(path):
    events = []
    if not os.path.exists(path):
        return events
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            kind = parts[0]
            if kind in ("push", "mark"):
                e = {"kind": kind, "tid": parts[1], "domain": parts[2], "text": parts[3]}
                for extra in parts[4:]:
                    k, _, v = extra.partition("=")
                    e[k] = v
                events.append(e)
            elif kind == "pop":
                events.append({"kind": "pop", "tid": parts[1], "domain": parts[2]})
            elif kind == "category":
                events.append({"kind": "category", "domain": parts[1], "id": parts[2],
                               "name": parts[3]})
            elif kind == "domain":
                events.append({"kind": "domain", "name": parts[1]})
    return events


def parse_counts(path):
    counts = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                name, _, n = line.strip().rpartition(" ")
                if name:
                    counts[name] = counts.get(name, 0) + int(n)
    return counts


class Env:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        # NVTXCORR_TEST_LIB runs the scenarios against another build of the library (the
        # sanitized one); NVTXCORR_TEST_PRELOAD_FIRST goes in front of it (the ASan runtime).
        self.lib = os.environ.get("NVTXCORR_TEST_LIB") or os.path.join(self.build, "lib",
                                                                        "libnvtxcorr.so")
        self.preload_first = os.environ.get("NVTXCORR_TEST_PRELOAD_FIRST", "")
        self.fakes = os.path.join(self.build, "fakes")
        self.bin = os.path.join(self.build, "tests", "scenarios")
        self.recorder = os.path.join(self.fakes, "libnvtx_recorder.so")

    def prog(self, name):
        path = os.path.join(self.bin, name)
        if name in NVCC_PROGRAMS and not os.path.exists(path):
            raise Skip("no nvcc")
        return path

    def run(self, argv, preload=True, enabled=True, tool=True, env=None, timeout=120,
            preload_value=None):
        with tempfile.TemporaryDirectory() as tmp:
            rec, counts = os.path.join(tmp, "nvtx.log"), os.path.join(tmp, "counts")
            e = {k: v for k, v in os.environ.items()
                 if not k.startswith(("NVTXCORR", "NVTX_", "FAKECUDA", "NVTXREC", "LD_PRELOAD"))}
            e["LD_LIBRARY_PATH"] = ":".join([self.fakes, self.bin, e.get("LD_LIBRARY_PATH", "")])
            e["FAKECUDA_COUNTS"] = counts
            if preload:
                e["LD_PRELOAD"] = preload_value or self.lib
            if self.preload_first:
                e["LD_PRELOAD"] = ":".join(filter(None, [self.preload_first,
                                                         e.get("LD_PRELOAD", "")]))
            if enabled:
                e["NVTXCORR"] = "1"
            # Profile mode without GPU time unless a scenario asks for it (tests/test_cupti.py):
            # no CUPTI is loaded, and none warns that it cannot attach to the fake driver.
            e["NVTXCORR_GPU"] = "0"
            if tool:
                e["NVTX_INJECTION64_PATH"] = self.recorder
                e["NVTXREC_OUT"] = rec
            e.update(env or {})
            p = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)
            return Run(p.returncode, p.stdout, p.stderr, parse_events(rec), parse_counts(counts))


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def check_balanced(run, domain="nvtxcorr"):
    stacks = {}
    for e in run.events:
        if e.get("domain") != domain or e["kind"] not in ("push", "pop"):
            continue
        s = stacks.setdefault(e["tid"], [])
        if e["kind"] == "push":
            s.append(e["text"])
        else:
            check(s, f"pop without push on thread {e['tid']}")
            s.pop()
    open_ranges = {t: s for t, s in stacks.items() if s}
    check(not open_ranges, f"unbalanced ranges left open: {open_ranges}")
    check(all(len(s) == 0 for s in stacks.values()), "unbalanced")


def check_rcs_zero(run):
    bad = [(w, c) for w, c in run.rcs() if c != "0"]
    check(not bad, f"calls failed: {bad}\nstderr: {run.err}")


def check_quiet(run):
    check(run.err == "", f"unexpected stderr: {run.err!r}")


def hooks_table():
    """(kind, symbol, public, version, ptsz, layer) from src/hooks.def."""
    text = open(os.path.join(ROOT, "src", "hooks.def")).read()
    out = []
    for m in re.finditer(r"^DRIVER\((\w+), (\w+), (\w+), (\d+), (\d)", text, re.M):
        out.append((m[1], m[2], m[3], int(m[4]), int(m[5]), "driver"))
    for m in re.finditer(r"^RUNTIME\((\w+), (\w+), (\d)", text, re.M):
        out.append((m[1], m[2], None, 0, int(m[3]), "runtime"))
    return out


KERNELS6 = ["add1", "flash_fwd_kernel", "triton_poi_fused_add_0"] * 2
VARIANTS = ["cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
            "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"]
