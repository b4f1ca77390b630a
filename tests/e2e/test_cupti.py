"""GPU time in profile mode (CUPTI): the two views (by launch label, by kernel label), graph
replays, the trace's GPU tracks and arrows, and every way CUPTI can be unavailable or fail.

Runs against the fake CUPTI (tests/fakes/fake_cupti.c), which turns the fake driver's launches
into activity records whose durations are known: 100 ns per character of a kernel's mangled
name, 500 ns per memset node. Expected values are computed here from the demo program's
kernels and label table (tests/demo), independently of nvtxcorr's code."""
import csv
import glob
import io
import json
import os
import re
import signal
import subprocess
import tempfile

from harness import ROOT, Skip, check, load_trace, scenario

# tests/demo/infer.c: its kernels, prefill sequence and decode graph.
GEMM = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
        "segment_k_off_kernel__5x_cublas")
FLASH = "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params"
SPLITKV = "_ZN5flash24flash_fwd_splitkv_kernelILi128EEEv16Flash_fwd_params"
NORM = "_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_S6_fii"
ROPE = "_ZN4vllm23rotary_embedding_kernelIN3c104HalfELb1EEEvPKlPT_S6_PKS5_iliiii"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
SILU = "triton_poi_fused_silu_mul_0"
FILL = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
        "T1_")
# demo.conf applied by hand.
KERNEL_LABEL = {GEMM: "matmul", FLASH: "attention.prefill", SPLITKV: "attention.decode",
                NORM: "norm", ROPE: "rope", ALLREDUCE: "allreduce", SILU: "triton.triton_poi_fused_silu_mul_0",
                FILL: "torch.vectorized_elementwise_kernel"}
MEMSET_NS = 500
REPLAYS = 8


def layer(attention):
    return [NORM, GEMM, ROPE, attention, GEMM, ALLREDUCE, NORM, GEMM, SILU, GEMM, ALLREDUCE]


PREFILL = [FILL] + layer(FLASH) * 2
DECODE = layer(SPLITKV) * 2  # plus one memset node


def ns(name):
    return 100 * len(name)


def expected_views():
    """(by launch label, by kernel label, per-kernel): {key: (executions, gpu_ns)}."""
    by_launch, by_kernel, kernels = {}, {}, {}

    def add(d, k, n, t):
        a, b = d.get(k, (0, 0))
        d[k] = (a + n, b + t)
    for k in PREFILL:
        add(by_launch, KERNEL_LABEL[k], 1, ns(k))
    replay_ns = sum(ns(k) for k in DECODE) + MEMSET_NS
    add(by_launch, "decode.step", REPLAYS * (len(DECODE) + 1), REPLAYS * replay_ns)
    for k in PREFILL + DECODE * REPLAYS:
        add(by_kernel, KERNEL_LABEL[k], 1, ns(k))
        add(kernels, k, 1, ns(k))
    add(by_kernel, "[memset]", REPLAYS, REPLAYS * MEMSET_NS)
    add(kernels, "[memset]", REPLAYS, REPLAYS * MEMSET_NS)
    return by_launch, by_kernel, kernels, replay_ns


def fake_cupti(env):
    path = os.path.join(env.fakes, "libfake_cupti.so")
    if not os.path.exists(path):
        raise Skip("built without CUPTI headers: no fake CUPTI")
    return path


def demo(env):
    return os.path.join(env.build, "tests", "demo", "demo_infer")


def gpu_run(env, argv, name="p.%p.json", extra=None, tool=False, cupti=True, timeout=120):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-cupti-")
    e = {"NVTXCORR_PROFILE": os.path.join(tmp, name), "NVTXCORR_GPU": "1",
         "NVTXCORR_LABELS": os.path.join(ROOT, "tests", "demo", "demo.conf")}
    if cupti:
        e["NVTXCORR_CUPTI_LIBRARY"] = fake_cupti(env)
    e.update(extra or {})
    run = env.run(argv, tool=tool, env=e, timeout=timeout)
    sums = {}
    for f in sorted(glob.glob(os.path.join(tmp, "p.*.json"))):
        d = json.load(open(f))
        sums[d["pid"]] = d
    return run, sums, tmp


def one(sums):
    check(len(sums) == 1, f"expected one summary, got {len(sums)}")
    return next(iter(sums.values()))


def warnings(run):
    return re.findall(r"^nvtxcorr: warn: GPU time unavailable: (.+)$", run.err, re.M)


def view(entries, key="label"):
    return {e[key]: (e["gpu_kernels"], e["gpu_ns"]) for e in entries if e["gpu_kernels"]}


def check_views(d, dropped_every=0):
    by_launch, by_kernel, kernels, replay_ns = expected_views()
    check(d["gpu_time"] is True and d["gpu_time_note"] is None, f"{d['gpu_time_note']}")
    t = d["totals"]
    if not dropped_every:
        check(view(d["labels"]) == by_launch, f"by launch label: {view(d['labels'])}")
        check(view(d["kernel_labels"]) == by_kernel,
              f"by kernel label: {view(d['kernel_labels'])}")
        got = {e["name"]: (e["gpu_kernels"], e["gpu_ns"]) for e in d["kernels"] if e["gpu_kernels"]}
        check(got == kernels, f"kernels: {got}")
        check(t["gpu_dropped_records"] == 0, f"{t}")
        g = [x for x in d["graphs"] if x["label"] == "decode.step"]
        check(len(g) == 1 and g[0]["replays"] == REPLAYS and
              g[0]["kernels_per_replay"] == len(DECODE) + 1 and
              g[0]["gpu_replay_mean_ns"] == replay_ns == g[0]["gpu_replay_p50_ns"] ==
              g[0]["gpu_replay_p99_ns"] == g[0]["gpu_replay_min_ns"], f"graphs {d['graphs']}")
        kinds = {e["label"]: e["kind"] for e in d["kernel_labels"]}
        check(kinds["[memset]"] == "memset" and kinds["matmul"] == "kernel", f"{kinds}")
        for e in d["labels"] + d["kernel_labels"]:
            check(e["gpu_min_ns"] <= e["gpu_mean_ns"] <= e["gpu_max_ns"], f"{e}")
    # Whatever was recorded: every kernel's time is in both views, once.
    total = sum(e["gpu_ns"] for e in d["kernels"])
    check(total == t["gpu_ns"] == sum(e["gpu_ns"] for e in d["labels"]) ==
          sum(e["gpu_ns"] for e in d["kernel_labels"]) and total > 0,
          f"sums: kernels {total}, totals {t['gpu_ns']}, launch view "
          f"{sum(e['gpu_ns'] for e in d['labels'])}, kernel view "
          f"{sum(e['gpu_ns'] for e in d['kernel_labels'])}")
    check(t["gpu_kernels"] == sum(e["gpu_kernels"] for e in d["kernels"]), f"{t}")
    check(t["gpu_uncorrelated_kernels"] == 0, f"{t}")


@scenario
def test_cupti_views_exact(env):
    """The demo under the fake CUPTI, in buffers of 1, 7 and unlimited records, and with
    kernels delivered before their correlation (in earlier buffers, or earlier in one): both
    views, the kernels, the decode graph's replays, exactly; CPU counts as without CUPTI."""
    _, base, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_GPU": "0"}, cupti=False)
    base = one(base)
    check(base["gpu_time"] is False and base["gpu_time_note"] == "NVTXCORR_GPU=0", f"{base}")
    for records, first in (("1", ""), ("7", ""), ("", ""), ("1", "1"), ("", "1")):
        run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_BUFFER_RECORDS": records,
                                                         "FAKECUPTI_KERNELS_FIRST": first})
        check(run.rc == 0 and run.err == "", f"rc {run.rc}: {run.err}")
        d = one(sums)
        check_views(d)
        check({e["label"]: e["launches"] for e in d["labels"]} ==
              {e["label"]: e["launches"] for e in base["labels"]}, "CPU counts changed")


@scenario
def test_cupti_starts_at_first_launch(env):
    """CUPTI is loaded at the first launch, not when nvtxcorr initialises (there, inside
    cudart's start-up or a constructor, enabling CUPTI could deadlock): after module loads and
    look-ups it is not loaded yet, the first launch loads it and is measured itself; a process
    that never launches never loads it and says why in gpu_time_note."""
    run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "cupti-late"])
    check(run.rc == 0 and run.err == "", run.err)
    check(run.out == "cupti before the first launch: not loaded\ncupti after it: loaded\n",
          run.out)
    d = one(sums)
    check(d["gpu_time"] is True and view(d["labels"]) == {"add1": (1, ns("_Z4add1Pii"))},
          f"{d['gpu_time']} {view(d['labels'])}")
    run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "nolaunch"])
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)
    check(d["gpu_time"] is False and "CUPTI was not started" in d["gpu_time_note"],
          f"{d['gpu_time']} {d.get('gpu_time_note')}")


@scenario
def test_cupti_skip_rules(env):
    """Kernels whose rule says "-" (norm) are in kernels but in no label: the totals say how
    much each view leaves out, and the sums still meet."""
    rules = "*rms_norm* -"  # tried before demo.conf's rules
    run, sums, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_LABELS_INLINE": rules})
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)
    by_launch, by_kernel, _, _ = expected_views()
    norm_prefill, norm_all = by_launch.pop("norm"), by_kernel.pop("norm")
    t = d["totals"]
    check(view(d["labels"]) == by_launch and view(d["kernel_labels"]) == by_kernel,
          f"{view(d['labels'])} {view(d['kernel_labels'])}")
    check(t["gpu_unlabelled_launch_ns"] == norm_prefill[1] and
          t["gpu_unlabelled_ns"] == norm_all[1], f"{t}")
    k = [e for e in d["kernels"] if e["function"] == "rms_norm_kernel"]
    check(len(k) == 1 and k[0]["label"] is None and k[0]["gpu_ns"] == norm_all[1], f"{k}")
    check(sum(e["gpu_ns"] for e in d["labels"]) + t["gpu_unlabelled_launch_ns"] ==
          sum(e["gpu_ns"] for e in d["kernel_labels"]) + t["gpu_unlabelled_ns"] == t["gpu_ns"],
          "views do not meet")


@scenario
def test_cupti_launch_time_alone(env):
    """CPU time in launch calls is the call alone, without nvtxcorr's own work: CUPTI's start at
    the first launch (made 300 ms slow) is before the clock starts, and nvtxcorr's processing
    of a buffer CUPTI completes inside a launch call (made 300 ms slow) is taken out of that
    launch and reported apart, in totals.cpu_own_ns and a line of the table."""
    slow = 300 * 1000 * 1000
    run, sums, tmp = gpu_run(env, [demo(env)], extra={
        "FAKECUPTI_START_DELAY_MS": "300", "FAKECUPTI_SLOW_BUFFER_MS": "300",
        "FAKECUPTI_BUFFER_RECORDS": "3"})  # the first buffer completes inside the 2nd launch
    check(run.rc == 0 and run.err == "", f"rc {run.rc}: {run.err}")
    d = one(sums)
    check_views(d)
    worst = max(e["cpu_max_ns"] for e in d["labels"])
    check(worst < slow // 3, f"a launch took {worst} ns: nvtxcorr's own work counted in it")
    check(d["totals"]["cpu_ns"] < slow // 3 and d["totals"]["cpu_own_ns"] >= slow * 9 // 10,
          f"{d['totals']}")
    launcher = os.path.join(env.build, "bin", "nvtxcorr")
    text = subprocess.run([launcher, "report", os.path.join(tmp, f"p.{d['pid']}.json")],
                          capture_output=True, text=True).stdout
    check(re.search(r"^nvtxcorr's own work inside the launch calls \(CUPTI callbacks\), not in "
                    r"the times above: 3\d\d ms$", text, re.M), text)


@scenario
def test_cupti_skipped_graph(env):
    """A graph whose rule says "-" has no entry in graphs (its time is in
    gpu_unlabelled_launch_ns), as a skipped kernel has none in kernel_labels; a graph labelled
    "-" (quoted) has its entry."""
    _, _, _, replay_ns = expected_views()
    run, sums, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_LABELS_INLINE": "graph:* -"})
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)
    check(d["graphs"] == [], f"graphs of a skipped graph: {d['graphs']}")
    check(d["totals"]["gpu_unlabelled_launch_ns"] == REPLAYS * replay_ns, f"{d['totals']}")
    check(d["totals"]["unlabelled_launches"] == REPLAYS, f"{d['totals']}")
    run, sums, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_LABELS_INLINE": 'graph:* "-"'})
    d = one(sums)
    g = d["graphs"]
    check(len(g) == 1 and g[0]["label"] == "-" and g[0]["replays"] == REPLAYS, f"{g}")
    check(d["totals"]["gpu_unlabelled_launch_ns"] == 0, f"{d['totals']}")


@scenario
def test_cupti_push_fails(env):
    """With external correlation (NVTXCORR_GPU_CORRELATION=external), CUPTI refuses the
    external correlation push, for every launch or from the 11th on: one warning, and
    gpu_time_note says for how many launches, instead of a silent summary whose kernels are all
    uncorrelated. The by-kernel view stays complete."""
    launches = 23 + REPLAYS
    launcher = os.path.join(env.build, "bin", "nvtxcorr")
    for after, failed in (("0", launches), ("10", launches - 10)):
        run, sums, tmp = gpu_run(env, [demo(env)], extra={"FAKECUPTI_PUSH_FAIL_AFTER": after,
                                                          "NVTXCORR_GPU_CORRELATION": "external"})
        w = re.findall(r"^nvtxcorr: warn: GPU time partial: .*$", run.err, re.M)
        check(run.rc == 0 and len(w) == 1 and run.err.count("\n") == 1 and
              "cuptiActivityPushExternalCorrelationId failed (CUPTI_ERROR_UNKNOWN)" in w[0],
              f"after {after}: one warning expected: {run.err}")
        d = one(sums)
        note = d["gpu_time_note"] or ""
        check(d["gpu_time"] is True and
              f"cuptiActivityPushExternalCorrelationId failed for {failed} launches" in note,
              f"after {after}: {d['gpu_time']} {note!r}")
        t = d["totals"]
        check(t["gpu_uncorrelated_kernels"] > 0 and t["gpu_kernels"] == 207, f"{t}")
        if after == "0":
            check(t["gpu_uncorrelated_ns"] == t["gpu_ns"] and
                  all(not e["gpu_kernels"] for e in d["labels"]), f"{t}")
        _, by_kernel, _, _ = expected_views()
        check(view(d["kernel_labels"]) == by_kernel, f"{view(d['kernel_labels'])}")
        text = subprocess.run([launcher, "report", os.path.join(tmp, f"p.{d['pid']}.json")],
                              capture_output=True, text=True).stdout
        check(f"failed for {failed} launches" in text, text)


@scenario
def test_cupti_csv_and_text(env):
    by_launch, by_kernel, _, replay_ns = expected_views()
    run, _, tmp = gpu_run(env, [demo(env)], name="p.csv")
    check(run.rc == 0 and run.err == "", f"rc {run.rc}: {run.err}")
    rows = list(csv.DictReader(open(os.path.join(tmp, "p.csv"))))
    got = {r["label"]: (int(r["gpu_kernels"]), int(r["gpu_ns"])) for r in rows
           if r["section"] == "label" and r["gpu_kernels"] != "0"}
    check(got == by_launch, f"csv labels {got}")
    got = {r["label"]: (int(r["gpu_kernels"]), int(r["gpu_ns"])) for r in rows
           if r["section"] == "kernel_label"}
    check(got == by_kernel, f"csv kernel labels {got}")
    graph = [r for r in rows if r["section"] == "graph"]
    check(len(graph) == 1 and graph[0]["launches"] == str(REPLAYS) and
          graph[0]["gpu_mean_ns"] == str(replay_ns), f"csv graph {graph}")
    run, _, tmp = gpu_run(env, [demo(env)], name="p.txt")
    text = open(os.path.join(tmp, "p.txt")).read()
    check(all(len(line) <= 100 for line in text.splitlines()), text)
    check(re.search(r"^GPU time: .* in 207 kernels; 0 records dropped", text, re.M), text)
    kernel_view = text.split("by kernel label")[1]
    check(re.search(r"^attention\.decode +attention +16 ", kernel_view, re.M) and
          re.search(r"^\[memset\] +- +8 ", kernel_view, re.M), text)
    check(re.search(r"^decode\.step +8 +23 ", text, re.M), text)


@scenario
def test_cupti_real_library(env):
    """The toolkit's libcupti cannot attach to the fake driver: one warning with the reason,
    gpu_time false, the program and the CPU summary as without CUPTI, no hang."""
    real = sorted(glob.glob("/usr/local/cuda/lib64/libcupti.so*") +
                  glob.glob("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so*"))
    if not real:
        raise Skip("no CUDA toolkit libcupti")
    bare = env.run([demo(env)], preload=False)
    _, base, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_GPU": "0"}, cupti=False)
    for extra in ({"CUDA_HOME": "/usr/local/cuda"}, {"NVTXCORR_CUPTI_LIBRARY": real[0]}):
        run, sums, _ = gpu_run(env, [demo(env)], extra=extra, cupti=False)
        check(run.rc == 0 and run.out == bare.out, f"rc {run.rc}: {run.out}")
        w = warnings(run)
        check(len(w) == 1 and run.err.count("\n") == 1, f"one warning expected: {run.err}")
        d = one(sums)
        check(d["gpu_time"] is False and d["gpu_time_note"] == w[0], f"{d['gpu_time_note']}")
        check(all(e["gpu_ns"] is None for e in d["labels"] + d["kernels"]), "gpu_ns not null")
        check(d["kernel_labels"] == [] and d["graphs"] == [], "GPU sections not empty")
        strip = lambda x: [(e["label"], e["launches"], e["graph_launches"]) for e in x["labels"]]
        check(sorted(strip(d)) == sorted(strip(one(base))), "CPU summary changed")


@scenario
def test_cupti_unavailable(env):
    """No library, a second subscriber (nsys), a flush that fails: the run goes on, says why
    once; an NVTX tool attached, NVTXCORR_GPU=0 and trace-only mode: CUPTI not even tried."""
    run, sums, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_CUPTI_LIBRARY": "/nonexistent/libcupti.so"})
    w = warnings(run)
    check(run.rc == 0 and len(w) == 1 and "/nonexistent/libcupti.so" in w[0], run.err)
    check(one(sums)["gpu_time"] is False and "/nonexistent" in one(sums)["gpu_time_note"], "")
    run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_REFUSE": "1"})
    w = warnings(run)
    check(run.rc == 0 and len(w) == 1 and "another CUPTI client" in w[0] and
          "MULTIPLE_SUBSCRIBERS" in w[0], run.err)
    d = one(sums)
    check(d["gpu_time"] is False and d["totals"]["launches"] == 23 + REPLAYS, f"{d['totals']}")
    run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_FAIL_FLUSH": "1",
                                                     "FAKECUPTI_BUFFER_RECORDS": "10"})
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)  # buffers completed before exit still count; the rest is not invented
    check(d["gpu_time"] is True and 0 < d["totals"]["gpu_kernels"] < 207, f"{d['totals']}")
    for extra, tool, note in (({}, True, "an NVTX tool is attached"),
                              ({"NVTXCORR_GPU": "0"}, False, "NVTXCORR_GPU=0")):
        run, sums, _ = gpu_run(env, [demo(env)], extra=extra, tool=tool)
        check(run.rc == 0 and warnings(run) == [], run.err)
        check(one(sums)["gpu_time_note"].startswith(note), f"{one(sums)['gpu_time_note']}")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-cupti-")
    trace = os.path.join(tmp, "t.json")
    run = env.run([demo(env)], tool=False, env={"NVTXCORR_TRACE": trace, "NVTXCORR_GPU": "1",
                                                "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)})
    events = load_trace(trace)
    check(run.rc == 0 and run.err == "" and
          not any(e.get("cat") in ("gpu", "kernel", "gpu_memset") for e in events),
          f"trace-only mode used CUPTI: {run.err}")


@scenario
def test_cupti_dropped_records(env):
    run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_DROP_EVERY": "5"})
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)
    check_views(d, dropped_every=5)
    kernels = len(PREFILL) + len(DECODE) * REPLAYS
    check(d["totals"]["gpu_dropped_records"] == kernels // 5 and
          d["totals"]["gpu_kernels"] == kernels - kernels // 5 + REPLAYS, f"{d['totals']}")


@scenario
def test_cupti_async_buffers_at_exit(env):
    """Buffers given back on CUPTI's own thread, late, also at exit: nothing is lost."""
    run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_ASYNC_MS": "150",
                                                     "FAKECUPTI_BUFFER_RECORDS": "20"})
    check(run.rc == 0 and run.err == "", run.err)
    check_views(one(sums))


@scenario
def test_cupti_foreign_buffers(env):
    """A buffer that another CUPTI client lent reaches nvtxcorr's completion callback (it
    registered first): it is read but never reused or freed (the fake frees it and says so if
    it is ever lent back; freeing it too would be a double free), and the views stay exact."""
    run, sums, _ = gpu_run(env, [demo(env)], extra={"FAKECUPTI_FOREIGN": "1",
                                                     "FAKECUPTI_BUFFER_RECORDS": "20"})
    check(run.rc == 0 and run.err == "", f"rc {run.rc}: {run.err}")
    check_views(one(sums))


@scenario
def test_cupti_fork(env):
    """The parent keeps its GPU time; a forked child that launches reports none and says so
    once, itself."""
    run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "fork"])
    check(run.rc == 0, f"rc {run.rc}: {run.err}")
    child = int(re.search(r"child (\d+) status 0", run.out)[1])
    check(len(sums) == 2 and child in sums, f"{list(sums)}")
    parent = next(d for pid, d in sums.items() if pid != child)
    check(parent["gpu_time"] is True and view(parent["labels"]) ==
          {"add1": (3, 3 * ns("_Z4add1Pii")), "triton.triton_poi_fused_add_0":
           (1, ns("triton_poi_fused_add_0"))}, f"parent {view(parent['labels'])}")
    c = sums[child]
    check(c["gpu_time"] is False and "forked child" in c["gpu_time_note"], f"{c['gpu_time_note']}")
    w = warnings(run)
    check(len(w) == 1 and "forked child" in w[0], run.err)


@scenario
def test_cupti_sigterm(env):
    """Killed by SIGTERM (default action): the summary still has every kernel, flushed from
    the handler, also when buffers come back on another thread."""
    for extra in ({}, {"FAKECUPTI_ASYNC_MS": "100"}):
        run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "signal", "default"], extra=extra)
        check(run.rc == -signal.SIGTERM, f"rc {run.rc}: {run.err}")
        d = one(sums)
        check(d["gpu_time"] is True and view(d["labels"]) == {"add1": (5, 5 * ns("_Z4add1Pii"))},
              f"{extra}: {view(d['labels'])} {d['gpu_time_note']}")


@scenario
def test_cupti_second_signal(env):
    """A second SIGTERM, on another thread, while the first one's handler waits for CUPTI's
    late buffers: it waits for the summary instead of ending the process before it is
    written; the process still dies of SIGTERM."""
    run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "signal-twice"],
                           extra={"FAKECUPTI_ASYNC_MS": "300"})
    check(run.rc == -signal.SIGTERM, f"rc {run.rc}: {run.err}")
    d = one(sums)
    check(d["gpu_time"] is True and view(d["labels"]) == {"add1": (5, 5 * ns("_Z4add1Pii"))},
          f"{view(d['labels'])} {d['gpu_time_note']}")


@scenario
def test_cupti_trace(env):
    """The chrome form: GPU operations on one track per device and stream, named by kernel
    label; an arrow from each launch to every kernel it caused, graph nodes included. (The
    kineto form: tests/e2e/test_kineto.py.)"""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-cupti-")
    trace = os.path.join(tmp, "trace.json")
    run, sums, _ = gpu_run(env, [demo(env)], extra={"NVTXCORR_TRACE": trace,
                                                    "NVTXCORR_TRACE_FORMAT": "chrome"})
    check(run.rc == 0 and run.err == "", run.err)
    events = load_trace(trace)
    gpu = [e for e in events if e["ph"] == "X" and e.get("cat") == "gpu"]
    cpu = [e for e in events if e["ph"] == "X" and e.get("cat") != "gpu" and
           not e["args"].get("capture")]
    _, by_kernel, _, _ = expected_views()
    names = {}
    for e in gpu:
        names[e["name"]] = names.get(e["name"], 0) + 1
    check(names == {k: v[0] for k, v in by_kernel.items()}, f"GPU event names {names}")
    tracks = {e["tid"] for e in gpu}
    check(len(tracks) == 1 and not tracks & {e["tid"] for e in cpu}, f"tracks {tracks}")
    named = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    check(len(named) == 1 and named[0]["tid"] in tracks and
          named[0]["args"]["name"].startswith("GPU 0 stream "), f"{named}")
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = [e for e in events if e["ph"] == "f"]
    check(len(starts) == len(cpu) == 23 + REPLAYS, f"{len(starts)} flow starts, {len(cpu)} launches")
    check(len(ends) == len(gpu) and all(f["id"] in starts and f["bp"] == "e" for f in ends),
          "every GPU operation is the end of an arrow from a launch")
    graph_flows = [f for f in ends if starts[f["id"]]["tid"] in {e["tid"] for e in cpu}]
    check(len(graph_flows) == len(ends), "arrows start on launch threads")
    for e in gpu:
        check(e["dur"] * 1000 == round(e["dur"] * 1000) and e["dur"] > 0, f"{e}")
    d = one(sums)
    check(abs(sum(e["dur"] for e in gpu) * 1000 - d["totals"]["gpu_ns"]) < 1, "durations")
    # each arrow starts inside its launch's slice and ends in work that began after it
    enclosing = {}
    for sid, st in starts.items():
        x = [e for e in cpu if e["tid"] == st["tid"] and e["ts"] <= st["ts"] <= e["ts"] + e["dur"]]
        check(len(x) == 1, f"flow start outside a launch: {st}")
        enclosing[sid] = x[0]
    for f in ends:
        check(f["ts"] >= enclosing[f["id"]]["ts"] - 0.001, f"arrow backwards in time: {f}")


@scenario
def test_cupti_memory_flat(env):
    """10 million launches with CUPTI on (fake): same peak RSS as 100,000."""
    rss = []
    for n in ("100000", "10000000"):
        run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "loop", n], timeout=600)
        check(run.rc == 0 and run.err == "", f"rc {run.rc}: {run.err}")
        rss.append(int(re.search(r"peak_rss_kb (\d+)", run.out)[1]))
        d = one(sums)
        check(view(d["labels"]) == {"add1": (int(n), int(n) * ns("_Z4add1Pii"))},
              f"{view(d['labels'])}")
    check(rss[1] - rss[0] < 2048, f"peak RSS grew from {rss[0]} kB to {rss[1]} kB")


@scenario
def test_cupti_report_merge(env):
    """nvtxcorr report merges the GPU fields exactly: two demo runs and one without CUPTI."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-cupti-")
    for extra in ({}, {"FAKECUPTI_BUFFER_RECORDS": "3"}, {"NVTXCORR_GPU": "0"}):
        gpu_run(env, [demo(env)], extra=dict(extra, NVTXCORR_PROFILE=os.path.join(tmp, "p.%p.json")))
    files = sorted(glob.glob(os.path.join(tmp, "*.json")))
    check(len(files) == 3, f"{files}")
    launcher = env.launcher
    r = subprocess.run([launcher, "report", "--json", *files], capture_output=True, text=True)
    check(r.returncode == 0 and r.stderr == "", r.stderr)
    m = json.loads(r.stdout)
    by_launch, by_kernel, kernels, replay_ns = expected_views()
    twice = lambda d: {k: (2 * n, 2 * t) for k, (n, t) in d.items()}
    check(m["gpu_time"] is True and m["gpu_time_note"].startswith("1 of 3 processes without GPU "
                                                                  "time: NVTXCORR_GPU=0"),
          f"{m['gpu_time_note']}")
    check(view(m["labels"]) == twice(by_launch), f"labels {view(m['labels'])}")
    check(view(m["kernel_labels"]) == twice(by_kernel), f"kernel labels {view(m['kernel_labels'])}")
    got = {e["name"]: (e["gpu_kernels"], e["gpu_ns"]) for e in m["kernels"] if e["gpu_kernels"]}
    check(got == twice(kernels), f"kernels {got}")
    g = m["graphs"]
    check(len(g) == 1 and g[0]["replays"] == 2 * REPLAYS and
          g[0]["gpu_replay_p50_ns"] == g[0]["gpu_replay_p99_ns"] == replay_ns, f"{g}")
    check(sum(e["launches"] for e in m["labels"]) == 3 * (23 + REPLAYS), "CPU counts")
    text = subprocess.run([launcher, "report", *files], capture_output=True, text=True).stdout
    check(all(len(line) <= 100 for line in text.splitlines()) and
          re.search(r"^GPU time: .* in 414 kernels", text, re.M) and
          re.search(r"^decode\.step +16 +23 ", text, re.M), text)
    rows = list(csv.DictReader(io.StringIO(subprocess.run(
        [launcher, "report", "--csv", *files], capture_output=True, text=True).stdout)))
    got = {r["label"]: (int(r["gpu_kernels"]), int(r["gpu_ns"])) for r in rows
           if r["section"] == "kernel_label"}
    check(got == twice(by_kernel), f"csv {got}")


@scenario
def test_cupti_doctor(env):
    """nvtxcorr doctor names the libcupti profile mode would load, in the same order."""
    launcher = env.launcher
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}

    def doctor(extra):
        p = subprocess.run([launcher, "doctor"], capture_output=True, text=True,
                           env=dict(base, **extra))
        check(p.returncode == 0, p.stderr)
        return re.search(r"^CUPTI +(.*)$", p.stdout, re.M)[1]
    fake = fake_cupti(env)
    check(doctor({"NVTXCORR_CUPTI_LIBRARY": fake}) == f"ok: {fake} loads", "explicit library")
    check(doctor({"NVTXCORR_CUPTI_LIBRARY": "/nonexistent/libcupti.so"}).startswith(
        "fail: /nonexistent/libcupti.so does not load"), "missing library")
    check(doctor({"NVTXCORR_GPU": "0"}).startswith("off: "), "NVTXCORR_GPU=0")
    with tempfile.TemporaryDirectory() as home:  # CUDA_HOME first, lib64 before extras
        os.makedirs(os.path.join(home, "lib64"))
        os.symlink(fake, os.path.join(home, "lib64", "libcupti.so"))
        check(doctor({"CUDA_HOME": home}) ==
              f"ok: {home}/lib64/libcupti.so loads", "CUDA_HOME")
        run, sums, _ = gpu_run(env, [demo(env)], extra={"CUDA_HOME": home}, cupti=False)
        check(run.err == "" and one(sums)["gpu_time"] is True, f"CUDA_HOME search: {run.err}")


def check_sums(d):
    t = d["totals"]
    total = sum(e["gpu_ns"] for e in d["kernels"])
    check(d["gpu_time"] is True and total == t["gpu_ns"] > 0 and
          sum(e["gpu_ns"] for e in d["labels"]) + t["gpu_unlabelled_launch_ns"] +
          t["gpu_uncorrelated_ns"] == total ==
          sum(e["gpu_ns"] for e in d["kernel_labels"]) + t["gpu_unlabelled_ns"],
          f"views do not meet: {t}")


@scenario
def test_cupti_threads_and_runtime(env):
    """Eight threads launching at once (each its own external ids), and the shared runtime
    (a launch passes two hooks, one external id): every kernel correlated to its launch."""
    run, sums, _ = gpu_run(env, [env.prog("scn_profile"), "threads"])
    check(run.rc == 0 and run.err == "", run.err)
    d = one(sums)
    flash = "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params"
    check(view(d["labels"]) == {"add1": (360, 360 * ns("_Z4add1Pii")),
                                "attention.prefill": (28, 28 * ns(flash))},
          f"{view(d['labels'])}")
    check_sums(d)
    for mode, launches in (("launch", 6), ("graph", 3)):
        run, sums, _ = gpu_run(env, [env.prog("app_shared"), mode])
        check(run.rc == 0 and run.err == "", f"{mode}: {run.err}")
        d = one(sums)
        check_sums(d)
        check(d["totals"]["gpu_uncorrelated_kernels"] == 0 and
              sum(e["launches"] for e in d["labels"]) == launches, f"{mode}: {d['totals']}")
        if mode == "graph":
            g = d["graphs"]
            check(len(g) == 1 and g[0]["replays"] == 3 and g[0]["kernels_per_replay"] == 5,
                  f"runtime graph {g}")
