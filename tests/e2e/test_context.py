"""Program context (issue 20): nvtxcorr as the program's NVTX tool, the context open at each
launch, capture-time context for graph nodes, and the views of it (docs/profile.md, Context).
The programs annotate themselves with NVTX3 (scenarios/scn_context.c, a C++ shared object
with its own NVTX instance: scenarios/ctx_plugin.cpp)."""
import json
import os
import re
import subprocess
import tempfile

from harness import Skip, check, peak_rss, scenario


def tool_env(env, extra=None):
    """nvtxcorr as the NVTX tool, as nvtxcorr stat and NVTXCORR_CONTEXT=nvtx set it."""
    return {"NVTX_INJECTION64_PATH": env.lib, **(extra or {})}


def levels(run):
    return dict(re.findall(r"^level (\S+) (-?\d+)$", run.out, re.M))


@scenario
def test_context_nvtx_tool_levels(env):
    """Every NVTX instance (the program's, and a C++ shared object's own) takes nvtxcorr as its
    tool: pushes and pops in the default domain, a custom domain, by registered string and wide
    string return the thread's levels; marks and start/end ranges are tolerated."""
    with tempfile.TemporaryDirectory() as tmp:
        run = env.run_ok([env.prog("scn_context"), "levels"], tool=False,
                         env=tool_env(env, {"NVTXCORR_PROFILE": os.path.join(tmp, "p.json")}))
        got = levels(run)
        want = {"push-a": "0", "push-ex": "1", "push-w": "2", "plugin-push": "3",
                "plugin-pop": "3", "pop-w": "2", "pop-ex": "1", "pop-a": "0"}
        check(got == want, f"levels through nvtxcorr as the tool: {got}, expected {want}\n"
              f"stderr: {run.err}")
        check(run.err == "", f"unexpected stderr: {run.err!r}")
        # Without the tool NVTX answers every call itself (no tool: -2), so the levels above
        # are nvtxcorr's.
        bare = env.run_ok([env.prog("scn_context"), "levels"], tool=False, preload=False)
        check(set(levels(bare).values()) == {"-2"}, f"without a tool: {levels(bare)}")


def fake_cupti(env):
    path = os.path.join(env.fakes, "libfake_cupti.so")
    if not os.path.exists(path):
        raise Skip("built without CUPTI headers: no fake CUPTI")
    return path


def profiled(env, argv, gpu=True, context=True, extra=None, name="p.json"):
    """argv in profile mode (GPU time from the fake CUPTI), nvtxcorr the NVTX tool; returns the
    run and its JSON summary."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-")
    e = {"NVTXCORR_PROFILE": os.path.join(tmp, name)}
    if gpu:
        e.update({"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)})
    if context:
        e.update(tool_env(env))
    e.update(extra or {})
    run = env.run_ok(argv, tool=False, env=e)
    path = os.path.join(tmp, name)
    summary = json.load(open(path)) if name.endswith(".json") else open(path).read()
    return run, summary, tmp


def ns(name):
    """The fake CUPTI's duration of a kernel: 100 ns per character of its name (fake_cupti.c)."""
    return 100 * len(name)


MEMSET_NS = 500  # fake_cupti.c: a memset node takes 500 ns
MEMCPY_NS = 700  # and a memcpy node 700 ns


def rows(summary):
    return {(tuple(r["context"]), r["label"]): r for r in summary["contexts"]}


def decode_expected(replays, graph, nodes_known=True):
    """(context, label) -> (launches, gpu_kernels, gpu_ns) for `scn_context decode N`: the
    program's annotations, as scn_context.c makes them."""
    want = {}

    def add(ctx, label, launches, kernels, gpu):
        w = want.setdefault((tuple(ctx), label), [0, 0, 0])
        w[0] += launches
        w[1] += kernels
        w[2] += gpu

    add([], "add1", 1, 1, ns("add1"))
    add(["prefill", "attn.qkv"], "gemm_kernel", 1, 1, ns("gemm_kernel"))
    add(["prefill", "mlp.up"], "gemm_kernel", 2, 2, 2 * ns("gemm_kernel"))
    add(["serve/step"], graph, replays, 0, 0)
    base = ["serve/step", graph]
    node = (lambda *p: base + list(p)) if nodes_known else (lambda *p: base)
    add(node("kv.reset"), "[memset]", 0, replays, replays * MEMSET_NS)
    add(node("kv.copy"), "[memcpy]", 0, replays, replays * MEMCPY_NS)
    for layer in ("layers.0", "layers.1"):
        add(node(layer, "attn", "attn.qkv"), "gemm_kernel", 0, replays,
            replays * ns("gemm_kernel"))
        add(node(layer, "attn"), "softmax_kernel", 0, replays, replays * ns("softmax_kernel"))
        add(node(layer, "mlp", "mlp.up"), "gemm_kernel", 0, 2 * replays,
            2 * replays * ns("gemm_kernel"))
        add(node(layer, "mlp"), "gelu_kernel", 0, replays, replays * ns("gelu_kernel"))
    return {k: tuple(v) for k, v in want.items()}


def check_decode(summary, replays, nodes_known=True):
    graph = summary["graphs"][0]["label"]
    got = {k: (r["launches"], r["gpu_kernels"], r["gpu_ns"]) for k, r in rows(summary).items()}
    want = decode_expected(replays, graph, nodes_known)
    check(got == want, "contexts differ:\n" + "\n".join(
        f"  {k}: got {got.get(k)}, want {want.get(k)}" for k in sorted(set(got) | set(want))
        if got.get(k) != want.get(k)))
    tot = summary["totals"]
    check(sum(r["gpu_ns"] for r in summary["contexts"]) == tot["gpu_ns"], "gpu_ns sums differ")
    check(sum(r["gpu_kernels"] for r in summary["contexts"]) == tot["gpu_kernels"],
          "gpu_kernels sums differ")
    check(sum(r["launches"] for r in summary["contexts"]) == tot["launches"],
          "launches sums differ")
    check(sum(r["cpu_ns"] for r in summary["contexts"]) == tot["cpu_ns"], "cpu_ns sums differ")


@scenario
def test_context_decode_exact(env):
    """A two-layer decode step captured under layers.i/attn/attn.qkv, .../mlp/mlp.up, a memset
    node added under kv.reset and a memcpy node under kv.copy, replayed N times under serve/step: each (context, kernel label)
    gets exactly its kernels and GPU time, the same GEMM split by context, eager launches
    their live context, and the rows add up to the totals."""
    for replays in (1, 4):
        run, summary, _ = profiled(env, [env.prog("scn_context"), "decode", str(replays)])
        check(summary["context_note"] is None, f"context_note: {summary['context_note']}")
        check_decode(summary, replays)
        check(run.err == "", f"unexpected stderr: {run.err!r}")


@scenario
def test_context_decode_without_node_callbacks(env):
    """An older CUPTI without the graph node callbacks: replayed kernels count under the graph
    launch's path (live path + graph label), and context_note says why and for how many."""
    replays = 3
    run, summary, _ = profiled(env, [env.prog("scn_context"), "decode", str(replays)],
                               extra={"FAKECUPTI_NO_GRAPH_CALLBACKS": "1"})
    check_decode(summary, replays, nodes_known=False)
    note = summary["context_note"] or ""
    ops = 12 * replays  # 10 kernels, a memset and a memcpy node per replay
    check(note.startswith(f"{ops} graph operations") and "callbacks unavailable" in note,
          f"context_note: {note!r}")


@scenario
def test_context_without_gpu_time(env):
    """Without GPU time the rows still split the launches and CPU time by context."""
    _, summary, _ = profiled(env, [env.prog("scn_context"), "decode", "2"], gpu=False)
    got = {k: r["launches"] for k, r in rows(summary).items() if r["launches"]}
    graph = summary["labels"] and [l["label"] for l in summary["labels"] if "graph#" in l["label"]]
    check(got == {((), "add1"): 1, (("prefill", "attn.qkv"), "gemm_kernel"): 1,
                  (("prefill", "mlp.up"), "gemm_kernel"): 2, (("serve/step",), graph[0]): 2},
          f"launches by context: {got}")
    check(all(r["gpu_ns"] is None for r in summary["contexts"]), "GPU values without GPU time")


@scenario
def test_context_threads(env):
    """One stack per thread: each worker's launches under its own range."""
    run, summary, _ = profiled(env, [env.prog("scn_context"), "threads", "4", "25"], gpu=False)
    got = {k: r["launches"] for k, r in rows(summary).items()}
    want = {((f"worker.{t}",), "add1"): 25 for t in range(4)}
    want[(("main",), "add1")] = 1
    check(got == want, f"launches by thread context: {got}")


@scenario
def test_context_tool_already_attached(env):
    """Nsight (here the recording tool) already named in NVTX_INJECTION64_PATH: it keeps the
    program's ranges and nvtxcorr's, no context is recorded, one line says why, the rest of the
    summary is as without context."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-")
    run = env.run_ok([env.prog("scn_context"), "decode", "2"],
                     env={"NVTXCORR_PROFILE": os.path.join(tmp, "p.json"),
                          "NVTXCORR_CONTEXT": "nvtx"})
    lines = [l for l in run.err.splitlines() if l]
    check(len(lines) == 1 and "no program context" in lines[0] and env.recorder in lines[0],
          f"stderr: {run.err!r}")
    summary = json.load(open(os.path.join(tmp, "p.json")))
    check({tuple(r["context"]) for r in summary["contexts"]} == {()},
          f"contexts with another tool: {summary['contexts']}")
    check("no program context" in (summary["context_note"] or ""), summary["context_note"])
    check("serve/step" in run.labels("default") and "layers.0" in run.labels("default"),
          "the recording tool lost the program's ranges")
    check(len(run.labels()) == summary["totals"]["launches"] + summary["totals"]["capture_launches"],
          "nvtxcorr's own ranges still go to the attached tool")


@scenario
def test_context_hostile_nvtx(env):
    """Hostile NVTX use survives and is counted, never trusted: a 10 MB message (cut to 256
    bytes), bytes that are not UTF-8 (escaped), pops with nothing open, ranges 40 deep (32
    elements kept), NULL messages, and 70,000 distinct paths (past 65,536: ["[other]"])."""
    run, summary, _ = profiled(env, [env.prog("scn_context"), "hostile"], gpu=False)
    check(levels(run) == {"unbalanced-pop": "-1"}, f"unbalanced pops: {run.out[-500:]}")
    tot = summary["totals"]
    # Paths made before path.*: the long message, the bad one, d0..d31, [unnamed] twice.
    before = 1 + 1 + 32 + 2
    other = 70000 - (65536 - before)
    want = {"context_truncated": 40 - 32, "context_other": other, "context_unbalanced_pops": 3,
            "context_long_messages": 1, "context_invalid_utf8": 1}
    check({k: tot[k] for k in want} == want, f"totals: {tot}")
    r = rows(summary)
    check(r[(("x" * 256,), "add1")]["launches"] == 1, "the 10 MB message, cut to 256 bytes")
    check(r[(("bad\\xff\\xfe utf8 \\xc3(",), "add1")]["launches"] == 1, "invalid UTF-8 escaped")
    check(r[(tuple(f"d{i}" for i in range(32)), "add1")]["launches"] == 1, "32 elements kept")
    check(r[(("[unnamed]", "[unnamed]"), "add1")]["launches"] == 1, "NULL messages")
    check(r[(("[other]",), "add1")]["launches"] == other, "[other]")
    paths = [k for k in r if k[0] and k[0][0].startswith("path.")]
    check(len(paths) == 70000 - other, f"{len(paths)} path.* rows")
    check(sum(x["launches"] for x in summary["contexts"]) == tot["launches"], "launches sum")


@scenario
def test_context_hostile_registration(env):
    """Hostile NVTX registration is bounded (nvtx_tool.c): 100,000 distinct nvtxDomainCreateA
    give at most 4,096 domains, the rest one shared "[other]"; 10M nvtxDomainRegisterStringA
    of one string give one handle and no memory; 100,000 distinct strings at most 65,536
    handles. Each bound is said once, and a range under the registered string still counts.
    Counted, not timed: the 100,000 domains took 10.7 s in a list walk, inside the timeout."""
    run, summary, _ = profiled(env, [env.prog("scn_context"), "registry", "100000", "10000000",
                                     "100000"], gpu=False)
    got = dict(re.findall(r"^(domains|same_string|strings|rss_start_kb) (\d+)$", run.out, re.M))
    check(int(got["domains"]) <= 4096 + 2, f"distinct domain handles: {got['domains']}")
    check(got["same_string"] == "1", f"handles for one string: {got['same_string']}")
    check(int(got["strings"]) <= 65536 + 1, f"distinct string handles: {got['strings']}")
    grew = peak_rss(run) - int(got["rss_start_kb"])
    check(grew < 32 << 10, f"registration grew the peak resident set by {grew} kB")
    for what in ("NVTX domains", "NVTX registered strings"):
        said = re.findall(rf"^nvtxcorr: warn: more than \d+ distinct {what}: the rest share one, "
                          r'"\[other\]"', run.err, re.M)
        check(len(said) == 1, f"{what}: said {len(said)} times\n{run.err}")
    check(run.err.count("\n") == 2, f"unexpected stderr: {run.err!r}")
    r = rows(summary)
    check(r[(("registry.step",), "add1")]["launches"] == 1, f"rows: {list(r)}")


FOLDED_LINE = re.compile(r"^(.*\S)\s+(\d+)$")  # flamegraph.pl's own pattern for a line


def check_folded(text, want):
    """Each line is `frame;frame;...;frame <count>` as flamegraph.pl, inferno and speedscope
    read it: no empty frame, a positive count; the stacks and counts are `want`."""
    got = {}
    for line in text.splitlines():
        m = FOLDED_LINE.match(line)
        check(m, f"not a folded-stack line: {line!r}")
        frames = m[1].split(";")
        check(all(frames) and int(m[2]) > 0, f"empty frame or zero count: {line!r}")
        got[tuple(frames)] = got.get(tuple(frames), 0) + int(m[2])
    check(got == want, f"folded stacks:\n{got}\nwant\n{want}")


def folded_expected(replays_list, graph):
    want = {}
    for replays in replays_list:
        for (ctx, label), (_, _, gpu) in decode_expected(replays, graph).items():
            if gpu:
                want[ctx + (label,)] = want.get(ctx + (label,), 0) + gpu
    return want


@scenario
def test_context_folded_and_text(env):
    """NVTXCORR_PROFILE ending in .folded: GPU time by context as folded stacks, line by line;
    the text summary's tree and the CSV's context rows hold the same rows."""
    _, text, _ = profiled(env, [env.prog("scn_context"), "decode", "2"], name="p.folded")
    _, js, _ = profiled(env, [env.prog("scn_context"), "decode", "2"])
    check_folded(text, folded_expected([2], js["graphs"][0]["label"]))
    _, table, _ = profiled(env, [env.prog("scn_context"), "decode", "2"], name="p.txt")
    check("By program context" in table, table[-2000:])
    tree = table[table.index("By program context"):].splitlines()
    # layers.1 > mlp > mlp.up > gemm_kernel: 2 replays x 2 kernels
    at = [i for i, l in enumerate(tree) if l.strip().startswith("layers.1")]
    check(at and any(l.startswith("          gemm_kernel") and l.split()[-2:] == ["4", "0"]
                     for l in tree[at[0]:at[0] + 9]), "\n".join(tree))
    _, csv_text, _ = profiled(env, [env.prog("scn_context"), "decode", "2"], name="p.csv")
    ctx_rows = [l.split(",") for l in csv_text.splitlines() if l.startswith("context,")]
    check(len(ctx_rows) == len(js["contexts"]), f"{len(ctx_rows)} CSV rows vs "
          f"{len(js['contexts'])} JSON rows")


@scenario
def test_context_report_merges_three_processes(env):
    """`nvtxcorr report --by context` (JSON), `--folded`, `--depth`, `--focus` merge three
    processes' summaries exactly."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-report-")
    files, graph = [], None
    for replays in (1, 2, 3):
        _, s, d = profiled(env, [env.prog("scn_context"), "decode", str(replays)])
        graph = s["graphs"][0]["label"]
        files.append(os.path.join(d, "p.json"))
    report = lambda *a: env.run([env.launcher, "report", *a, *files], preload=False,
                                enabled=False, tool=False)
    r = report("--by", "context", "--json")
    check(r.rc == 0, r.err)
    got = {(tuple(x["context"]), x["label"]): (x["launches"], x["gpu_kernels"], x["gpu_ns"])
           for x in json.loads(r.out)["contexts"]}
    want = {}
    for replays in (1, 2, 3):
        for k, v in decode_expected(replays, graph).items():
            want[k] = tuple(a + b for a, b in zip(want.get(k, (0, 0, 0)), v))
    check(got == want, f"merged contexts differ: {set(got.items()) ^ set(want.items())}")
    r = report("--folded")
    check(r.rc == 0, r.err)
    check_folded(r.out, folded_expected([1, 2, 3], graph))
    r = report("--by", "context", "--json", "--depth", "3", "--focus", r"^layers\.1$")
    got = {(tuple(x["context"]), x["label"]): x["gpu_ns"] for x in json.loads(r.out)["contexts"]}
    check(got == {(("layers.1", "attn", "attn.qkv"), "gemm_kernel"): 6 * ns("gemm_kernel"),
                  (("layers.1", "attn"), "softmax_kernel"): 6 * ns("softmax_kernel"),
                  (("layers.1", "mlp", "mlp.up"), "gemm_kernel"): 12 * ns("gemm_kernel"),
                  (("layers.1", "mlp"), "gelu_kernel"): 6 * ns("gelu_kernel")},
          f"--depth 3 --focus: {got}")
    r = report("--by", "context")
    check(r.rc == 0 and "layers.0" in r.out and "kv.reset" in r.out, r.out + r.err)


VENV_PYTHON = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "build", "venv", "bin", "python")


@scenario
def test_context_python_nvtx_package(env):
    """The Python `nvtx` package from PyPI (pinned in scripts/test, in build/venv) under
    `nvtxcorr stat`: stat names the library in NVTX_INJECTION64_PATH, the package's NVTX
    instance takes it as its tool, and each launch gets its ranges (annotate, push_range,
    a decorator, two domains); NVTXCORR_CONTEXT_DOMAINS narrows them to one domain."""
    import subprocess
    if not os.path.exists(VENV_PYTHON) or subprocess.run(
            [VENV_PYTHON, "-c", "import nvtx"], capture_output=True).returncode != 0:
        raise Skip("no nvtx package in build/venv (scripts/test installs it)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios",
                          "ctx_python.py")
    for domains, forward_app in ((None, ("forward", "app.step")), ("torch", ("forward",))):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-py-")
        out = os.path.join(tmp, "p.json")
        extra = {"NVTXCORR_CONTEXT_DOMAINS": domains} if domains else {}
        run = env.run([env.launcher, "stat", "-o", out, VENV_PYTHON, script], preload=False,
                      enabled=False, tool=False, env=extra)
        check(run.rc == 0, f"rc {run.rc}: {run.err[-2000:]}")
        got = {tuple(r["context"]): r["launches"] for r in json.load(open(out))["contexts"]}
        want = {(): 1, ("forward", "attn.qkv"): 1, ("forward", "mlp.up"): 2, forward_app: 1,
                ("decorated",): 1}
        check(got == want, f"NVTXCORR_CONTEXT_DOMAINS={domains}: {got}, want {want}")
        check("By program context" in run.err and "mlp.up" in run.err,
              f"stat's table shows no context tree: {run.err[-2000:]}")


@scenario
def test_context_preload_with_nvtxcorr_context(env):
    """LD_PRELOAD users: NVTXCORR_CONTEXT=nvtx names the library in NVTX_INJECTION64_PATH as
    it loads, so the program's ranges are context without the launcher; without it profile mode
    is silent about context and every row's context is []."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-")
    for asked in (True, False):
        out = os.path.join(tmp, f"p{int(asked)}.json")
        extra = {"NVTXCORR_PROFILE": out, **({"NVTXCORR_CONTEXT": "nvtx"} if asked else {})}
        run = env.run_ok([env.prog("scn_context"), "decode", "1"], tool=False, env=extra)
        check(run.err == "", f"stderr: {run.err!r}")
        paths = {tuple(r["context"]) for r in json.load(open(out))["contexts"]}
        if asked:
            check(("prefill", "attn.qkv") in paths, f"NVTXCORR_CONTEXT=nvtx: {paths}")
        else:
            check(paths == {()}, f"without NVTXCORR_CONTEXT: {paths}")


@scenario
def test_context_report_json_remerges(env):
    """`report --json` of two summaries keeps their contexts merged, and a report of that file
    and a third summary equals the report of all three."""
    files = []
    for replays in (1, 2, 3):
        _, _, d = profiled(env, [env.prog("scn_context"), "decode", str(replays)])
        files.append(os.path.join(d, "p.json"))
    report = lambda *a: env.run([env.launcher, "report", *a], preload=False, enabled=False,
                                tool=False)
    r = report("--json", *files[:2])
    check(r.rc == 0, r.err)
    merged = os.path.join(tempfile.mkdtemp(prefix="nvtxcorr-ctx-"), "m.json")
    open(merged, "w").write(r.out)
    a = json.loads(report("--by", "context", "--json", merged, files[2]).out)["contexts"]
    b = json.loads(report("--by", "context", "--json", *files).out)["contexts"]
    strip = lambda rows: sorted((tuple(x["context"]), x["label"], x["launches"], x["gpu_ns"],
                                 x["gpu_kernels"]) for x in rows)
    check(strip(a) == strip(b) and a, f"re-merged {strip(a)[:3]} vs {strip(b)[:3]}")


@scenario
def test_context_graph_made_before_cupti(env):
    """A graph built (cuGraphAddKernelNode) before the first launch, so before CUPTI started:
    its nodes' capture context is unknown, their kernels count under the graph launch's path
    (serve/step, graph label), and context_note says why and for how many."""
    replays = 3
    _, summary, _ = profiled(env, [env.prog("scn_context"), "early", str(replays)])
    graph = summary["graphs"][0]["label"]
    got = {k: (r["launches"], r["gpu_kernels"], r["gpu_ns"]) for k, r in rows(summary).items()}
    want = {(("serve/step",), graph): (replays, 0, 0),
            (("serve/step", graph), "gemm_kernel"): (0, 2 * replays,
                                                     2 * replays * ns("gemm_kernel"))}
    check(got == want, f"contexts: {got}")
    note = summary["context_note"] or ""
    check(note.startswith(f"{2 * replays} graph operations") and "before CUPTI started" in note,
          f"context_note: {note!r}")


@scenario
def test_context_in_trace(env):
    """The trace's GPU operations carry their program context in args (both forms): each
    kernel event's "context" is its row's path, [] left out; the kernels by path match the
    summary's rows."""
    from harness import load_trace
    for name in ("t.json", "t.trace"):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-trace-")
        trace = os.path.join(tmp, name)
        _, summary, _ = profiled(env, [env.prog("scn_context"), "decode", "2"],
                                 extra={"NVTXCORR_TRACE": trace})
        # GPU operations: Kineto's kernel/gpu_memset/gpu_memcpy slices, chrome's "gpu" ones
        # (there a launch may be cat "kernel")
        cats = ("kernel", "gpu_memset", "gpu_memcpy") if name.endswith(".json") else ("gpu",)
        gpu = [e for e in load_trace(trace) if e.get("ph") == "X" and e.get("cat") in cats]
        got = {}
        for e in gpu:
            key = tuple(e["args"].get("context", []))
            got[key] = got.get(key, 0) + 1
        want = {}
        for r in summary["contexts"]:
            if r["gpu_kernels"]:
                want[tuple(r["context"])] = want.get(tuple(r["context"]), 0) + r["gpu_kernels"]
        check(got == want, f"{name}: kernels by context in the trace {got}, summary {want}")


@scenario
def test_context_injection_self_without_profile(env):
    """NVTX_INJECTION64_PATH naming nvtxcorr itself without profile mode: one line that says
    so (not that the tool "could not be loaded", which sends users looking for a broken path),
    pass-through, the program unharmed and its NVTX calls answered."""
    run = env.run_ok([env.prog("scn_context"), "levels"], tool=False,
                     env=tool_env(env, {"NVTXCORR_LOG": "warn"}))
    lines = [l for l in run.err.splitlines() if l]
    check(len(lines) == 1 and "names nvtxcorr itself" in lines[0]
          and "could not be loaded" not in lines[0], f"stderr: {run.err!r}")
    check(levels(run).get("push-a") == "0", f"the program's NVTX calls: {levels(run)}")


@scenario
def test_context_hatchet_tree(env):
    """`nvtxcorr report --hatchet --by context` loads with llnl-hatchet's
    GraphFrame.from_literal: each (context, kernel label) row of two processes' summaries is a
    leaf under its path with that GPU time, operations and launches; the graph's node holds the
    graph launches; the root's inclusive GPU time is the totals'; Hatchet's own inclusive times
    equal the file's."""
    from test_kineto import HTA_CHECK, analysis_python
    py = analysis_python("hatchet")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-ctx-hatchet-")
    files, want, total = [], {}, 0
    for replays in (1, 3):
        _, s, d = profiled(env, [env.prog("scn_context"), "decode", str(replays)])
        files.append(os.path.join(d, "p.json"))
        total += s["totals"]["gpu_ns"]
        graph = s["graphs"][0]["label"]
        for (ctx, label), v in decode_expected(replays, graph).items():
            want[(ctx, label)] = tuple(a + b for a, b in zip(want.get((ctx, label), (0, 0, 0)), v))
    r = env.run([env.launcher, "report", "--hatchet", "--by", "context", *files], preload=False,
                enabled=False, tool=False)
    check(r.rc == 0 and r.err == "", r.err)
    path = os.path.join(tmp, "tree.json")
    with open(path, "w") as f:
        f.write(r.out)
    h = subprocess.run([py, HTA_CHECK, "--hatchet", path], capture_output=True, text=True,
                       timeout=120)
    check(h.returncode == 0, f"Hatchet: {h.stderr[-2000:]}")
    nodes = json.loads(h.stdout)["nodes"]
    check(nodes[""]["time (inc)"] == total, f"root {nodes['']}, totals {total}")
    for (ctx, label), (launches, kernels, gpu) in want.items():
        n = nodes.get(" > ".join(ctx + (label,)))
        check(n is not None and (n["launches"], n["count"], n["time"]) == (launches, kernels, gpu),
              f"{ctx} {label}: {n}, want {(launches, kernels, gpu)}")
    g = nodes[f"serve/step > {graph}"]
    check(g["launches"] == 4 and g["time (inc)"] == sum(
        v[2] for (ctx, _), v in want.items() if ctx[:2] == ("serve/step", graph)), f"graph {g}")
    check(all(n["time (inc)"] == n["hatchet time (inc)"] for n in nodes.values()),
          f"inclusive times {nodes}")
