"""The HTML report (docs/profile.md, "HTML") in a real browser (browser.py: headless Chromium,
network off): the page of the demo (from `report --html` and from the library at exit,
NVTXCORR_PROFILE=run.html), of a 4-rank run, of windows and of a diff. Each page renders with
no error and nothing fetched; every label's bar and every context box carries the summary's
numbers; the flame graph's widths are proportional to inclusive time, also zoomed; search
finds what it should; the rank heat map's cells are the per-rank values. Screenshots of each
view go to <build>/html-screenshots for people to look at."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

from browser import Dom, open_page, screenshot  # noqa: F401 (Dom: for readers)
from harness import Skip, check, scenario, write_json
from test_report_diff import summary as crafted

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src", "python"))
from nvtxcorr.render import fmt_time  # noqa: E402 (the text report's own formatting)


def shots(env):
    return os.path.join(env.build, "html-screenshots")


def report(env, *args, rc=0):
    p = subprocess.run([env.launcher, "report", *args], capture_output=True, text=True)
    check(p.returncode == rc, f"report {args}: rc {p.returncode}: {p.stderr}")
    return p


# A string that would end the page's <script> element, open a comment and run a script.
HOSTILE = "</script><img src=x onerror=alert(1)><!--\u2028"


def demo_run(env, path, extra=None, args=()):
    """The demo with GPU time (the fake CUPTI) and program context (nvtxcorr as the NVTX
    tool), its summary in path (.json or .html); args: the program's (which it ignores)."""
    cupti = os.path.join(env.fakes, "libfake_cupti.so")
    if not os.path.exists(cupti):
        raise Skip("built without CUPTI headers: no fake CUPTI")
    run = env.run([os.path.join(env.build, "tests", "demo", "demo_infer"), *args], tool=False,
                  env={"NVTXCORR_PROFILE": path, "NVTXCORR_GPU": "1",
                       "NVTXCORR_CUPTI_LIBRARY": cupti, "NVTX_INJECTION64_PATH": env.lib,
                       "NVTXCORR_LABELS": os.path.join(ROOT, "tests", "demo", "demo.conf"),
                       **(extra or {})})
    check(run.rc == 0 and run.err == "", f"demo: {run.err}")


def page_data(path):
    """The JSON a page carries (between its data element's tags)."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="nvtxcorr-data" type="application/json">(.*?)</script>', text,
                  re.S)
    check(m, f"{path}: no data element")
    return json.loads(m.group(1))


def check_bars(dom, rows, view):
    """One bar per label that ran, in order of time, each with the label's time and count."""
    want = sorted(((r["label"], r["gpu_ns"] or 0, r["gpu_kernels"]) for r in rows
                   if (r["gpu_ns"] or 0) > 0 or r.get("launches", 0) > 0),
                  key=lambda x: (-x[1], x[0]))
    box = dom.find(id="bars")
    check(box and box[0].attrs.get("data-view") == view, f"the {view} view is not drawn")
    got = [(b.attrs["data-label"], int(b.attrs["data-ns"]), int(b.attrs["data-count"]))
           for b in dom.find("div", class_="bar")]
    check(got == want, f"{view} bars {got}, the summary's {want}")
    check(len(want) > 3, f"too few {view} labels to say anything: {want}")


def context_nodes(rows):
    """(path, leaf) -> inclusive GPU time, as the page builds its tree from `contexts`."""
    nodes = {((), False): 0}
    for r in rows:
        path = tuple(r["context"]) + ("[no label]" if r["label"] is None else r["label"],)
        v = r["gpu_ns"] or 0
        nodes[((), False)] += v
        for i in range(1, len(path) + 1):
            key = (path[:i], i == len(path))
            nodes[key] = nodes.get(key, 0) + v
    return nodes


def flame_boxes(dom):
    """(path, leaf) -> (incl, width %, classes) of each box drawn."""
    out = {}
    for b in dom.find("div", class_="box"):
        cls = b.attrs["class"].split()
        key = (tuple(json.loads(b.attrs["data-path"])), "leaf" in cls)
        check(key not in out, f"box {key} twice")
        out[key] = (int(b.attrs["data-incl"]), float(b.attrs["data-width"]), cls)
    return out


def check_flame(dom, rows, zoom=()):
    """Every context box (under the zoomed one) with its inclusive time, as wide as its share
    of the zoomed box's time; the boxes above it full width; nothing else."""
    nodes = context_nodes(rows)
    top = nodes[(tuple(zoom), False)]
    want = {k: v for k, v in nodes.items() if (k == (tuple(zoom), False) or (
            len(k[0]) > len(zoom) and k[0][:len(zoom)] == tuple(zoom)))
            and (v == 0 or 100 * v / top >= 0.01)}
    above = {(tuple(zoom[:i]), False) for i in range(len(zoom))}
    got = flame_boxes(dom)
    check(set(got) == set(want) | above, f"boxes {sorted(set(got) ^ (set(want) | above))} "
          "differ from the summary's context rows")
    for k, v in want.items():
        incl, width, _ = got[k]
        check(incl == v, f"box {k}: {incl} ns inclusive, the rows say {v}")
        check(abs(width - 100 * v / top) < 1e-6, f"box {k}: {width}% wide for {v} of {top} ns")
    for k in above:
        check(got[k][1] == 100 and "above" in got[k][2], f"box {k} above the zoom: {got[k]}")
    check(dom.find(id="flame")[0].attrs["data-zoom"] == json.dumps(list(zoom),
                                                                   separators=(",", ":")),
          "the zoom the page says it drew")
    return got


def fragment_zoom(path):
    return "zoom=" + quote(json.dumps(list(path), separators=(",", ":"), ensure_ascii=False))


def check_search(dom, rows, q):
    """The boxes whose name holds q are marked, and the share said is theirs (a match inside
    a match counted once)."""
    nodes = context_nodes(rows)
    hits = {k for k in nodes if k[0] and q.lower() in k[0][-1].lower()}
    ns = sum(v for k, v in nodes.items() if k in hits and not any(
        (k[0][:i], False) in hits for i in range(1, len(k[0]))))
    marked = {k for k, (_, _, cls) in flame_boxes(dom).items() if "match" in cls}
    check(marked == hits and hits, f"search {q!r}: marked {marked}, matching {hits}")
    found = dom.find(id="flame-found")[0].attrs
    check(int(found["data-hits"]) == len(hits) and int(found["data-ns"]) == ns,
          f"search {q!r}: the page says {found}, expected {len(hits)} boxes, {ns} ns")


def table_rows(dom, table_id):
    """The body rows of a table, in the order shown."""
    body = [e for e in dom.find(id=table_id)[0].children if e.tag == "tbody"]
    return [r for r in body[0].children if r.tag == "tr"]


def check_page_is_safe(env, tmp):
    """The checks can fail: a page that fetches something, or whose script throws, is caught."""
    good = os.path.join(tmp, "control.html")
    for name, inject in (("fetch", '<img src="http://example.com/x.png">'),
                         ("throw", "<script>null.x()</script>")):
        bad = os.path.join(tmp, f"bad-{name}.html")
        text = open(good, encoding="utf-8").read().replace("</body>", inject + "</body>")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            open_page(bad)
        except AssertionError:
            continue
        check(False, f"a page that does {name!r} passed the checks")


@scenario
def test_html_demo_report(env):
    """report --html of the demo's summary: header, bars by launch and kernel label, the
    context flame graph (whole, zoomed, searched), graphs, the tables' numbers."""
    with tempfile.TemporaryDirectory() as tmp:
        src, page = os.path.join(tmp, "run.json"), os.path.join(tmp, "demo.html")
        demo_run(env, src)
        d = json.load(open(src))
        p = report(env, "--html", "-o", page, src)
        check(p.stdout.strip() == page, f"report --html prints the page's path: {p.stdout}")
        check(page_data(page)["summary"] == d, "the page carries the summary as it was")
        dom, body = open_page(page)
        check_bars(dom, d["labels"], "launch")
        check_flame(dom, d["contexts"])
        head = {dt.all_text(): dd.all_text() for dt, dd in zip(dom.find("dt"), dom.find("dd"))}
        check(head.get("launches") == str(d["totals"]["launches"]) and
              head.get("GPU time", "").startswith(fmt_time(d["totals"]["gpu_ns"])),
              f"header {head}")
        # The table: each label's row, its cells the summary's values in the text report's form.
        rows = {r.attrs["data-key"]: r for r in table_rows(dom, "labels-table")}
        for lab in d["labels"]:
            cells = [c for c in rows[lab["label"]].children if c.tag == "td"]
            check(int(cells[2].attrs["data-v"]) == lab["launches"] and
                  cells[4].all_text() == fmt_time(lab["cpu_ns"]) and
                  cells[8].all_text() == fmt_time(lab["gpu_ns"]),
                  f"table row of {lab['label']}: {[c.all_text() for c in cells]}")
        for g in d["graphs"]:
            drawn = [(int(r.attrs["data-bucket"]), int(r.attrs["data-count"]))
                     for r in dom.find("rect") if "data-bucket" in r.attrs]
            check(drawn == [tuple(x) for x in g["gpu_replay_histogram"]],
                  f"replay histogram {drawn}")
        dom, _ = open_page(page, size="390,844")  # a phone
        check_bars(dom, d["labels"], "launch")
        dom, _ = open_page(page, "view=kernel")
        check_bars(dom, d["kernel_labels"], "kernel")
        dom, _ = open_page(page, "click=" + quote("nav.views button[value=kernel]"))
        check_bars(dom, d["kernel_labels"], "kernel")
        # Zoom on a range with ranges under it: from the address, by a click, by Enter on the
        # box; out again by a click on the box above; search, typed and from the address.
        zoom = max((k[0] for k in context_nodes(d["contexts"]) if len(k[0]) == 2 and not k[1]),
                   key=lambda p: context_nodes(d["contexts"])[(p, False)])
        dom, _ = open_page(page, fragment_zoom(zoom))
        check_flame(dom, d["contexts"], zoom)
        box = quote(f"#flame .box[data-key='{json.dumps(list(zoom), separators=(',', ':'))}']")
        dom, _ = open_page(page, "click=" + box)
        check_flame(dom, d["contexts"], zoom)
        dom, _ = open_page(page, "press=" + box)
        check_flame(dom, d["contexts"], zoom)
        dom, _ = open_page(page, "click=" + box + "&click=" + quote("#flame .box.above[data-key='[]']"))
        check_flame(dom, d["contexts"])
        dom, _ = open_page(page, "press=" + box + "&escape=" + box)  # out one level: its parent
        check_flame(dom, d["contexts"], zoom[:-1])
        # The keyboard reaches every box at least 1% wide (narrower ones once zoomed in).
        for k, (_, width, _) in flame_boxes(dom).items():
            b = [e for e in dom.find("div", class_="box")
                 if (tuple(json.loads(e.attrs["data-path"])), "leaf" in e.attrs["class"]) == k][0]
            check(b.attrs["tabindex"] == ("0" if width >= 1 else "-1"), f"box {k}: tabindex")
        dom, _ = open_page(page, "q=attn")
        check_search(dom, d["contexts"], "attn")
        dom, _ = open_page(page, "type=attn")
        check_search(dom, d["contexts"], "attn")
        dom, _ = open_page(page, "q=DE")  # nested matches (decode.step, attention.decode)
        check_search(dom, d["contexts"], "DE")
        # The table sorted by a click on its CPU time heading (largest first), twice (smallest).
        head = quote("#labels-table th:nth-child(5) button")
        for clicks, order in ((1, -1), (2, 1)):
            dom, _ = open_page(page, "&".join(["click=" + head] * clicks))
            got = [r.attrs["data-key"] for r in table_rows(dom, "labels-table")]
            want = [lab["label"] for lab in sorted(d["labels"], key=lambda x: order * x["cpu_ns"])]
            check(got == want, f"sorted by CPU time ({clicks} clicks): {got}, expected {want}")
        os.replace(page, os.path.join(tmp, "control.html"))
        check_page_is_safe(env, tmp)
        page = os.path.join(tmp, "control.html")
        for name, frag, size in (("demo", "", "1280,800"), ("demo-full", "", "1280,2200"),
                                 ("demo-phone", "", "390,844"),
                                 ("demo-zoomed-search", fragment_zoom(zoom) + "&q=attn",
                                  "1280,2200"), ("demo-kernel-labels", "view=kernel",
                                                 "1280,800")):
            screenshot(page, os.path.join(shots(env), name + ".png"), frag, size)


@scenario
def test_html_written_by_the_library(env):
    """NVTXCORR_PROFILE=run.html: the library writes the page at exit (no Python), with its JSON
    inside, which is a summary the report reads; the page draws it as the report's does."""
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "run.html")
        demo_run(env, page, args=[HOSTILE])
        d = page_data(page)
        check(d.get("nvtxcorr_profile") == 1 and d["gpu_time"], f"the page's JSON: {list(d)}")
        check(d["command"][1:] == [HOSTILE], f"the command as run: {d['command']}")
        src = write_json(tmp, "from-page.json", d)
        report(env, src)
        dom, _ = open_page(page)
        check_bars(dom, d["labels"], "launch")
        check_flame(dom, d["contexts"])
        # The page is the report's template, byte for byte around the data.
        sys.path.insert(0, os.path.join(ROOT, "src", "python"))
        from nvtxcorr.html import halves
        head, tail = halves()
        text = open(page, encoding="utf-8").read()
        check(text.startswith(head) and text.endswith(tail), "the library's page is not the "
              "template around the JSON")
        screenshot(page, os.path.join(shots(env), "library.png"))


@scenario
def test_html_four_ranks(env):
    """A 4-rank run of the demo (RANK, WORLD_SIZE): the heat map's cells are each rank's GPU
    time per label, the slowest rank of each label outlined (one rank's allreduce made 3 times
    slower in its summary, so the mark has something to find)."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for rank in range(4):
            path = os.path.join(tmp, f"p.{rank}.json")
            demo_run(env, path, {"RANK": str(rank), "WORLD_SIZE": "4"})
            files.append(path)
        d2 = json.load(open(files[2]))
        for lab in d2["labels"]:
            if lab["label"] == "allreduce":
                lab["gpu_ns"] *= 3
        write_json(tmp, "p.2.json", d2)
        sums = {str(json.load(open(f))["rank"]): json.load(open(f)) for f in files}
        page = os.path.join(tmp, "ranks.html")
        report(env, "--html", "-o", page, *files)
        dom, _ = open_page(page)
        head = {dt.all_text(): dd.all_text() for dt, dd in zip(dom.find("dt"), dom.find("dd"))}
        span = max(d["end_ns"] for d in sums.values()) - min(d["start_ns"] for d in sums.values())
        check(head.get("ranks") == "0, 1, 2, 3" and head.get("processes") == "4" and
              head.get("duration") == fmt_time(span), f"header {head}")
        cells = dom.find("td", class_="heat")
        check(cells, "no heat map")
        seen = set()
        for c in cells:
            label, rank = c.attrs["data-label"], c.attrs["data-rank"]
            want = next(lab["gpu_ns"] or 0 for lab in sums[rank]["labels"]
                        if lab["label"] == label)
            check(int(c.attrs["data-ns"]) == want, f"{label} on rank {rank}: "
                  f"{c.attrs['data-ns']}, the summary says {want}")
            per = [next(lab["gpu_ns"] or 0 for lab in sums[r]["labels"] if lab["label"] == label)
                   for r in "0123"]
            # ranks alike: none marked
            slowest = str(per.index(max(per))) if max(per) > min(per) else None
            check(("slowest" in c.attrs["class"].split()) == (rank == slowest),
                  f"{label}: rank {rank} marked {c.attrs['class']}, slowest is {slowest}")
            seen.add((label, rank))
        labels = {lab["label"] for lab in sums["0"]["labels"] if lab["gpu_ns"]}
        check(seen >= {(lab, r) for lab in labels for r in "0123"}, f"cells {sorted(seen)}")
        check("slowest" in [c for c in cells if c.attrs["data-label"] == "allreduce" and
                            c.attrs["data-rank"] == "2"][0].attrs["class"], "allreduce on 2")
        screenshot(page, os.path.join(shots(env), "ranks.png"), "", "1280,2600")


@scenario
def test_html_windows(env):
    """Windows' summaries: the stacked chart has, per window, each label's GPU time."""
    rows = [{"prefill": (3, 100, 5000 * (w + 1)), "decode": (9, 300, 2000 * (4 - w)),
             "allreduce": (2, 50, 700 * w)} for w in range(4)]
    with tempfile.TemporaryDirectory() as tmp:
        files = [write_json(tmp, f"w.{w}.json", crafted(r, gpu=True, window=w + 1))
                 for w, r in enumerate(rows)]
        page = os.path.join(tmp, "windows.html")
        report(env, "--html", "-o", page, *files)
        dom, _ = open_page(page)
        got = {(int(r.attrs["data-window"]), r.attrs["data-label"]): int(r.attrs["data-ns"])
               for r in dom.find("rect") if "data-window" in r.attrs}
        want = {(w + 1, k): v[2] for w, r in enumerate(rows) for k, v in r.items() if v[2]}
        check(got == want, f"windows chart {got}, the summaries' {want}")
        screenshot(page, os.path.join(shots(env), "windows.png"), "", "1280,1400")


@scenario
def test_html_diff(env):
    """report --html --diff A B --threshold: per label and per context, the largest change
    first, each side's numbers, and the threshold's verdict (exit 1 as the text diff)."""
    a = crafted({"gemm": (10, 100, 10000), "attn": (10, 100, 5000), "norm": (10, 100, 900)},
                gpu=True)
    b = crafted({"gemm": (10, 100, 10500), "attn": (10, 100, 9000), "norm": (10, 100, 300)},
                gpu=True)
    def ctx(path, label, n, ns):
        return {"context": path, "label": label, "launches": n, "gpu_kernels": n, "gpu_ns": ns,
                "cpu_ns": 1}
    a["contexts"] = [ctx(["step", "attn"], "attn", 10, 5000), ctx(["step"], "gemm", 10, 10000),
                     ctx([], "norm", 10, 900)]
    b["contexts"] = [ctx(["step", "attn"], "attn", 10, 9000), ctx(["step"], "gemm", 10, 10500),
                     ctx([], "norm", 5, 200), ctx(["other"], "norm", 5, 100)]
    with tempfile.TemporaryDirectory() as tmp:
        fa, fb = write_json(tmp, "a.json", a), write_json(tmp, "b.json", b)
        page = os.path.join(tmp, "diff.html")
        report(env, "--html", "--diff", fa, fb, "--threshold", "10", "-o", page, rc=1)
        dom, _ = open_page(page)
        verdict = dom.find(id="verdict")[0]
        check("fail" in verdict.attrs["class"] and verdict.attrs["data-slower"] == "1" and
              "attn" in verdict.all_text(), f"verdict: {verdict.all_text()}")
        got = [[c.attrs["data-v"] for c in tr.children] for tr in table_rows(dom, "diff-label")]
        check(got == [["attn", "10", "10", "5000", "9000", "4000", "80"],
                      ["norm", "10", "10", "900", "300", "-600", "-66.7"],
                      ["gemm", "10", "10", "10000", "10500", "500", "5"]], f"diff rows {got}")
        got = [[c.attrs["data-v"] for c in tr.children] for tr in table_rows(dom, "diff-context")]
        check(got == [["step > attn > attn", "10", "10", "5000", "9000", "4000", "80"],
                      ["norm", "10", "5", "900", "200", "-700", "-77.8"],
                      ["step > gemm", "10", "10", "10000", "10500", "500", "5"],
                      ["other > norm", "0", "5", "0", "100", "100", "new"]],
              f"diff rows by context {got}")
        report(env, "--html", "--diff", fa, fb, "--threshold", "100", "-o", page, "-f")
        dom, _ = open_page(page)
        check("pass" in dom.find(id="verdict")[0].attrs["class"], "nothing past 100%")
        screenshot(page, os.path.join(shots(env), "diff.png"), "", "1280,800")


@scenario
def test_html_hostile_label(env):
    """Names from the program the page must take as text: a label that would close the page's
    <script> (and a line separator), labels and ranges named like JavaScript's own properties
    (constructor, __proto__, toString), over two ranks. The page renders, each name as it
    was, with its numbers, in the bars, the flame graph and the heat map."""
    names = [HOSTILE, "constructor", "__proto__", "toString"]
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for rank in (0, 1):
            d = crafted({n: (3, 100, 500 * (i + 1) + 7 * rank) for i, n in enumerate(names)},
                        gpu=True, rank=rank)
            d["contexts"] = [{"context": ["constructor", "__proto__"], "label": n, "launches": 3,
                              "gpu_kernels": 3, "gpu_ns": 500 * (i + 1) + 7 * rank, "cpu_ns": 100}
                             for i, n in enumerate(names)]
            files.append(write_json(tmp, f"h.{rank}.json", d))
        page = os.path.join(tmp, "h.html")
        report(env, "--html", "-o", page, *files)
        merged = page_data(page)["summary"]
        dom, _ = open_page(page)
        check_bars(dom, merged["labels"], "launch")
        check_flame(dom, merged["contexts"])
        check(not dom.find("img"), "a label became an element")
        cells = {(c.attrs["data-label"], c.attrs["data-rank"]): int(c.attrs["data-ns"])
                 for c in dom.find("td", class_="heat")}
        check(cells == {(n, str(r)): 500 * (i + 1) + 7 * r for i, n in enumerate(names)
                        for r in (0, 1)}, f"heat map {cells}")


def big_summary(launches=1_000_000, contexts=10_000):
    """A summary of `launches` launches over `contexts` (context, label) rows: 100 ranges of
    10 under each of 10 outer ones, 10 labels each, and 200 labels."""
    labels, rows = [f"label.{i}" for i in range(200)], []
    per = launches // contexts
    for i in range(contexts):
        path = [f"outer.{i % 10}", f"mid.{i // 10 % 100}", f"inner.{i // 1000}"]
        rows.append({"context": path, "label": labels[i % 200], "launches": per,
                     "gpu_kernels": per, "gpu_ns": per * (1000 + i % 977), "cpu_ns": per * 300})
    d = crafted({lab: (launches // 200, 300 * launches // 200, 1000 * launches // 200)
                 for lab in labels}, gpu=True)
    d["contexts"] = rows
    d["totals"] = {"launches": launches, "cpu_ns": 300 * launches,
                   "gpu_ns": sum(r["gpu_ns"] for r in rows), "gpu_kernels": launches}
    return d


@scenario
def test_html_big_summary_renders(env):
    """A 1,000,000-launch, 10,000-context summary renders in headless Chromium, with every box
    of the flame graph there that is wide enough to draw. How long it takes is measured, not
    tested (the page's own measure is printed; docs/performance.md has the figures)."""
    with tempfile.TemporaryDirectory() as tmp:
        d = big_summary()
        f = write_json(tmp, "big.json", d)
        page = os.path.join(tmp, "big.html")
        report(env, "--html", "-o", page, f)
        start = time.monotonic()
        dom, body = open_page(page)
        wall = time.monotonic() - start
        ms, script = float(body["data-page-ms"]), float(body["data-render-ms"])
        boxes = len(dom.find("div", class_="box"))
        print(f"big summary: {len(d['contexts'])} context rows, {boxes} boxes, page size "
              f"{os.path.getsize(page)} bytes, drawn {ms:.0f} ms after navigation (the script "
              f"and layout {script:.0f} ms), chromium's whole run {wall:.2f} s")
        check(boxes > 10_000, f"only {boxes} boxes drawn")
        check_flame(dom, d["contexts"])  # each with its numbers, the narrowest left out


@scenario
def test_html_windowed_run(env):
    """A windowed run (cudaProfilerApi, three windows, GPU time): the library writes one page
    per window (w.%w.html), each drawing its own window; report --html of the windows' JSON
    stacks each window's GPU time per label."""
    from test_cupti import fake_cupti
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-html-windows-")
    try:
        for ext in ("json", "html"):
            env.run_ok([env.prog("scn_windows"), "api", "direct"], tool=False,
                       env={"NVTXCORR_PROFILE": os.path.join(tmp, f"w.%w.{ext}"),
                            "NVTXCORR_WINDOW": "cudaProfilerApi", "NVTXCORR_GPU": "1",
                            "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)})
        files = [os.path.join(tmp, f"w.{w}.json") for w in (1, 2, 3)]
        sums = [json.load(open(f)) for f in files]
        for w, d in enumerate(sums, 1):
            page = os.path.join(tmp, f"w.{w}.html")
            mine = page_data(page)
            check(mine["window"]["index"] == w, f"{page}: window {mine['window']}")
            dom, _ = open_page(page)
            got = {b.attrs["data-label"]: int(b.attrs["data-ns"])
                   for b in dom.find("div", class_="bar")}
            check(got == {lab["label"]: lab["gpu_ns"] for lab in mine["labels"]
                          if lab["gpu_ns"] or lab["launches"]}, f"window {w}'s page: {got}")
            check(got == {lab["label"]: lab["gpu_ns"] for lab in d["labels"]
                          if lab["gpu_ns"] or lab["launches"]},
                  f"window {w}: its page and its JSON (separate runs) differ: {got}")
        page = os.path.join(tmp, "windows.html")
        report(env, "--html", "-o", page, *files)
        dom, _ = open_page(page)
        got = {(int(r.attrs["data-window"]), r.attrs["data-label"]): int(r.attrs["data-ns"])
               for r in dom.find("rect") if "data-window" in r.attrs}
        want = {(d["window"]["index"], lab["label"]): lab["gpu_ns"] for d in sums
                for lab in d["labels"] if lab["gpu_ns"]}
        check(got == want and len(want) >= 6, f"windows chart {got}, the summaries' {want}")
        head = {dt.all_text(): dd.all_text() for dt, dd in zip(dom.find("dt"), dom.find("dd"))}
        check(head.get("processes") == "1" and head.get("windows") == "3", f"header {head}")
        screenshot(page, os.path.join(shots(env), "windowed-run.png"), "", "1280,1400")
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


@scenario
def test_html_stat(env):
    """stat --html: the table on stderr as ever, the page in report.html (in the current
    directory) or in -o, with the run's numbers; -o run.html alone picks the page by its
    extension."""
    from test_cupti import fake_cupti
    demo = os.path.join(env.build, "tests", "demo", "demo_infer")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    e.update(LD_LIBRARY_PATH=env.fakes, NVTXCORR_CUPTI_LIBRARY=fake_cupti(env))
    labels = os.path.join(ROOT, "tests", "demo", "demo.conf")
    with tempfile.TemporaryDirectory() as tmp:
        for opts, page in ((["--html"], "report.html"), (["--html", "-o", "mine.html"], "mine.html"),
                           (["-o", "ext.html"], "ext.html")):
            p = subprocess.run([env.launcher, "stat", "--library", env.lib, "--labels", labels,
                                *opts, "--", demo], cwd=tmp, env=e, capture_output=True,
                               text=True, timeout=120)
            check(p.returncode == 0 and "by launch label" in p.stderr,
                  f"stat {opts}: rc {p.returncode}: {p.stderr[-2000:]}")
            d = page_data(os.path.join(tmp, page))["summary"]
            dom, _ = open_page(os.path.join(tmp, page))
            check_bars(dom, d["labels"], "launch")
            check_flame(dom, d["contexts"])
            check(d["gpu_time"] and any(r["context"] for r in d["contexts"]),
                  f"stat {opts}: GPU time and program context in the page")
        # Windows: all in one page, or a page per window in a directory.
        os.mkdir(os.path.join(tmp, "pages"))
        for out in ("windows.html", "pages"):
            p = subprocess.run([env.launcher, "stat", "--library", env.lib, "--window",
                                "cudaProfilerApi", "--html", "-o", out, "--",
                                env.prog("scn_windows"), "api", "direct"], cwd=tmp, env=e,
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 0, f"stat --window --html -o {out}: {p.stderr[-2000:]}")
        dom, _ = open_page(os.path.join(tmp, "windows.html"))
        drawn = {int(r.attrs["data-window"]) for r in dom.find("rect") if "data-window" in r.attrs}
        check(drawn == {1, 2, 3}, f"stat --window --html: windows drawn {drawn}")
        pages = sorted(os.listdir(os.path.join(tmp, "pages")))
        check(len(pages) == 3 and all(n.endswith(".html") for n in pages), f"pages {pages}")
        for n in pages:
            d = page_data(os.path.join(tmp, "pages", n))["summary"]
            check(d["window"]["index"] == int(n.split(".")[-2]), f"{n}: {d['window']}")
