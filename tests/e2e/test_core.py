"""Core scenarios: every path to the launch entry points, one balanced range per launch,
default labels, pass-through, stacking, silence."""
import json
import os
import platform
import re
import shutil
import subprocess

from harness import (KERNELS6, NVCC_PROGRAMS, ROOT, VARIANTS, Skip, check, check_balanced,
                     check_quiet, hooks_table, load_trace, peak_rss, scenario, trace_launches)


@scenario
def test_exports(env):
    out = subprocess.run(["nm", "-D", "--defined-only", env.lib], capture_output=True,
                         text=True, check=True).stdout
    symbols = [line.split() for line in out.splitlines() if line.strip()]
    versioned = {tuple(re.split(r"@+", s[2])) for s in symbols if s[1] != "A"}
    hooks = hooks_table()
    expected = ({(h[1], "NVTXCORR_1") for h in hooks if h[5] == "driver"} |
                {(h[1], "libcudart.so.13") for h in hooks if h[5] == "runtime"} |
                {("dlsym", "GLIBC_2.34")} |
                # the NVTX tool's entry (src/context/nvtx_tool.c)
                {("InitializeInjectionNvtx2", "NVTXCORR_1")} |
                # the marker a second copy of the library finds (src/core/resolve.c)
                {("nvtxcorr_copy_marker", "NVTXCORR_1")} |
                # profile mode's stand-in for SIG_DFL (src/profile/lifecycle/sigaction.c), and its
                # outputs at _exit (src/profile/lifecycle/exit.c)
                {(name, "GLIBC_2.17" if platform.machine() == "aarch64" else "GLIBC_2.2.5")
                 for name in ("sigaction", "signal", "_exit", "_Exit")})
    missing = expected - versioned
    extra = {v for v in versioned - expected if v[0] != "dlsym"}
    check(not missing and not extra, f"exports differ from hooks.def: extra {extra}, "
          f"missing {missing}")
    check(len([v for v in versioned if v[0] == "dlsym"]) == 2,
          "dlsym must also be exported under the architecture's pre-2.34 version")
    needed = subprocess.run(["readelf", "-d", env.lib], capture_output=True, text=True).stdout
    libs = re.findall(r"NEEDED.*\[(.*)\]", needed)
    check(not [n for n in libs if re.search(r"cuda|nvtx|nvToolsExt|stdc\+\+", n)],
          f"unwanted NEEDED entries: {libs}")


def driver_path(env, mode, extra=0):
    bare = env.run([env.prog("scn_driver"), mode], preload=False)
    run = env.run_ok([env.prog("scn_driver"), mode])
    check(run.rcs() == bare.rcs(), "return codes differ from a run without the library")
    labels = run.labels()
    check(labels[:6] == KERNELS6, f"labels {labels}")
    check(len(labels) == 6 + extra, f"{len(labels)} ranges for {6 + extra} launches")
    # Each wrapper called exactly the variant the caller asked for.
    for v in VARIANTS:
        check(run.count(v) == bare.count(v), f"{v}: {run.count(v)} calls, bare {bare.count(v)}")
    check(any(e["kind"] == "domain" and e["name"] == "nvtxcorr" for e in run.events),
          "no nvtxcorr domain")
    check(all(e.get("registered") == "1" for e in run.pushes()),
          "ranges must use registered strings")
    check_quiet(run)
    return run


@scenario
def test_direct(env):
    driver_path(env, "direct")


@scenario
def test_launch_arguments_arrive_intact(env):
    """Every launch entry point, driver and runtime, three calls per handle with arguments
    that differ by call and position: the fake driver must receive exactly what the program
    passed, with nvtxcorr's ranges (whose x86-64 entry stubs save the argument registers and
    copy the stack arguments themselves, hook_bodies.h), in profile mode and without it; and a
    backtrace taken inside the driver must reach the program's code."""
    import tempfile
    configs = {
        "bare": dict(preload=False, enabled=False, tool=False),
        "no-op tool": dict(env={"NVTXREC_MODE": "noop"}),
        "recording tool": dict(),
        "no tool": dict(tool=False),
        "profile mode": dict(env={"NVTXCORR_PROFILE": "{tmp}/p.json"}),
        "profile mode, no tool": dict(tool=False, env={"NVTXCORR_PROFILE": "{tmp}/p.json"}),
        # A tool without the domain range push or pop: the entry stubs' range path calls the
        # tool's two functions itself, so it must not be taken (routes.c); NVTX's own calls
        # then skip the one missing, and the ranges stay unbalanced as the tool chose.
        "tool without a range push": dict(balanced=False,
                                          env={"NVTXREC_WITHOUT": "DomainRangePushEx"}),
        "tool without a range pop": dict(balanced=False,
                                         env={"NVTXREC_WITHOUT": "DomainRangePop"}),
    }
    for what, kwargs in configs.items():
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "args")
            extra = {k: v.format(tmp=tmp) for k, v in (kwargs.pop("env", None) or {}).items()}
            extra["FAKECUDA_ARGS"] = log
            extra["FAKECUDA_UNWIND"] = "1"
            run = env.run_ok([env.prog("scn_args")], env=extra, what=f"scn_args, {what}",
                             **kwargs)
            sent = [line for line in run.out.splitlines() if line.startswith("args ")]
            with open(log) as f:
                got = f.read().splitlines()
            # A backtrace taken inside the driver reaches the program: the stub's frame has
            # its unwind information (a debugger, nsys --cudabacktrace).
            cut = [i for i, line in enumerate(got) if not line.endswith(" unwind=yes")]
            check(not cut, f"{what}: a backtrace from inside the driver does not reach the "
                  f"program at launches {cut[:5]}: {got[cut[0]] if cut else ''}")
            got = [line.rsplit(" unwind=", 1)[0] for line in got]
            check(len(sent) == 54, f"{what}: {len(sent)} launches, expected 54")
            bad = [(i, a, b) for i, (a, b) in enumerate(zip(sent, got)) if a != b]
            check(len(got) == len(sent) and not bad,
                  f"{what}: the driver received other arguments than were passed "
                  f"({len(got)} launches received, {len(sent)} made); first differences: "
                  f"{bad[:3]}")
            if what == "recording tool":
                check(len(run.pushes()) == 54, f"{len(run.pushes())} ranges for 54 launches")
            if what.startswith("tool without"):
                pops = sum(1 for e in run.events
                           if e["kind"] == "pop" and e["domain"] == "nvtxcorr")
                want = (0, 54) if what.endswith("push") else (54, 0)
                check((len(run.pushes()), pops) == want,
                      f"{what}: {len(run.pushes())} pushes and {pops} pops, expected {want}")
            if what.startswith("profile mode"):
                # The first launch of each handle goes through the C body, the next two through
                # the stub's profile path: each is counted once, none as an error.
                with open(os.path.join(tmp, "p.json")) as f:
                    totals = json.load(f)["totals"]
                check(totals["launches"] == 54 and totals["errors"] == 0,
                      f"{what}: counted {totals['launches']} launches and {totals['errors']} "
                      "errors, expected 54 and 0")
    # A launch's error comes back unchanged through the fast path as through the slow one:
    # the fake fails every launch with 719 (the runtime turns it into its own code).
    fail = {"FAKECUDA_FAIL_LAUNCH": "719"}
    bare = env.run([env.prog("scn_args")], preload=False, enabled=False, tool=False, env=fail)
    ours = env.run([env.prog("scn_args")], env=dict(fail, NVTXREC_MODE="noop"))
    launches = [rc for rc in bare.rcs() if rc[0] not in ("__cudaGetKernel", "instantiate")]
    check(len(launches) == 54 and all(rc[1] != "0" for rc in launches),
          f"bare: the fake did not fail every launch: {bare.rcs()[:8]}")
    check(ours.rc == bare.rc and ours.rcs() == bare.rcs(),
          f"results differ from a run without the library: {ours.rcs()[:8]} vs {bare.rcs()[:8]}")
    # Trace mode: each launch's events name the entry point called, the grid and the stream the
    # program passed, whether the C body made them (a handle's first launch) or the entry
    # stub's profile path with the entry point's trace function (the next two).
    for form, name in (("kineto", "t.json"), ("chrome", "t.trace")):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name)
            run = env.run_ok([env.prog("scn_args")], what=f"scn_args, trace ({form})",
                             env={"NVTXCORR_TRACE": path, "NVTXREC_MODE": "noop"})
            lines = run.out.splitlines()
            made = []
            for a, b in zip(lines, lines[1:]):
                if a.startswith("args ") and b.startswith("rc "):
                    fields = dict(kv.split("=", 1) for kv in a.split()[1:])
                    stream = fields["stream"].replace("(nil)", "0x0")
                    grid = [int(x) for x in fields["grid"].split(",")] if "grid" in fields else None
                    made.append((b.split()[1], grid, stream))
            events = sorted(trace_launches(load_trace(path)), key=lambda e: e["ts"])
            check(len(made) == 54 and len(events) == 54,
                  f"{form}: {len(events)} launch events for {len(made)} launches")
            for i, ((api, grid, stream), e) in enumerate(zip(made, events)):
                got = (e.get("api", api), e["args"].get("grid"),
                       e["args"].get("stream", stream))
                check(got == (api, grid, stream),
                      f"{form}: launch {i} made as {(api, grid, stream)}, traced as {got}")
    # And through profile mode's path, which also counts every failed launch as an error.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        prof = env.run([env.prog("scn_args")], env=dict(fail, NVTXREC_MODE="noop",
                                                        NVTXCORR_PROFILE=path))
        check(prof.rc == bare.rc and prof.rcs() == bare.rcs(),
              f"profile mode: results differ from a run without the library: {prof.rcs()[:8]}")
        with open(path) as f:
            totals = json.load(f)["totals"]
        check(totals["launches"] == 54 and totals["errors"] == 54,
              f"profile mode: {totals['errors']} errors counted of {totals['launches']} "
              "launches, expected 54 of 54")


@scenario
def test_dlsym(env):
    driver_path(env, "dlsym")


@scenario
def test_procaddr(env):
    run = driver_path(env, "procaddr", extra=1)
    check(run.count("cuLaunchKernel") == 2, "gpa1-resolved cuLaunchKernel not the legacy one")


@scenario
def test_replay_cudart_requests(env):
    """The exact requests of the real CUDA 13.0 runtime, in order, through our resolver."""
    ref = os.path.join(ROOT, "tests", "data", "cudart-13.0-getprocaddress.txt")
    run = env.run_ok([env.prog("scn_driver"), "replay", ref], env={"NVTXCORR_LOG": "debug"})
    m = re.search(r"replayed (\d+) found (\d+) wrapped (\d+)", run.out)
    check(m, run.out)
    requests = [line.split() for line in open(ref) if line[0] not in "#\n"]
    check(int(m[1]) == len(requests), f"replayed {m[1]} of {len(requests)}")
    check(int(m[2]) == len(requests) - 1, f"found {m[2]}: only the empty probe may fail")
    # Expected wrapped: every request whose symbol and version map to a driver hook.
    hooks = [h for h in hooks_table() if h[5] == "driver"]
    expected = []
    for sym, ver, flags in (r for r in requests if len(r) == 3):
        ptsz = int(flags) & 2 != 0
        cands = [h for h in hooks if h[2] == sym]
        if not cands:
            continue
        if ptsz and not any(h[4] for h in cands):
            ptsz = False
        best = max((h for h in cands if h[4] == ptsz and h[3] <= int(ver)),
                   key=lambda h: h[3], default=None)
        if best:
            expected.append((sym, ver, flags, best[1]))
    got = re.findall(r"^wrapped (\S+) (\d+) (\d+) -> (\S+)$", run.out, re.M)
    check(sorted(got) == sorted(expected),
          f"wrapped differs:\nextra {set(got) - set(expected)}\nmissing {set(expected) - set(got)}")
    # Independent of hooks.def: each request must resolve to the same ABI symbol as the
    # driver's own answer (without the library), so no variant or version was swapped.
    bare = env.run([env.prog("scn_driver"), "replay", ref], preload=False)
    resolved = re.findall(r"^resolved (.*)$", run.out, re.M)
    bare_resolved = re.findall(r"^resolved (.*)$", bare.out, re.M)
    check(len(bare_resolved) == len(requests) - 1, f"bare run resolved {len(bare_resolved)}")
    check(resolved == bare_resolved,
          "symbols differ from the driver's own answers: " +
          str([(a, b) for a, b in zip(resolved, bare_resolved) if a != b][:5]))
    for sym in ("cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
                "cuGraphLaunch"):
        check(any(g[0] == sym and g[2] == "2" for g in got), f"{sym} _ptsz not wrapped")


@scenario
def test_nvcc_programs_built(env):
    """Where nvcc is installed, every build (also one whose headers come from the wheels, as
    build-wheel-headers/) builds the nvcc programs, so no nvcc scenario is skipped."""
    nvcc = shutil.which("nvcc") or next((p for p in (os.path.join(os.environ.get(
        "CUDA_HOME", "/nonexistent"), "bin", "nvcc"), "/usr/local/cuda/bin/nvcc")
        if os.access(p, os.X_OK)), None)
    if not nvcc:
        raise Skip("no nvcc on this machine")
    missing = [p for p in NVCC_PROGRAMS if not os.path.exists(os.path.join(env.bin, p))]
    check(not missing, f"{nvcc} exists, but {env.build} did not build {missing}")


@scenario
def test_nvcc_shared(env):
    bare = env.run([env.prog("app_shared"), "launch"], preload=False)
    check(bare.rc == 0, f"rc {bare.rc} without the library: {bare.err}")
    run = env.run_ok([env.prog("app_shared"), "launch"])
    check(run.rcs() == bare.rcs(), "return codes differ")
    check(run.labels() == ["add1", "flash_fwd_kernel", "triton_poi_fused_add_0", "add1", "add1",
                           "add1"], f"labels {run.labels()}")
    check(sum(run.count(v) for v in VARIANTS) == 6, f"driver launches {run.counts}")
    check_quiet(run)


@scenario
def test_nvcc_per_thread(env):
    run = env.run_ok([env.prog("app_ptds"), "launch"])
    check(len(run.labels()) == 6, f"labels {run.labels()}")
    check(run.count("cuLaunchKernel") == 0 and run.count("cuLaunchKernel_ptsz") > 0,
          f"per-thread program reached legacy variants: {run.counts}")


@scenario
def test_nvcc_graph(env):
    run = env.run_ok([env.prog("app_shared"), "graph"])
    labels = run.labels()
    check(labels[:5] == ["add1 [capture]"] * 4 + ["triton_poi_fused_add_0 [capture]"],
          f"capture labels {labels}")
    check(labels[5:] == ["graph#1 (5 kernels)"] * 3, f"graph labels {labels}")
    check(run.count("cuGraphLaunch") == 3, f"{run.counts}")


@scenario
def test_nvcc_graph_paths(env):
    run = env.run_ok([env.prog("app_shared"), "graphs"])
    graphs = [t for t in run.labels() if t.startswith("graph#")]
    check(graphs == ["graph#1 (5 kernels)"] * 3 + ["graph#2 (5 kernels)", "graph#3 (5 kernels)"],
          f"runtime instantiation paths: {graphs}")
    check(sum(1 for m in run.marks() if m.startswith("updated graph#3")) == 1,
          f"cudaGraphExecUpdate: {run.marks()}")
    check(run.labels()[-2:] == ["triton_poi_fused_add_0 [capture]", "add1"],
          f"cudaStreamBeginCaptureToGraph: {run.labels()[-3:]}")
    ptds = env.run_ok([env.prog("app_ptds"), "graphs"])
    check([t for t in ptds.labels() if t.startswith("graph#")] == graphs,
          f"per-thread build: {ptds.labels()} {ptds.err}")
    # CUDA 13's per-thread build keeps cudaGraphLaunch but uses the _ptsz instantiation.
    check(ptds.count("captured.cuLaunchKernel_ptsz") == 6, f"{ptds.counts}")


@scenario
def test_launcher_check_and_explain(env):
    launcher = env.launcher
    table = os.path.join(ROOT, "tests", "demo", "demo.conf")
    ok = subprocess.run([launcher, "check", table], capture_output=True, text=True)
    check(ok.returncode == 0 and "rules OK" in ok.stdout, ok.stdout + ok.stderr)
    ex = subprocess.run([launcher, "explain", table,
                         "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params"],
                        capture_output=True, text=True)
    check(ex.returncode == 0 and "attention.prefill" in ex.stdout and "demo.conf:" in ex.stdout,
          ex.stdout + ex.stderr)


@scenario
def test_driver_entry_point(env):
    run = env.run_ok([env.prog("app_shared"), "entry"])
    check(run.labels() == ["add1", "add1"], f"labels {run.labels()}")
    check(run.count("cuLaunchKernel") == 1 and run.count("cuLaunchKernel_ptsz") == 1,
          f"variants {run.counts}")


@scenario
def test_rtld_local_cudart(env):
    run = env.run_ok([env.prog("rtld_local"), env.prog("libmodel.so")])
    check(run.labels() == ["model_gemm_kernel"] * 5, f"labels {run.labels()}")


@scenario
def test_static_cudart(env):
    """The real static cudart resolves every entry point through dlsym + cuGetProcAddress,
    then stops at an integrity check on a fake driver: launch entries must come back wrapped
    and nothing may crash."""
    bare = env.run([env.prog("app_static"), "launch"], preload=False)
    run = env.run([env.prog("app_static"), "launch"], env={"NVTXCORR_LOG": "debug"})
    check(run.rc == bare.rc and run.rc in (0, 1), f"rc {run.rc} (bare {bare.rc}): {run.err[-500:]}")
    check(run.out == bare.out, f"output differs: {run.out} vs {bare.out}")
    got = set(re.findall(r"nvtxcorr: debug: (\w+) \(version \d+, flags (\d)\) -> (\w+)", run.err))
    for sym, ptsz_sym in (("cuLaunchKernel", "cuLaunchKernel_ptsz"),
                          ("cuLaunchKernelEx", "cuLaunchKernelEx_ptsz"),
                          ("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"),
                          ("cuGraphLaunch", "cuGraphLaunch_ptsz")):
        check((sym, "0", sym) in got, f"{sym} not wrapped: {sorted(got)}")
        check((sym, "2", ptsz_sym) in got, f"{ptsz_sym} not wrapped: {sorted(got)}")


@scenario
def test_threads(env):
    run = env.run_ok([env.prog("scn_driver"), "threads", "1000"])
    pushes = run.pushes()
    check(len(pushes) == 8000, f"{len(pushes)} ranges for 8000 launches")
    check(len({p["tid"] for p in pushes}) == 8, "ranges not on the launching threads")
    check(run.count("cuLaunchKernel") == 4000 and run.count("cuLaunchKernel_ptsz") == 4000,
          f"{run.counts}")


@scenario
def test_no_per_launch_memory(env):
    """100x more launches must not need more memory (no-op tool: nothing is recorded)."""
    rss = [peak_rss(env.run_ok([env.prog("scn_driver"), "threads", n],
                               env={"NVTXREC_MODE": "noop"}))
           for n in ("2000", "200000")]
    check(rss[1] - rss[0] < 2048, f"peak RSS grew from {rss[0]} kB to {rss[1]} kB")


@scenario
def test_failing_launches(env):
    bare = env.run([env.prog("scn_driver"), "fail"], preload=False)
    run = env.run([env.prog("scn_driver"), "fail"])
    check(run.rcs() == bare.rcs(), f"return codes changed: {run.rcs()} vs {bare.rcs()}")
    codes = dict(run.rcs())
    check(codes["fail-null"] != "0" and codes["fail-dims"] != "0" and codes["ok-after"] == "0",
          f"fake did not fail as expected: {codes}")
    check_balanced(run)
    check(len(run.pushes()) == 5, f"{len(run.pushes())} ranges for 5 launches")
    forced = env.run([env.prog("scn_driver"), "direct"], env={"FAKECUDA_FAIL_LAUNCH": "719"})
    check([c for w, c in forced.rcs() if w.startswith("cuLaunch")] == ["719"] * 6,
          f"forced failure code not returned: {forced.rcs()}")
    check_balanced(forced)
    check(len(forced.pushes()) == 6, "failed launches must still get one range each")


@scenario
def test_disabled(env):
    for value in (None, "0", "off"):
        extra = {"NVTXCORR": value} if value else {}
        run = env.run_ok([env.prog("scn_driver"), "direct"], enabled=False, env=extra)
        check(run.pushes() == [] and not any(e.get("name") == "nvtxcorr" for e in run.events),
              f"NVTXCORR={value}: NVTX used while disabled")
        check_quiet(run)
        check(sum(run.count(v) for v in VARIANTS) == 6, "launches lost")


@scenario
def test_disabled_reads_nothing_else(env):
    """Inert means inert: with NVTXCORR unset, bad values elsewhere are not even looked at."""
    bad = {"NVTXCORR_CAPTURE": "bogus", "NVTXCORR_LOG": "info",
           "NVTXCORR_LABELS": "/nonexistent/labels.conf", "NVTXCORR_LABELS_INLINE": "[ broken"}
    run = env.run_ok([env.prog("scn_driver"), "direct"], enabled=False, env=bad)
    check(run.err == "" and run.pushes() == [], f"{run.err!r}")


@scenario
def test_enable_values(env):
    for value in ("1", "true", "on", "yes", "TRUE", "Yes"):
        run = env.run([env.prog("scn_driver"), "direct"], enabled=False,
                      env={"NVTXCORR": value})
        check(run.labels() == KERNELS6, f"NVTXCORR={value}: {run.labels()}")


@scenario
def test_no_tool(env):
    run = env.run_ok([env.prog("scn_driver"), "direct"], tool=False)
    check_quiet(run)
    check(sum(run.count(v) for v in VARIANTS) == 6, "launches lost")
    info = env.run([env.prog("scn_driver"), "direct"], tool=False, env={"NVTXCORR_LOG": "info"})
    check("pass-through: no NVTX tool attached" in info.err, info.err)


@scenario
def test_bad_injection_path(env):
    bad = {"NVTX_INJECTION64_PATH": "/nonexistent/libtool.so"}
    run = env.run_ok([env.prog("scn_driver"), "direct"], tool=False, env=bad)
    check_quiet(run)
    warn = env.run([env.prog("scn_driver"), "direct"], tool=False,
                   env=dict(bad, NVTXCORR_LOG="warn"))
    check(re.search(r"^nvtxcorr: warn: NVTX_INJECTION64_PATH=/nonexistent/libtool.so could "
                    r"not be loaded; pass-through$", warn.err, re.M), warn.err)
    failing = env.run_ok([env.prog("scn_driver"), "direct"], env={"NVTXREC_FAIL_INIT": "1"})
    check(failing.pushes() == [], "a tool that fails to initialise")


@scenario
def test_stacking(env):
    value = env.lib + ":" + env.prog("libstack.so")
    run = env.run_ok([env.prog("scn_driver"), "direct"], preload_value=value)
    check("stack: RTLD_NEXT puts is libc" in run.err, run.err)
    check("stack: cuLaunchKernel calls 1" in run.err, run.err)
    check(run.labels() == KERNELS6, f"labels {run.labels()}")
    check(run.count("cuLaunchKernel") == 1, f"{run.counts}")


@scenario
def test_rtld_next_from_local_plugin(env):
    for enabled in (True, False):
        run = env.run_ok([env.prog("rtld_local"), env.prog("libplugin.so")], enabled=enabled,
                         what=f"enabled={enabled}")
        check("RTLD_NEXT malloc is libc" in run.out, f"enabled={enabled}: {run.out} {run.err}")


@scenario
def test_libcuda_dlclosed_and_reloaded(env):
    run = env.run_ok([env.prog("scn_reload")])
    check(len(run.marks()) == 1, f"graph not recorded: {run.events}")


@scenario
def test_other_cudart_versions_untouched(env):
    """Programs built against another runtime (here a CUDA 11-style one whose
    cudaGraphInstantiate takes 5 arguments) must not bind to the CUDA 13 hooks."""
    run = env.run_ok([env.prog("cudart11_app")])
    check("log=intact size=64" in run.out, f"{run.out} {run.err}")


@scenario
def test_silent_in_other_processes(env):
    for argv in (["/bin/true"], ["/bin/sh", "-c", "ls / > /dev/null; echo ok"]):
        run = env.run_ok(argv, env={"NVTXCORR_LOG": "info"})
        check(run.err == "", f"{argv}: printed {run.err!r}")
        check(run.events == [], f"{argv}: NVTX used")


@scenario
def test_info_line(env):
    run = env.run([env.prog("scn_driver"), "direct"], env={"NVTXCORR_LOG": "info"})
    lines = [line for line in run.err.splitlines() if line.startswith("nvtxcorr: info:")]
    check(len(lines) == 1, f"expected one info line: {run.err}")
    check("enabled, NVTX tool attached" in lines[0] and "cuGetProcAddress" in lines[0]
          and "libcuda: " in lines[0], lines[0])


@scenario
def test_names_without_driver_name_api(env):
    """Drivers before 12.3 lack cuFuncGetName: names come from cuModuleGetFunction."""
    run = env.run_ok([env.prog("scn_driver"), "direct"], env={"FAKECUDA_DRIVER_VERSION": "12000"})
    check(run.labels() == KERNELS6, f"labels {run.labels()}")


@scenario
def test_launcher_options(env):
    launcher = env.launcher
    run = env.run_ok([launcher, "--labels-inline", "graph:* g;flash* attn", "--capture", "skip",
                      "--no-graph-marks", "--library", env.lib, env.prog("scn_driver"), "graphs"],
                     preload=False, enabled=False)
    check(run.marks() == [], "--no-graph-marks")
    check(not any(t.endswith("[capture]") for t in run.labels()), "--capture skip")
    check(run.labels().count("g") == 9 and "attn" not in run.labels(), f"{run.labels()}")
    bad = subprocess.run([launcher, "--library", "/nonexistent.so", "true"],
                         capture_output=True, text=True)
    check(bad.returncode == 2 and "nvtxcorr: error:" in bad.stderr, bad.stderr)
    missing = subprocess.run([launcher, "--labels"], capture_output=True, text=True)
    check(missing.returncode == 2 and "--labels needs a value" in missing.stderr,
          missing.stderr)


@scenario
def test_installed_layout(env):
    """cmake --install gives a launcher that finds its library and checker by itself."""
    import tempfile
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], check=True,
                       capture_output=True)
        launcher = os.path.join(prefix, "bin", "nvtxcorr")
        ok = subprocess.run([launcher, "check",
                             os.path.join(prefix, "share", "nvtxcorr", "labels", "vllm.conf")],
                            capture_output=True, text=True)
        check(ok.returncode == 0 and "rules OK" in ok.stdout, ok.stdout + ok.stderr)
        check(os.path.exists(os.path.join(prefix, "include", "nvtxcorr", "nvtxcorr.h")),
              "public header not installed")
        run = env.run([launcher, env.prog("scn_driver"), "direct"], preload=False,
                      enabled=False)
        check(run.labels() == KERNELS6, f"installed launcher: {run.labels()} {run.err}")


@scenario
def test_launcher(env):
    launcher = env.launcher
    other = env.prog("libstack.so")
    run = env.run_ok([launcher, "--log", "info", "--", env.prog("scn_driver"), "direct"],
                     preload=True, enabled=False, preload_value=other)
    check(run.labels() == KERNELS6, f"labels {run.labels()}")
    check("stack: RTLD_NEXT puts is libc" in run.err, "existing LD_PRELOAD was not kept")
    check("nvtxcorr: info: enabled" in run.err, run.err)
    usage = subprocess.run([launcher], capture_output=True, text=True)
    check(usage.returncode == 2 and "usage:" in usage.stderr, "launcher without a command")
