"""options: the one declaration of every option, the parser, and docs/usage.md's table."""
import os
import re

import pytest

from nvtxcorr import options
from nvtxcorr.options import REPORT, RUN, STAT, Usage, parse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def test_docs_table_is_the_declaration():
    text = open(os.path.join(ROOT, "docs", "usage.md"), encoding="utf-8").read()
    m = re.search(r"<!-- options table: .*? -->\n(.*?)<!-- end of options table -->", text, re.S)
    assert m, "docs/usage.md has no options table markers"
    assert m.group(1) == options.markdown_table(), \
        "docs/usage.md's option table differs: python3 -m nvtxcorr.options prints it"


def test_help_lists_every_option_of_its_command():
    for command in (RUN, STAT, REPORT):
        text = options.option_lines(command)
        for o in options.OPTIONS:
            listed = re.search("^  " + re.escape(", ".join(o.names)) + r"\b", text, re.M)
            assert bool(listed) == (command in o.commands), (command, o.names)


def test_both_forms_of_a_value():
    assert parse(RUN, ["--log=warn", "x"]) == ({"log": "warn"}, ["x"])
    assert parse(RUN, ["--log", "warn", "x"]) == ({"log": "warn"}, ["x"])


def test_program_ends_the_options():
    values, rest = parse(RUN, ["--keep-going", "prog", "--log", "x"])
    assert values == {"keep_going": True} and rest == ["prog", "--log", "x"]
    values, rest = parse(RUN, ["--", "--weird"])
    assert values["forced"] and rest == ["--weird"]


def test_report_mixes_options_and_files():
    values, rest = parse(REPORT, ["a.json", "--by", "kernel", "b.json"], stop_at_program=False)
    assert values == {"by": "kernel"} and rest == ["a.json", "b.json"]


@pytest.mark.parametrize("argv, words", [
    (["--tpo", "3", "prog"], "did you mean --top?"),
    (["--top", "0", "prog"], "positive count"),
    (["--sort", "size", "prog"], "gpu, cpu, launches"),
    (["--top"], "--top needs a value"),
    (["--profile", "p", "prog"], "--profile is not for stat"),
])
def test_stat_errors(argv, words):
    with pytest.raises(Usage) as e:
        parse(STAT, argv)
    assert words in str(e.value)


def test_values_checked():
    with pytest.raises(Usage, match="error, warn, info, debug"):
        parse(RUN, ["--log", "verbose", "x"])
    assert parse(RUN, ["--capture", "SKIP", "x"])[0] == {"capture": "SKIP"}
    with pytest.raises(Usage, match="percentage"):
        parse(REPORT, ["--threshold", "-5"], stop_at_program=False)


def test_stat_option_on_the_plain_launcher():
    with pytest.raises(Usage, match="is for nvtxcorr stat"):
        parse(RUN, ["-o", "x", "prog"])


def test_one_of_a_group():
    with pytest.raises(Usage, match="do not go together"):
        parse(REPORT, ["--csv", "--json", "a"], stop_at_program=False)


def test_closest():
    assert options.closest("reprot", ["report", "stat"]) == "report"
    assert options.closest("xyz", ["report", "stat"]) is None


def test_stat_hands_the_front_ends_options_on_as_given():
    passthrough = []
    values, rest = parse(STAT, ["--log=verbose", "-o", "x.json", "--trace", "t.json", "-f",
                                "--", "prog"], passthrough=passthrough)
    # --log's value is the front end's to check (it says the same: test_frontend.py)
    assert passthrough == ["--log=verbose", "--trace", "t.json", "-f"]
    assert values["output"] == "x.json" and values["force"] and rest == ["prog"]


def test_front_ends_table_is_the_declaration():
    source = options.c_source()
    rows = re.findall(r"^    \{\{(.*?)\}, ", source, re.M)
    assert len(rows) == len(options.OPTIONS)
    for row, o in zip(rows, options.OPTIONS):
        assert row.split(", ")[0] == f'"{o.names[0]}"'
    for name in ("run", "stat", "report", "labels"):
        assert f"const char nvtxcorr_usage_{name}[]" in source
    assert '"--top is for nvtxcorr stat (nvtxcorr help stat)"' in source
