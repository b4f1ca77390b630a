#!/usr/bin/env python3
"""After a ctest run that failed: each failed test in at most 20 lines, its full output in a file.

usage: ctest_failures.py BUILD_DIR

scripts/test calls it instead of `ctest --output-on-failure`, whose output is unbounded (one
failing scenario once printed a 30,000-character line). CTest keeps every test's output in
Testing/Temporary/LastTest.log and the failed tests' names in LastTestsFailed.log; this prints,
per failed test, its last TAIL lines (each cut to LINE_CHARS) under one header line, and
writes the whole output to Testing/failures/<test>.txt, which the header names.
"""
import os
import re
import sys

TAIL = 17
LINE_CHARS = 300


def outputs(log_text):
    """{test name: (output, status line)} from LastTest.log."""
    tests = {}
    for m in re.finditer(r"^\d+/\d+ Test: (\S+)\n.*?^Output:\n-+\n(.*?)<end of output>\n(.*?)"
                         r"^\"\1\" end time", log_text, re.M | re.S):
        status = [line for line in m[3].splitlines()
                  if line.startswith("Test ") and not line.startswith("Test time")]
        tests[m[1]] = (m[2], status[0] if status else "")
    return tests


def fallback(log_text, name):
    """The output after the test's own header, when the whole record did not parse (a record
    cut short, or another test's lines inside it)."""
    at = log_text.find(f" Test: {name}\n")
    start = log_text.find("Output:\n", at) if at >= 0 else -1
    if start < 0:
        return "", ""
    start = log_text.find("\n", log_text.find("\n", start) + 1) + 1  # past the dashes
    end = log_text.find("<end of output>", start)
    return log_text[start:end if end >= 0 else len(log_text)], ""


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    temporary = os.path.join(argv[1], "Testing", "Temporary")
    try:
        with open(os.path.join(temporary, "LastTestsFailed.log"), encoding="utf-8") as f:
            failed = [line.strip().split(":", 1)[-1] for line in f if line.strip()]
        with open(os.path.join(temporary, "LastTest.log"), encoding="utf-8",
                  errors="replace") as f:
            log_text = f.read()
        logged = outputs(log_text)
    except OSError as e:
        print(f"ctest_failures: {e}", file=sys.stderr)
        return 1
    out_dir = os.path.join(argv[1], "Testing", "failures")
    os.makedirs(out_dir, exist_ok=True)
    for name in failed:
        text, status = logged.get(name) or fallback(log_text, name)
        if not text.strip():
            print(f"--- {name} failed; no output of it found in {temporary}/LastTest.log: "
                  f"(cd {argv[1]} && ctest -R '^{re.escape(name)}$' --output-on-failure)")
            continue
        path = os.path.join(out_dir, f"{name}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        lines = text.rstrip("\n").split("\n") if text.strip() else []
        shown = lines[-TAIL:]
        what = f"last {len(shown)} of {len(lines)} lines" if len(lines) > TAIL else "output"
        print(f"--- {name} failed ({status or 'see the log'}); {what}, in full in {path}:")
        for line in shown:
            print("  " + (line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
