"""rank: ranks from the summaries themselves, the missing ones named."""
from nvtxcorr.rank import by_rank, missing_ranks, rank_of


def test_rank_of():
    assert rank_of({"rank": "3"}) == 3 and rank_of({"rank": 2}) == 2
    assert rank_of({"rank": None}) is None and rank_of({"rank": "x"}) is None


def test_missing_ranks():
    assert missing_ranks([0, 1, 3], 4) == "2 (world size 4)"
    assert missing_ranks([0, 1], 2) == ""


def label(name, cpu):
    return {"label": name, "category": None, "launches": 1, "graph_launches": 0, "errors": 0,
            "capture_launches": 0, "cpu_ns": cpu, "cpu_min_ns": cpu, "cpu_max_ns": cpu,
            "cpu_histogram": [[20, 1]]}


def test_by_rank_from_summaries_alone(capsys):
    s = [(f"p{r}", {"pid": 10 + r, "rank": str(r), "labels": [label("mm", 100 * (r + 1))],
                    "kernels": []}) for r in (0, 1)]
    text = by_rank(s, {}, None)
    lines = text.splitlines()
    assert lines[1].split()[1:] == ["rank", "0", "rank", "1"]
    assert lines[2].split() == ["mm", "100", "ns", "200", "ns*"]
    assert capsys.readouterr().err == ""
