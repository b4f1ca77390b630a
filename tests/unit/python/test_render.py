"""render: the text tables' helpers and layout rule, and the program-context tree as
nvtxcorr-tool render --tree draws it (summary_tree.c, the library's own drawing)."""
from nvtxcorr.merge import merge
from nvtxcorr.render import WIDTH, context_text, cut, fit, fmt_time, text_table


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


def ctx(path, label, launches, gpu_ns=None):
    """A merged `contexts` row (context.merge_contexts): one kernel per launch."""
    return (tuple(path), label), {"launches": launches, "gpu_kernels": gpu_ns and launches,
                                  "gpu_ns": gpu_ns, "cpu_ns": 10 * launches}


def tree(rows, gpu, top=None):
    """The tree's lines under its two heading lines, each within WIDTH."""
    lines = context_text(dict(rows), gpu, top).splitlines()
    assert lines[0] == "By program context" + (" (GPU time: inclusive, exclusive)" if gpu
                                               else "")
    assert lines[1].split() == ["context", ">", "kernel", "label"] + \
        (["incl", "excl", "kernels"] if gpu else []) + ["launches"]
    assert all(len(x) <= WIDTH for x in lines), "\n".join(lines)
    return lines[2:]


def names(lines):
    return [x[:50].rstrip() for x in lines]


def test_context_tree_largest_first_labels_among_contexts(tool):
    rows = [ctx(["a"], "k1", 3, 300), ctx(["a", "b"], "k2", 1, 500), ctx(["a"], "k3", 1, 500),
            ctx(["a", "c"], "k4", 1, 900), ctx([], "top", 9, 100), ctx(["z"], "k5", 1, 50),
            ctx(["a", "c", "d"], "k6", 2, 700)]
    lines = tree(rows, True)
    # GPU time inclusive decides; at equal time a context before a kernel label
    assert names(lines) == ["a", "  c", "    k4", "    d", "      k6", "  b", "    k2", "  k3",
                            "  k1", "top", "z", "  k5"]
    # a: 2900 ns inclusive, 800 exclusive (k1 and k3 at a itself), 8 kernels, 8 launches
    assert lines[0].split() == ["a", "2.90", "us", "800", "ns", "8", "8"]
    # a kernel label: no exclusive time
    assert lines[-1][50:].split() == ["50", "ns", "1", "1"] and lines[-1][60:70].strip() == ""
    # without GPU time: launches decide
    assert names(tree(rows, False)) == ["top", "a", "  c", "    d", "      k6", "    k4",
                                        "  k1", "  b", "    k2", "  k3", "z", "  k5"]
    # equal ones by name
    rows = [ctx([], "m", 1, 5), ctx([], "l", 1, 5), ctx(["y"], "q", 1, 5), ctx(["x"], "q", 1, 5)]
    assert names(tree(rows, True)) == ["x", "  q", "y", "  q", "l", "m"]


def test_context_tree_cuts_long_names_in_the_middle(tool):
    long = "".join(chr(ord("a") + i % 26) for i in range(80)) + "_end"
    lines = tree([ctx(["outer", long], "k", 1), ctx([long + "_label"], long, 2)], False)
    at_root = long + "_label"
    # the name column is 50 wide: the indent, the name cut to what is left but one, a space
    assert lines[0][:50] == at_root[:23] + "..." + at_root[-23:] + " "
    assert lines[1][:50] == "  " + long[:22] + "..." + long[-22:] + " "
    assert lines[2][:50] == "outer".ljust(50)
    assert lines[3][:50] == "  " + long[:22] + "..." + long[-22:] + " "
    assert lines[4][:50] == "    k".ljust(50)


def test_context_tree_says_what_top_left_out(tool):
    rows = [ctx(["outer"], f"k{i}", 10 - i) for i in range(5)] + \
        [ctx(["second"], "x", 2), ctx(["third"], "y", 1)]
    lines = tree(rows, False, 2)
    assert names(lines) == ["outer", "  k0", "  k1", "  (3 more; --top N or --top all)",
                            "second", "  x", "(1 more; --top N or --top all)"]
    assert len(tree(rows, False)) == 10
