"""context: the contexts rows merged, cut by --depth and --focus."""
import re

from nvtxcorr.context import folded, merge_contexts


def test_depth_and_focus():
    d = {"contexts": [{"context": ["a", "b", "c"], "label": "k", "launches": 2, "cpu_ns": 4,
                       "gpu_ns": 10, "gpu_kernels": 2}]}
    assert list(merge_contexts([("f", d)], depth=1)) == [(("a",), "k")]
    assert list(merge_contexts([("f", d)], focus=re.compile("b"))) == [(("b", "c"), "k")]
    assert folded(merge_contexts([("f", d)]), True) == "a;b;c;k 10\n"
