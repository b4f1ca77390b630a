"""diff: what a side is, and what a mean divides by."""
from nvtxcorr.diff import fmt_pct, pct, rows


def test_by_kernel_with_gpu_time_counts_kernel_executions():
    d = {"kernels": [{"label": "mm", "launches": 1, "cpu_ns": 5, "gpu_ns": 900}],
         "kernel_labels": [{"label": "mm", "gpu_kernels": 9, "gpu_ns": 900},
                           {"label": "node", "gpu_kernels": 4, "gpu_ns": 400}]}
    assert rows([("a", d)], "kernel", True) == {"mm": [9, 900], "node": [4, 400]}
    assert rows([("a", d)], "kernel", False) == {"mm": [1, 5]}


def test_pct():
    assert pct(100, 150) == 50.0 and pct(0, 0) is None and fmt_pct(pct(0, 5)) == "new"
