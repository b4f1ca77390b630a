"""schema: the fields, kinds and histogram rule declared once, held to the library's writers
(src/profile/output/summary_writer.h, src/profile/base/histogram.h, read where they are) and to docs/profile.md."""
import os
import re

import pytest

from nvtxcorr import schema
from nvtxcorr.schema import BadFile, check_summary, percentile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def c_fields(macro):
    text = open(os.path.join(ROOT, "src", "profile", "output", "summary_writer.h"),
                encoding="utf-8").read()
    body = re.search(r"#define " + macro + r"\(X\)(.*?)\n\n", text, re.S).group(1)
    return tuple((key, kind.lower()) for key, kind in
                 re.findall(r'X\(\w+, "(\w+)", (\w+)\)', body))


@pytest.mark.parametrize("macro, ours", [("PROF_ROW_FIELDS", schema.ROW_FIELDS),
                                         ("PROF_GRAPH_FIELDS", schema.GRAPH_FIELDS),
                                         ("PROF_TOTAL_FIELDS", schema.TOTAL_FIELDS)])
def test_fields_are_the_library_writers(macro, ours):
    assert c_fields(macro) == ours


def test_histogram_rule_is_the_library_one():
    text = open(os.path.join(ROOT, "src", "profile", "base", "histogram.h"), encoding="utf-8").read()
    m = re.search(r"PROF_EXACT = (\d+), PROF_SUB = (\d+), PROF_TOP_OCTAVE = (\d+)", text)
    assert tuple(map(int, m.groups())) == (schema.EXACT, schema.SUB, schema.TOP_OCTAVE)


def test_docs_name_every_field():
    doc = open(os.path.join(ROOT, "docs", "profile.md"), encoding="utf-8").read()
    for key, _ in schema.ROW_FIELDS + schema.GRAPH_FIELDS + schema.TOTAL_FIELDS:
        assert f"`{key}`" in doc or f'"{key}"' in doc, key


def test_bucket_edges():
    assert [schema.bucket_low(b) for b in range(12)] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14]
    assert schema.bucket_low(12) == 16


def test_percentile_of_exact_buckets():
    assert percentile({3: 1, 5: 1}, 2, 3, 5, 500) == 3
    assert percentile({3: 1, 5: 1}, 2, 3, 5, 990) == 5
    assert percentile({}, 0, 0, 0, 500) == 0


def test_check_summary_names_the_field():
    with pytest.raises(BadFile, match="labels"):
        check_summary({"kernels": []})
    row = {k: 0 for k, kind in schema.ROW_FIELDS if kind == "cpu"}
    row.update(label="x", cpu_histogram=[[0, 1]])
    with pytest.raises(BadFile, match="does not add up"):
        check_summary({"labels": [row], "kernels": []})
