"""stat: -o's checks and writing."""
import os

from nvtxcorr.stat import format_of, output_problem, write_output


def test_format_of():
    assert format_of("x.json") == "json" and format_of("x.csv") == "csv"
    assert format_of("-") == "text" and format_of("x.json", "csv") == "csv"


def test_output_problem(tmp_path):
    p = tmp_path / "x.json"
    assert output_problem(str(p), False) is None
    p.write_text("{}")
    assert output_problem(str(p), False) == "exists (-f overwrites it)"
    assert output_problem(str(p), True) is None
    assert output_problem(str(tmp_path / "no" / "x"), False) == "no such directory"


def test_write_output_never_half_replaces(tmp_path):
    p = tmp_path / "x.txt"
    assert write_output(str(p), "one", False) is None
    assert write_output(str(p), "two", False) == "exists (-f overwrites it)"
    assert write_output(str(p), "two", True) is None and p.read_text() == "two"
    assert [n for n in os.listdir(tmp_path)] == ["x.txt"]
