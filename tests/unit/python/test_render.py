"""render: the text tables' helpers and layout rule."""
from nvtxcorr.merge import merge
from nvtxcorr.render import WIDTH, context_tree, cut, fit, fmt_time, text_table


def test_fmt_time():
    assert fmt_time(999) == "999 ns"
    assert fmt_time(1500) == "1.50 us"
    assert fmt_time(12300000) == "12.3 ms"


def test_cut_in_the_middle():
    assert cut("abcdefghij", 7) == "ab...ij"
    assert cut("short", 10) == "short"
    assert cut(None, 5) == "-"


def test_fit_leaves_the_second_column_its_minimum():
    w1, w2 = fit(54, ["x" * 80], ["y" * 80])
    assert w1 + 1 + w2 + 54 == WIDTH and w2 == 22


def row(label, n):
    return {"label": label, "category": None, "launches": n, "graph_launches": 0, "errors": 0,
            "capture_launches": 0, "cpu_ns": 10 * n, "cpu_min_ns": 10, "cpu_max_ns": 10,
            "cpu_histogram": [[9, n]]}


def test_windows_of_one_process_are_one_process():
    s = [(f"w{i}", {"pid": 5, "labels": [row("a", 1)], "kernels": [], "window": {"index": i}})
         for i in range(3)]
    head = text_table(merge(s), "label", s).splitlines()[0]
    assert head.startswith("nvtxcorr: profile of pid 5 (3 windows): 3 launches")


def test_context_tree_says_what_top_left_out():
    rows = {(("outer",), f"k{i}"): {"launches": 1, "gpu_ns": None, "gpu_kernels": None,
                                      "cpu_ns": 1} for i in range(5)}
    text = context_tree(rows, False, 2)
    assert "(3 more; --top N or --top all)" in text
    assert all(len(x) <= WIDTH for x in text.splitlines())
