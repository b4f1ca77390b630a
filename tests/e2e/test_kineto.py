"""The trace's Kineto form read by the tools users analyse with: Holistic Trace Analysis
(holistictraceanalysis from PyPI, in build/venv-analysis, which scripts/test makes) loads the
demo's trace and a 4-rank run, and its analyses give exactly nvtxcorr's own summary on the
fake CUPTI; a SIGKILLed trace loads once "]}" is appended. The drift test checks, without
HTA, every field HTA reads on every kind of event (the facts in src/profile/output/trace_kineto.c and
trace_meta.c)."""
import json
import os
import re
import subprocess
import tempfile

from harness import ROOT, Skip, check, scenario, trace_events, trace_killed_at
from test_cupti import demo, fake_cupti

ANALYSIS_PYTHON = os.path.join(ROOT, "build", "venv-analysis", "bin", "python")
HTA_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hta_check.py")
MEMSET = "Memset (graph node)"  # the summary's "[memset]" operations, as Kineto names them


def analysis_python(module):
    py = os.environ.get("NVTXCORR_TEST_ANALYSIS_PYTHON", ANALYSIS_PYTHON)
    if not os.path.exists(py) or subprocess.run([py, "-c", f"import {module}"],
                                                capture_output=True).returncode:
        raise Skip(f"{module} is not installed in {os.path.dirname(os.path.dirname(py))} "
                   "(scripts/test installs it from PyPI: none reachable?)")
    return py


def hta(*args):
    r = subprocess.run([analysis_python("hta"), HTA_CHECK, *args], capture_output=True,
                       text=True, timeout=240)
    check(r.returncode == 0, f"HTA failed on {args}: {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def gpu_env(env, tmp, trace, summary, extra=None):
    return {"NVTXCORR_TRACE": trace, "NVTXCORR_PROFILE": summary, "NVTXCORR_GPU": "1",
            "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env),
            "NVTXCORR_LABELS": os.path.join(ROOT, "tests", "demo", "demo.conf"), **(extra or {})}


def demo_runs(env, tmp, ranks):
    """The demo with GPU time, once per rank (RANK/WORLD_SIZE set when ranks > 1): traces in
    tmp/traces, summaries in tmp, named by rank."""
    os.mkdir(os.path.join(tmp, "traces"))
    for rank in range(ranks):
        extra = {"RANK": str(rank), "WORLD_SIZE": str(ranks)} if ranks > 1 else {}
        e = gpu_env(env, tmp, os.path.join(tmp, "traces", "trace.%q{RANK}.json"),
                    os.path.join(tmp, "p.%q{RANK}.json"), extra)
        run = env.run([demo(env)], tool=False, env=e)
        check(run.rc == 0 and run.err == "", f"rank {rank}: {run.err}")
    names = sorted(os.listdir(os.path.join(tmp, "traces")))
    check(len(names) == ranks, f"{names}")
    sums = {}
    for rank in range(ranks):
        name = f"p.{rank}.json" if ranks > 1 else "p..json"
        sums[str(rank)] = json.load(open(os.path.join(tmp, name)))
    return sums


def check_against_summary(found, sums):
    """HTA's numbers equal the summary's, exactly: GPU time and count per kernel, per launch
    label (gpu_user_annotation), launches per label and CPU time of labels never captured
    (user_annotation), and the GPU's busy time (temporal breakdown: compute + non-compute)."""
    check(found["ranks"] == sorted(int(r) for r in sums), f"ranks {found['ranks']}")
    for rank, d in sums.items():
        kernels = {MEMSET if k["name"] == "[memset]" else k["name"]: k for k in d["kernels"]
                   if k["gpu_kernels"]}
        check(found["kernels"][rank] == {n: k["gpu_ns"] for n, k in kernels.items()},
              f"rank {rank}: kernel GPU time {found['kernels'][rank]}")
        check(found["counts"][rank] == {n: k["gpu_kernels"] for n, k in kernels.items()},
              f"rank {rank}: kernel counts {found['counts'][rank]}")
        labels = {lab["label"]: lab for lab in d["labels"]}
        check(found["gpu_annotations"][rank] ==
              {n: [lab["gpu_kernels"], lab["gpu_ns"]] for n, lab in labels.items()
               if lab["gpu_kernels"]}, f"rank {rank}: GPU time per label "
              f"{found['gpu_annotations'][rank]}")
        # The trace has captured launches too (args "capture"), which the summary counts
        # apart and does not time.
        cpu = found["cpu_annotations"][rank]
        check({n: c for n, (c, _) in cpu.items()} ==
              {n: lab["launches"] + lab["capture_launches"] for n, lab in labels.items()},
              f"rank {rank}: launches per label {cpu}")
        check(all(cpu[n][1] == lab["cpu_ns"] for n, lab in labels.items()
                  if not lab["capture_launches"]), f"rank {rank}: CPU time per label {cpu}")
        t = found["temporal"][rank]
        check(t["compute_ns"] + t["non_compute_ns"] == d["totals"]["gpu_ns"] and
              t["idle_ns"] + t["compute_ns"] + t["non_compute_ns"] == t["kernel_ns"],
              f"rank {rank}: temporal breakdown {t}, GPU time {d['totals']['gpu_ns']}")


@scenario
def test_kineto_hta_demo(env):
    analysis_python("hta")
    with tempfile.TemporaryDirectory() as tmp:
        sums = demo_runs(env, tmp, 1)
        check_against_summary(hta(os.path.join(tmp, "traces")), sums)


@scenario
def test_kineto_hta_four_ranks(env):
    """Four processes with RANK/WORLD_SIZE, as torchrun starts them: HTA finds ranks 0..3 (its
    rank regex on distributedInfo) and each rank's numbers are that rank's summary's."""
    analysis_python("hta")
    with tempfile.TemporaryDirectory() as tmp:
        sums = demo_runs(env, tmp, 4)
        for rank in range(4):
            d = json.load(open(os.path.join(tmp, "traces", f"trace.{rank}.json")))
            check(d["distributedInfo"] == {"rank": rank, "local_rank": rank, "world_size": 4},
                  f"{d['distributedInfo']}")
        check_against_summary(hta(os.path.join(tmp, "traces")), sums)


@scenario
def test_kineto_sigkill_loads_in_hta(env):
    """A trace cut by SIGKILL, with the documented suffix "]}" appended, loads in HTA with
    every launch the file holds."""
    analysis_python("hta")
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "traces"))
        path = os.path.join(tmp, "traces", "trace.json")
        text = trace_killed_at(env, path, 900000,
                               {"NVTXCORR_GPU": "0", "RANK": "2", "WORLD_SIZE": "4",
                                "NVTXCORR_TRACE_MAX_MB": "1"})  # 500 MB/s: kept small
        check("\n]" not in text, "a killed process cannot have closed the trace")
        calls = [ev for ev in trace_events(text, cut=True) if ev.get("cat") == "cuda_driver"]
        with open(path, "a") as f:
            f.write("]}")
        found = hta("--cpu", os.path.join(tmp, "traces"))
        check(found["ranks"] == [2], f"ranks {found['ranks']}")
        got = found["cpu_annotations"]["2"]
        check(len(calls) > 1000 and sum(n for n, _ in got.values()) == len(calls),
              f"{len(calls)} launches in the file, HTA: {got}")


# ---- the drift test: what HTA reads, on every kind of event ----------------------------------
NUM = (int, float)
COMMON = {"ph": str, "name": str, "pid": int, "tid": int}


def fields(e, want, what):
    for k, t in want.items():
        check(k in e and isinstance(e[k], t), f"{what}: {k!r} missing or not {t}: {e}")


def check_kineto_event(e):
    """Returns the kind of the event after checking the fields HTA relies on for it."""
    fields(e, COMMON, "every event")
    ph, cat = e["ph"], e.get("cat")
    if ph == "M":
        fields(e["args"], {"name": str}, "metadata")
        return "M " + e["name"]
    fields(e, {"ts": NUM, "cat": str}, "timed event")
    args = e.get("args", {})
    check(e.get("args", None) != {}, f"empty args are left out: {e}")
    if ph == "X":
        fields(e, {"dur": NUM}, "complete event")
    if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
        # breakdown_analysis.py: stream != -1 is a GPU operation; trace.py joins on correlation
        fields(args, {"device": int, "stream": int, "correlation": int, "External id": int}, cat)
        check(args["correlation"] == args["External id"] and 0 < args["correlation"] < 1 << 63,
              f"{e}")
        # Kineto's names (libkineto MetadataFieldCatalog.h): HTA's complete parser reads grid
        # and block; graph ids only on a graph replay's operations (copies and sets are here
        # only as graph nodes)
        if cat == "kernel":
            for k in ("grid", "block"):
                check(isinstance(args.get(k), list) and len(args[k]) == 3 and
                      all(isinstance(v, int) and v > 0 for v in args[k]), f"{k}: {e}")
        else:
            check("grid" not in args and "block" not in args, f"{e}")
            check(e["name"].startswith("Memcpy" if cat == "gpu_memcpy" else "Memset"), f"{e}")
        check(("graph id" in args) == ("graph node id" in args) and
              ("graph id" in args or cat == "kernel"), f"graph ids: {e}")
        if "graph id" in args:
            fields(args, {"graph id": int, "graph node id": int}, cat)
            check(args["graph id"] > 0, f"{e}")
    elif cat == "gpu_user_annotation":
        check("stream" not in args, f"an annotation is not a GPU operation: {e}")
        fields(args, {"External id": int}, cat)
    elif cat == "user_annotation":
        check(set(args) <= {"category"}, f"{e}")
    elif cat in ("cuda_runtime", "cuda_driver"):
        check("stream" not in args and set(args) <= {"grid", "capture", "correlation",
                                                      "External id"}, f"{e}")
        check(e["name"].lstrip("_").startswith("cuda" if cat == "cuda_runtime" else "cu"), f"{e}")
        if "correlation" in args:
            fields(args, {"correlation": int, "External id": int}, cat)
    elif cat == "ac2g":
        check(ph in ("s", "f") and isinstance(e["id"], int) and e["name"] == "ac2g", f"{e}")
        if ph == "f":
            check(e["bp"] == "e", f"{e}")
    elif cat == "graph":
        check(ph == "i", f"{e}")
    else:
        raise AssertionError(f"an event of no known kind: {e}")
    return f"{ph} {cat}" + (" of a graph" if cat == "kernel" and "graph id" in args else "")


def check_kineto_file(path):
    with open(path) as f:
        text = f.read()
    # trace_file.py: the rank is the first match of this regex, line by line
    first = text.split("\n", 1)[0]
    check(re.search(r'"rank":\s+(\d+)', first), f"HTA's rank regex misses the head: {first}")
    d = json.loads(text)
    keys = list(d)
    check(keys.index("distributedInfo") < keys.index("traceEvents"),
          "distributedInfo before traceEvents (HTA's ijson parser stops there)")
    fields(d, {"schemaVersion": int, "baseTimeNanoseconds": int, "displayTimeUnit": str,
               "distributedInfo": dict, "traceEvents": list}, "top level")
    fields(d["distributedInfo"], {"rank": int, "local_rank": int, "world_size": int},
           "distributedInfo")
    return d, {check_kineto_event(e) for e in d["traceEvents"]}


@scenario
def test_kineto_fields_hta_reads(env):
    """Every kind of event the Kineto form has, each with the fields HTA reads: the demo with
    GPU time (kernels, memset nodes, annotations, arrows, driver launches), the runtime
    program (cuda_runtime) and the graph program (instants); deviceProperties from the fake
    driver."""
    with tempfile.TemporaryDirectory() as tmp:
        kinds = set()
        trace = os.path.join(tmp, "demo.json")
        run = env.run([demo(env)], tool=False,
                      env=gpu_env(env, tmp, trace, os.path.join(tmp, "p.json")))
        check(run.rc == 0 and run.err == "", run.err)
        d, k = check_kineto_file(trace)
        kinds |= k
        props = d.get("deviceProperties")
        check(props and props[0]["name"] == "nvtxcorr fake device" and
              props[0]["computeMajor"] == 9 and props[0]["numSms"] == 132 and
              props[0]["totalGlobalMem"] == 80 << 30, f"deviceProperties {props}")
        for prog, args in (("app_shared", ["launch"]), ("scn_driver", ["graphs"])):
            trace = os.path.join(tmp, prog + ".json")
            env.run([env.prog(prog), *args], env={"NVTXCORR_TRACE": trace})
            kinds |= check_kineto_file(trace)[1]
        want = {"M process_name", "M thread_name", "X user_annotation", "X cuda_driver",
                "X cuda_runtime", "X kernel", "X kernel of a graph", "X gpu_memset",
                "X gpu_user_annotation", "s ac2g", "f ac2g", "i graph"}
        check(kinds == want, f"kinds of events: {sorted(kinds)}, expected {sorted(want)}")
    with tempfile.TemporaryDirectory() as tmp:  # the launchers' variables
        for extra, info in (({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8",
                              "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, (3, 1, 8)),
                            ({"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "2"},
                             (5, 2, 6)),
                            ({"PMI_RANK": "1", "PMI_SIZE": "2"}, (1, 1, 2)),
                            ({"RANK": "x"}, (0, 0, 1)), ({}, (0, 0, 1))):
            trace = os.path.join(tmp, "t.json")
            env.run([env.prog("scn_driver"), "direct"], env={"NVTXCORR_TRACE": trace, **extra})
            d = json.load(open(trace))
            got = tuple(d["distributedInfo"][k] for k in ("rank", "local_rank", "world_size"))
            check(got == info, f"{extra}: distributedInfo {d['distributedInfo']}")
            os.unlink(trace)


# ---- grid, block and graph ids on the GPU events ----------------------------------------------
DEMO_BLOCK = [128, 1, 1]  # tests/demo/infer.c: launch() gives every kernel 128 threads


def demo_gpu_ops(env, tmp):
    """The demo's Kineto trace with GPU time, in tmp/traces: its events, and its GPU
    operations by correlation."""
    os.mkdir(os.path.join(tmp, "traces"))
    trace = os.path.join(tmp, "traces", "demo.json")
    run = env.run([demo(env)], tool=False,
                  env=gpu_env(env, tmp, trace, os.path.join(tmp, "p.json")))
    check(run.rc == 0 and run.err == "", run.err)
    events = json.load(open(trace))["traceEvents"]
    ops = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            ops.setdefault(e["args"]["correlation"], []).append(e)
    return events, ops


@scenario
def test_kineto_grid_block_graph_ids(env):
    """Each GPU operation's grid, block, graph id and graph node id are its launch's, exactly
    (the fake CUPTI reports what the fake driver ran): a kernel launched alone has the grid of
    its cuda_driver call (joined on correlation, the grid the hook saw) and the demo's block,
    and no graph ids; in each of the 8 replays of the decode graph the operations carry one
    graph id and the node ids 1..23, the kernels in node order the grids of the captured
    launches in capture order, the memset node (the last added) no grid or block."""
    with tempfile.TemporaryDirectory() as tmp:
        events, ops = demo_gpu_ops(env, tmp)
        calls = [e for e in events if e.get("cat") == "cuda_driver"]
        alone = [c for c in calls if c["name"] == "cuLaunchKernel" and "capture" not in c["args"]]
        captured = [c for c in calls if c["name"] == "cuLaunchKernel" and "capture" in c["args"]]
        replays = [c for c in calls if c["name"] == "cuGraphLaunch"]
        check((len(alone), len(captured), len(replays)) == (23, 22, 8),
              f"{len(alone)} launches, {len(captured)} captured, {len(replays)} replays")
        for c in alone:
            got = ops.get(c["args"]["correlation"], [])
            check(len(got) == 1 and got[0]["args"]["grid"] == c["args"]["grid"] and
                  got[0]["args"]["block"] == DEMO_BLOCK and "graph id" not in got[0]["args"],
                  f"launch {c}: {got}")
        check(len({tuple(c["args"]["grid"]) for c in alone}) == 3, "grids 64, 512 and 1")
        graph_ids = set()
        for c in replays:
            got = sorted(ops.get(c["args"]["correlation"], []),
                         key=lambda e: e["args"]["graph node id"])
            # The exec's nodes, each once, in capture order: node ids are process-wide, as
            # CUPTI's (the fake numbers nodes as they are made, so an exec's are consecutive).
            ids = [e["args"]["graph node id"] for e in got]
            check(len(ids) == 23 and ids == list(range(ids[0], ids[0] + 23)),
                  f"replay {c}: node ids {ids}")
            graph_ids |= {e["args"]["graph id"] for e in got}
            kernels = [e for e in got if e["cat"] == "kernel"]
            check([e["args"]["grid"] for e in kernels] == [k["args"]["grid"] for k in captured]
                  and all(e["args"]["block"] == DEMO_BLOCK for e in kernels),
                  f"replay {c}: grids {[e['args']['grid'] for e in kernels]}")
            check(got[-1]["cat"] == "gpu_memset" and "grid" not in got[-1]["args"] and
                  "block" not in got[-1]["args"], f"the memset node: {got[-1]}")
        check(len(graph_ids) == 1 and min(graph_ids) > 0, f"graph ids {graph_ids}")


@scenario
def test_kineto_hta_reads_grid_block(env):
    """HTA's complete parser (ParserConfig.ARGS_COMPLETE) reads each GPU operation's grid and
    block as the trace has them."""
    analysis_python("hta")
    with tempfile.TemporaryDirectory() as tmp:
        _, ops = demo_gpu_ops(env, tmp)
        want = sorted([e["name"], e["args"]["correlation"], e["args"].get("grid", []),
                       e["args"].get("block", [])] for es in ops.values() for e in es)
        got = hta("--args", os.path.join(tmp, "traces"))
        check(len(want) == 23 + 8 * 23 and got == {"0": want},
              f"HTA read {got.get('0', got)[:5]}..., the trace has {want[:5]}...")
        kernels = [w for w in got["0"] if not w[0].startswith("Memset")]
        check(len(kernels) == 23 + 8 * 22 and
              all(len(w[2]) == 3 and w[3] == DEMO_BLOCK for w in kernels),
              f"HTA's grid and block of the kernels: {kernels[:5]}...")


# ---- nvtxcorr report --hatchet, --by rank ----------------------------------------------------
def report(env, *args):
    return subprocess.run([os.path.join(env.build, "bin", "nvtxcorr"), "report", *args],
                          capture_output=True, text=True)


@scenario
def test_report_hatchet_tree(env):
    """The label tree loads with llnl-hatchet's GraphFrame.from_literal: the root's GPU time is
    the summaries' total, each label's node has its GPU time, operations and launches, and
    the inclusive times are what Hatchet computes from the exclusive ones."""
    py = analysis_python("hatchet")
    with tempfile.TemporaryDirectory() as tmp:
        sums = demo_runs(env, tmp, 2)
        files = [os.path.join(tmp, f"p.{r}.json") for r in range(2)]
        for given in (files[:1], files):
            r = report(env, "--hatchet", *given)
            check(r.returncode == 0 and r.stderr == "", r.stderr)
            path = os.path.join(tmp, "tree.json")
            with open(path, "w") as f:
                f.write(r.stdout)
            h = subprocess.run([py, HTA_CHECK, "--hatchet", path], capture_output=True,
                               text=True, timeout=120)
            check(h.returncode == 0, f"Hatchet: {h.stderr[-2000:]}")
            nodes = json.loads(h.stdout)["nodes"]
            parts = [sums[str(i)] for i in range(len(given))]
            check(nodes[""]["time (inc)"] == sum(d["totals"]["gpu_ns"] for d in parts) and
                  nodes[""]["count (inc)"] == sum(d["totals"]["gpu_kernels"] for d in parts),
                  f"root {nodes['']}")
            for label in {lab["label"] for d in parts for lab in d["labels"]}:
                ls = [lab for d in parts for lab in d["labels"] if lab["label"] == label]
                n = nodes[label]
                check(n["time"] == sum(lab["gpu_ns"] for lab in ls) and
                      n["count"] == sum(lab["gpu_kernels"] for lab in ls) and
                      n["launches"] == sum(lab["launches"] + lab["capture_launches"]
                                           for lab in ls), f"{label}: {n}")
            check(nodes["attention"]["time"] == 0 and nodes["attention"]["time (inc)"] ==
                  nodes["attention.prefill"]["time"] + nodes["attention.decode"]["time"],
                  "attention.prefill and attention.decode under attention")
            check(all(n["time (inc)"] == n["hatchet time (inc)"] for n in nodes.values()),
                  f"inclusive times {nodes}")
            os.unlink(path)


@scenario
def test_report_by_rank(env):
    """--by rank: ranks from the summaries' own `rank` (and the traces' distributedInfo,
    matched to summaries by pid, which give the world size), CPU time per label per rank with
    the slowest marked, and a warning for a missing rank. The summaries alone give the same
    table."""
    with tempfile.TemporaryDirectory() as tmp:
        for rank in (0, 1, 3):
            e = {"NVTXCORR_TRACE": os.path.join(tmp, "t.%q{RANK}.json"),
                 "NVTXCORR_PROFILE": os.path.join(tmp, "p.%q{RANK}.json"),
                 "RANK": str(rank), "WORLD_SIZE": "4"}
            env.run_ok([env.prog("scn_driver"), "threads", "50"], env=e)
        sums = sorted(os.path.join(tmp, n) for n in os.listdir(tmp) if n.startswith("p."))
        traces = sorted(os.path.join(tmp, n) for n in os.listdir(tmp) if n.startswith("t."))
        r = report(env, "--by", "rank", *sums, *traces)
        check(r.returncode == 0, r.stderr)
        check(r.stderr == "nvtxcorr: warn: ranks missing: 2 (world size 4)\n", r.stderr)
        lines = r.stdout.splitlines()
        check(lines[0].startswith("CPU time per label and rank") and
              lines[1].split()[1:] == ["rank", "0", "rank", "1", "rank", "3"], r.stdout)
        rows = {ln.split()[0]: re.findall(r"\S+ \S+?[* ](?= |$)", ln[ln.index(" "):].strip() + " ")
                for ln in lines[2:]}
        check("add1" in rows and "flash_fwd_kernel" in rows, r.stdout)
        cpu = {}
        for path in sums:
            d = json.load(open(path))
            for lab in d["labels"]:
                cpu.setdefault(lab["label"], []).append(lab["cpu_ns"])
        for label, cells in rows.items():  # the slowest rank's cell is the one marked
            check(len(cells) == 3, f"{label}: {cells}")
            marked = [i for i, c in enumerate(cells) if c.endswith("*")]
            vals = cpu[label]  # ranks tied for the slowest are all marked
            want = [i for i, v in enumerate(vals) if v == max(vals)] if len(set(vals)) > 1 else []
            check(marked == want, f"{label}: marked {marked}, CPU times {vals}: {r.stdout}")
        alone = report(env, "--by", "rank", *sums)
        check(alone.returncode == 0 and alone.stdout == r.stdout and
              alone.stderr == "nvtxcorr: warn: ranks missing: 2 (world size 4)\n",
              f"summaries alone: {alone.returncode} {alone.stdout}{alone.stderr}")


@scenario
def test_kineto_windows_are_hta_iterations(env):
    """Windows (NVTXCORR_WINDOW=cudaProfilerApi, three around known launches) are ProfilerStep#N
    spans in the trace, which HTA takes as iterations: each window's launch calls and their
    GPU operations are in its iteration, as many as its summary counts, and nothing of what
    ran between windows is in the trace."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-kineto-windows-")
    os.mkdir(os.path.join(tmp, "traces"))
    e = {"NVTXCORR_PROFILE": os.path.join(tmp, "w.%w.json"), "NVTXCORR_WINDOW": "cudaProfilerApi",
         "NVTXCORR_TRACE": os.path.join(tmp, "traces", "t.json"), "NVTXCORR_GPU": "1",
         "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)}
    run = env.run_ok([env.prog("scn_windows"), "api", "direct"], tool=False, env=e)
    check(run.err == "", run.err)
    sums = [json.load(open(os.path.join(tmp, f"w.{i}.json"))) for i in (1, 2, 3)]
    found = hta("--iterations", os.path.join(tmp, "traces"))["0"]
    check(found.pop("steps") == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"],
          f"steps {found}")
    for i, d in enumerate(sums, 1):
        it = found.get(str(i), {})
        launches = d["totals"]["launches"]
        check(it.get("cpu", {}).get("cuLaunchKernel") == launches and
              sum(it.get("gpu", {}).values()) == launches,
              f"iteration {i}: {it}, window summary: {launches} launches")
    outside = found.get("-1", {})
    check("cuLaunchKernel" not in outside.get("cpu", {}) and not outside.get("gpu"),
          f"between windows: {outside}")
