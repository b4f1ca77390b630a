"""Harness for the end-to-end scenarios: real programs run with LD_PRELOAD=libnvtxcorr.so and environment
variables, exactly as users run them, against the fake driver and runtime (tests/fakes) and
the recording NVTX tool. Each scenario asserts on what the recorder saw (ranges, labels,
colours, categories, marks, balance per thread), on the fake driver's per-variant counters
(so a swapped _ptsz/legacy variant is caught), and on the program's own return codes compared
with a run without the library.

The scenarios live in test_*.py beside this file, the programs they run in scenarios/;
run_tests.py runs them.
"""
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
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


# A recorder log this large would take more than the suite's memory budget to parse (about
# 400 bytes of Python per event): a scenario that launches millions of times records nothing
# (NVTXREC_MODE=noop) instead.
EVENTS_MAX_BYTES = 256 << 20


def parse_events(path):
    events = []
    if not os.path.exists(path):
        return events
    size = os.path.getsize(path)
    check(size <= EVENTS_MAX_BYTES, f"the NVTX recorder's log is {size >> 20} MiB, more than "
          f"the harness parses within the memory budget: record nothing (NVTXREC_MODE=noop)")
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


def write_json(tmp, name, d):
    """d as JSON in tmp/name (a summary, made by hand, for the report); the path."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def unpreloadable(path):
    """ld.so splits LD_PRELOAD at spaces and colons, and the launcher refuses such a path."""
    return re.search(r"[\s:]", path) is not None


def lift_memory_limit():
    """For an instrumented program (preexec_fn): the sanitizers reserve terabytes of address
    space, beyond run_tests.py's soft RLIMIT_AS."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def trace_killed_at(env, path, size, extra=None):
    """scn_profile's endless launch loop tracing into path, SIGKILLed once the file holds size
    bytes (or after 60 s); returns the file's text. The killed trace is what a user finds after
    an OOM kill or kill -9."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "NVTX_"))}
    e.update({"LD_LIBRARY_PATH": env.fakes, "NVTXCORR": "1",
              "LD_PRELOAD": ":".join(filter(None, [env.preload_first, env.lib])),
              "NVTXCORR_TRACE": path, **(extra or {})})
    p = subprocess.Popen([env.prog("scn_profile"), "loop", "1000000000"], env=e,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=lift_memory_limit if env.preload_first else None)
    deadline = time.time() + 60
    while time.time() < deadline and (not os.path.exists(path) or
                                      os.path.getsize(path) < size):
        time.sleep(0.05)
    p.kill()
    p.wait()
    check(p.returncode == -signal.SIGKILL, f"rc {p.returncode}")
    with open(path) as f:
        return f.read()


class Env:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        # NVTXCORR_TEST_LIB runs the scenarios against another build of the library (the
        # sanitized one); NVTXCORR_TEST_PRELOAD_FIRST goes in front of it (the ASan runtime).
        self.lib = os.environ.get("NVTXCORR_TEST_LIB") or os.path.join(self.build, "lib",
                                                                        "libnvtxcorr.so")
        self.preload_first = os.environ.get("NVTXCORR_TEST_PRELOAD_FIRST", "")
        self.fakes = os.path.join(self.build, "fakes")
        self.bin = os.path.join(self.build, "tests", "e2e", "scenarios")
        self.recorder = os.path.join(self.fakes, "libnvtx_recorder.so")
        self.launcher = os.path.join(self.build, "bin", "nvtxcorr")
        # A clone under a path with a space or a colon: LD_PRELOAD cannot name the library
        # there, nor will the launcher. The scenarios then preload it, and run the launcher,
        # through a mirror of the build tree's installed parts under the temporary directory
        # (real directories, symlinked files: the launcher resolves only directories).
        self.front = None
        if unpreloadable(self.build) or unpreloadable(self.lib):
            self.front = tempfile.mkdtemp(prefix="nvtxcorr-front-")
            check(not unpreloadable(self.front), f"TMPDIR has a space or colon: {self.front}")
            for sub in ("bin", "lib", "lib-sanitized", "lib-tsan", "libexec", "share",
                        self.bin):
                for d, _, files in os.walk(os.path.join(self.build, sub)):
                    mirror = os.path.join(self.front, os.path.relpath(d, self.build))
                    os.makedirs(mirror, exist_ok=True)
                    for f in files:
                        if sub != self.bin or f.endswith(".so"):  # the scenarios' preloads
                            os.symlink(os.path.join(d, f), os.path.join(mirror, f))
            self.launcher = os.path.join(self.front, "bin", "nvtxcorr")
            if os.path.commonpath([self.lib, self.build]) == self.build:
                self.lib = os.path.join(self.front, os.path.relpath(self.lib, self.build))
            else:
                os.symlink(self.lib, os.path.join(self.front, "libnvtxcorr.so"))
                self.lib = os.path.join(self.front, "libnvtxcorr.so")

    def close(self):
        if self.front:
            shutil.rmtree(self.front, ignore_errors=True)

    def prog(self, name):
        path = os.path.join(self.bin, name)
        if name in NVCC_PROGRAMS and not os.path.exists(path):
            raise Skip("no nvcc")
        if self.front and name.endswith(".so"):  # may go in LD_PRELOAD
            return os.path.join(self.front, os.path.relpath(path, self.build))
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
            p = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout,
                               preexec_fn=lift_memory_limit if self.preload_first else None)
            return Run(p.returncode, p.stdout, p.stderr, parse_events(rec), parse_counts(counts))

    def run_ok(self, argv, rc=0, balanced=True, what=None, **kwargs):
        """run(argv, **kwargs) and the checks nearly every scenario starts with: the program
        exits with rc (and does not hang past the timeout), every call it reports ("rc <what>
        <code>") returned 0, and, unless balanced=False, every range was popped on the thread
        that pushed it. what names the run in failures (default: the program, its arguments
        and the extra environment)."""
        if what is None:
            extra = " ".join(f"{k}={v}" for k, v in (kwargs.get("env") or {}).items())
            what = " ".join([os.path.basename(argv[0]), *argv[1:]] + ([extra] if extra else []))
        try:
            run = self.run(argv, **kwargs)
        except subprocess.TimeoutExpired as e:
            raise AssertionError(f"{what}: hung (killed after {e.timeout} s)") from None
        check(run.rc == rc, f"{what}: rc {run.rc}, expected {rc}\nstderr: {run.err[-2000:]}\n"
              f"stdout: {run.out[-2000:]}")
        check_rcs_zero(run, what)
        if balanced:
            check_balanced(run)
        return run


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


# The trace's two forms (docs/profile.md): kineto, a JSON object whose events are in
# "traceEvents" ("]}" closes a file cut short), and chrome, a JSON array ("]" closes it).
KINETO_CUT_SUFFIX, CHROME_CUT_SUFFIX = "]}", "]"
KINETO_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def trace_events(text, cut=False):
    """A trace's events, in either form; `cut`: the file a killed process left, read with the
    documented suffix appended."""
    if text.lstrip().startswith("{"):
        return json.loads(text + (KINETO_CUT_SUFFIX if cut else ""))["traceEvents"]
    return json.loads(text + (CHROME_CUT_SUFFIX if cut else ""))


def load_trace(path, cut=False):
    with open(path, "rb") as f:  # strictly UTF-8
        return trace_events(f.read().decode("utf-8"), cut)


def trace_launches(events):
    """One complete event per launch, in either form: chrome's CPU events as they are; in
    kineto, each label's user_annotation merged with the cuda_runtime/cuda_driver call it
    encloses (same thread, start and duration; the args of both, the call's name as "api",
    "graph": true for a graph launch as in chrome's)."""
    out, open_label = [], {}
    kineto = any(e.get("cat") in ("cuda_runtime", "cuda_driver") for e in events)
    gpu = KINETO_GPU_CATS if kineto else ("gpu",)  # chrome's launches may be cat "kernel"
    for e in events:
        if e.get("ph") != "X" or e.get("cat") in gpu:
            continue
        if e.get("cat") == "user_annotation":
            check(e["tid"] not in open_label, f"two labels without a call between: {e}")
            open_label[e["tid"]] = e
        elif e.get("cat") in ("cuda_runtime", "cuda_driver"):
            a = open_label.pop(e["tid"], None)
            check(a is not None and a["ts"] == e["ts"] and a["dur"] == e["dur"],
                  f"a call without its label's span: {e} {a}")
            args = {**a.get("args", {}), **e.get("args", {})}
            if "Graph" in e["name"]:  # as chrome's launch events say it
                args["graph"] = True
            out.append(dict(a, args=args, api=e["name"]))
        else:
            out.append(e)
    check(not open_label, f"labels without their call: {open_label}")
    return out


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


def check_rcs_zero(run, what=None):
    bad = [(w, c) for w, c in run.rcs() if c != "0"]
    check(not bad, f"{what + ': ' if what else ''}calls failed: {bad}\nstderr: {run.err}")


def peak_rss(run):
    """The peak resident set (VmHWM, kB) that a scenario program printed as "peak_rss_kb N"."""
    m = re.search(r"^peak_rss_kb (\d+)$", run.out, re.M)
    check(m, f"no peak_rss_kb line in the output: {run.out[-2000:]}")
    return int(m[1])


def check_quiet(run):
    check(run.err == "", f"unexpected stderr: {run.err!r}")


# Each row of src/core/hooks.def as one line of preprocessor output (the row macros are documented at
# the top of hooks.def): what the library's own build sees, conditionals and all.
HOOK_ROW_PRINTER = """
#define DRIVER(kind, symbol, public, version, ptsz, ...) \\
    nvtxcorr_hook_row driver kind symbol public version ptsz
#define RUNTIME(kind, symbol, ptsz, ...) nvtxcorr_hook_row runtime kind symbol - 0 ptsz
#include "hooks.def"
"""


def hooks_table():
    """(kind, symbol, public, version, ptsz, layer) for every row of src/core/hooks.def (public None
    for the runtime), expanded by the C preprocessor: the build's compiler (NVTXCORR_TEST_CC,
    set by CMake), or cc."""
    cc = shlex.split(os.environ.get("NVTXCORR_TEST_CC") or "cc")
    p = subprocess.run([*cc, "-E", "-P", "-I", os.path.join(ROOT, "src", "core"), "-x", "c", "-"],
                       input=HOOK_ROW_PRINTER, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cc)} -E over hooks.def: rc {p.returncode}: {p.stderr}")
    rows = re.findall(r"\bnvtxcorr_hook_row\s+(driver|runtime)\s+(\w+)\s+(\w+)\s+(\w+|-)\s+"
                      r"(\d+)\s+([01])\b", p.stdout)
    check(rows and len(rows) == p.stdout.count("nvtxcorr_hook_row"),
          f"unexpected rows in the preprocessed hooks.def:\n{p.stdout}")
    return [(kind, symbol, None if layer == "runtime" else public, int(version), int(ptsz), layer)
            for layer, kind, symbol, public, version, ptsz in rows]


KERNELS6 = ["add1", "flash_fwd_kernel", "triton_poi_fused_add_0"] * 2
VARIANTS = ["cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
            "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"]
