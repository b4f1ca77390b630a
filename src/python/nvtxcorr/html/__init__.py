"""The HTML report (docs/profile.md, "HTML"): report.html with report.css and report.js inlined
is the page; the data goes between its two halves as JSON in a <script> element. The library
writes the same page at exit (NVTXCORR_PROFILE=run.html) from the same three files, turned
into a C string at build time (src/profile/output/html_template.cmake), so there is one page."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/*NVTXCORR_DATA*/"


def halves():
    """(head, tail): the page before and after its data."""
    def read(name):
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            return f.read()
    page = read("report.html").replace("/*NVTXCORR_CSS*/", read("report.css"))
    page = page.replace("/*NVTXCORR_JS*/", read("report.js"))
    head, _, tail = page.partition(DATA)
    return head, tail


def script_json(obj):
    """JSON that cannot end its <script> element: every '<' escaped (also '<!--'), and the two
    line separators JavaScript once refused in strings."""
    text = json.dumps(obj, allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def part(path, d):
    """What the per-rank and per-window views need of one file."""
    return {"file": path, "rank": d.get("rank"), "window": d.get("window"),
            "host": d.get("host"), "pid": d.get("pid"), "start_ns": d.get("start_ns"),
            "end_ns": d.get("end_ns"),
            "labels": [{"label": lab.get("label"), "gpu_ns": lab.get("gpu_ns"),
                        "cpu_ns": lab.get("cpu_ns")} for lab in d.get("labels") or []]}


def page(summaries=None, diff=None):
    """The whole page for summaries [(path, summary)] merged as the report merges them, or for
    a diff's data (diff.html_data)."""
    from nvtxcorr.render import json_object
    data = {"nvtxcorr_html": 1}
    if diff is not None:
        data["diff"] = diff
    else:
        data["summary"] = json_object(summaries)
        data["parts"] = [part(p, d) for p, d in summaries]
    head, tail = halves()
    return head + script_json(data) + tail
