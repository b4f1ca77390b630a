"""diff: what a side is, and what a mean divides by."""
import io

from nvtxcorr.diff import diff, fmt_pct, pct, rows


def test_by_kernel_with_gpu_time_counts_kernel_executions():
    d = {"kernels": [{"label": "mm", "launches": 1, "cpu_ns": 5, "gpu_ns": 900}],
         "kernel_labels": [{"label": "mm", "gpu_kernels": 9, "gpu_ns": 900},
                           {"label": "node", "gpu_kernels": 4, "gpu_ns": 400}]}
    assert rows([("a", d)], "kernel", True) == {"mm": [9, 900], "node": [4, 400]}
    assert rows([("a", d)], "kernel", False) == {"mm": [1, 5]}


def test_pct():
    assert pct(100, 150) == 50.0 and pct(0, 0) is None and fmt_pct(pct(0, 5)) == "new"


def side(window_ns, labels, pid=1):
    """One summary of one window: label -> (launches, cpu_ns)."""
    return [("s.json", {"pid": pid, "host": "h", "gpu_time": False,
                        "window": {"index": 1, "start_ns": 0, "end_ns": window_ns},
                        "labels": [{"label": k, "launches": n, "cpu_ns": t}
                                   for k, (n, t) in labels.items()]})]


def table(a, b, **kw):
    out = io.StringIO()
    status = diff(a, b, "label", kw.get("threshold"), out)
    return status, out.getvalue().splitlines()


def test_windows_of_very_different_length_compare_per_launch_only():
    """The same work (10 launches of 1 ms) in a window of 10 s and one of 12.7 ms: per second
    B is 787x busier, which says nothing of how fast its launches ran."""
    status, lines = table(side(10 * 10**9, {"mm": (10, 10**7)}),
                          side(12_700_000, {"mm": (10, 10**7)}), threshold=5)
    assert status == 0 and "per launch" in lines[0] and "A time " in lines[1], lines
    assert lines[2].split() == ["mm", "10", "10", "10.0", "ms", "10.0", "ms", "-", "1.00", "ms",
                                "1.00", "ms", "+0.0%"], lines


def test_windows_of_somewhat_different_length_compare_per_second():
    status, lines = table(side(10**9, {"mm": (10, 10**7)}),
                          side(2 * 10**9, {"mm": (20, 2 * 10**7)}))
    assert "per second" in lines[0] and "A time/s" in lines[1], lines
    assert lines[2].split() == ["mm", "10", "20", "10.0", "ms", "10.0", "ms", "+0.0%", "1.00",
                                "ms", "1.00", "ms", "+0.0%"], lines


def test_rows_with_nothing_on_either_side_are_left_out():
    status, lines = table(side(10**9, {"mm": (1, 100), "idle": (0, 0)}),
                          side(10**9, {"mm": (1, 100), "idle": (0, 0), "gone": (0, 0)}))
    assert [line.split()[0] for line in lines[2:]] == ["mm"], lines
