"""The suite's own guarantees (README, Tests): every CTest test has a TIMEOUT, every e2e process
is held to the memory budget, a failure prints at most 20 lines and names the file with the
rest, and a scenario that leaves files in TMPDIR fails."""
import json
import os
import re
import subprocess
import sys
import tempfile

import harness
from harness import ROOT, check, scenario

RUNNER = os.path.join(harness.HERE, "run_tests.py")
BUDGET_LINES = 20
# The scenarios that test_suite_failure_output runs, registered only there.
SELFCHECK = os.environ.get("NVTXCORR_TEST_SELFCHECK") == "1"


if SELFCHECK:
    @scenario
    def test_selfcheck_long_failure(env):
        raise AssertionError("a failure of 200 lines\n" +
                             "\n".join(f"line {i}: " + "x" * 500 for i in range(200)))

    @scenario
    def test_selfcheck_crash(env):
        raise KeyError("an error with a traceback")

    @scenario
    def test_selfcheck_litter(env):
        subprocess.run(["mktemp", "-d"], check=True, capture_output=True)


@scenario
def test_suite_timeouts(env):
    """Every test of the build directory has a CTest TIMEOUT of at most 10 minutes, so a hang
    fails instead of stalling the suite."""
    p = subprocess.run(["ctest", "--show-only=json-v1"], cwd=env.build, capture_output=True,
                       text=True)
    check(p.returncode == 0, f"ctest --show-only: {p.stderr}")
    tests = json.loads(p.stdout)["tests"]
    timeouts = {t["name"]: next((q["value"] for q in t.get("properties", [])
                                 if q["name"] == "TIMEOUT"), None) for t in tests}
    check(len(tests) > 50, f"only {len(tests)} tests")
    bad = {n: t for n, t in timeouts.items() if t is None or not 0 < t <= 600}
    check(not bad, f"tests without a TIMEOUT of at most 600 s: {bad}")


@scenario
def test_suite_memory_limit(env):
    """A process of the suite that asks for more than the budget fails at once; one inside it
    runs."""
    grab = "import sys; b = bytearray(int(sys.argv[1]) << 20); print(len(b) >> 20)"
    small = subprocess.run([sys.executable, "-c", grab, "200"], capture_output=True, text=True)
    check(small.returncode == 0 and small.stdout == "200\n", f"200 MiB: {small.stderr}")
    big = subprocess.run([sys.executable, "-c", grab, "5000"], capture_output=True, text=True)
    check(big.returncode != 0 and "MemoryError" in big.stderr,
          f"5000 MiB: rc {big.returncode}: {big.stdout}{big.stderr}")


@scenario
def test_suite_failure_output(env):
    """run_tests.py: a failure in at most 20 lines that name the file holding all of it, a
    traceback too, and a scenario that leaves something in TMPDIR fails."""
    e = dict(os.environ, NVTXCORR_TEST_SELFCHECK="1")
    for name, what in (("selfcheck-long-failure", "line 199: "), ("selfcheck-crash",
                       "Traceback"), ("selfcheck-litter", "left behind in TMPDIR: ['tmp.")):
        p = subprocess.run([sys.executable, RUNNER, "--build", env.build, name], env=e,
                           capture_output=True, text=True, timeout=60)
        lines = p.stdout.splitlines()
        check(p.returncode == 1 and lines[-1] == f"0 passed, 1 failed: {name}",
              f"{name}: {p.stdout}")
        check(len(lines) <= BUDGET_LINES and max(map(len, lines)) < 400,
              f"{name}: {len(lines)} lines:\n{p.stdout[:3000]}")
        m = re.search(r"full text: (.*\.txt)$", p.stdout, re.M)
        check(m and os.path.isfile(m[1]), f"{name}: no file named:\n{p.stdout}")
        full = open(m[1], encoding="utf-8").read()
        check(what in full, f"{name}: {what!r} not in {m[1]}:\n{full[:2000]}")


def failure_summary(tests, jobs="-j1"):
    """scripts/ctest_failures.py over a scratch project whose CMakeLists.txt adds tests (the
    project's dir is PROJECT_DIR in them): its stdout's lines, and its exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.mkdir(project)
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\nproject(t NONE)\nenable_testing()\n" +
                    tests)
        build = os.path.join(tmp, "build")
        subprocess.run(["cmake", "-S", project, "-B", build], check=True, capture_output=True)
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "ctest_failures.py"),
                            build, "--", jobs], capture_output=True, text=True, timeout=120)
        lines = p.stdout[p.stdout.find("\n--- "):].strip("\n").splitlines()
        files = {}
        for line in lines:
            m = re.search(r"in full in (\S+\.txt):$", line)
            if m:
                files[m[1]] = open(m[1]).read()
        return p.returncode, lines, files, p.stdout + p.stderr


@scenario
def test_suite_failure_summary(env):
    """scripts/ctest_failures.py, which scripts/test runs ctest through: at most 20 lines per
    failed test, the full output in the file it names, ctest's exit status."""
    rc, lines, files, out = failure_summary(
        'add_test(NAME long COMMAND sh -c "seq 1 500; exit 1")\n'
        "add_test(NAME fine COMMAND true)\n")
    check(rc == 8 and 1 < len(lines) <= BUDGET_LINES and lines[-1] == "  500",
          f"rc {rc}, {len(lines)} lines: {out}")
    check(re.match(r"--- long failed \(Failed\); last 17 of 500 lines, in full in ", lines[0]) and
          list(files.values())[0].split() == [str(i) for i in range(1, 501)], lines[0])
    check("fine" not in "\n".join(lines), out)


@scenario
def test_suite_failure_summary_beside_nested_ctest(env):
    """A failed test's output is shown, and its file named, when a later test runs ctest in the
    same build tree, as e2e.suite-timeouts does (`ctest --show-only` rewrites
    Testing/Temporary/LastTest.log, where the failed test's output used to be read)."""
    rc, lines, files, out = failure_summary(
        'add_test(NAME bad COMMAND sh -c "echo the failure; exit 3")\n'
        "add_test(NAME nested COMMAND ${CMAKE_CTEST_COMMAND} --show-only=json-v1 "
        "WORKING_DIRECTORY ${CMAKE_BINARY_DIR})\n"
        "set_tests_properties(nested PROPERTIES DEPENDS bad)\n", "-j2")
    check(rc == 8 and len(lines) == 2 and
          re.match(r"--- bad failed \(Failed\); output, in full in \S+/bad\.txt:$", lines[0])
          and lines[1] == "  the failure", f"rc {rc}: {out}")
    check(list(files.values()) == ["the failure\n"], f"{files}")
