"""nvtxcorr/html: the page's two halves and the JSON that goes between them."""
import json
import re

from nvtxcorr import html


def test_halves_are_the_template_with_style_and_script_in():
    head, tail = html.halves()
    assert head.rstrip().endswith('<script id="nvtxcorr-data" type="application/json">')
    assert tail.startswith("</script>")
    assert "/*NVTXCORR_" not in head + tail
    assert ".box.leaf" in head and "function flame()" in tail


def test_nothing_in_the_page_is_fetched():
    head, tail = html.halves()
    page = head + tail
    assert not re.search(r"""\b(src|href)\s*=|url\(|@import|https?://(?!www\.w3\.org/2000/svg)""",
                         page), "the page names something to fetch"
    assert "default-src 'none'" in page


def test_script_json_cannot_end_its_element():
    hostile = {"label": "</script><script>alert(1)</script><!--", "sep": "a\u2028b\u2029c"}
    text = html.script_json(hostile)
    assert "<" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == hostile


def test_page_carries_the_merge_and_each_file():
    d = {"nvtxcorr_profile": 1, "pid": 7, "host": "h", "rank": 3, "gpu_time": False,
         "labels": [{"label": "a<b", "gpu_ns": None, "cpu_ns": 5, "launches": 1}],
         "kernels": [], "totals": {}}
    page = html.page([("x.json", d)])
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', page, re.S)[1])
    assert data["summary"] == d
    assert data["parts"] == [{"file": "x.json", "rank": 3, "window": None, "host": "h",
                              "pid": 7, "start_ns": None, "end_ns": None, "labels": [{"label": "a<b", "gpu_ns": None,
                                                    "cpu_ns": 5}]}]


def test_report_html_refuses_what_it_cannot_draw():
    import pytest
    from nvtxcorr.options import Usage
    from nvtxcorr.report import check_args
    for args in ({"html": True, "csv": True}, {"html": True, "by": "kernel"},
                 {"output": "x.html"}):
        with pytest.raises(Usage):
            check_args(args, ["a.json"])
    check_args({"html": True, "output": "x.html"}, ["a.json"])
    check_args({"html": True, "diff": True, "threshold": 5.0}, ["a", "b"])
