"""`nvtxcorr report` against malformed summaries (issue 16, case 7): every field of a real
summary replaced by a value of the wrong type, removed, or made NaN, Infinity, a lone surrogate
or nested thousands deep. Each malformed file gets one `nvtxcorr: error: FILE: why; left out`
line and is left out, the good files are still reported, no run ends in a traceback, and the
output is always JSON that a strict reader takes. Also the merge's own fields (issue 17,
item 14): totals over several files, the process count of a merged file fed back; and input
that is well-formed but huge (issue 31, case 12): a trace's world size of 1e9, a file larger
than the memory the report may take."""
import copy
import csv
import io
import json
import os
import re
import resource
import subprocess
import tempfile

from harness import check, scenario
from test_cupti import demo, fake_cupti, gpu_run
from test_profile import launcher, profile_run, summaries

WRONG = ("x", [], {}, None, -1, True, 1.5, "DELETE")


def strict(text):
    def refuse(name):
        raise ValueError(f"{name} in the output")
    return json.loads(text, parse_constant=refuse)


def paths(v, path=()):
    """Every place in the summary: the keys of objects, the first entry of each list."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield path + (k,)
            yield from paths(x, path + (k,))
    elif isinstance(v, list) and v:
        yield path + (0,)
        yield from paths(v[0], path + (0,))


def replaced(d, path, value):
    d = copy.deepcopy(d)
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    if value == "DELETE":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    return d


def report(*args):
    r = subprocess.run([launcher_path, "report", *args], capture_output=True, text=True)
    check("Traceback" not in r.stderr, f"report {' '.join(args[:3])}...: traceback:\n"
          f"{r.stderr[-3000:]}")
    return r


def rejected(r, files):
    """The files the run named as left out; every stderr line must be such a line."""
    out = set()
    for line in r.stderr.splitlines():
        m = re.match(r"^nvtxcorr: error: (.+?): (.+); left out$", line)
        check(m and m[1] in files, f"unexpected stderr line: {line!r}")
        out.add(m[1])
    return out


launcher_path = None


@scenario
def test_report_malformed_input(env):
    global launcher_path
    launcher_path = launcher(env)
    fake_cupti(env)
    _, sums, _ = gpu_run(env, [demo(env)])
    gpu = next(iter(sums.values()))
    check(gpu["gpu_time"] and gpu["kernel_labels"] and gpu["graphs"], "no GPU summary")
    _, sums, _ = profile_run(env, [env.prog("scn_driver"), "graphs"])
    cpu = next(iter(sums.values()))
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-fuzz-")
    good = []
    for name, d in (("good-gpu.json", gpu), ("good-cpu.json", cpu)):
        good.append(os.path.join(tmp, name))
        with open(good[-1], "w") as f:
            json.dump(d, f)

    files, must_reject = [], []

    why = {}

    def write(text, reject, what=""):
        path = os.path.join(tmp, f"v{len(files)}.json")
        why[path] = what or text[:80]
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        files.append(path)
        if reject:
            must_reject.append(path)

    used = {"labels", "kernels", "kernel_labels", "graphs", "totals", "histogram", "pid",
            "host", "command", "gpu_time", "gpu_time_note"}
    for base in (gpu, cpu):
        for path in paths(base):
            if base is cpu and len(path) > 1:
                continue  # the GPU summary has every kind of entry the other has
            for value in WRONG:
                d = replaced(base, path, value)
                # A count where a count is read, replaced by a non-count, must be refused.
                entry = path[0] in ("labels", "kernels") and len(path) == 3
                count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
                reject = entry and (path[2] in ("launches", "cpu_ns") and not count or
                                    path[2] == "cpu_histogram" and not (
                                        value == [] and base[path[0]][0]["launches"] == 0))
                if path in (("totals",), ("kernel_labels",), ("graphs",)) and (
                        value in ("x", -1, True, 1.5) or value == {} and path != ("totals",)):
                    reject = True
                write(json.dumps(d), reject, f"{path} = {value!r}")
    # Text no JSON reader should take, or that no output could print.
    raw = json.dumps(gpu)
    write(raw.replace('"gpu_ns": ' + str(gpu["totals"]["gpu_ns"]), '"gpu_ns": NaN', 1), True)
    write(raw.replace('"cpu_ns": ', '"cpu_ns": Infinity, "x": ', 1), True)
    write(raw.replace('"start_ns": ', '"start_ns": -Infinity, "y": ', 1), True)
    write(raw.replace('"start_ns": ', '"start_ns": 1e999, "y": ', 1), True)
    write(raw.replace('"host": ', '"z": 1e400, "host": ', 1), True)
    write(raw[:-1] + ', "deep": ' + "[" * 5000 + "]" * 5000 + "}", True)
    write(raw[:-1] + ', "deep": ' + "[" * 100 + "]" * 100 + "}", True)
    write(raw[:-1] + ', "deep": ' + '{"a": ' * 70 + "1" + "}" * 70 + "}", True)
    write(raw.replace('"label": "', '"label": "\\ud800', 1), True)
    write('{"labels": [], "kernels": [], "totals": [1, 2]}', True)
    write('{"labels": [], "kernels": [], "histogram": []}', True)
    write('{"labels": [], "kernels": [], "graphs": [{"label": "g"}]}', True)
    write('{"labels": [], "kernels": [], "kernel_labels": [{"label": 3}]}', True)
    write('{"labels": [], "kernels": [], "merged": [{"pid": "x"}]}', True)
    write('{"labels": [], "kernels": [], "command": "not a list"}', True)
    for text in ("", "[]", "null", "3", '"x"', raw[:len(raw) // 2], "\x00\x01\x02"):
        write(text, True)

    everything = good + files
    r = report("--json", *everything)
    left_out = rejected(r, everything)
    check(r.returncode == 1, f"rc {r.returncode}")
    check(not left_out & set(good), f"good files left out: {left_out & set(good)}")
    missed = [p for p in must_reject if p not in left_out]
    check(not missed, f"{len(missed)} malformed files reported: " +
          "; ".join(why[p] for p in missed[:5]))
    merged = strict(r.stdout)
    taken = {m["file"] for m in merged["merged"]}
    check(taken == set(everything) - left_out, f"merged {len(taken)} files, "
          f"{len(everything) - len(left_out)} accepted")
    print(f"{len(files)} malformed variants: {len(left_out)} left out, "
          f"{len(taken) - len(good)} accepted")
    # Every other output, over the files the reading accepted (it is the same for all): odd
    # but well-typed values must not stop the merge or the writers either.
    accepted = sorted(taken)
    for args in (["--by", "kernel", "--sort", "launches", "--top", "all"], ["--by", "process"],
                 ["--csv"], ["--suggest"], ["--sort", "cpu"]):
        r = report(*args, *accepted)
        check(r.returncode == 0 and r.stderr == "" and r.stdout, f"{args}: rc {r.returncode}")
    # Alone, each special file is refused and a good one beside it still reported.
    for path in files[-22::2]:
        r = report("--json", good[1], path)
        check(rejected(r, [good[1], path]) == {path} and
              strict(r.stdout)["pid"] == cpu["pid"], f"{path}: {r.stderr}")


@scenario
def test_report_merge_totals(env):
    """report --json over several files keeps totals (the files' summed), and a merged file fed
    back to report counts the processes it merged."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-totals-")
    for argv in (["direct"], ["graphs"], ["threads", "10"]):
        profile_run(env, [env.prog("scn_driver"), *argv], tmp=tmp)
    parts = list(summaries(tmp).values())
    files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp))
    r = subprocess.run([launcher(env), "report", "--json", *files], capture_output=True,
                       text=True)
    m = strict(r.stdout)
    for k in ("launches", "graph_launches", "capture_launches", "cpu_ns", "unlabelled_launches"):
        check(m["totals"][k] == sum(p["totals"][k] for p in parts), f"totals {k}: {m['totals']}")
    check(m["totals"]["gpu_ns"] is None, f"{m['totals']}")
    merged = os.path.join(tmp, "merged.out")
    with open(merged, "w") as f:
        f.write(r.stdout)
    text = subprocess.run([launcher(env), "report", merged], capture_output=True, text=True)
    check(text.stdout.startswith("nvtxcorr: profile of 3 processes: "), text.stdout)
    again = strict(subprocess.run([launcher(env), "report", "--json", merged, files[0]],
                                  capture_output=True, text=True).stdout)
    check(len(again["merged"]) == 4 and again["totals"]["launches"] ==
          m["totals"]["launches"] + parts[0]["totals"]["launches"], f"{again['merged']}")


# Kernel names of the shipped tables' frameworks (docs/labels/*.conf), as the driver gives them.
FRAMEWORK_KERNELS = {
    "vllm": ["fused_add_rms_norm_kernel", "rms_norm_kernel", "silu_and_mul_kernel",
             "act_and_mul_kernel", "paged_attention_v2_kernel", "flash_fwd_splitkv_kernel",
             "Marlin", "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT",
             "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
             "execute_segment_k_off_kernel__5x_cublas", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
             "cross_device_reduce_1stage", "vectorized_elementwise_kernel", "topkGatingSoftmax"],
    "llama.cpp": ["mul_mat_vec_q", "mul_mat_q", "mul_mat_vec_f", "flash_attn_ext_f16",
                  "rms_norm_f32", "silu_f32", "k_bin_bcast", "soft_max_f32", "quantize_q8_1",
                  "k_get_rows_float", "gelu_f32"],
    "pytorch": ["vectorized_layer_norm_kernel", "triton_poi_fused_add_0",
                "triton_red_fused_native_layer_norm_0", "cunn_SoftMaxForward",
                "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
                "fmha_cutlassF_f16_aligned_64x64_rf_sm80", "ncclDevKernel_AllGather_RING_LL",
                "unrolled_elementwise_kernel", "multi_tensor_apply_kernel"],
}


def explained_category(env, table, name):
    r = subprocess.run([launcher(env), "explain", table, name], capture_output=True, text=True)
    check(r.returncode == 0, f"explain {table} {name}: {r.stderr}")
    return re.search(r"^  category: +(\S+)$", r.stdout, re.M)[1]


@scenario
def test_report_suggest_frameworks(env):
    """--suggest on the kernels of vLLM, llama.cpp and PyTorch: each kernel the suggested table
    puts in a family gets the category the framework's shipped table gives it (a fused norm
    is a norm, silu_and_mul an activation, mul_mat_vec_q a matmul); [memset] gets no rule."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-suggest-")
    names = [n for ns in FRAMEWORK_KERNELS.values() for n in ns]
    entry = dict(graph_launches=0, errors=0, capture_launches=0, cpu_min_ns=100, cpu_max_ns=100,
                 cpu_histogram=[[30, 1]], category=None, launches=1, cpu_ns=100)
    kernels = [dict(entry, name=n, function=n, label=n) for n in names]
    kernels.append(dict(entry, name="[memset]", function="[memset]", label="[memset]",
                        launches=0, cpu_histogram=[], cpu_ns=0))
    path = os.path.join(tmp, "s.json")
    with open(path, "w") as f:
        json.dump({"nvtxcorr_profile": 1, "pid": 1, "labels": [], "kernels": kernels}, f)
    r = subprocess.run([launcher(env), "report", "--suggest", path], capture_output=True,
                       text=True)
    check(r.returncode == 0 and "[memset]" not in r.stdout, f"{r.stderr}{r.stdout}")
    table = os.path.join(tmp, "suggested.conf")
    with open(table, "w") as f:
        f.write(r.stdout)
    families = ("comm", "attention", "matmul", "norm", "elementwise")
    wrong = []
    for framework, ns in FRAMEWORK_KERNELS.items():
        for n in ns:
            got = explained_category(env, table, n)
            want = explained_category(env, framework, n)
            if n.startswith("triton_"):
                want = "triton"
            if want in families + ("triton",) and got != want:
                wrong.append(f"{framework} {n}: {got}, the shipped table says {want}")
    check(not wrong, "\n".join(wrong) + "\n" + r.stdout)
    for n, label in (("fused_add_rms_norm_kernel", "norm"), ("silu_and_mul_kernel", "activation"),
                     ("mul_mat_vec_q", "matmul")):
        out = subprocess.run([launcher(env), "explain", table, n], capture_output=True,
                             text=True).stdout
        check(f"  label:      {label}\n" in out, f"{n}: {out}")


@scenario
def test_gpu_percentiles(env):
    """CSV gpu_p50_ns and gpu_p99_ns are filled wherever there is GPU time, in the library's
    CSV and in report's over several files (issue 17, item 14): within min and max, and exact
    for a label whose kernels all take the same time (the fake CUPTI: 100 ns per character of
    the mangled name; matmul is one GEMM kernel)."""
    from test_cupti import GEMM, ns
    _, _, tmp = gpu_run(env, [demo(env)], name="p.csv")
    csv_path = os.path.join(tmp, "p.csv")
    jsons = []
    for _ in range(2):
        _, sums, t = gpu_run(env, [demo(env)])
        jsons.append(os.path.join(t, os.listdir(t)[0]))
    merged = subprocess.run([launcher(env), "report", "--csv", *jsons], capture_output=True,
                            text=True).stdout
    for what, text in (("library CSV", open(csv_path).read()), ("report --csv", merged)):
        rows = [r for r in csv.DictReader(io.StringIO(text)) if r["gpu_kernels"] not in ("", "0")]
        check(rows and {r["section"] for r in rows} >= {"label", "kernel", "kernel_label"},
              f"{what}: {text[:500]}")
        for r in rows:
            check(r["gpu_p50_ns"] and r["gpu_p99_ns"] and
                  int(r["gpu_min_ns"]) <= int(r["gpu_p50_ns"]) <= int(r["gpu_p99_ns"]) <=
                  int(r["gpu_max_ns"]), f"{what}: {r}")
        matmul = next(r for r in rows if r["section"] == "label" and r["label"] == "matmul")
        check(int(matmul["gpu_p50_ns"]) == int(matmul["gpu_p99_ns"]) == ns(GEMM), f"{matmul}")
    one = json.load(open(jsons[0]))
    both = json.loads(subprocess.run([launcher(env), "report", "--json", *jsons],
                                     capture_output=True, text=True).stdout)
    for view in ("labels", "kernel_labels"):
        a = {e["label"]: (e["gpu_p50_ns"], e["gpu_p99_ns"]) for e in one[view] if e["gpu_kernels"]}
        b = {e["label"]: (e["gpu_p50_ns"], e["gpu_p99_ns"]) for e in both[view] if e["gpu_kernels"]}
        check(a == b, f"{view}: one run {a}, two {b}")


# The address space the report gets in the tests below: Python and a small summary need a
# tenth of it; a set of 1e9 ranks or a parse of the big file below need several times it.
REPORT_MEMORY = 512 << 20


def limited(*args, timeout=60):
    """`nvtxcorr report ARGS` held to REPORT_MEMORY of address space and timeout seconds."""
    def preexec():
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (REPORT_MEMORY, hard))
    r = subprocess.run([launcher_path, "report", *args], capture_output=True, text=True,
                       preexec_fn=preexec, timeout=timeout)
    check("Traceback" not in r.stderr, f"report {' '.join(args[:3])}...: traceback:\n"
          f"{r.stderr[-3000:]}")
    return r


@scenario
def test_report_by_rank_huge_world(env):
    """--by rank on a trace whose world size is 1e9 (what WORLD_SIZE said; the library writes
    up to 1e9): the missing ranks are runs, not a set of a billion, so the report takes no
    more memory or time than for a world of 4."""
    global launcher_path
    launcher_path = launcher(env)
    with tempfile.TemporaryDirectory() as tmp:
        for rank in (0, 2):
            e = {"NVTXCORR_TRACE": os.path.join(tmp, "t.%q{RANK}.json"),
                 "NVTXCORR_PROFILE": os.path.join(tmp, "p.%q{RANK}.json"),
                 "RANK": str(rank), "WORLD_SIZE": "1000000000"}
            env.run_ok([env.prog("scn_driver"), "threads", "5"], env=e)
        with open(os.path.join(tmp, "t.0.json")) as f:
            check('"world_size": 1000000000}' in f.read(300), "the trace's world size")
        files = [os.path.join(tmp, n) for n in ("p.0.json", "p.2.json", "t.0.json", "t.2.json")]
        r = limited("--by", "rank", *files, timeout=30)
        check(r.returncode == 0 and r.stderr == "nvtxcorr: warn: ranks missing: 1, 3-999999999 "
              "(999999998 of world size 1000000000)\n", f"rc {r.returncode}: {r.stderr}")
        check(r.stdout.splitlines()[1].split()[1:] == ["rank", "0", "rank", "2"], r.stdout)


@scenario
def test_report_big_file_memory_limit(env):
    """A summary too big for the memory the report may take (30 MB of JSON that Python holds
    in about 700 MB) is one error line and left out; the good file beside it is still
    reported, by report and by --diff."""
    global launcher_path
    launcher_path = launcher(env)
    _, sums, _ = profile_run(env, [env.prog("scn_driver"), "graphs"])
    with tempfile.TemporaryDirectory() as tmp:
        good, big = os.path.join(tmp, "good.json"), os.path.join(tmp, "big.json")
        with open(good, "w") as f:
            json.dump(next(iter(sums.values())), f)
        with open(big, "w") as f:
            f.write('{"labels": [], "kernels": [], "pad": [' + "{}," * 10000000 + "{}]}")
        r = limited("--json", good, big)
        check(r.returncode == 1 and re.fullmatch(
            f"nvtxcorr: error: {re.escape(big)}: not enough memory to read its 28 MiB "
            r"\(ulimit -v, or a container's limit\?\); left out\n", r.stderr),
            f"rc {r.returncode}: {r.stderr}")
        check(strict(r.stdout)["pid"] == next(iter(sums.values()))["pid"], r.stdout[:500])
        r = limited("--diff", good, f"{good},{big}")
        check(r.returncode == 2 and r.stderr.startswith(f"nvtxcorr: error: {big}: not enough "
              "memory") and len(r.stderr.splitlines()) == 1 and
              r.stdout.startswith("nvtxcorr: diff of CPU time, A (1 file) vs B (1 file)\n"),
              f"rc {r.returncode}: {r.stderr}{r.stdout}")
