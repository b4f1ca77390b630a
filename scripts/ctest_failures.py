#!/usr/bin/env python3
"""Runs ctest; after a failed run, each failed test in at most 20 lines, its full output in a file.

usage: ctest_failures.py BUILD_DIR -- [ctest args...]

scripts/test calls it instead of `ctest --output-on-failure`, whose output is unbounded (one
failing scenario once printed a 30,000-character line). It runs ctest in BUILD_DIR with the
args, as it would run alone (its progress on stdout, its exit status returned), and has it
keep its results in files of this script's own, under Testing/failures/: the failed tests and
why (ctest-console.log, --output-log: ctest's console) and every test's output (ctest.junit.xml,
--output-junit). Not Testing/Temporary/LastTest.log: any ctest run in the same build tree
rewrites that, and e2e.suite-timeouts runs `ctest --show-only` there while the suite runs, so
the failed test's output was often gone. Per failed test it prints its last TAIL lines (each
cut to LINE_CHARS) under one header line, and writes its whole output to
Testing/failures/<test>.txt, which the header names.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

TAIL = 17
LINE_CHARS = 300
# What ctest keeps of a failed test's output (its default is 300 KiB), cut in the middle so
# that the end, which this prints, is always there.
FAILED_OUTPUT = 16 << 20


def failed_tests(console):
    """[(name, why)] from the list ctest's console ends with ("  12 - e2e.x (Failed)")."""
    at = console.rfind("The following tests FAILED:")
    if at < 0:
        return []
    return re.findall(r"^\s+\d+ - (.+?) \(([^()]*)\)", console[at:], re.M)


def outputs(junit_path):
    """{test name: output} from ctest's JUnit file."""
    return {case.get("name"): (case.findtext("system-out") or "")
            for case in ET.parse(junit_path).getroot().iter("testcase")}


def summarise(build, console_path, junit_path):
    """Prints each failed test of the run: its last lines, and the file with all of them."""
    try:
        with open(console_path, encoding="utf-8", errors="replace") as f:
            failed = failed_tests(f.read())
        logged = outputs(junit_path)
    except (OSError, ET.ParseError) as e:
        print(f"ctest_failures: no results of the run: {e}", file=sys.stderr)
        return
    out_dir = os.path.dirname(junit_path)
    for name, why in failed:
        text = logged.get(name, "")
        if not text.strip():
            print(f"--- {name} failed ({why}); "
                  f"{'it printed nothing' if name in logged else 'not in ' + junit_path}: "
                  f"(cd {build} && ctest -R '^{re.escape(name)}$' --output-on-failure)")
            continue
        path = os.path.join(out_dir, f"{name}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        lines = text.rstrip("\n").split("\n")
        shown = lines[-TAIL:]
        what = f"last {len(shown)} of {len(lines)} lines" if len(lines) > TAIL else "output"
        print(f"--- {name} failed ({why}); {what}, in full in {path}:")
        for line in shown:
            print("  " + (line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"))


def main(argv):
    if len(argv) < 3 or argv[2] != "--":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build = argv[1]
    out_dir = os.path.join(build, "Testing", "failures")
    os.makedirs(out_dir, exist_ok=True)
    console = os.path.join(out_dir, "ctest-console.log")
    junit = os.path.join(out_dir, "ctest.junit.xml")
    for stale in (console, junit):  # a ctest that dies early must not leave the last run's
        if os.path.exists(stale):
            os.unlink(stale)
    try:
        status = subprocess.run(
            ["ctest", *argv[3:], "--output-log", os.path.abspath(console),
             "--output-junit", os.path.abspath(junit), "--test-output-size-failed",
             str(FAILED_OUTPUT), "--test-output-truncation", "middle"], cwd=build).returncode
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        print(f"ctest_failures: ctest: {e.strerror}", file=sys.stderr)
        return 127
    if status != 0:
        summarise(build, console, junit)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
