#!/usr/bin/env python3
"""scripts/gpu-check's own logic, on the fakes: the check runs as on a GPU machine, against
the fake driver, runtime and CUPTI, a stub torch and Triton (stub/), a stub nvcc that copies
stand-ins built by CMake, a stub ncu and a stub nvidia-smi. The machine is laid out like the
H200's: a toolkit ($CUDA_HOME: bin/nvcc, lib64/libcupti.so) and PyTorch's wheel copy of
libcupti (libcupti.so.13, which the stub torch loads at import as libtorch_cuda does).

One clean run must pass every verdict and exit 0; then every verdict is made to fail once by a
deliberately broken input (a label rule that drops a kernel, a driver that fails, a profiler
that miscounts, CUPTI dropping records, a doctored summary...), and a SKIP fails the run.

  test_gpu_check.py --list
  test_gpu_check.py --build BUILD NAME
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUB = os.path.join(HERE, "stub")
TESTS = {}


def test(fn):
    TESTS[fn.__name__[5:].replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Failed(why)


class Machine:
    """A scratch GPU machine on the fakes."""

    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.tmp = tempfile.mkdtemp(prefix="gpu-check-test-")
        fakes = os.path.join(self.build, "fakes")
        cupti = os.path.join(fakes, "libfake_cupti.so")
        gpu = os.path.join(self.build, "tests", "gpu")
        scn = os.path.join(self.build, "tests", "e2e", "scenarios")
        for d in ("cuda/bin", "cuda/lib64", "wheel", "prebuilt"):
            os.makedirs(os.path.join(self.tmp, d))
        shutil.copy(os.path.join(STUB, "bin", "nvcc"), os.path.join(self.tmp, "cuda/bin/nvcc"))
        # Two distinct copies of the fake CUPTI (two files: two objects if both are loaded).
        shutil.copy(cupti, os.path.join(self.tmp, "cuda/lib64/libcupti.so"))
        shutil.copy(cupti, os.path.join(self.tmp, "wheel/libcupti.so.13"))
        for name, d in (("app_shared", scn), ("app_ptds", scn), ("gpu_launch", gpu),
                        ("gpu_check_standin_cublas", gpu), ("gpu_check_standin_static", gpu)):
            os.symlink(os.path.join(d, name), os.path.join(self.tmp, "prebuilt", name))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("NVTXCORR", "NVTX_", "FAKECUDA", "FAKECUPTI", "STUB_"))
                    and k not in ("LD_PRELOAD", "CUDA_HOME")}
        self.env.update(
            PATH=os.path.join(STUB, "bin") + ":" + os.path.join(self.tmp, "cuda/bin") + ":" +
            os.environ.get("PATH", "/usr/bin:/bin"),
            LD_LIBRARY_PATH=fakes + ":" + os.path.join(self.tmp, "wheel"),
            PYTHONPATH=STUB, CUDA_HOME=os.path.join(self.tmp, "cuda"),
            GPU_CHECK_PREBUILT=self.build, GPU_CHECK_WORK=os.path.join(self.tmp, "work"),
            STUB_NVCC_PREBUILT=os.path.join(self.tmp, "prebuilt"),
            STUB_TORCH_NVTX=os.path.join(gpu, "libstub_nvtx.so"),
            STUB_TORCH_LOAD_CUPTI="libcupti.so.13",
            # The decode loop GPU-bound by far (about 170 us a replay against a few us of host
            # time), as on the H200, so that its 0.97x goal holds on a loaded machine too.
            STUB_TORCH_GPU_SLOWDOWN="5",
            # CUPTI's own work, as in the benchmark (docs/performance.md): an API record dearer
            # than a callback, so that the op loop's A/B says what the real one would; by far
            # (15 us against 0.1), so that no load on the machine can turn it round.
            FAKECUPTI_CALLBACK_NS="100", FAKECUPTI_RECORD_NS="15000",
            STUB_NCU_RECORDER=os.path.join(fakes, "libnvtx_recorder.so"))

    def check(self, deadline="120", **env):
        out = os.path.join(self.tmp, "out")
        shutil.rmtree(out, ignore_errors=True)
        e = dict(self.env)
        e.update(env)
        p = subprocess.run([os.path.join(ROOT, "scripts", "gpu-check"), out, deadline], env=e,
                           capture_output=True, text=True, timeout=110)
        verdicts = {}
        for line in p.stdout.splitlines():
            m = re.match(r"^(PASS|FAIL|N/A|SKIP) ([\w.:+-]+): (.*)$", line)
            if m:
                verdicts[m.group(2)] = (m.group(1), m.group(3))
        return p, verdicts, out

    def compare(self, nv, tk, work):
        p = subprocess.run([sys.executable, os.path.join(HERE, "torch_gpu_time.py"), "compare",
                            nv, tk, work], capture_output=True, text=True, timeout=30)
        return p, {m.group(2): m.group(1) for m in re.finditer(
            r"^(PASS|FAIL|N/A|SKIP) ([\w.:+-]+): ", p.stdout, re.M)}


ALL = ["build.nvtxcorr", "build.programs", "static-cudart-launch", "static-cudart-graph",
       "shared-cudart-launch", "shared-cudart-graph", "per-thread-launch", "driver-entry-point",
       "cublas-gemm", "pytorch-eager-and-graphs", "triton", "gpu-time.run",
       "gpu-time.native", "gpu-time.static", "gpu-time.cublas-eager", "gpu-time.cublas-captured",
       "gpu-time.torch-profiler", "gpu-time.correlation", "gpu-time.views", "gpu-time.counts",
       "gpu-time.times", "gpu-time.graph", "cupti-copies", "gpu-time.op-cost", "gpu-time.ab",
       "ncu-nvtx-filter", "throughput.decode-loop", "throughput.host-ns"]


def failing(verdicts, names):
    """The named verdicts are FAIL (or what is asked), and say so in the table."""
    for name, want in names.items():
        got = verdicts.get(name, ("absent", ""))
        check(got[0] == want, f"{name}: {got[0]} ({got[1]}), expected {want}")


@test
def test_all_pass(m):
    """Every verdict passes on a sound setup; the table comes last, exactly three files."""
    p, v, out = m.check()
    bad = {k: x for k, x in v.items() if x[0] != "PASS"}
    check(p.returncode == 0 and not bad and sorted(v) == sorted(ALL),
          f"rc {p.returncode}; not passing: {bad}; missing: {sorted(set(ALL) - set(v))}\n"
          f"{p.stdout[-3000:]}{p.stderr[-2000:]}")
    lines = p.stdout.rstrip("\n").splitlines()
    check(lines[-1] == f"{len(ALL)} passed, 0 failed, 0 skipped", lines[-1])
    check(all(re.match(r"^PASS [\w.:+-]+: ", x) for x in lines[-1 - len(ALL):-1]),
          "the table is not last")
    check(sorted(os.listdir(out)) == ["check.tgz", "log.txt", "verdicts.txt"], os.listdir(out))
    log = open(os.path.join(out, "log.txt")).read()
    check("stub warning" in log and "stub warning" not in p.stdout + p.stderr,
          "nvcc's warnings belong in the log, not the output")
    check(open(os.path.join(out, "verdicts.txt")).read().splitlines()[-1] == lines[-1],
          "verdicts.txt")
    import tarfile
    names = tarfile.open(os.path.join(out, "check.tgz")).getnames()
    check("torch-kernels.json" in names and "host-ns.json" in names, names)
    # The JSONs of this run, for the doctored-input test below.
    return p


@test
def test_broken_labels(m):
    """A label rule that drops add1's ranges, a Triton kernel's and cuBLAS's: every launch
    scenario, the entry point, cuBLAS, Triton and ncu's filtered run fail."""
    rules = "add1 -;add_one -;gemmSN_* -;splitK* -"
    p, v, _ = m.check(NVTXCORR_LABELS_INLINE=rules, GPU_CHECK_ONLY="native,torch,ncu")
    failing(v, {n: "FAIL" for n in ("static-cudart-launch", "shared-cudart-launch",
                                     "per-thread-launch", "driver-entry-point", "cublas-gemm",
                                     "static-cudart-graph", "triton", "ncu-nvtx-filter")})
    check(p.returncode == 1, f"rc {p.returncode}")


@test
def test_broken_capture_and_driver(m):
    """Capture ranges missing (NVTXCORR_CAPTURE=skip): the graph scenarios fail; a driver
    whose launches fail makes the programs fail on their own, which is said."""
    p, v, _ = m.check(NVTXCORR_CAPTURE="skip", GPU_CHECK_ONLY="native")
    failing(v, {"static-cudart-graph": "FAIL", "shared-cudart-graph": "FAIL",
                "cublas-gemm": "FAIL", "shared-cudart-launch": "PASS"})
    p, v, _ = m.check(FAKECUDA_FAIL_LAUNCH="98", GPU_CHECK_ONLY="native")
    check(v["shared-cudart-launch"][0] == "FAIL" and
          "fails on its own" in v["shared-cudart-launch"][1], f"{v.get('shared-cudart-launch')}")


@test
def test_broken_profiler_and_cupti(m):
    """torch.profiler one kernel more: the eager scenario and the counts fail; its times 10%
    off: the times fail; CUPTI dropping records: correlation fails; torch.profiler or graph
    capture raising: the runs fail; CUPTI refusing: the decode loop and host-ns fail (their
    summaries are read)."""
    p, v, _ = m.check(STUB_TORCH_PROF_EXTRA="1", GPU_CHECK_ONLY="torch,gpu-time")
    failing(v, {"pytorch-eager-and-graphs": "FAIL", "gpu-time.counts": "FAIL",
                "gpu-time.views": "PASS"})
    p, v, _ = m.check(STUB_TORCH_PROF_SCALE="1.1", GPU_CHECK_ONLY="gpu-time")
    failing(v, {"gpu-time.times": "FAIL", "gpu-time.counts": "PASS"})
    p, v, _ = m.check(FAKECUPTI_DROP_EVERY="3", GPU_CHECK_ONLY="gpu-time")
    failing(v, {"gpu-time.correlation": "FAIL", "gpu-time.native": "FAIL"})
    p, v, _ = m.check(STUB_TORCH_FAIL="profiler", GPU_CHECK_ONLY="gpu-time")
    failing(v, {"gpu-time.torch-profiler": "FAIL", "gpu-time": "FAIL", "gpu-time.run": "PASS"})
    p, v, _ = m.check(STUB_TORCH_FAIL="graph", GPU_CHECK_ONLY="torch,gpu-time")
    failing(v, {"gpu-time.run": "FAIL", "pytorch-eager-and-graphs": "FAIL"})
    p, v, _ = m.check(FAKECUPTI_REFUSE="1", GPU_CHECK_ONLY="throughput")
    failing(v, {"throughput.decode-loop": "FAIL", "throughput.host-ns": "FAIL"})


@test
def test_broken_correlation(m):
    """The setup before the launch callbacks (NVTXCORR_GPU_CORRELATION=external: an external id
    pushed in the hook of the driver call): the static runtime's and cuBLAS's eager kernels
    are uncorrelated, as on the H200, and their verdicts fail, PyTorch's too (its GEMMs); the
    shared runtime's and graph replays' stay exact. The op loop sets the mode itself: the A/B
    still passes, and says how many kernels the external ids left uncorrelated."""
    p, v, _ = m.check(NVTXCORR_GPU_CORRELATION="external", GPU_CHECK_ONLY="gpu-time,op-cost")
    failing(v, {"gpu-time.static": "FAIL", "gpu-time.cublas-eager": "FAIL",
                "gpu-time.correlation": "FAIL", "gpu-time.native": "PASS",
                "gpu-time.cublas-captured": "PASS", "gpu-time.ab": "PASS"})
    check("uncorrelated" in v["gpu-time.static"][1] and
          re.search(r"external ids \+\d+ ns/op, [1-9]\d*, [1-9]\d* kernels uncorrelated",
                    v["gpu-time.ab"][1]),
          f"{v['gpu-time.static']} {v['gpu-time.ab']}")
    check(p.returncode == 1, f"rc {p.returncode}")


@test
def test_broken_cost(m):
    """CUPTI's launch callbacks dear (30 us each): nvtxcorr's added cost per op exceeds
    torch.profiler's and the external ids', and both cost verdicts fail; a torch.profiler that
    costs nothing (the callbacks 1 us each, still far cheaper than the API records): op-cost
    fails, the A/B not."""
    p, v, _ = m.check(FAKECUPTI_CALLBACK_NS="30000", GPU_CHECK_ONLY="op-cost")
    failing(v, {"gpu-time.op-cost": "FAIL", "gpu-time.ab": "FAIL"})
    p, v, _ = m.check(STUB_TORCH_PROF_OP_NS="0", FAKECUPTI_CALLBACK_NS="1000",
                      GPU_CHECK_ONLY="op-cost")
    failing(v, {"gpu-time.op-cost": "FAIL", "gpu-time.ab": "PASS"})


@test
def test_doctored_summaries(m):
    """torch_gpu_time.py compare on a good run's files, each doctored once: views that do not
    sum, a count off, a graph of another size, a replay longer than the CUDA events' span, two
    CUPTIs, a missing file (a FAIL line, not a traceback)."""
    p, v, _ = m.check(GPU_CHECK_ONLY="gpu-time")
    check(p.returncode == 0, p.stdout[-2000:])
    work = os.path.join(m.tmp, "work")
    nv = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("gpu-time.")][0]
    tk, wk = os.path.join(work, "torch-kernels.json"), os.path.join(work, "work.json")
    _, got = m.compare(nv, tk, wk)
    check(set(got.values()) == {"PASS"}, f"undoctored: {got}")

    def doctored(path, change):
        d = json.load(open(path))
        change(d)
        out = f"{path}.doctored{len(os.listdir(work))}"
        json.dump(d, open(out, "w"))
        return out

    def k0(d):
        k = [k for k in d["kernels"] if k["gpu_kernels"] and "SoftMax" not in k["function"]][0]
        k["gpu_kernels"] += 1
    cases = [
        ("gpu-time.views", doctored(nv, lambda d: d["kernel_labels"][0].update(
            gpu_ns=d["kernel_labels"][0]["gpu_ns"] + 100)), tk, wk),
        ("gpu-time.counts", doctored(nv, k0), tk, wk),
        ("gpu-time.graph", doctored(nv, lambda d: d["graphs"][0].update(
            kernels_per_replay=d["graphs"][0]["kernels_per_replay"] - 1)), tk, wk),
        ("gpu-time.graph", nv, tk, doctored(wk, lambda d: d.update(events_ns=1000))),
        ("gpu-time.correlation", doctored(nv, lambda d: d["totals"].update(
            gpu_uncorrelated_kernels=1)), tk, wk),
        ("cupti-copies", nv, tk, doctored(wk, lambda d: d["cupti"].append("/x/libcupti.so"))),
    ]
    for name, a, b, c in cases:
        p, got = m.compare(a, b, c)
        check(p.returncode == 1 and got.get(name) == "FAIL", f"{name}: {got}")
    p, got = m.compare(nv, os.path.join(work, "absent.json"), wk)
    check(p.returncode == 1 and got == {"gpu-time": "FAIL"} and "Traceback" not in p.stderr and
          "absent.json" in p.stdout, f"{p.stdout} {p.stderr}")


@test
def test_cupti_already_loaded(m):
    """torch's process has its wheel's libcupti.so.13 loaded before the first launch and the
    toolkit has another: nvtxcorr takes the loaded one (dlopen RTLD_NOLOAD), so one CUPTI is
    mapped, not two."""
    p, v, _ = m.check(GPU_CHECK_ONLY="gpu-time")
    failing(v, {"cupti-copies": "PASS", "gpu-time.correlation": "PASS"})
    check("wheel/libcupti.so.13" in v["cupti-copies"][1], v["cupti-copies"][1])


@test
def test_skip_is_not_pass(m):
    """No CUDA-enabled torch: SKIPs, and the check fails; a build that fails is a FAIL and
    what needs it a SKIP; ncu that cannot profile is N/A, which alone does not fail."""
    p, v, _ = m.check(STUB_TORCH_NO_CUDA="1", GPU_CHECK_ONLY="torch")
    failing(v, {"pytorch-eager-and-graphs": "SKIP", "triton": "SKIP"})
    check(p.returncode == 1, f"rc {p.returncode} with SKIPs")
    p, v, _ = m.check(STUB_NVCC_FAIL="cublas_gemm.cu", GPU_CHECK_ONLY="native")
    failing(v, {"build.programs": "FAIL", "cublas-gemm": "SKIP", "shared-cudart-launch": "PASS"})
    check(p.returncode == 1, f"rc {p.returncode}")
    p, v, _ = m.check(STUB_NCU_CANNOT="1", GPU_CHECK_ONLY="ncu")
    failing(v, {"ncu-nvtx-filter": "N/A"})
    check(p.returncode == 0, f"rc {p.returncode}: N/A alone must not fail")
    p, v, _ = m.check(GPU_CHECK_PREBUILT=os.path.join(m.tmp, "nothing"), GPU_CHECK_ONLY="native")
    failing(v, {"build.nvtxcorr": "FAIL"})
    check(p.returncode == 1, f"rc {p.returncode}")


@test
def test_deadline(m):
    """An overall deadline too short for the run: the steps it cuts are SKIPs, the table and
    the three files still come, within the deadline."""
    import time
    t = time.monotonic()
    p, v, out = m.check(deadline="4")
    check(time.monotonic() - t < 15, f"took {time.monotonic() - t:.0f} s")
    check(p.returncode == 1 and "SKIP" in {x[0] for x in v.values()}, f"{p.returncode} {v}")
    check(sorted(os.listdir(out)) == ["check.tgz", "log.txt", "verdicts.txt"], os.listdir(out))
    check(re.search(r"^\d+ passed, \d+ failed, \d+ skipped", p.stdout.splitlines()[-1]),
          p.stdout[-500:])


@test
def test_build_step(m):
    """The CMake build (a stub cmake that copies the library in): Ninja asked for when ninja
    is on PATH, only the two targets, cmake's output in the log; a failing configure is a FAIL
    that stops the run with exit 1."""
    calls = os.path.join(m.tmp, "cmake.calls")
    env = dict(PATH=os.path.join(STUB, "bin-build") + ":" + m.env["PATH"], GPU_CHECK_PREBUILT="",
               GPU_CHECK_BUILD=os.path.join(m.tmp, "b"), STUB_CMAKE_LOG=calls,
               STUB_CMAKE_FROM=m.build, GPU_CHECK_ONLY="native")
    p, v, out = m.check(**env)
    failing(v, {"build.nvtxcorr": "PASS", "shared-cudart-launch": "PASS"})
    check("Ninja" in v["build.nvtxcorr"][1], v["build.nvtxcorr"])
    got = open(calls).read()
    check(" -G Ninja " in got and "--target nvtxcorr nvtx_recorder" in got and
          "-DCMAKE_BUILD_TYPE=Release" in got, got)
    check("-- stub cmake: --build" in open(os.path.join(out, "log.txt")).read(),
          "cmake's output is not in the log")
    p, v, out = m.check(STUB_CMAKE_FAIL="configure", **env)
    failing(v, {"build.nvtxcorr": "FAIL"})
    check("CMake Error" in v["build.nvtxcorr"][1] and p.returncode == 1 and
          "shared-cudart-launch" not in v, f"{p.returncode} {v}")


@test
def test_stopped(m):
    """Stopped from outside (SIGTERM, as at a command's limit) in the middle of a step: the
    step's processes are killed, the three files and the table come, with a SKIP."""
    import signal
    import time
    out = os.path.join(m.tmp, "out")
    p = subprocess.Popen([os.path.join(ROOT, "scripts", "gpu-check"), out, "120"], env=m.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = os.path.join(out, "log.txt")
    for _ in range(600):  # until a scenario runs (the check takes seconds more)
        if os.path.exists(log) and "$ [shared-cudart-launch]" in open(log).read():
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    stdout, _ = p.communicate(timeout=60)
    check(p.returncode == 1, f"rc {p.returncode}")
    check(sorted(os.listdir(out)) == ["check.tgz", "log.txt", "verdicts.txt"], os.listdir(out))
    lines = stdout.splitlines()
    check(lines[-2].startswith("SKIP gpu-check: stopped by signal") and
          re.match(r"^\d+ passed, 0 failed, 1 skipped$", lines[-1]), stdout[-600:])


def main(argv):
    if argv[:1] == ["--list"]:
        print("\n".join(TESTS))
        return 0
    if len(argv) != 3 or argv[0] != "--build" or argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    for need in ("tests/gpu/libstub_nvtx.so", "tests/gpu/gpu_launch", "fakes/libfake_cupti.so",
                 "tests/e2e/scenarios/app_shared"):
        if not os.path.exists(os.path.join(argv[1], need)):
            print(f"skipped: {need} not built")
            return 0
    m = Machine(argv[1])
    try:
        TESTS[argv[2]](m)
    except Failed as e:
        print(f"FAILED {argv[2]}: {e}\n(scratch: {m.tmp})")
        return 1
    shutil.rmtree(m.tmp, ignore_errors=True)
    print(f"ok {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
