"""Profile mode (NVTXCORR_PROFILE, NVTXCORR_TRACE) and the `nvtxcorr stat` / `nvtxcorr report`
commands: counts per label and per kernel equal what the programs launched, on every entry
path, with rules, capture and errors; process lifecycles (threads, fork, exit from a thread,
signals); output paths that must not be written; the trace's shape. No timing is asserted."""
import csv
import io
import json
import os
import re
import signal
import socket
import subprocess
import tempfile

from harness import (check, load_trace, peak_rss, scenario, trace_events,
                     trace_killed_at, trace_launches)

HOST = socket.gethostname()


def profile_run(env, argv, path_name="p.%p.json", extra=None, tool=False, tmp=None, rc=0):
    """Runs argv in profile mode, checked as by env.run_ok (exit status rc; rc=None: unchecked,
    for runs whose calls fail); returns (run, {pid: summary}, tmpdir)."""
    tmp = tmp or tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    e = {"NVTXCORR_PROFILE": os.path.join(tmp, path_name)}
    e.update(extra or {})
    if rc is None:
        run = env.run(argv, tool=tool, env=e)
    else:
        run = env.run_ok(argv, rc=rc, tool=tool, env=e)
    return run, summaries(tmp), tmp


def summaries(tmp):
    out = {}
    for name in sorted(os.listdir(tmp)):
        if name.endswith(".json") and not name.startswith("trace"):
            with open(os.path.join(tmp, name)) as f:
                d = json.load(f)
            out[d["pid"]] = d
    return out


def only(sums):
    check(len(sums) == 1, f"expected one summary, got {len(sums)}")
    return next(iter(sums.values()))


def by_label(d):
    return {e["label"]: e for e in d["labels"]}


def launches(d, key="label"):
    return {e[key]: e["launches"] for e in (d["labels"] if key == "label" else d["kernels"])}


def check_schema(d):
    for k in ("pid", "host", "command", "start_ns", "end_ns", "gpu_time", "labels", "kernels"):
        check(k in d, f"summary lacks {k}")
    check(d["gpu_time"] is False and d["host"] == HOST, f"{d['gpu_time']} {d['host']}")
    check(d["start_ns"] <= d["end_ns"], "start after end")
    counters = ("launches", "graph_launches", "errors", "capture_launches", "cpu_ns",
                "cpu_min_ns", "cpu_max_ns", "cpu_p50_ns", "cpu_p99_ns", "cpu_histogram")
    for e in d["labels"] + d["kernels"]:
        for k in counters:
            check(k in e, f"entry lacks {k}: {e}")
        check(e["gpu_ns"] is None, "gpu_ns must be null")
        check(sum(c for _, c in e["cpu_histogram"]) == e["launches"],
              f"histogram does not add up to launches: {e}")
        if e["launches"]:
            check(e["cpu_min_ns"] <= e["cpu_p50_ns"] <= e["cpu_p99_ns"] <= e["cpu_max_ns"],
                  f"order of min/p50/p99/max: {e}")
    for e in d["labels"]:
        check("label" in e and "category" in e, f"label entry: {e}")
    for e in d["kernels"]:
        check(all(k in e for k in ("name", "function", "label")), f"kernel entry: {e}")


@scenario
def test_profile_driver_paths(env):
    """Every driver path, no NVTX tool: counts per label and per raw kernel name."""
    for mode, add1 in (("direct", 2), ("dlsym", 2), ("procaddr", 3)):
        run, sums, _ = profile_run(env, [env.prog("scn_driver"), mode])
        check(run.err == "", f"{mode}: {run.err}")
        d = only(sums)
        check_schema(d)
        check(launches(d) == {"add1": add1, "flash_fwd_kernel": 2, "triton_poi_fused_add_0": 2},
              f"{mode}: {launches(d)}")
        k = {e["name"]: e for e in d["kernels"]}
        check(k["_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params"]["function"] ==
              "flash_fwd_kernel" and k["_Z4add1Pii"]["launches"] == add1, f"{mode}: {k}")
        check(d["command"] == [env.prog("scn_driver"), mode], f"command {d['command']}")
        check(d["totals"]["launches"] == 4 + add1, f"{d['totals']}")
        check(run.events == [], "NVTX used without a tool")


@scenario
def test_profile_with_tool(env):
    """With a tool attached, ranges still go to it, and the summary is collected."""
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "direct"], tool=True)
    check(sorted(run.labels()) == sorted(["add1", "flash_fwd_kernel", "triton_poi_fused_add_0"] * 2),
          f"ranges {run.labels()}")
    check(launches(only(sums)) == {"add1": 2, "flash_fwd_kernel": 2, "triton_poi_fused_add_0": 2},
          f"{launches(only(sums))}")


@scenario
def test_profile_runtime(env):
    """The shared runtime: <<<>>>, cudaLaunchKernel, ExC, cooperative; one count per launch
    although each passes two hooks."""
    for prog in ("app_shared", "app_ptds"):
        run, sums, _ = profile_run(env, [env.prog(prog), "launch"])
        d = only(sums)
        check_schema(d)
        check(launches(d) == {"add1": 4, "flash_fwd_kernel": 1, "triton_poi_fused_add_0": 1},
              f"{prog}: {launches(d)}")
        check(launches(d, "name") == {"_Z4add1Pii": 4, "triton_poi_fused_add_0": 1,
                                        "_ZN5flash16flash_fwd_kernelILi128EEEvNS_16Flash_fwd_paramsE":
                                        1}, f"{prog}: {launches(d, 'name')}")


GRAPH_LAUNCHES = {"graph#1 (3 kernels)": 2, "graph#2 (3 kernels)": 2, "graph#3 (3 kernels)": 1,
                  "graph#4 (5 kernels)": 2, "graph#5 (5 kernels)": 2}


@scenario
def test_profile_graphs_and_capture(env):
    """Graph launches count under their graph label (also in graph_launches); launches made
    during capture count only in capture_launches, under their own label, in every mode."""
    for mode in ("mark", "skip", "plain"):
        run, sums, _ = profile_run(env, [env.prog("scn_driver"), "graphs"],
                                   extra={"NVTXCORR_CAPTURE": mode})
        d = only(sums)
        check_schema(d)
        labels = by_label(d)
        got = {k: v["launches"] for k, v in labels.items() if v["launches"]}
        check(got == GRAPH_LAUNCHES, f"{mode}: {got}")
        check(all(labels[k]["graph_launches"] == v for k, v in GRAPH_LAUNCHES.items()), "graph")
        cap = {k: v["capture_launches"] for k, v in labels.items() if v["capture_launches"]}
        check(cap == {"flash_fwd_kernel": 2, "add1": 1}, f"{mode}: capture {cap}")
        check(not any("[capture]" in k for k in labels), f"{mode}: capture suffix in labels")
        check(d["totals"]["graph_launches"] == 9 and d["totals"]["capture_launches"] == 3,
              f"{d['totals']}")
    run, sums, _ = profile_run(env, [env.prog("app_shared"), "graph"])
    labels = by_label(only(sums))
    check(labels["graph#1 (5 kernels)"]["launches"] == 3 and
          labels["add1"]["capture_launches"] == 4 and labels["add1"]["launches"] == 0,
          f"runtime graph: {labels}")


@scenario
def test_profile_graph_churn(env):
    """issue 16 case 5: 100,000 graphs instantiated, launched once and destroyed (each default
    label is new: graph#N), then three kernels. Graph labels take at most 8,191 sites of their
    own, the rest count under [other graphs], a graph label: every count stays exact, the
    kernels after the churn keep their names, and the summary says how many launches are
    beyond the bound. (Before: the 32K-site table filled, 67,233 launches went to [other],
    graph_launches said 32,767 and the kernels were unnamed.)"""
    n = 100000
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "churn", str(n), "kernels"],
                               tool=False, tmp=tmp,
                               extra={"NVTXCORR_PROFILE": os.path.join(tmp, "p.json")})
    d = only(sums)
    check_schema(d)
    t = d["totals"]
    check(t["launches"] == n + 3 and t["graph_launches"] == n, f"totals {t}")
    labels = by_label(d)
    own = [k for k in labels if k.startswith("graph#")]
    check(len(own) == 8191, f"{len(own)} graph labels of their own")
    other = labels["[other graphs]"]
    check(other["launches"] == other["graph_launches"] == n - 8191, f"[other graphs] {other}")
    check(t["other_graph_launches"] == n - 8191 and t["other_launches"] == 0, f"totals {t}")
    check("[other]" not in labels, "kernels counted under [other]")
    kernels = {e["function"]: e["launches"] for e in d["kernels"]}
    check(kernels == {"add1": 1, "flash_fwd_kernel": 1, "triton_poi_fused_add_0": 1},
          f"kernels {kernels}")
    check(run.err.count("counted under [other graphs]") == 1, run.err[-2000:])
    # The text table says so too.
    run, _, _ = profile_run(env, [env.prog("scn_driver"), "churn", "9000"], tool=False, tmp=tmp,
                            extra={"NVTXCORR_PROFILE": os.path.join(tmp, "p.txt")})
    text = open(os.path.join(tmp, "p.txt")).read()
    check("809 launches of graphs beyond the 8191 distinct graph labels kept are counted under "
          "[other graphs]\n" in text, text[-2000:])


@scenario
def test_profile_more_labels_and_kernels_than_sites(env):
    """17,000 kernels, each its own label: the summary lists 17,000 labels and 17,000 kernels,
    34,000 rows, more than the site table's 32,768. Each is listed once, with its own counts.
    (Before: labels and kernels shared one order array of 32,768 from either end, so the
    kernels' order overwrote the last labels': 929 labels were listed twice and as many not at
    all; with a full site table the exit crashed on a label index past the labels made.)"""
    n = 17000
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "many", str(n)], tool=False,
                               tmp=tmp, extra={"NVTXCORR_PROFILE": os.path.join(tmp, "p.json")})
    d = only(sums)
    labels = [e for e in d["labels"] if e["launches"]]
    names = sorted(e["label"] for e in labels)
    check(names == sorted(f"kernel{i}" for i in range(n)),
          f"{len(labels)} label rows, {len(set(names))} distinct")
    check(all(e["launches"] == 2 for e in labels), "a label row with another's counts")
    kernels = sorted(e["function"] for e in d["kernels"] if e["launches"] == 2)
    check(kernels == names, f"{len(kernels)} kernel rows")


@scenario
def test_profile_rules(env):
    """Rules apply; a "-" rule's kernels are in no label but stay in kernels, label null."""
    rules = 'flash* attn category=attention; add1 -; graph:* "decode step" category=graph'
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "direct"],
                               extra={"NVTXCORR_LABELS_INLINE": rules})
    check(run.err == "", run.err)
    d = only(sums)
    labels = by_label(d)
    check(set(labels) == {"attn", "triton_poi_fused_add_0"}, f"labels {set(labels)}")
    check(labels["attn"]["category"] == "attention" and labels["attn"]["launches"] == 2,
          f"{labels['attn']}")
    k = {e["name"]: e for e in d["kernels"]}
    check(k["_Z4add1Pii"]["label"] is None and k["_Z4add1Pii"]["launches"] == 2, f"{k}")
    check(d["totals"]["unlabelled_launches"] == 2, f"{d['totals']}")
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "graphs"],
                               extra={"NVTXCORR_LABELS_INLINE": rules})
    labels = by_label(only(sums))
    check(labels["decode step"]["launches"] == 9 and labels["decode step"]["category"] == "graph",
          f"{labels}")


@scenario
def test_profile_errors(env):
    """A failing launch counts in launches and in errors; return codes are unchanged."""
    bare = env.run([env.prog("scn_driver"), "fail"], preload=False)
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "fail"], rc=None)
    check(run.rcs() == bare.rcs(), f"return codes changed: {run.rcs()} vs {bare.rcs()}")
    labels = by_label(only(sums))
    got = {k: (v["launches"], v["errors"]) for k, v in labels.items()}
    check(got == {"add1": (3, 2), "unknown_kernel": (1, 1), "graph#?": (1, 1)}, f"{got}")
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "direct"],
                               extra={"FAKECUDA_FAIL_LAUNCH": "719"}, rc=None)
    check([c for w, c in run.rcs() if w.startswith("cuLaunch")] == ["719"] * 6, f"{run.rcs()}")
    d = only(sums)
    check(d["totals"]["errors"] == 6 and d["totals"]["launches"] == 6, f"{d['totals']}")


@scenario
def test_profile_capture_errors(env):
    """A launch that fails while its stream captures counts in errors (and in capture_launches,
    not in launches): the demo with every launch failing, 23 before the capture, 22 during it
    and 8 replays of what was captured."""
    demo = os.path.join(env.build, "tests", "demo", "demo_infer")
    table = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo",
                         "demo.conf")
    run, sums, tmp = profile_run(env, [demo], extra={"FAKECUDA_FAIL_LAUNCH": "719",
                                                     "NVTXCORR_LABELS": table}, rc=None)
    check(run.err.count("launch failed: 719") == 23 + 22, run.err)
    d = only(sums)
    t = d["totals"]
    check(t["launches"] == 23 + 8 and t["capture_launches"] == 22 and t["errors"] == 23 + 22 + 8,
          f"{t}")
    labels = by_label(d)
    check(labels["attention.decode"]["errors"] == 2 and
          labels["attention.decode"]["capture_launches"] == 2 and
          labels["attention.decode"]["launches"] == 0, f"{labels['attention.decode']}")
    check(sum(e["errors"] for e in d["labels"]) == t["errors"] ==
          sum(e["errors"] for e in d["kernels"]) + 8, "errors do not add up")
    text = subprocess.run([launcher(env), "report", os.path.join(tmp, f"p.{d['pid']}.json")],
                          capture_output=True, text=True).stdout
    check(re.search(r"^nvtxcorr: profile of pid \d+: 31 launches \(8 graph\), 53 errors", text,
                    re.M), text)


@scenario
def test_profile_threads(env):
    """8 threads, 4 of which exit before the others start: no count is lost."""
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "threads"])
    check(launches(only(sums)) == {"add1": 360, "flash_fwd_kernel": 28},
          f"{launches(only(sums))}")
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "threads", "1000"])
    check(launches(only(sums)) == {"add1": 4000, "flash_fwd_kernel": 4000},
          f"{launches(only(sums))}")


@scenario
def test_profile_fork(env):
    """A forked child writes its own file (%p), with only its own launches."""
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "fork"])
    child = int(re.search(r"child (\d+) status 0", run.out)[1])
    check(len(sums) == 2 and child in sums, f"files for {list(sums)}, child {child}")
    parent = next(d for pid, d in sums.items() if pid != child)
    check(launches(parent) == {"add1": 3, "triton_poi_fused_add_0": 1}, f"{launches(parent)}")
    check(launches(sums[child]) == {"flash_fwd_kernel": 2}, f"child {launches(sums[child])}")


@scenario
def test_profile_exit_from_thread(env):
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "exit-thread"], rc=7)
    check(launches(only(sums)) == {"add1": 3, "flash_fwd_kernel": 2}, f"{launches(only(sums))}")


@scenario
def test_profile_sigterm(env):
    """Default action: the file is written and the process still dies by SIGTERM. A handler
    the program installed, before or after profile mode started, runs instead of ours."""
    bare = env.run([env.prog("scn_profile"), "signal", "default"], preload=False)
    check(bare.rc == -signal.SIGTERM, f"not killed by SIGTERM without the library: {bare.rc}")
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "signal", "default"],
                               rc=-signal.SIGTERM)
    check(launches(only(sums)) == {"add1": 5}, f"{launches(only(sums))}")
    for when in ("before", "after"):
        run, sums, _ = profile_run(env, [env.prog("scn_profile"), "signal", when])
        check("handler ran" in run.out and "returned" in run.out, f"{when}: {run.out} {run.err}")
        check(launches(only(sums)) == {"add1": 5}, f"{when}: {launches(only(sums))}")


@scenario
def test_profile_no_launch(env):
    """A process that used CUDA but launched nothing still writes its (empty) summary."""
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "nolaunch"])
    d = only(sums)
    check(d["labels"] == [] and d["kernels"] == [] and d["totals"]["launches"] == 0, f"{d}")


@scenario
def test_profile_path_expansion(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    run = env.run_ok([env.prog("scn_profile"), "exit-code", "0"],
                     env={"NVTXCORR_PROFILE": os.path.join(tmp,
                                                           "r%q{RANK}-%h-%p-%%-%q{UNSET_X}.csv"),
                          "RANK": "3"})
    check(run.err == "", run.err)
    names = os.listdir(tmp)
    check(len(names) == 1 and re.fullmatch(rf"r3-{re.escape(HOST)}-\d+-%-\.csv", names[0]),
          f"expanded names {names}")
    rows = list(csv.DictReader(open(os.path.join(tmp, names[0]))))
    check([(r["section"], r["label"], r["launches"]) for r in rows] ==
          [("label", "add1", "1"), ("kernel", "add1", "1")], f"csv rows {rows}")


def check_on_stderr(run, path, reason):
    check(re.search(rf"^nvtxcorr: error: {re.escape(path)}: {reason}.*summary printed to stderr",
                    run.err, re.M), f"no error line for {path}: {run.err}")
    check(re.search(r"^add1 +- +1 ", run.err, re.M), f"summary not on stderr: {run.err}")


@scenario
def test_profile_unwritable_paths(env):
    """An existing file, a symlink, a missing directory, a file used as a directory and a
    directory that cannot be written: each says why, prints the summary to stderr instead,
    and overwrites or follows nothing."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    prog = [env.prog("scn_profile"), "exit-code", "0"]
    existing = os.path.join(tmp, "existing.json")
    with open(existing, "w") as f:
        f.write("keep me")
    run = env.run(prog, env={"NVTXCORR_PROFILE": existing})
    check_on_stderr(run, existing, "exists")
    check(open(existing).read() == "keep me", "existing file overwritten")
    target, link = os.path.join(tmp, "target.txt"), os.path.join(tmp, "link.json")
    with open(target, "w") as f:
        f.write("target")
    os.symlink(target, link)
    run = env.run(prog, env={"NVTXCORR_PROFILE": link})
    check_on_stderr(run, link, "exists")
    check(open(target).read() == "target" and os.path.islink(link), "symlink followed")
    dangling = os.path.join(tmp, "dangling.json")
    os.symlink(os.path.join(tmp, "nowhere.json"), dangling)
    run = env.run(prog, env={"NVTXCORR_PROFILE": dangling})
    check_on_stderr(run, dangling, "exists")
    check(not os.path.exists(os.path.join(tmp, "nowhere.json")), "dangling symlink followed")
    missing = os.path.join(tmp, "no", "such", "dir", "p.json")
    run = env.run(prog, env={"NVTXCORR_PROFILE": missing})
    check_on_stderr(run, missing, "no such directory")
    check(not os.path.exists(os.path.join(tmp, "no")), "directory created")
    notdir = os.path.join(existing, "p.json")
    run = env.run(prog, env={"NVTXCORR_PROFILE": notdir})
    check_on_stderr(run, notdir, "a component of the path is not a directory")
    readonly = "/proc/nvtxcorr-test.json"  # unwritable even for root
    run = env.run_ok(prog, env={"NVTXCORR_PROFILE": readonly})
    check(re.search(r"^nvtxcorr: error: /proc/nvtxcorr-test.json: .*summary printed to stderr",
                    run.err, re.M) and re.search(r"^add1 +- +1 ", run.err, re.M), run.err)


@scenario
def test_profile_text_table(env):
    """The text format: sorted by time, at most 100 columns, every launched label present."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    path = os.path.join(tmp, "p.txt")
    rules = '"*triton*" "a very long label that does not fit in the label column at all" ' \
            'category=some-long-category'
    run = env.run_ok([env.prog("scn_driver"), "direct"],
                     env={"NVTXCORR_PROFILE": path, "NVTXCORR_LABELS_INLINE": rules})
    check(run.err == "", run.err)
    text = open(path).read()
    lines = text.splitlines()
    check(all(len(line) <= 100 for line in lines), f"lines over 100 columns:\n{text}")
    check(lines[1].split()[:3] == ["label", "category", "launches"], f"header: {lines[1]}")
    rows = lines[2:5]
    check(sorted(r.split()[0] for r in rows) == ["a", "add1", "flash_fwd_kernel"], text)
    # Cut in the middle, the label column as wide as 100 columns allow (docs/profile.md).
    check(any(r.startswith("a very long ...olumn at all some-long-category ") for r in rows),
          text)
    shares = [float(re.search(r"([\d.]+)%", r)[1]) for r in rows]
    check(abs(sum(shares) - 100) < 0.5, f"shares {shares}")


@scenario
def test_profile_memory_flat(env):
    """10 million launches in profile and trace mode (trace capped): same peak RSS as 100,000."""
    rss = []
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    for i, n in enumerate(("100000", "10000000")):
        e = {"NVTXCORR_PROFILE": os.path.join(tmp, f"p{i}.json"),
             "NVTXCORR_TRACE": os.path.join(tmp, f"trace{i}.json"), "NVTXCORR_TRACE_MAX_MB": "2",
             "NVTXREC_MODE": "noop"}
        rss.append(peak_rss(env.run_ok([env.prog("scn_profile"), "loop", n], env=e, timeout=600)))
        d = json.load(open(os.path.join(tmp, f"p{i}.json")))
        check(launches(d) == {"add1": int(n)}, f"{launches(d)}")
    check(rss[1] - rss[0] < 2048, f"peak RSS grew from {rss[0]} kB to {rss[1]} kB")


@scenario
def test_profile_memory_per_thread_and_fork(env):
    """issue 16 case 6: a record per (thread, kernel) is 360 bytes (1,296 with 64-bit buckets:
    170 MB for 32 threads x 4,096 kernels), and a forked child no longer clears every record
    at fork (which wrote, and so copied, all of the parent's): its private memory right after
    fork stays small whatever the parent holds. 8 threads x 2,048 kernels: before, about
    1,300 bytes per (thread, kernel) and 21 MB written by the child at fork."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-profile-")
    res = {}
    for threads in (1, 8):
        run, _, _ = profile_run(env, [env.prog("scn_profile"), "memory", str(threads), "2048"],
                                tool=False, tmp=tmp)
        res[threads] = dict((k, int(v)) for k, v in
                            (line.split() for line in run.out.splitlines() if "_kb " in line))
    per = (res[8]["rss_kb"] - res[1]["rss_kb"]) * 1024 / (7 * 2048)
    check(per < 640, f"{per:.0f} bytes per (thread, kernel): {res}")
    check(res[8]["child_private_kb"] < 2048, f"the child wrote at fork: {res[8]}")


@scenario
def test_profile_histogram_carry_across_fork(env):
    """A record's 16-bit bucket that passes 65,535 carries into its site's shared bucket; a
    forked child leaves the parent's carries out and starts its own from 0, so both summaries
    add up exactly (the histogram to the launches, checked by check_schema)."""
    # The child launches fewer (no carry of its own: the parent's must be left out) or as many.
    n = 400000
    for m in (1000, n):
        run, sums, _ = profile_run(env, [env.prog("scn_profile"), "fork-loop", str(n), str(m)],
                                   tool=False)
        check(len(sums) == 2, f"summaries: {list(sums)}")
        child = max(sums, key=lambda pid: sums[pid]["start_ns"])
        for pid, d in sums.items():
            check_schema(d)  # the histogram adds up to the launches
            want = m if pid == child else n
            check(launches(d) == {"add1": want}, f"pid {pid}: {launches(d)}, want {want}")


# ---- trace ------------------------------------------------------------------------------------
def check_trace_events(events, n_launches=None):
    """The launches of a trace in either form (harness.trace_launches) and its instants."""
    by_tid = {}
    for e in events:
        check(e["ph"] in ("X", "i", "M", "s", "f"), f"unexpected phase {e}")
    for e in trace_launches(events) + [e for e in events if e["ph"] == "i"]:
        check(isinstance(e["ts"], (int, float)) and e["pid"] > 0, f"event {e}")
        if e["ph"] == "X":
            check(e["dur"] >= 0 and ("stream" in e["args"] or "api" in e), f"event {e}")
        by_tid.setdefault(e["tid"], []).append(e)
    for tid, evs in by_tid.items():
        # In time order as a viewer sorts them: a thread's launches are written partly by the
        # trace's writer thread and partly by the thread itself (when the writer is behind),
        # from two buffers, so the file's order is not time order (docs/profile.md).
        xs = sorted((e for e in evs if e["ph"] == "X"), key=lambda e: e["ts"])
        for a, b in zip(xs, xs[1:]):  # complete events on one thread never overlap
            check(a["ts"] + a["dur"] <= b["ts"] + 0.001, f"thread {tid}: overlapping {a} {b}")
    if n_launches is not None:
        got = sum(1 for e in trace_launches(events))
        check(got == n_launches, f"{got} complete events for {n_launches} launches")
    return by_tid


@scenario
def test_trace(env):
    """Both forms (kineto by default for .json, chrome for other paths or when asked): the
    same launches, graph launches, captured launches and instants."""
    for fmt, name, head in (("", "trace.%p.json", "{"), ("chrome", "trace.%p.json", "["),
                            ("", "trace.%p.events", "["), ("kineto", "trace.%p.events", "{")):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-trace-")
        path = os.path.join(tmp, name)
        e = {"NVTXCORR_TRACE": path, **({"NVTXCORR_TRACE_FORMAT": fmt} if fmt else {})}
        run = env.run_ok([env.prog("scn_driver"), "graphs"], env=e)
        check(run.err == "", run.err)
        files = os.listdir(tmp)
        check(len(files) == 1, f"{files}")
        check(open(os.path.join(tmp, files[0])).read(1) == head, f"{fmt} {name}: form")
        events = load_trace(os.path.join(tmp, files[0]))
        check_trace_events(events, 9 + 3)
        graph = [e for e in trace_launches(events) if e["args"].get("graph")]
        names = {}
        for e in graph:
            names[e["name"]] = names.get(e["name"], 0) + 1
        check(names == GRAPH_LAUNCHES, f"graph events {names}")
        cap = [e for e in trace_launches(events) if e["args"].get("capture")]
        check(sorted(e["name"] for e in cap) == ["add1", "flash_fwd_kernel", "flash_fwd_kernel"]
              and all(e["args"]["grid"] == [2, 1, 1] for e in cap), f"{cap}")
        if head == "{":  # the entry point called, by its real name
            check({e["api"] for e in graph} == {"cuGraphLaunch", "cuGraphLaunch_ptsz"} and
                  {e["api"] for e in cap} == {"cuLaunchKernel"}, f"{graph} {cap}")
        else:  # the chrome form: the raw name and the stream on the launch
            check(all(e["args"]["kernel"] and e["args"]["stream"].startswith("0x") for e in cap),
                  f"{cap}")
        inst = [e for e in events if e["ph"] == "i"]
        check(len(inst) == 7 and inst[0]["name"].startswith("instantiated graph#1"), f"{inst}")
    run = env.run_ok([env.prog("scn_driver"), "graphs"],
                     env={"NVTXCORR_TRACE": path, "NVTXCORR_TRACE_FORMAT": "perfetto"})
    check("NVTXCORR_TRACE_FORMAT=perfetto: unknown format (kineto, chrome)" in run.err, run.err)
    run = env.run([env.prog("scn_driver"), "threads", "500"],
                  env={"NVTXCORR_TRACE": os.path.join(tmp, "threads.json")})
    events = load_trace(os.path.join(tmp, "threads.json"))
    by_tid = check_trace_events(events, 4000)
    check(len(by_tid) == 8 and all(len(v) == 500 for v in by_tid.values()),
          f"{[len(v) for v in by_tid.values()]}")
    run = env.run([env.prog("app_shared"), "launch"],
                  env={"NVTXCORR_TRACE": os.path.join(tmp, "runtime.json")})
    events = load_trace(os.path.join(tmp, "runtime.json"))
    check_trace_events(events, 6)
    calls = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    check(calls and all(e["cat"] == "cuda_runtime" and e["name"].lstrip("_").startswith("cuda")
                        for e in calls), f"{calls}")


@scenario
def test_trace_size_cap(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-trace-")
    path = os.path.join(tmp, "trace.json")
    run = env.run_ok([env.prog("scn_profile"), "loop", "200000"],
                     env={"NVTXCORR_TRACE": path, "NVTXCORR_TRACE_MAX_MB": "1"})
    warnings = re.findall(r"^nvtxcorr: warn: .*NVTXCORR_TRACE_MAX_MB=1 MiB; recording stopped$",
                          run.err, re.M)
    check(len(warnings) == 1 and run.err.count("\n") == 1, f"one warning expected: {run.err}")
    size = os.path.getsize(path)
    check(size <= (1 << 20) + 4096, f"trace is {size} bytes, cap 1 MiB")
    events = load_trace(path)
    check_trace_events(events)
    check(1000 < len(events) < 200000, f"{len(events)} events")


@scenario
def test_trace_writer_thread(env):
    """Trace mode's writer thread formats the launches a thread hands it; a thread that
    launches faster than the writer formats (a tight loop on the fake driver) formats the rest
    itself. Every launch is in the trace exactly once either way, threads that exit leave none
    behind (they format what is still queued as they exit), and NVTXCORR_TRACE_WRITER=0 leaves
    every launch to its own thread."""
    counted = re.compile(r"trace: (\d+) launches formatted by the writer thread, (\d+) by "
                         r"their own thread")
    runs = (("paced", [env.prog("scn_windows"), "loop", "300"], {}),
            ("tight loop", [env.prog("scn_profile"), "loop", "50000"], {}),
            ("threads that exit", [env.prog("scn_profile"), "threads"], {}),
            ("writer off", [env.prog("scn_windows"), "loop", "300"],
             {"NVTXCORR_TRACE_WRITER": "0"}),
            ("bad value", [env.prog("scn_windows"), "loop", "300"],
             {"NVTXCORR_TRACE_WRITER": "sometimes"}))
    for what, argv, extra in runs:
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-trace-")
        path = os.path.join(tmp, "trace.json")
        run = env.run_ok(argv, tool=False, env={"NVTXCORR_TRACE": path, "NVTXCORR_LOG": "debug",
                                                **extra})
        events = load_trace(path)
        made = re.search(r"launched (\d+)", run.out)  # scn_windows loop: as many as fit 300 ms
        n = int(made[1]) if made else {"tight loop": 50000, "threads that exit": 388}[what]
        check_trace_events(events, n)
        m = counted.search(run.err)
        if what == "writer off":
            check(m is None, f"{what}: {run.err}")
            continue
        check(m, f"{what}: the writer's count is not in the log: {run.err[-2000:]}")
        writer, own = int(m[1]), int(m[2])
        check(writer + own == n, f"{what}: {writer} + {own} launches for {n}")
        if what in ("paced", "bad value"):  # one a millisecond: the queue never fills
            check(own == 0, f"{what}: {own} launches formatted by their own thread")
        if what == "tight loop":  # faster than the writer formats: both share the work
            check(writer > 0 and own > 0, f"{what}: writer {writer}, own thread {own}")
        if what == "bad value":
            check("NVTXCORR_TRACE_WRITER=sometimes: not understood" in run.err, run.err)
    # A forked child has no writer thread: its launches are formatted by the child itself,
    # into its own trace (named with %p), with none of the parent's; the parent's are in the
    # parent's, formatted by its writer.
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-trace-")
    run = env.run_ok([env.prog("scn_profile"), "fork"], tool=False,
                     env={"NVTXCORR_TRACE": os.path.join(tmp, "t.%p.json"),
                          "NVTXCORR_LOG": "debug"})
    child = re.search(r"child (\d+) status 0", run.out)[1]
    names = {}
    for f in os.listdir(tmp):
        pid = re.match(r"t\.(\d+)\.json", f)[1]
        names[pid] = sorted(e["name"] for e in trace_launches(load_trace(os.path.join(tmp, f))))
    check(len(names) == 2 and child in names, f"traces by pid {names}, child {child}")
    parent = next(v for pid, v in names.items() if pid != child)
    check(len(names[child]) == 2 and len(parent) == 4 and not set(names[child]) & set(parent),
          f"child's trace {names[child]}, parent's {parent}")
    check(len(counted.findall(run.err)) == 1, f"one process with a writer: {run.err}")


@scenario
def test_trace_sigkill(env):
    """A SIGKILLed process leaves a prefix that reads as JSON once "]}" is appended."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-trace-")
    path = os.path.join(tmp, "trace.json")
    text = trace_killed_at(env, path, 300000)
    check(text.startswith("{") and "\n]" not in text, "a killed process cannot have closed it")
    events = trace_events(text, cut=True)  # the documented suffix, "]}"
    check(len(events) > 1000, f"{len(events)} events")
    check_trace_events(events)


# ---- nvtxcorr stat / nvtxcorr report ----------------------------------------------------------
def launcher(env):
    return env.launcher


def stat_run(env, argv, extra_args=(), extra_env=None, rc=0):
    return env.run_ok([launcher(env), "stat", "--library", env.lib, *extra_args, "--", *argv],
                      rc=rc, preload=False, enabled=False, tool=False, env=extra_env)


@scenario
def test_stat(env):
    """nvtxcorr stat: the table on stderr, the command's own output and exit status intact."""
    run = stat_run(env, [env.prog("scn_driver"), "direct"])
    check("rc cuLaunchKernel 0" in run.out, "the command's stdout is its own")
    lines = run.err.splitlines()
    check(lines[0].startswith("nvtxcorr: profile of pid ") and " 6 launches (0 graph)" in lines[0],
          run.err)
    check({line.split()[0] for line in lines[2:5]} ==
          {"add1", "flash_fwd_kernel", "triton_poi_fused_add_0"} and
          lines[5:] == ["(no GPU time: NVTXCORR_GPU=0)"], run.err)
    run = stat_run(env, [env.prog("scn_profile"), "exit-code", "3"], rc=3)
    check(re.search(r"^add1 +- +1 ", run.err, re.M), run.err)
    run = stat_run(env, [env.prog("scn_profile"), "signal", "default"], rc=128 + signal.SIGTERM)
    check(re.search(r"^add1 +- +5 ", run.err, re.M), f"killed by SIGTERM: {run.err}")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-stat-")
    for name in ("kept.json", "kept.csv", "kept.txt"):
        out = os.path.join(tmp, name)
        run = stat_run(env, [env.prog("scn_profile"), "fork"], ["-o", out])
        check(os.path.exists(out), f"{name}: not written: {run.err}")
        check("profile of 2 processes: 6 launches" in run.err, f"fork: {run.err}")
    d = json.load(open(os.path.join(tmp, "kept.json")))
    check(launches(d) == {"add1": 3, "flash_fwd_kernel": 2, "triton_poi_fused_add_0": 1}, f"{d}")
    check(open(os.path.join(tmp, "kept.txt")).read().splitlines()[1].startswith("label "),
          "text output")
    run = stat_run(env, ["/nonexistent/program"], rc=127)
    check("nvtxcorr: error: /nonexistent/program" in run.err, run.err)
    with tempfile.TemporaryDirectory() as prefix:  # the installed launcher finds the script
        subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], check=True,
                       capture_output=True)
        r = subprocess.run([os.path.join(prefix, "bin", "nvtxcorr"), "report",
                            os.path.join(tmp, "kept.json")], capture_output=True, text=True)
        check(r.returncode == 0 and "launches" in r.stdout, f"installed report: {r.stderr}")


def three_summaries(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-report-")
    for argv in (["scn_driver", "direct"], ["scn_driver", "threads", "100"],
                 ["scn_profile", "threads"]):
        profile_run(env, [env.prog(argv[0]), *argv[1:]], tmp=tmp)
    files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp))
    check(len(files) == 3, f"{files}")
    return files


def report(env, *args):
    return subprocess.run([launcher(env), "report", *args], capture_output=True, text=True)


@scenario
def test_report_merges_exactly(env):
    files = three_summaries(env)
    parts = [json.load(open(f)) for f in files]
    r = report(env, "--json", *files)
    check(r.returncode == 0 and r.stderr == "", f"rc {r.returncode}: {r.stderr}")
    merged = by_label(json.loads(r.stdout))
    for label in ("add1", "flash_fwd_kernel"):
        entries = [by_label(p)[label] for p in parts if label in by_label(p)]
        m = merged[label]
        for k in ("launches", "errors", "capture_launches", "cpu_ns"):
            check(m[k] == sum(e[k] for e in entries), f"{label} {k}: {m[k]}")
        check(m["cpu_min_ns"] == min(e["cpu_min_ns"] for e in entries) and
              m["cpu_max_ns"] == max(e["cpu_max_ns"] for e in entries), f"{label} min/max")
        hist = {}
        for e in entries:
            for b, c in e["cpu_histogram"]:
                hist[b] = hist.get(b, 0) + c
        check(m["cpu_histogram"] == [[b, hist[b]] for b in sorted(hist)], f"{label} histogram")
    check(merged["add1"]["launches"] == 2 + 400 + 360, f"{merged['add1']}")
    # One file's report equals the file's own percentiles (same rule in C and Python).
    one = by_label(json.loads(report(env, "--json", files[0]).stdout))
    check(all(one[k]["cpu_p99_ns"] == by_label(parts[0])[k]["cpu_p99_ns"] for k in one), "p99")
    text = report(env, *files)
    check(text.returncode == 0 and "profile of 3 processes: " in text.stdout, text.stdout)
    check(all(len(line) <= 100 for line in text.stdout.splitlines()), text.stdout)
    top = report(env, "--by", "kernel", "--top", "1", *files).stdout.splitlines()
    check(len(top) == 5 and top[1].startswith("kernel") and "more rows" in top[3] and
          top[4] == "(no GPU time: NVTXCORR_GPU=0)", f"{top}")
    procs = report(env, "--by", "process", *files).stdout
    check(len(re.findall(r"^scn_\w+ \[\d+\]", procs, re.M)) == 3, procs)
    rows = list(csv.DictReader(io.StringIO(report(env, "--csv", *files).stdout)))
    check({r["label"]: int(r["launches"]) for r in rows if r["section"] == "label"} ==
          {k: v["launches"] for k, v in merged.items()}, f"csv {rows}")


@scenario
def test_report_bad_files(env):
    files = three_summaries(env)
    tmp = os.path.dirname(files[0])
    bad_json, other_json = os.path.join(tmp, "cut.json"), os.path.join(tmp, "other.json")
    with open(files[0]) as f, open(bad_json, "w") as g:
        g.write(f.read()[:100])
    with open(other_json, "w") as g:
        json.dump({"traceEvents": []}, g)
    missing = os.path.join(tmp, "missing.json")
    r = report(env, files[0], bad_json, other_json, missing, files[1])
    check(r.returncode == 1, f"rc {r.returncode}")
    for path, why in ((bad_json, "not valid JSON"), (other_json, "not an nvtxcorr profile"),
                      (missing, "No such file")):
        check(re.search(rf"^nvtxcorr: error: {re.escape(path)}: {why}", r.stderr, re.M),
              f"{path}: {r.stderr}")
    check("profile of 2 processes" in r.stdout, f"the good files must still be reported: "
          f"{r.stdout}")


@scenario
def test_report_suggest(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-suggest-")
    for argv in (["scn_driver", "direct"], ["app_shared", "launch"], ["scn_driver", "many", "20"]):
        profile_run(env, [env.prog(argv[0]), *argv[1:]], tmp=tmp)
    files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp))
    r = report(env, "--suggest", *files)
    check(r.returncode == 0, f"rc {r.returncode}: {r.stderr}")
    table = os.path.join(tmp, "suggested.conf")
    with open(table, "w") as f:
        f.write(r.stdout)
    ok = subprocess.run([launcher(env), "check", table], capture_output=True, text=True)
    check(ok.returncode == 0 and "rules OK" in ok.stdout, f"{ok.stdout}{ok.stderr}\n{r.stdout}")
    fams = re.findall(r"^# (\S[^:\n]*): \d+ kernel", r.stdout, re.M)
    check({"attention", "other"} <= set(fams) and fams[-1] == "other", f"families {fams}")
    rules = [line for line in r.stdout.splitlines() if line and not line.startswith("#")]
    check(len(rules) == len(fams), f"one rule per family: {rules}")
    # The table, used, labels every kernel by its family.
    run, sums, _ = profile_run(env, [env.prog("scn_driver"), "direct"],
                               extra={"NVTXCORR_LABELS": table})
    check(run.err == "" and "attention" in launches(only(sums)), f"{run.err} {only(sums)}")


@scenario
def test_long_labels_stay_apart(env):
    """Labels that share a long start stay distinguishable in every text table (the C one and
    report's, --by kernel too): cut in the middle, the columns as wide as 100 allow, the label
    column of --by kernel never cut to 11 characters."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-long-")
    rules = '* "a_long_common_prefix_that_every_label_here_shares_until_the_end_{function}"'
    for name in ("p.txt", "p.json"):
        env.run_ok([env.prog("scn_driver"), "direct"],
                   env={"NVTXCORR_PROFILE": os.path.join(tmp, name),
                        "NVTXCORR_LABELS_INLINE": rules})
    tables = [("C text table", open(os.path.join(tmp, "p.txt")).read(), 0)]
    for by, column in (("label", 0), ("kernel", 1)):
        r = report(env, "--by", by, os.path.join(tmp, "p.json"))
        tables.append((f"report --by {by}", r.stdout, column))
    for what, text, column in tables:
        lines = text.splitlines()
        check(all(len(x) <= 100 for x in lines), f"{what}: over 100 columns:\n{text}")
        rows = [x for x in lines[2:5]]
        heads = lines[1].split()
        cells = [re.split(r" (?=\S)", x.rstrip(), maxsplit=2)[column] for x in rows]
        check(len(set(cells)) == 3 and all("..." in c and c.startswith("a_long_") for c in cells),
              f"{what}: labels not apart: {cells}\n{text}")
        width = len(cells[0].rstrip())
        check(width >= 22 and (column == 1 or width >= 36), f"{what}: label column {width}\n{text}")
        check(heads[0] in ("label", "kernel"), f"{what}: header {lines[1]}")
    check(any(x.startswith("a_long_common_pre..._flash_fwd_kernel ") for x in
              tables[0][1].splitlines()), tables[0][1])
