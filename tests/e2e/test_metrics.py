"""Fleet metrics (NVTXCORR_METRICS, docs/profile.md "Fleet metrics"): the Prometheus textfile,
checked line by line against the Prometheus text format and value by value against the same
run's summaries; then read by the real node_exporter and scraped by the real Prometheus
(Debian's prometheus and prometheus-node-exporter), whose HTTP API must answer with the same
numbers."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from harness import Skip, check, scenario

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
PROCESS_LABELS = ("pid", "rank", "host", "command")


def parse_prom(text):
    """The Prometheus text format, strictly: every sample's family has # HELP and # TYPE
    counter before it, label values use only the \\\\ \\" \\n escapes, no series twice, the
    file ends with a newline. {(name, ((label, value), ...)): value as text}."""
    check(text.endswith("\n"), f"no final newline: {text[-80:]!r}")
    series, helped, typed = {}, set(), set()
    for line in text[:-1].split("\n"):
        m = re.fullmatch(r"# (HELP|TYPE) (\S+) (.+)", line)
        if m:
            check(NAME.fullmatch(m.group(2)), f"bad metric name: {line!r}")
            if m.group(1) == "TYPE":
                check(m.group(3) == "counter", f"not a counter: {line!r}")
                check(m.group(2) in helped, f"TYPE before HELP: {line!r}")
                typed.add(m.group(2))
            else:
                helped.add(m.group(2))
            continue
        m = NAME.match(line)
        check(m is not None, f"not a sample: {line!r}")
        name, i, labels = m.group(0), m.end(), []
        check(name in typed, f"a sample before its # TYPE: {line!r}")
        check(line[i] == "{", f"no labels: {line!r}")
        i += 1
        while line[i] != "}":
            k = LABEL.match(line, i)
            check(k is not None and line[k.end():k.end() + 2] == '="', f"bad label at {i}: {line!r}")
            i, value = k.end() + 2, []
            while line[i] != '"':
                if line[i] == "\\":
                    esc = line[i + 1]
                    check(esc in '\\"n', f"bad escape \\{esc}: {line!r}")
                    value.append("\n" if esc == "n" else esc)
                    i += 2
                else:
                    check(line[i] != "\n", line)
                    value.append(line[i])
                    i += 1
            labels.append((k.group(0), "".join(value)))
            i += 1
            if line[i] == ",":
                i += 1
        check(line[i + 1] == " ", f"no space before the value: {line!r}")
        value = line[i + 2:]
        check(re.fullmatch(r"\d+(\.\d{9})?", value), f"bad value {value!r}: {line!r}")
        key = (name, tuple(labels))
        check(key not in series, f"series twice: {line!r}")
        series[key] = value
    return series


def ns(value):
    """A value as an exact integer: seconds (nine decimals) in ns, a count as is."""
    whole, _, frac = value.partition(".")
    return int(whole) * 10**9 + int(frac) if frac else int(whole)


def by_label(series, name, view=None, key="label"):
    """{(label, category): value} of one family (seconds in ns)."""
    out = {}
    for (n, labels), v in series.items():
        d = dict(labels)
        if n == name and d.get("view") == view:
            out[(d[key], d["category"])] = ns(v)
    return out


def sums_by_label(summaries, section, field):
    out = {}
    for d in summaries:
        for e in d[section]:
            k = (e["label"], e["category"] or "")
            if e[field]:
                out[k] = out.get(k, 0) + e[field]
    return out


def fake_cupti_env(env):
    from test_cupti import fake_cupti
    return {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)}


def metrics_run(env, argv, extra, window=None, rc=0, timeout=120):
    """Runs argv with NVTXCORR_METRICS in a directory of its own (and NVTXCORR_PROFILE, with
    window's windows); while it runs, reads the metrics file whenever it changes. Returns (run,
    summaries, [each version of the file seen, as text], the directory's names at the end)."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-metrics-")
    sdir, mdir = os.path.join(tmp, "summaries"), os.path.join(tmp, "metrics")
    os.mkdir(sdir)
    os.mkdir(mdir)
    e = {"NVTXCORR_PROFILE": os.path.join(sdir, "w.%w.json" if window else "p.json"),
         "NVTXCORR_METRICS": os.path.join(mdir, "nvtxcorr-%p.prom")}
    if window:
        e["NVTXCORR_WINDOW"] = window
    e.update(extra)
    result = {}

    def go():
        try:
            result["run"] = env.run_ok(argv, rc=rc, tool=False, env=e, timeout=timeout)
        except BaseException as x:  # raised again on the test's thread
            result["error"] = x

    t = threading.Thread(target=go)
    t.start()
    versions, last = [], None
    while t.is_alive():  # every version a reader can see: the file is replaced whole
        for name in os.listdir(mdir):
            if name.endswith(".prom"):
                try:
                    with open(os.path.join(mdir, name)) as f:
                        text = f.read()
                except FileNotFoundError:
                    continue
                if text != last:
                    versions.append(text)
                    last = text
        t.join(0.001)
    if "error" in result:
        raise result["error"]
    names = sorted(os.listdir(mdir))
    for name in names:
        with open(os.path.join(mdir, name)) as f:
            text = f.read()
        if text != last:
            versions.append(text)
    sums = []
    for name in os.listdir(sdir):
        with open(os.path.join(sdir, name)) as f:
            sums.append(json.load(f))
    sums.sort(key=lambda d: d.get("window", {}).get("index", 0))
    shutil.rmtree(tmp)
    return result["run"], sums, versions, names


def check_process_labels(series, pid, command):
    for (name, labels), _ in series.items():
        d = dict(labels)
        check([k for k, _ in labels[:4]] == list(PROCESS_LABELS), f"{name} {labels}")
        check(d["pid"] == str(pid) and d["command"] == command and d["host"] == os.uname()[1],
              f"{name} {labels}")


@scenario
def test_metrics_windows_cumulative(env):
    # every:0.2 over 2 s with GPU time (the fake CUPTI): each version of the file is whole and
    # holds the run's counts as of one window's close, the sum of that window's summary and
    # every one before it; the counters only grow; the last version, at exit, holds the sums
    # of all the windows. One file (the pid's), no temporary file left behind.
    run, sums, versions, names = metrics_run(env, [env.prog("scn_windows"), "loop", "2000"],
                                             fake_cupti_env(env), window="every:0.2")
    check(len(sums) >= 8 and run.err == "", f"{len(sums)} windows\n{run.err}")
    check(len(names) == 1 and re.fullmatch(r"nvtxcorr-\d+\.prom", names[0]), f"{names}")
    pid = int(re.search(r"\d+", names[0]).group(0))
    parsed = [parse_prom(v) for v in versions]
    check(len(parsed) >= 3, f"only {len(parsed)} versions of the file seen")
    # the prefix sums of the windows: what the file says after window k
    prefix, acc = [], {"launch": {}, "kernel": {}, "launches": {}, "cpu": {}}
    for d in sums:
        for what, section, field in (("launch", "labels", "gpu_ns"),
                                     ("kernel", "kernel_labels", "gpu_ns"),
                                     ("launches", "labels", "launches"),
                                     ("cpu", "labels", "cpu_ns")):
            for k, v in sums_by_label([d], section, field).items():
                acc[what][k] = acc[what].get(k, 0) + v
        prefix.append({w: dict(m) for w, m in acc.items()})

    def state(s):
        return {"launch": by_label(s, "nvtxcorr_gpu_seconds_total", "launch"),
                "kernel": by_label(s, "nvtxcorr_gpu_seconds_total", "kernel"),
                "launches": by_label(s, "nvtxcorr_launches_total"),
                "cpu": by_label(s, "nvtxcorr_cpu_seconds_total")}

    seen = []
    for v, s in zip(versions, parsed):
        check_process_labels(s, pid, "scn_windows")
        st = state(s)
        k = [i for i, p in enumerate(prefix) if p == st]
        check(k, f"a version of the file that is no window's close:\n{st}\nwindows: {prefix}")
        seen.append(k)  # windows that add nothing leave the file as it was: several match
    check([k[0] for k in seen] == sorted(k[0] for k in seen),
          f"the file went back in time: windows {seen}")
    check(len(sums) - 1 in seen[-1], f"the last file is window {seen[-1]} of {len(sums)}")
    final = parsed[-1]
    total = sum(d["totals"]["launches"] for d in sums)
    check(prefix[-1]["launches"] == {("add1", ""): total} and total > 100,
          f"{prefix[-1]['launches']} vs {total} launches")
    check(prefix[-1]["launch"][("add1", "")] == sum(d["totals"]["gpu_ns"] for d in sums) > 0,
          f"{prefix[-1]['launch']}")
    unc = [v for (n, _), v in final.items() if n == "nvtxcorr_uncorrelated_total"]
    drop = [v for (n, _), v in final.items() if n == "nvtxcorr_dropped_records_total"]
    check(unc == [str(sum(d["totals"]["gpu_uncorrelated_kernels"] for d in sums))] and
          drop == ["0"], f"uncorrelated {unc}, dropped {drop}")


@scenario
def test_metrics_at_exit_escaping_and_graphs(env):
    # No windows: one file at exit, equal to the summary, label by label and view by view,
    # graph replays included; a label with a quote, a backslash and a non-ASCII letter is
    # escaped as Prometheus reads it back.
    rules = r'*rms* "we\"ird\\la bel é" category=norm'
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    extra = dict(fake_cupti_env(env), NVTXCORR_LABELS_INLINE=rules,
                 NVTXCORR_LABELS=os.path.join(root, "tests", "demo", "demo.conf"))
    demo = os.path.join(env.build, "tests", "demo", "demo_infer")
    run, sums, versions, names = metrics_run(env, [demo], extra)
    check(len(sums) == 1 and len(names) == 1, f"{len(sums)} summaries, files {names}")
    text = versions[-1]
    check('label="we\\"ird\\\\la bel é",category="norm"' in text, text)
    s = parse_prom(text)
    d = sums[0]
    check(by_label(s, "nvtxcorr_gpu_seconds_total", "launch") == sums_by_label(sums, "labels", "gpu_ns"),
          f"{by_label(s, 'nvtxcorr_gpu_seconds_total', 'launch')}")
    check(by_label(s, "nvtxcorr_gpu_seconds_total", "kernel") ==
          sums_by_label(sums, "kernel_labels", "gpu_ns"), "by kernel")
    check(by_label(s, "nvtxcorr_launches_total") == sums_by_label(sums, "labels", "launches"),
          f"{by_label(s, 'nvtxcorr_launches_total')}")
    check(by_label(s, "nvtxcorr_cpu_seconds_total") == sums_by_label(sums, "labels", "cpu_ns"),
          "cpu")
    check(("we\"ird\\la bel é", "norm") in by_label(s, "nvtxcorr_launches_total"), "escaping")
    graphs = {(g["label"], g["category"] or ""): g["replays"] for g in d["graphs"]}
    check(graphs and by_label(s, "nvtxcorr_graph_replays_total", key="graph") == graphs,
          f"{by_label(s, 'nvtxcorr_graph_replays_total', key='graph')} vs {graphs}")


@scenario
def test_metrics_series_bound(env):
    # 300 kernels, each its own label: the first 100 labels made have series, the rest count
    # under [other], said once; nothing is lost (the launches add up) and no series is twice.
    run, sums, versions, names = metrics_run(env, [env.prog("scn_driver"), "many", "300"], {},
                                             )
    s = parse_prom(versions[-1])
    launches = by_label(s, "nvtxcorr_launches_total")
    check(len(launches) <= 100, f"{len(launches)} label series")
    check(sum(launches.values()) == sums[0]["totals"]["launches"] == 600,
          f"{sum(launches.values())} launches in the series, {sums[0]['totals']['launches']} run")
    own = [k for k in launches if k[0] != "[other]"]
    check(launches.get(("[other]", "")) == 600 - 2 * len(own) and len(own) >= 90,
          f"[other] {launches.get(('[other]', ''))}, {len(own)} own")
    check(run.err.count("NVTXCORR_METRICS: more than 100 labels") == 1, run.err)
    check(len(s) < 300, f"{len(s)} series")


@scenario
def test_metrics_unwritable_harmless(env):
    # A directory that does not exist: said once (not at every window), the program's exit
    # status and its summaries unharmed.
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-metrics-")
    try:
        e = {"NVTXCORR_PROFILE": os.path.join(tmp, "w.%w.json"), "NVTXCORR_WINDOW": "every:0.1",
             "NVTXCORR_METRICS": os.path.join(tmp, "missing", "m.prom")}
        run = env.run_ok([env.prog("scn_windows"), "loop", "600"], tool=False, env=e)
        check(run.err.count("metrics not written") == 1 and run.err.count("\n") == 1, run.err)
        check(len([n for n in os.listdir(tmp) if n.endswith(".json")]) >= 4, os.listdir(tmp))
    finally:
        shutil.rmtree(tmp)


# ---- the real Prometheus and node_exporter ----
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url, deadline):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return json.load(r)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling a server that is still starting


def poll(what, fn, deadline):
    """fn() until it returns something true (polling Prometheus's API), else fail."""
    while True:
        got = fn()
        if got:
            return got
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        time.sleep(0.1)


@scenario
def test_metrics_prometheus_scrapes_node_exporter(env):
    # node_exporter's textfile collector reads the run's .prom file, Prometheus scrapes it every
    # 100 ms; Prometheus's HTTP API then answers per label with the sums of the run's window
    # summaries (GPU seconds by launch and by kernel, launches), every sample it stored is one
    # window's close, and rate() over the run lies within what those samples allow.
    prom, nodex = shutil.which("prometheus"), shutil.which("prometheus-node-exporter")
    if not prom or not nodex:
        raise Skip("no prometheus or prometheus-node-exporter (Debian packages; scripts/test "
                   "installs them where apt-get can)")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-prom-")
    procs = []
    try:
        mdir, sdir = os.path.join(tmp, "textfile"), os.path.join(tmp, "summaries")
        os.mkdir(mdir)
        os.mkdir(sdir)
        nport, pport = free_port(), free_port()
        procs.append(subprocess.Popen(
            [nodex, f"--web.listen-address=127.0.0.1:{nport}", "--collector.disable-defaults",
             "--collector.textfile", f"--collector.textfile.directory={mdir}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node.log"), "w")))
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 100ms\n  scrape_timeout: 100ms\n"
                    "scrape_configs:\n  - job_name: node\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{nport}']\n")
        procs.append(subprocess.Popen(
            [prom, f"--config.file={os.path.join(tmp, 'prometheus.yml')}",
             f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
             f"--web.listen-address=127.0.0.1:{pport}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prom.log"), "w")))
        api = f"http://127.0.0.1:{pport}/api/v1/"

        def query(q, t=None):
            args = {"query": q}
            if t is not None:
                args["time"] = f"{t:.3f}"
            r = get_json(api + "query?" + urllib.parse.urlencode(args), time.monotonic() + 30)
            check(r["status"] == "success", f"{q}: {r}")
            return r["data"]["result"]

        deadline = time.monotonic() + 60
        poll("node_exporter's target up", lambda: [
            t for t in get_json(api + "targets", deadline)["data"]["activeTargets"]
            if t["health"] == "up"], deadline)
        # the run, its file in the collector's directory
        e = dict(fake_cupti_env(env), NVTXCORR_PROFILE=os.path.join(sdir, "w.%w.json"),
                 NVTXCORR_WINDOW="every:0.5", NVTXCORR_METRICS=os.path.join(mdir, "nvtxcorr-%p.prom"),
                 NVTXCORR_LABELS_INLINE="add1 elementwise.add category=elementwise")
        t0 = time.time()
        run = env.run_ok([env.prog("scn_windows"), "loop", "3000"], tool=False, env=e)
        check(run.err == "", run.err)
        pid = re.fullmatch(r"nvtxcorr-(\d+)\.prom", os.listdir(mdir)[0]).group(1)
        sums = []
        for name in os.listdir(sdir):
            with open(os.path.join(sdir, name)) as f:
                sums.append(json.load(f))
        sums.sort(key=lambda d: d["window"]["index"])
        check(len(sums) >= 5, f"{len(sums)} windows")
        want = {"launch": sums_by_label(sums, "labels", "gpu_ns"),
                "kernel": sums_by_label(sums, "kernel_labels", "gpu_ns"),
                "launches": sums_by_label(sums, "labels", "launches")}
        key = ("elementwise.add", "elementwise")
        check(set(want["launches"]) == {key} and want["launch"][key] > 0, f"{want}")
        sel = f'{{pid="{pid}",label="elementwise.add",category="elementwise"'
        # Prometheus has the file's last version once it answers with the windows' sums
        final = str(want["launches"][key])
        poll("the final launches in Prometheus", lambda: [
            r for r in query(f"nvtxcorr_launches_total{sel}}}") if r["value"][1] == final],
            deadline)
        t1 = time.time()
        for view in ("launch", "kernel"):
            got = query(f'nvtxcorr_gpu_seconds_total{sel},view="{view}"}}')
            check(len(got) == 1 and abs(float(got[0]["value"][1]) * 1e9 - want[view][key]) < 0.5,
                  f"view={view}: Prometheus {got}, windows {want[view][key]} ns")
            check(got[0]["metric"]["command"] == "scn_windows" and
                  got[0]["metric"]["job"] == "node", f"{got[0]['metric']}")
        # every stored sample of the launches is the sum of the windows up to one of them
        prefix, acc = set(), 0
        for d in sums:
            acc += d["totals"]["launches"]
            prefix.add(acc)
        r = int(t1 - t0) + 2
        samples = query(f"nvtxcorr_launches_total{sel}}}[{r}s]", t1)
        values = [(float(t), int(v)) for t, v in samples[0]["values"]]
        check(len(values) >= 5 and all(v in prefix for _, v in values) and
              [v for _, v in values] == sorted(v for _, v in values),
              f"samples {values}, window sums {sorted(prefix)}")
        # rate(): Prometheus extrapolates the first-to-last increase of the samples in its
        # range towards the range's edges: it lies between that increase over the range and
        # over the samples' own span
        at = min(t for t, v in values if v == int(final))  # the run's end, as scraped
        rate = query(f'rate(nvtxcorr_gpu_seconds_total{sel},view="launch"}}[3s])', at)
        raw = query(f'nvtxcorr_gpu_seconds_total{sel},view="launch"}}[3s]', at)
        pts = [(float(t), float(v)) for t, v in raw[0]["values"]]
        check(len(rate) == 1 and len(pts) >= 2, f"{rate} {pts}")
        inc = pts[-1][1] - pts[0][1]
        lo, hi = inc / 3, inc / (pts[-1][0] - pts[0][0])
        got = float(rate[0]["value"][1])
        check(inc > 0 and lo * 0.999 <= got <= hi * 1.001, f"rate {got}, bounds {lo}..{hi}, {pts}")
        # docs/profile.md's Grafana queries, per label: the same rate, and its share (one label)
        pid_sel = f'{{pid="{pid}",view="launch"}}'
        per_label = query(f"sum by (label) (rate(nvtxcorr_gpu_seconds_total{pid_sel}[3s]))", at)
        check([(r["metric"], float(r["value"][1])) for r in per_label] ==
              [({"label": "elementwise.add"}, got)], f"{per_label} vs {got}")
        share = query(f"sum by (label) (rate(nvtxcorr_gpu_seconds_total{pid_sel}[3s])) / "
                      f"ignoring(label) group_left sum(rate(nvtxcorr_gpu_seconds_total{pid_sel}"
                      "[3s]))", at)
        check(len(share) == 1 and abs(float(share[0]["value"][1]) - 1) < 1e-9, f"{share}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


@scenario
def test_metrics_launcher_option(env):
    # nvtxcorr stat --metrics PATH and nvtxcorr --profile P --metrics PATH (a relative path
    # made absolute) write the file; --metrics without --profile stops before the run.
    from test_launcher_checks import marker_command, nvtxcorr, plain
    with tempfile.TemporaryDirectory() as tmp:
        prom = os.path.join(tmp, "s.prom")
        r = nvtxcorr(env, "stat", "--library", env.lib, "--metrics", prom, "--",
                     env.prog("scn_driver"), "direct")
        check(r.rc == 0 and os.path.exists(prom), f"rc {r.rc}: {os.listdir(tmp)}: {r.err}")
        with open(prom) as f:
            got = by_label(parse_prom(f.read()), "nvtxcorr_launches_total")
        check(sum(got.values()) == 6 and len(got) == 3, f"{got}")
        r = plain(env, "--metrics", "m.prom", *marker_command(tmp), cwd=tmp)
        check(r.returncode == 2 and "--metrics needs --profile" in r.stderr and
              not os.path.exists(os.path.join(tmp, "ran")), f"{r.returncode} {r.stderr}")
        r = subprocess.run([env.launcher, "--library", env.lib,
                            "--profile", "p.json", "--metrics", "m.prom", env.prog("scn_driver"),
                            "direct"], cwd=tmp, capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items()
                                if not k.startswith(("NVTXCORR", "LD_PRELOAD"))})
        check(r.returncode == 0 and os.path.exists(os.path.join(tmp, "m.prom")),
              f"rc {r.returncode}: {os.listdir(tmp)}: {r.stderr}")
