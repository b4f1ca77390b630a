#!/usr/bin/env python3
"""scripts/gpu-check's driver: one short run on a machine with a real GPU that comes back with
verdicts that cannot lie (docs/performance.md, "Real GPU", says what each one proves).

  gpu_check.py OUTDIR [DEADLINE_S]

Builds nvtxcorr and the recording NVTX tool (Ninja when present) and the CUDA programs (nvcc
and the toolkit's lib directory found explicitly, rpath set), runs every scenario bare first,
then under nvtxcorr, and judges exact counts per label (where a library decides how many
kernels, a minimum, or the count torch.profiler saw). Writes exactly OUTDIR/log.txt (every
command and its output, streamed as it runs), OUTDIR/verdicts.txt and OUTDIR/check.tgz (the
summaries); prints the verdict table last: `PASS|FAIL|N/A|SKIP name: evidence`, then
`N passed, N failed, N skipped`. Exit 0 only with no FAIL and no SKIP (N/A: the machine cannot
do it, e.g. ncu without counter access). Every step has a short limit and the whole run an
overall deadline (default 390 s).

Helper scripts report verdicts by printing lines of the same form; the driver collects them.
For its own tests (tests/gpu/test_gpu_check.py, on the fakes): GPU_CHECK_PREBUILT=<build dir>
skips the CMake build and uses that build's library and recorder; GPU_CHECK_BUILD=<dir> is
the CMake build directory (default build-gpu); GPU_CHECK_WORK=<dir> the scratch directory
(default build-gpu/check); GPU_CHECK_ONLY=<step,...> runs only those steps
of native, torch, gpu-time, op-cost, ncu, throughput.
"""
import atexit
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERDICT = re.compile(r"^(PASS|FAIL|N/A|SKIP) ([\w.:+-]+): (.*)$")
OURS = ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "NVTXREC_OUT", "NVTXREC_MODE", "NVTXCORR",
        "NVTXCORR_PROFILE", "NVTXCORR_TRACE", "NVTXCORR_GPU", "NVTXCORR_LABELS")


class Result:
    def __init__(self, rc, out, err, seconds):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    def lines(self):
        return self.out.splitlines()


class Check:
    def __init__(self, outdir, deadline_s):
        self.t0 = time.monotonic()
        self.deadline = self.t0 + deadline_s
        self.outdir = outdir
        self.work = os.environ.get("GPU_CHECK_WORK") or os.path.join(ROOT, "build-gpu", "check")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        os.makedirs(outdir, exist_ok=True)
        self.log = open(os.path.join(outdir, "log.txt"), "w", buffering=1, encoding="utf-8")
        self.lock = threading.RLock()  # RLock: the signal handler may interrupt a holder
        self.verdicts = []
        self.archive = []  # files for check.tgz
        self.children = set()  # process groups running now (each run is its own session)

    # ---- output ----
    def say(self, line, stdout=True):
        with self.lock:
            stamp = f"[{time.monotonic() - self.t0:6.1f}s] "
            self.log.write(stamp + line + "\n")
            if stdout:
                print(line, flush=True)

    def verdict(self, status, name, evidence):
        evidence = " ".join(str(evidence).split())[:300]
        self.verdicts.append((status, name, evidence))
        # The output shows progress; the evidence is in the table at the end (the output's
        # tail is what comes back from a device run) and in the log.
        self.say(f"{status} {name}: {evidence}", stdout=False)
        print(f"  {status} {name}", flush=True)
        with open(os.path.join(self.outdir, "verdicts.txt"), "w", encoding="utf-8") as f:
            f.write(self.table())

    def collect(self, res, prefix=""):
        """The verdict lines a helper printed; none at all is a FAIL of its own."""
        n = 0
        for line in res.lines():
            m = VERDICT.match(line)
            if m:
                self.verdict(m.group(1), prefix + m.group(2), m.group(3))
                n += 1
        return n

    def table(self):
        counts = {s: sum(1 for v in self.verdicts if v[0] == s) for s in ("PASS", "FAIL", "SKIP")}
        lines = [f"{s} {n}: {e}" for s, n, e in self.verdicts]
        lines.append(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
        return "\n".join(lines) + "\n"

    # ---- running ----
    def left(self):
        return self.deadline - time.monotonic()

    def run(self, name, cmd, env=None, limit=60, cwd=None):
        """Runs cmd with its output streamed into the log; kills its process group at the
        step's limit or the overall deadline. rc 124: killed at a limit; None: not started."""
        limit = min(limit, self.left() - 3)
        if limit < 2:
            self.say(f"$ {name}: not started, the deadline is reached", stdout=False)
            return Result(None, "", "deadline reached", 0.0)
        self.say(f"$ [{name}] {' '.join(cmd)}  (limit {limit:.0f} s)", stdout=False)
        t = time.monotonic()
        try:
            p = subprocess.Popen(cmd, env=env, cwd=cwd or ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        except OSError as e:
            self.say(f"  {name} ! cannot start: {e}", stdout=False)
            return Result(127, "", str(e), 0.0)
        self.children.add(p.pid)
        chunks = {"out": [], "err": []}

        def pump(stream, key, mark):
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace")
                chunks[key].append(line)
                with self.lock:
                    self.log.write(f"  {name} {mark} {line.rstrip()}\n")
        threads = [threading.Thread(target=pump, args=(p.stdout, "out", "|")),
                   threading.Thread(target=pump, args=(p.stderr, "err", "!"))]
        for th in threads:
            th.start()
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = 124
        self.children.discard(p.pid)
        for th in threads:
            th.join(5)
        secs = time.monotonic() - t
        self.say(f"  {name}: rc {rc} in {secs:.1f} s", stdout=False)
        return Result(rc, "".join(chunks["out"]), "".join(chunks["err"]), secs)


def clean_env(extra=None):
    """The caller's environment without nvtxcorr or an NVTX tool, plus extra."""
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(extra or {})
    return env


def judged(res):
    """A helper run's verdict by its rc: not started (the deadline) is not proven."""
    return "SKIP" if res.rc is None else "PASS" if res.rc == 0 else "FAIL"


def tail(text, n=3):
    return " / ".join(line.strip() for line in text.strip().splitlines()[-n:])


# ---- build ------------------------------------------------------------------------------
def find_nvcc():
    for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and os.access(os.path.join(d, "bin", "nvcc"), os.X_OK):
            return os.path.join(d, "bin", "nvcc")
    return shutil.which("nvcc")


def toolkit_lib(nvcc):
    home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    for sub in ("lib64", "targets/x86_64-linux/lib", "lib"):
        if os.path.isdir(os.path.join(home, sub)):
            return os.path.join(home, sub)
    return os.path.join(home, "lib64")


def preloadable(c):
    """ld.so splits LD_PRELOAD on spaces and colons: a library built under such a path (a
    checkout in "My Work/") is preloaded through a link in a temporary directory."""
    if not any(ch in c.lib + c.rec for ch in " :"):
        return
    links = tempfile.mkdtemp(prefix="gpu-check-preload-")
    atexit.register(shutil.rmtree, links, True)
    for attr in ("lib", "rec"):
        link = os.path.join(links, os.path.basename(getattr(c, attr)))
        os.symlink(getattr(c, attr), link)
        setattr(c, attr, link)
    c.say(f"preloading through links in {links} (the build path has a space or a colon)")


def build(c, arch):
    """The library, the recorder and the CUDA programs: {program: path} of those built, or
    None when the library or the recorder did not build (nothing can run then)."""
    pre = os.environ.get("GPU_CHECK_PREBUILT")
    if pre:
        c.lib = os.path.join(pre, "lib", "libnvtxcorr.so")
        c.rec = os.path.join(pre, "fakes", "libnvtx_recorder.so")
        ok = os.path.exists(c.lib) and os.path.exists(c.rec)
        c.verdict("PASS" if ok else "FAIL", "build.nvtxcorr",
                  f"prebuilt {pre} (GPU_CHECK_PREBUILT)")
        if not ok:
            return None
    else:
        bdir = os.environ.get("GPU_CHECK_BUILD") or os.path.join(ROOT, "build-gpu")
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        conf = c.run("cmake-configure", ["cmake", "-S", ROOT, "-B", bdir, *gen,
                                         "-DCMAKE_BUILD_TYPE=Release",
                                         f"-DPython3_EXECUTABLE={sys.executable}"], limit=90)
        res = conf if conf.rc else c.run("cmake-build", [
            "cmake", "--build", bdir, "-j", str(os.cpu_count() or 4), "--target", "nvtxcorr",
            "nvtx_recorder"], limit=150)
        c.lib = os.path.join(bdir, "lib", "libnvtxcorr.so")
        c.rec = os.path.join(bdir, "fakes", "libnvtx_recorder.so")
        ok = res.rc == 0 and os.path.exists(c.lib) and os.path.exists(c.rec)
        c.verdict("PASS" if ok else "FAIL", "build.nvtxcorr",
                  f"cmake {'Ninja' if gen else 'default generator'}: rc {res.rc} in "
                  f"{conf.seconds + (res.seconds if res is not conf else 0):.0f} s"
                  + ("" if ok else f": {tail(res.out + res.err)} (log.txt has it all)"))
        if not ok:
            return None
    preloadable(c)
    nvcc = find_nvcc()
    if not nvcc:
        c.verdict("FAIL", "build.programs", "no nvcc in $CUDA_HOME/bin, /usr/local/cuda/bin or "
                  "PATH")
        return {}
    lib = toolkit_lib(nvcc)
    base = [nvcc, "-O2", f"-arch=sm_{arch}", f"-L{lib}", f"-L{lib}/stubs", "-Xlinker",
            f"-rpath={lib}"]
    app = os.path.join(ROOT, "tests", "e2e", "scenarios", "app.cu")
    progs = {
        "app_static": [app],
        "app_shared": [app, "-cudart", "shared"],
        "app_ptds": [app, "-cudart", "shared", "--default-stream", "per-thread"],
        "cublas_gemm": [os.path.join(HERE, "cublas_gemm.cu"), "-cudart", "shared", "-lcublas"],
        "gpu_launch": [os.path.join(ROOT, "tests", "bench", "gpu_launch.cu"), "-cudart",
                       "shared", "-I" + os.path.join(ROOT, "tests", "bench"), "-lcuda"],
    }
    results, threads = {}, []
    for name, args in progs.items():
        out = os.path.join(c.work, name)
        cmd = base + ["-o", out] + args
        th = threading.Thread(target=lambda n=name, k=cmd: results.__setitem__(
            n, c.run(f"nvcc-{n}", k, limit=120)))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    built = {n: os.path.join(c.work, n) for n, r in results.items()
             if r.rc == 0 and os.path.exists(os.path.join(c.work, n))}
    failed = [n for n in progs if n not in built]
    warn = sum(1 for r in results.values() for line in (r.out + r.err).splitlines()
               if re.search(r"warning", line, re.I))
    c.verdict("FAIL" if failed else "PASS", "build.programs",
              f"{len(built)} of {len(progs)} built by {nvcc} (-arch=sm_{arch}, rpath {lib}); "
              f"{warn} warning lines in log.txt" +
              "".join(f"; {n} failed: rc {results[n].rc}: "
                      f"{tail(results[n].err or results[n].out, 2)}" for n in failed))
    return built


# ---- native scenarios (recording NVTX tool) ---------------------------------------------
def ranges(path):
    """nvtxcorr's ranges from the recorder's log: [(thread, label, phase)], balanced?. The
    phase is the innermost open default-domain range named check:* on that thread."""
    try:
        events = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8",
                                                                errors="replace")]
    except OSError:
        return None, False
    out, depth, phases, balanced = [], {}, {}, True
    for e in events:
        if len(e) < 3 or e[0] not in ("push", "pop"):
            continue
        tid, dom = e[1], e[2]
        if dom == "nvtxcorr":
            if e[0] == "push":
                depth[tid] = depth.get(tid, 0) + 1
                out.append((tid, e[3], (phases.get(tid) or [None])[-1]))
            else:
                depth[tid] = depth.get(tid, 0) - 1
                balanced &= depth[tid] >= 0
        elif dom == "default":
            st = phases.setdefault(tid, [])
            if e[0] == "push":
                st.append(e[3] if len(e) > 3 and e[3].startswith("check:") else
                          (st[-1] if st else None))
            elif st:
                st.pop()
    return out, balanced and all(v == 0 for v in depth.values())


def count(rs, phase=any):
    got = {}
    for _, label, ph in rs:
        if phase is any or ph == phase:
            got[label] = got.get(label, 0) + 1
    return got


def native(c, name, cmd, judge, env_extra=None, limit=60):
    """Bare, then under nvtxcorr with the recording tool: same rc and stdout, rc 0, balanced
    ranges, and what judge(ranges, stdout lines) says (None when right, else why not)."""
    bare = c.run(f"{name}.bare", cmd, env=clean_env(env_extra), limit=limit)
    log = os.path.join(c.work, f"{name}.nvtx")
    env = clean_env(env_extra)
    env.update(LD_PRELOAD=c.lib, NVTXCORR="1", NVTX_INJECTION64_PATH=c.rec, NVTXREC_OUT=log)
    ours = c.run(name, cmd, env=env, limit=limit)
    c.archive.append(log)
    rs, balanced = ranges(log)
    if bare.rc is None or ours.rc is None:
        return c.verdict("SKIP", name, "not run: the deadline was reached")
    if bare.rc != 0:
        return c.verdict("FAIL", name, f"the program fails on its own: bare rc {bare.rc}: "
                         f"{tail(bare.err or bare.out)}")
    why = None
    if ours.rc != bare.rc:
        why = f"rc {ours.rc} under nvtxcorr, {bare.rc} bare: {tail(ours.err or ours.out)}"
    elif ours.lines() != bare.lines():
        diff = [x for x in ours.lines() if x not in bare.lines()][:2]
        why = f"output differs from the bare run's: {diff or 'lines missing'}"
    elif rs is None:
        why = "no NVTX log: the recorder never wrote"
    elif not balanced:
        why = "pushes and pops unbalanced"
    else:
        why = judge(rs, ours.lines())
    top = ", ".join(f"{k} x{v}" for k, v in sorted(count(rs or []).items(),
                                                  key=lambda kv: -kv[1])[:6])
    c.verdict("FAIL" if why else "PASS", name,
              (f"{why}; " if why else f"rc 0 and output as bare; {len(rs)} balanced ranges: ")
              + top)


def exactly(expected):
    def judge(rs, lines):
        got = count(rs)
        return None if got == expected else f"expected exactly {expected}"
    return judge


def phased(phases):
    """phases: {phase: (minimum, exact total or None, a predicate every label meets)}, or a
    function of the stdout lines giving that (a count the program printed)."""
    def judge(rs, lines):
        for ph, want in phases.items():
            got = count(rs, ph)
            total = sum(got.values())
            need = want(lines) if callable(want) else want
            lo, exact, pred = need
            if exact is not None and total != exact:
                return f"{ph}: {total} ranges, expected exactly {exact} ({got})"
            if total < lo:
                return f"{ph}: {total} ranges, expected at least {lo} ({got})"
            bad = [k for k in got if not pred(k)]
            if bad:
                return f"{ph}: unexpected labels {bad}"
        return None
    return judge


def number(lines, key):
    for line in lines:
        if line.startswith(key + " "):
            return int(line.split()[-1])
    return -1


def native_scenarios(c, built):
    launch = exactly({"add1": 4, "flash_fwd_kernel": 1, "triton_poi_fused_add_0": 1})
    graph = exactly({"add1 [capture]": 4, "triton_poi_fused_add_0 [capture]": 1,
                     "graph#1 (5 kernels)": 3})
    runs = [("static-cudart-launch", "app_static", ["launch"], launch),
            ("static-cudart-graph", "app_static", ["graph"], graph),
            ("shared-cudart-launch", "app_shared", ["launch"], launch),
            ("shared-cudart-graph", "app_shared", ["graph"], graph),
            ("per-thread-launch", "app_ptds", ["launch"], launch),
            ("driver-entry-point", "app_shared", ["entry"], exactly({"add1": 2})),
            # cuBLAS decides how many kernels a GEMM takes: at least one per call eagerly;
            # exactly one range per graph launch.
            ("cublas-gemm", "cublas_gemm", [], phased({
                "check:eager": (3, None, lambda k: "[capture]" not in k),
                "check:capture": (1, None, lambda k: k.endswith("[capture]")),
                "check:replay": (2, 2, lambda k: k.startswith("graph#"))}))]
    for name, prog, args, judge in runs:
        if prog not in built:
            c.verdict("SKIP", name, f"{prog} was not built")
            continue
        native(c, name, [built[prog]] + args, judge)


# ---- PyTorch and Triton -----------------------------------------------------------------
def torch_info(c):
    res = c.run("torch-info", [sys.executable, "-c",
                               "import torch; print('torch', torch.__version__, "
                               "torch.version.cuda if hasattr(torch, 'version') else '', "
                               "torch.cuda.is_available() and torch.cuda.get_device_name(0))"],
                limit=60)
    ok = res.rc == 0 and not res.out.strip().endswith("False")
    c.say(f"{res.out.strip() or 'no torch: ' + tail(res.err, 1)}")
    return ok, res.out.strip() or tail(res.err, 1)


def torch_scenarios(c, has_torch, why):
    names = ("pytorch-eager-and-graphs", "triton")
    if not has_torch:
        for n in names:
            c.verdict("SKIP", n, f"python3 has no CUDA-enabled torch: {why}")
        return
    native(c, "pytorch-eager-and-graphs", [sys.executable, os.path.join(HERE, "torch_check.py")],
           lambda rs, lines: "torch values WRONG" if "torch values ok" not in lines else
           phased({"check:eager": lambda l: (0, number(l, "eager kernels"), lambda k: True),
                   "check:replay": (5, 5, lambda k: k.startswith("graph#"))})(rs, lines),
           limit=90)
    native(c, "triton", [sys.executable, os.path.join(HERE, "triton_check.py")],
           lambda rs, lines: None if count(rs).get("add_one", 0) == number(lines, "triton launches")
           == 5 else f"{count(rs).get('add_one', 0)} add_one ranges for "
           f"{number(lines, 'triton launches')} launches", limit=120)


def profiled(c, step, cmd, env_extra=None, limit=30):
    """cmd under profile mode + CUPTI: (run, summary or None, why there is none)."""
    prof = os.path.join(c.work, f"{step}.%p.json")
    env = clean_env({"LD_PRELOAD": c.lib, "NVTXCORR": "1", "NVTXCORR_PROFILE": prof})
    env.update(env_extra or {})
    res = c.run(step, cmd, env=env, limit=limit)
    files = [os.path.join(c.work, f) for f in os.listdir(c.work) if f.startswith(f"{step}.")]
    c.archive += files
    if res.rc is None:
        return res, None, "not run: the deadline was reached"
    if res.rc != 0 or len(files) != 1:
        return res, None, f"rc {res.rc}, {len(files)} summaries: {tail(res.err or res.out, 2)}"
    try:
        with open(files[0], encoding="utf-8") as f:
            return res, json.load(f), None
    except (OSError, ValueError) as e:
        return res, None, f"summary unreadable: {e}"


OPS_NOT_KERNELS = ("[memcpy]", "[memset]")


def executions(s):
    """{kernel function: executions} of a summary, graph nodes' copies and sets aside."""
    got = {}
    for k in s.get("kernels", []):
        if k.get("gpu_kernels") and k["name"] not in OPS_NOT_KERNELS:
            got[k["function"]] = got.get(k["function"], 0) + k["gpu_kernels"]
    return got


def summary_faults(s):
    """What makes a summary's GPU time not the truth (None when nothing does): GPU time off,
    records dropped, kernels that no launch nvtxcorr or CUPTI saw (uncorrelated) or that only
    CUPTI saw (not hooked), the three views not summing to totals.gpu_ns."""
    t = s.get("totals") or {}
    if not s.get("gpu_time"):
        return f"no GPU time: {s.get('gpu_time_note')}"
    if t.get("gpu_uncorrelated_kernels") or t.get("gpu_not_hooked_kernels") or \
            t.get("gpu_dropped_records"):
        return (f"{t.get('gpu_uncorrelated_kernels')} uncorrelated, "
                f"{t.get('gpu_not_hooked_kernels')} not hooked, "
                f"{t.get('gpu_dropped_records')} dropped ({s.get('gpu_correlation')})")
    sums = {sum(k["gpu_ns"] or 0 for k in s.get("kernels", [])),
            sum(e["gpu_ns"] or 0 for e in s.get("labels", [])) +
            t.get("gpu_uncorrelated_ns", 0) + t.get("gpu_unlabelled_launch_ns", 0),
            sum(e["gpu_ns"] or 0 for e in s.get("kernel_labels", [])) +
            t.get("gpu_unlabelled_ns", 0)}
    if len(sums) != 1 or t.get("gpu_ns") not in sums or not t.get("gpu_ns"):
        return f"views do not sum to totals.gpu_ns {t.get('gpu_ns')}: {sorted(sums)}"
    return None


def app_faults(want_kernels, want_graph):
    """app.cu's modes: exact executions per kernel function and graphs (replays, kernels per
    replay), as well as summary_faults."""
    def judge(s):
        got = executions(s)
        g = [(x["replays"], x["kernels_per_replay"]) for x in s.get("graphs") or []]
        if got != want_kernels:
            return f"executions {got}, expected {want_kernels}"
        if want_graph and g != [want_graph]:
            return f"graphs (replays, kernels per replay) {g}, expected {[want_graph]}"
        return summary_faults(s)
    return judge


def cublas_eager(s):
    """cuBLAS decides its kernels: each launch nvtxcorr saw ran exactly one kernel, at least
    one per SGEMM (3 steps of 3), and summary_faults."""
    t = s.get("totals") or {}
    n = sum(executions(s).values())
    if n != t.get("launches") or n < 9:
        return f"{n} kernels ran for {t.get('launches')} launches (want equal, >= 9)"
    return summary_faults(s)


def cublas_captured(s):
    """One captured step replayed twice: one graph, 2 replays, each running every captured
    launch once, and summary_faults."""
    t = s.get("totals") or {}
    g = [(x["replays"], x["kernels_per_replay"]) for x in s.get("graphs") or []]
    n, captured = sum(executions(s).values()), t.get("capture_launches", 0)
    if len(g) != 1 or g[0][0] != 2 or n != 2 * captured or not captured:
        return (f"graphs (replays, kernels per replay) {g}, {n} kernels ran for {captured} "
                f"captured launches (want one graph, 2 replays, 2 x the captured launches)")
    return summary_faults(s)


def gpu_time_programs(c, built):
    """Profile mode's GPU time on the CUDA programs, no torch, one verdict each: app_shared and
    app_static (the default static cudart: a runtime no preload sees) exact executions per
    kernel (launch: add1 x4, flash_fwd_kernel x1, triton_poi_fused_add_0 x1; graph: 3 replays
    of 5 kernels); cuBLAS (its own runtime built in) eager and captured. Every one with nothing
    uncorrelated, not hooked or dropped, and the views summing to the total."""
    launch = app_faults({"add1": 4, "flash_fwd_kernel": 1, "triton_poi_fused_add_0": 1}, None)
    graph = app_faults({"add1": 12, "triton_poi_fused_add_0": 3}, (3, 5))
    checks = [("gpu-time.native", "app_shared", [("launch", launch), ("graph", graph)]),
              ("gpu-time.static", "app_static", [("launch", launch), ("graph", graph)]),
              ("gpu-time.cublas-eager", "cublas_gemm", [("eager", cublas_eager)]),
              ("gpu-time.cublas-captured", "cublas_gemm", [("captured", cublas_captured)])]
    for name, prog, modes in checks:
        if prog not in built:
            c.verdict("SKIP", name, f"{prog} was not built")
            continue
        why, seen, skipped = [], [], False
        for mode, judge in modes:
            step = f"{name.split('.')[1]}-{mode}"
            res, s, err = profiled(c, step, [built[prog], mode])
            skipped |= res.rc is None
            err = err or judge(s)
            if err:
                why.append(f"{mode}: {err}")
            else:
                t = s["totals"]
                seen.append(f"{mode}: {t['gpu_kernels']} kernels, {t['gpu_ns']} ns: " +
                            ", ".join(f"{k} x{v}" for k, v in sorted(executions(s).items())))
        c.verdict("SKIP" if skipped else "FAIL" if why else "PASS", name,
                  "; ".join(why) if why else f"{prog} under profile mode + CUPTI: exact, 0 "
                  "uncorrelated, 0 not hooked, 0 dropped, views sum: " + "; ".join(seen))


def loop_fault(s, config, ops):
    """What is wrong with the op loop's summary under NVTXCORR_GPU_CORRELATION=config (None when
    nothing): the setup asked for not the one used, fewer kernels than ops; with the launch
    callbacks, summary_faults too (external ids leave cuBLAS's kernels uncorrelated)."""
    n = sum(executions(s).values())
    if s.get("gpu_correlation") != config:
        return f"gpu_correlation {s.get('gpu_correlation')}, asked for {config}"
    if n < ops:
        return f"{n} kernels for {ops} ops"
    return summary_faults(s) if config == "callbacks" else None


def op_cost(c, has_torch, why):
    """Host ns per op of PyTorch's eager loop (torch_gpu_time.py op-loop): bare, nvtxcorr's
    profile mode with GPU time (launch callbacks, the default), the same with external ids
    (the setup before them), and torch.profiler, in two interleaved rounds (the best of each).
    gpu-time.op-cost: nvtxcorr's added cost at most torch.profiler's, and its summary exact;
    gpu-time.ab: the callbacks against external ids on the same loop (correlated kernels,
    added cost)."""
    names = ("gpu-time.op-cost", "gpu-time.ab")
    if not has_torch:
        for n in names:
            c.verdict("SKIP", n, f"python3 has no CUDA-enabled torch: {why}")
        return
    script = [sys.executable, os.path.join(HERE, "torch_gpu_time.py"), "op-loop"]
    configs = ("bare", "callbacks", "external", "torch.profiler")
    ns = {k: [] for k in configs}
    faults = {"callbacks": [], "external": []}
    uncorrelated = {"callbacks": [], "external": []}  # kernels, per run
    skipped = False
    for rnd in range(2):
        for config in configs if rnd == 0 else tuple(reversed(configs)):
            if config in faults:
                res, s, err = profiled(c, f"ops-{rnd}-{config}", script,
                                       {"NVTXCORR_GPU_CORRELATION": config}, limit=90)
                if s:
                    uncorrelated[config].append(s["totals"].get("gpu_uncorrelated_kernels", 0))
                    err = loop_fault(s, config, number(res.lines(), "ops"))
                if err:
                    faults[config].append(err)
            else:
                res = c.run(f"ops-{rnd}-{config}", script + (
                    ["torch-profiler"] if config == "torch.profiler" else []),
                    env=clean_env(), limit=90)
            skipped |= res.rc is None
            got = number_f(res.lines(), "ns_per_op")
            if got > 0:
                ns[config].append(got)
    best = {k: min(v) if len(v) == 2 else 0.0 for k, v in ns.items()}
    added = {k: best[k] - best["bare"] for k in configs}
    table = ", ".join(f"{k} {best[k]:.0f}" + (f" (+{added[k]:.0f})" if k != "bare" else "")
                      for k in configs)
    if skipped:
        for n in names:
            c.verdict("SKIP", n, f"not run to the end (deadline): {table}")
        return
    missing = [k for k in configs if not best[k]]
    ok = not missing and not faults["callbacks"] and added["callbacks"] <= added["torch.profiler"]
    c.verdict("PASS" if ok else "FAIL", "gpu-time.op-cost",
              f"host ns per op (best of 2 interleaved rounds): {table}; goal: nvtxcorr's added "
              f"cost at most torch.profiler's" +
              (f"; no number from {missing}" if missing else "") +
              (f"; callbacks: {'; '.join(faults['callbacks'])}" if faults["callbacks"] else
               "; summaries exact"))
    ok = (not missing and not faults["callbacks"] and not any(uncorrelated["callbacks"]) and
          added["callbacks"] <= added["external"])
    per_run = {k: ", ".join(str(n) for n in v) or "no summary" for k, v in uncorrelated.items()}
    c.verdict("PASS" if ok else "FAIL", "gpu-time.ab",
              f"launch callbacks +{added['callbacks']:.0f} ns/op, {per_run['callbacks']} kernels "
              f"uncorrelated; external ids +{added['external']:.0f} ns/op, {per_run['external']} "
              f"kernels uncorrelated (a run each round; goal: the callbacks exact and no dearer)"
              + (f"; external: {'; '.join(faults['external'])}" if faults["external"] else ""))


def gpu_time(c, has_torch, why):
    """Profile mode's GPU time (CUPTI) against torch.profiler, and CUPTI's copies."""
    names = ("gpu-time.run", "gpu-time.torch-profiler")
    if not has_torch:
        for n in names:
            c.verdict("SKIP", n, f"python3 has no CUDA-enabled torch: {why}")
        return
    script = os.path.join(HERE, "torch_gpu_time.py")
    work = os.path.join(c.work, "work.json")
    env = clean_env({"LD_PRELOAD": c.lib, "NVTXCORR": "1",
                     "NVTXCORR_PROFILE": os.path.join(c.work, "gpu-time.%p.json"),
                     "NVTXCORR_LABELS": os.path.join(ROOT, "docs", "labels", "pytorch.conf")})
    res = c.run("gpu-time", [sys.executable, script, "work", work], env=env, limit=90)
    summaries = sorted((f for f in os.listdir(c.work) if f.startswith("gpu-time.")),
                       key=lambda f: -os.path.getsize(os.path.join(c.work, f)))
    summary = os.path.join(c.work, summaries[0]) if summaries else os.path.join(c.work, "none")
    c.archive += [summary, work]
    c.verdict(judged(res), "gpu-time.run",
              f"rc {res.rc}; summary {os.path.basename(summary)}"
              + (f"; {tail(res.err, 2)}" if res.rc else ""))
    tk = os.path.join(c.work, "torch-kernels.json")
    res = c.run("torch-profile", [sys.executable, script, "torch-profile", tk],
                env=clean_env(), limit=90)
    c.archive.append(tk)
    c.verdict(judged(res), "gpu-time.torch-profiler",
              f"rc {res.rc}{': ' + tail(res.err, 2) if res.rc else ''}")
    res = c.run("gpu-time-compare", [sys.executable, script, "compare", summary, tk, work],
                env=clean_env(), limit=30)
    if res.rc is None:
        c.verdict("SKIP", "gpu-time.compare", "not run: the deadline was reached")
    elif not c.collect(res):
        c.verdict("FAIL", "gpu-time.compare", f"no verdicts: rc {res.rc}: {tail(res.err)}")


def throughput(c, has_torch, why, built):
    """GPU-bound: the decode loop's replays per second, bare against profile mode + CUPTI, in
    interleaved pairs, every profiled run's summary read. CPU-bound: host ns per launch and
    per replay (tests/bench/gpu_bench.py) bare, ranges with no tool, profile mode, profile
    mode with CUPTI."""
    if not has_torch:
        c.verdict("SKIP", "throughput.decode-loop", f"python3 has no CUDA-enabled torch: {why}")
    else:
        script = os.path.join(HERE, "torch_gpu_time.py")
        ratios, notes = [], []
        for pair in range(2):
            r = {}
            for config in ("bare", "cupti") if pair % 2 == 0 else ("cupti", "bare"):
                prof = os.path.join(c.work, f"loop.{pair}.{config}.%p.json")
                env = clean_env() if config == "bare" else clean_env({
                    "LD_PRELOAD": c.lib, "NVTXCORR": "1", "NVTXCORR_PROFILE": prof})
                res = c.run(f"loop.{pair}.{config}", [sys.executable, script, "throughput"],
                            env=env, limit=60)
                r[config] = number_f(res.lines(), "replays_per_s")
                if res.rc is None:
                    notes.append("cut by the deadline")
                if config == "cupti":
                    notes.append(loop_summary(c, prof, number(res.lines(), "replays")))
            if r["bare"] > 0 and r["cupti"] > 0:
                ratios.append(r["cupti"] / r["bare"])
        bad = [n for n in notes if n]
        ratio = statistics.median(ratios) if len(ratios) == 2 else 0.0
        ok = not bad and ratio >= 0.97
        c.verdict("PASS" if ok else "SKIP" if "cut by the deadline" in bad else "FAIL",
                  "throughput.decode-loop",
                  f"profile mode + CUPTI / bare replays per second: {ratio:.3f}x (median of "
                  f"{len(ratios)} interleaved pairs: {', '.join(f'{x:.3f}' for x in ratios)}; "
                  f"goal >= 0.97)" + (f"; {'; '.join(bad)}" if bad else "; summaries read: "
                                      "CUPTI on, every replay counted, 0 dropped"))
    if "gpu_launch" not in built:
        c.verdict("SKIP", "throughput.host-ns", "gpu_launch was not built")
        return
    out = os.path.join(c.work, "host-ns.json")
    cmd = [sys.executable, os.path.join(ROOT, "tests", "bench", "gpu_bench.py"), "--lib",
           c.lib, "--recorder", c.rec, "--program", built["gpu_launch"], "--configs",
           "bare,notool,profile,profile_gpu", "--reps", "2", "--quick", "--json", out]
    if not has_torch:
        cmd.append("--no-torch")
    res = c.run("host-ns", cmd, env=clean_env(), limit=150)
    c.archive.append(out)
    if res.rc is None or (res.rc == 124 and not res.out):
        c.verdict("SKIP", "throughput.host-ns", f"not run to the end: rc {res.rc} (deadline)")
    elif not c.collect(res, "throughput."):
        c.verdict("FAIL", "throughput.host-ns", f"no verdict: rc {res.rc}: {tail(res.err)}")
    for line in res.lines():
        if line.startswith("|"):
            c.say("  " + line, stdout=False)


def number_f(lines, key):
    for line in lines:
        if line.startswith(key + " "):
            return float(line.split()[-1])
    return 0.0


def loop_summary(c, pattern, replays):
    """Why a profiled loop's summary is not what it should be (None when it is)."""
    d = os.path.dirname(pattern)
    pre = os.path.basename(pattern).split("%p")[0]
    files = [os.path.join(d, f) for f in os.listdir(d) if f.startswith(pre)]
    if len(files) != 1:
        return f"{len(files)} summaries for one run"
    c.archive.append(files[0])
    try:
        s = json.load(open(files[0]))
    except (OSError, ValueError) as e:
        return f"summary unreadable: {e}"
    g = s.get("graphs") or []
    t = s.get("totals") or {}
    if not s.get("gpu_time"):
        return f"no GPU time: {s.get('gpu_time_note')}"
    if not g or sum(x["replays"] for x in g) != replays:
        return f"graph replays {[x['replays'] for x in g]}, the loop made {replays}"
    if t.get("gpu_dropped_records") or t.get("gpu_uncorrelated_kernels"):
        return (f"{t.get('gpu_dropped_records')} records dropped, "
                f"{t.get('gpu_uncorrelated_kernels')} kernels uncorrelated")
    return None


# ---- ncu: a real NVTX consumer ----------------------------------------------------------
def find_ncu():
    found = shutil.which("ncu")
    if found:
        return found
    for d in ("/usr/local/cuda/bin",) + tuple(sorted(
            (os.path.join("/opt/nvidia/nsight-compute", v) for v in
             (os.listdir("/opt/nvidia/nsight-compute") if os.path.isdir(
                 "/opt/nvidia/nsight-compute") else [])), reverse=True)):
        if os.access(os.path.join(d, "ncu"), os.X_OK):
            return os.path.join(d, "ncu")
    return None


def ncu_kernels(text):
    """IDs and kernel names of ncu --csv's rows."""
    import csv
    rows = [line for line in text.splitlines() if line.startswith('"')]
    kernels = {}
    for r in csv.DictReader(rows):
        if r.get("ID") is not None and r.get("Kernel Name"):
            kernels[r["ID"]] = r["Kernel Name"]
    return list(kernels.values())


def ncu(c, built):
    """ncu --nvtx --nvtx-include "nvtxcorr@add1/" profiles exactly the 4 add1 launches of
    app_shared launch (6 kernels); a control run without the filter first must see all 6.
    N/A where ncu cannot profile here (no counters: gVisor, permissions)."""
    tool = find_ncu()
    if not tool:
        return c.verdict("SKIP", "ncu-nvtx-filter", "no ncu on PATH, /usr/local/cuda/bin or "
                         "/opt/nvidia/nsight-compute")
    if "app_shared" not in built:
        return c.verdict("SKIP", "ncu-nvtx-filter", "app_shared was not built")
    # NVTXCORR_LOG=info: nvtxcorr says in the target whether it found ncu as its NVTX tool.
    env = clean_env({"LD_PRELOAD": c.lib, "NVTXCORR": "1", "NVTXCORR_LOG": "info"})
    base = [tool, "--csv", "--clock-control", "none", "--metrics", "gpu__time_duration.sum",
            "--nvtx"]
    prog = [built["app_shared"], "launch"]
    control = c.run("ncu-control", base + prog, env=env, limit=90)
    seen = ncu_kernels(control.out)
    if control.rc != 0 or not seen:
        text = control.out + control.err
        cannot = re.search(r"ERR_NVGPUCTRPERM|LibraryNotLoaded|not supported|permission|"
                           r"Failed to initialize|No kernels were profiled", text, re.I)
        return c.verdict("N/A" if cannot else "FAIL", "ncu-nvtx-filter",
                         f"control run (no filter): rc {control.rc}, {len(seen)} kernels "
                         f"profiled: {tail(text, 2)}")
    filtered = c.run("ncu-filtered", base[:-1] + ["--nvtx", "--nvtx-include", "nvtxcorr@add1/"]
                     + prog, env=env, limit=90)
    got = ncu_kernels(filtered.out)
    said = re.findall(r"nvtxcorr: info: ([^;]*);", filtered.out + filtered.err)
    ok = len(seen) == 6 and filtered.rc == 0 and len(got) == 4 and all(
        k.startswith("add1") for k in got)
    c.verdict("PASS" if ok else "FAIL", "ncu-nvtx-filter",
              f"control: {len(seen)} kernels profiled (expected 6); nvtxcorr@add1/: "
              f"{len(got)} (expected 4 add1): {sorted(set(got))} rc {filtered.rc}; nvtxcorr in "
              f"the target: {said[0] if said else 'silent (not preloaded there?)'}")


# ---- main -------------------------------------------------------------------------------
def main(argv):
    if len(argv) < 1 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    outdir = os.path.abspath(argv[0])
    deadline = float(argv[1]) if len(argv) > 1 else 390.0
    c = Check(outdir, deadline)

    def stop(signum, frame):  # killed from outside: no step left running, the table written
        for pid in list(c.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        c.verdict("SKIP", "gpu-check", f"stopped by signal {signum}: the rest was not run")
        os._exit(finish(c))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    c.say(f"gpu-check: deadline {deadline:.0f} s; log {outdir}/log.txt; work {c.work}")
    smi = c.run("nvidia-smi", ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
                               "--format=csv,noheader"], limit=20)
    c.say(f"gpu: {smi.out.strip() or 'nvidia-smi: ' + tail(smi.err, 1)}")
    cap = (smi.out.strip().splitlines() or [""])[0].split(",")[-1].strip().replace(".", "")
    arch = cap if cap.isdigit() else "90"
    try:
        built = build(c, arch)
        only = os.environ.get("GPU_CHECK_ONLY", "native,torch,gpu-time,op-cost,ncu,throughput")
        if built is not None:
            has_torch, why = torch_info(c)
            for step, fn in (("native", lambda: native_scenarios(c, built)),
                             ("torch", lambda: torch_scenarios(c, has_torch, why)),
                             ("gpu-time", lambda: (gpu_time_programs(c, built),
                                                   gpu_time(c, has_torch, why))),
                             ("op-cost", lambda: op_cost(c, has_torch, why)),
                             ("ncu", lambda: ncu(c, built)),
                             ("throughput", lambda: throughput(c, has_torch, why, built))):
                if step in only.split(","):
                    fn()
    except Exception as e:  # the check's own bug: a FAIL with its reason, the table still out
        import traceback
        c.say(traceback.format_exc(), stdout=False)
        c.verdict("FAIL", "gpu-check", f"the check itself failed: {e!r} (log.txt)")
    return finish(c)


def finish(c):
    """The archive, the table last; the exit status: 0 only with no FAIL and no SKIP."""
    with tarfile.open(os.path.join(c.outdir, "check.tgz"), "w:gz") as t:
        for f in sorted(set(c.archive)):
            if os.path.isfile(f):
                t.add(f, arcname=os.path.basename(f))
    c.say(f"gpu-check: done in {time.monotonic() - c.t0:.0f} s", stdout=False)
    table = c.table()
    c.log.write("\n" + table)
    print("\n" + table, end="", flush=True)
    bad = any(v[0] in ("FAIL", "SKIP") for v in c.verdicts) or not c.verdicts
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
