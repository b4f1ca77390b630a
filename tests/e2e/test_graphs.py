"""Graph scenarios: what the GPU replays is labelled, instantiation is tracked on every path,
launches made during capture are marked, graph: rules match every key."""
import re

from harness import check, check_balanced, peak_rss, scenario


def graph_run(env, extra=None, args=("graphs",)):
    return env.run_ok([env.prog("scn_driver"), *args], env=extra or {})


def graph_labels(run):
    return [t for t in run.labels() if t.startswith("graph") or "graph" in t]


@scenario
def test_graph_lifecycle(env):
    run = graph_run(env)
    labels = [t for t in run.labels() if "[capture]" not in t]
    # e1 = e2 = e3 = captured graph (3 kernels), e4 = built graph (5 kernels), later updated
    # to the captured graph's contents (keeps #4), e5 reuses e1's handle (#5).
    check(labels == ["graph#1 (3 kernels)", "graph#1 (3 kernels)", "graph#2 (3 kernels)",
                     "graph#3 (3 kernels)", "graph#4 (5 kernels)", "graph#4 (5 kernels)",
                     "graph#5 (5 kernels)", "graph#2 (3 kernels)", "graph#5 (5 kernels)"],
          f"labels {labels}")
    check("reused 1" in run.out, "the fake did not reuse the destroyed exec handle")
    check(run.count("cuGraphLaunch") + run.count("cuGraphLaunch_ptsz") == 9, f"{run.counts}")
    marks = run.marks()
    check(len(marks) == 7, f"one mark per instantiation and update: {marks}")
    check(marks[6].startswith("updated graph#5 nodes=5 kernels=5"), marks[6])
    check(re.match(r"instantiated graph#1 nodes=3 kernels=3 sig=[0-9a-f]{8} "
                   r"top=flash_fwd_kernel: graph#1 \(3 kernels\); top: flash_fwd_kernel x2 "
                   r"\(flash_fwd_kernel\), add1 x1 \(add1\)$", marks[0]), marks[0])
    check(re.match(r"updated graph#4 nodes=5 kernels=5 sig=[0-9a-f]{8} top=flash_fwd_kernel",
                   marks[4]), marks[4])
    sigs = re.findall(r"sig=([0-9a-f]{8})", " ".join(marks))
    check(sigs[0] == sigs[1] == sigs[2] and sigs[3] == sigs[5] and len(set(sigs)) == 3,
          f"signatures must follow contents: {sigs}")
    cats = run.categories()
    check("graph" in cats.values(), f"categories {cats}")
    cross = [p for p in run.pushes() if p["text"] == "graph#2 (3 kernels)"]
    check(len({p["tid"] for p in cross}) == 2, "cross-thread launch not on its own thread")


@scenario
def test_graph_names_stable(env):
    a, b = graph_run(env), graph_run(env)
    check(a.marks() == b.marks() and a.labels() == b.labels(),
          "graph names and signatures differ between two runs")


@scenario
def test_many_graphs(env):
    run = graph_run(env, args=("manygraphs", "100"))
    labels = run.labels()
    check(labels == [f"graph#{i + 1} ({i % 5 + 1} kernels)" for i in range(100)],
          f"labels {labels[:5]}...")
    check(len(run.marks()) == 100, "marks")


@scenario
def test_graph_instantiation_churn_memory(env):
    """Re-instantiating every step must not grow memory: 50x more cycles, same peak RSS."""
    rss = [peak_rss(graph_run(env, {"NVTXREC_MODE": "noop", "NVTXCORR_GRAPH_MARKS": "0"},
                              ("churn", n)))
           for n in ("2000", "100000")]
    check(rss[1] - rss[0] < 2048, f"peak RSS grew from {rss[0]} kB to {rss[1]} kB")


@scenario
def test_graph_marks_off(env):
    run = graph_run(env, {"NVTXCORR_GRAPH_MARKS": "0"})
    check(run.marks() == [], "marks emitted with NVTXCORR_GRAPH_MARKS=0")


@scenario
def test_graph_rules(env):
    base = graph_run(env)
    sig = re.search(r"graph#4 nodes=5 kernels=5 sig=([0-9a-f]{8})", " ".join(base.marks()))[1]
    rules = ";".join([
        "graph:ordinal=1 first_graph",
        f"graph:sig={sig} built.{{kernels}}",
        "graph:kernels=5 five.{top}",
        "graph:graph#3* third",
        "graph:nodes=1 never_one_node",
        "graph:top=flash* \"decode {graph} {top}\" color=#00ff00 category=decode",
    ])
    run = graph_run(env, {"NVTXCORR_LABELS_INLINE": rules})
    labels = [t for t in run.labels() if "[capture]" not in t]
    check(labels == ["first_graph", "first_graph", "decode graph#2 flash_fwd_kernel", "third",
                     "built.5", "five.flash_fwd_kernel", "built.5",
                     "decode graph#2 flash_fwd_kernel", "five.flash_fwd_kernel"],
          f"labels {labels}")
    decode = [p for p in run.pushes() if p["text"].startswith("decode")]
    cats = run.categories()
    check(all(p.get("color") == "0xFF00FF00" for p in decode), f"colour {decode[0]}")
    check(all(cats.get(p.get("category")) == "decode" for p in decode), f"category {cats}")
    skip = graph_run(env, {"NVTXCORR_LABELS_INLINE": "graph:* -"})
    check([t for t in skip.labels() if t.startswith("graph")] == [], "graph: skip")


def capture_run(env, mode, capture_mode):
    return graph_run(env, {"NVTXCORR_CAPTURE": mode} if mode else {}, ("capture", capture_mode))


@scenario
def test_capture_marking(env):
    for capture_mode in ("global", "thread", "relaxed"):
        mark = capture_run(env, None, capture_mode)
        check(mark.labels() == ["add1", "flash_fwd_kernel [capture]", "triton_poi_fused_add_0",
                                "flash_fwd_kernel [capture]", "add1", "graph#1 (2 kernels)",
                                "triton_poi_fused_add_0 [capture]", "triton_poi_fused_add_0",
                                "add1 [capture]", "triton_poi_fused_add_0 [capture]",
                                "flash_fwd_kernel [capture]", "add1"],
              f"{capture_mode}: {mark.labels()}")
        cats = mark.categories()
        captured = [p for p in mark.pushes() if p["text"].endswith("[capture]")]
        check(all(cats.get(p.get("category")) == "capture" for p in captured), f"{cats}")
        check(mark.count("captured") == 6 and mark.count("cuLaunchKernel") == 4
              and mark.count("cuLaunchKernel_ptsz") == 1,
              f"capture query changed what ran: {mark.counts}")
        skip = capture_run(env, "skip", capture_mode)
        check(skip.labels() == ["add1", "triton_poi_fused_add_0", "add1", "graph#1 (2 kernels)",
                                "triton_poi_fused_add_0", "add1"], f"skip: {skip.labels()}")
        plain = capture_run(env, "plain", capture_mode)
        check(plain.labels() == ["add1", "flash_fwd_kernel", "triton_poi_fused_add_0",
                                 "flash_fwd_kernel", "add1", "graph#1 (2 kernels)",
                                 "triton_poi_fused_add_0", "triton_poi_fused_add_0", "add1",
                                 "triton_poi_fused_add_0", "flash_fwd_kernel", "add1"],
              f"plain: {plain.labels()}")
    bad = capture_run(env, "sometimes", "global")
    check("nvtxcorr: error: NVTXCORR_CAPTURE=sometimes: unknown mode" in bad.err, bad.err)


@scenario
def test_capture_legacy_stream(env):
    args = [env.prog("scn_driver"), "capture-legacy"]
    bare = env.run(args, preload=False)
    run = env.run(args)
    check(run.rcs() == bare.rcs(), f"return codes changed: {run.rcs()} vs {bare.rcs()}")
    codes = dict(run.rcs())
    check(codes["legacy-launch"] != "0", f"the fake let a legacy launch through: {codes}")
    check_balanced(run)
    check(run.labels() == ["add1", "add1"], f"labels {run.labels()}")
    check(run.err == "", run.err)


@scenario
def test_graph_fresh_handles_memory(env):
    """Graph execs whose handle values are never reused (FAKECUDA_FRESH_EXECS): a destroyed
    exec's record and map entries are given back, so 100,000 instantiate/destroy cycles peak
    where 10,000 do (each kept record would cost about 200 bytes: 18 MB)."""
    extra = {"NVTXREC_MODE": "noop", "NVTXCORR_GRAPH_MARKS": "0", "FAKECUDA_FRESH_EXECS": "1"}
    rss = [peak_rss(graph_run(env, extra, ("churn", n))) for n in ("10000", "100000")]
    check(rss[1] - rss[0] < 2048, f"peak RSS grew from {rss[0]} kB to {rss[1]} kB")
