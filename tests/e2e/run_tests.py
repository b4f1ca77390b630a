#!/usr/bin/env python3
"""Runs the end-to-end scenarios of tests/e2e/test_*.py against a build directory.

usage: run_tests.py --build DIR [--list] [--skip NAME]... [scenario ...]   (none: all)
CTest runs one scenario per test. The last line is "N passed, N failed[, N skipped]"; a
scenario that cannot run here (no nvcc) prints "SKIP name: skipped: why" and does not fail.

A failure prints at most FAIL_LINES lines; its full text goes to a file under
DIR/Testing/e2e-failures/ that the failure names. Each scenario runs with TMPDIR set to a
private, empty directory: whatever the programs it runs leave there fails the scenario, so
neither nvtxcorr nor the suite litters /tmp. Every process of the run (the runner, the programs,
the compilers and packagers some scenarios call) is limited to MEMORY_LIMIT of address space,
so a scenario whose memory runs away fails instead of eating the machine.
"""
import argparse
import glob
import importlib
import os
import resource
import shutil
import sys
import tempfile
import traceback

import harness

# Every tests/e2e/test_*.py registers its scenarios when imported.
HERE = os.path.dirname(os.path.abspath(__file__))
for _path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])

FAIL_LINES = 15  # of a failure's text, with the FAIL line and the file's name: <= 20 lines
LINE_CHARS = 300
# The README's budget: no process of the suite above 4 GiB. Address space, not resident memory
# (which no rlimit bounds): glibc's per-thread arenas reserve 64 MiB each, far below it.
MEMORY_LIMIT = 4 << 30


def limit_memory():
    """Soft RLIMIT_AS for this process and every child. The sanitizers' shadow memory reserves
    terabytes of address space, so harness.Env.run lifts the soft limit again (the hard limit
    is left as it was) for an instrumented program; those runs skip the memory scenarios."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > MEMORY_LIMIT:
        if soft == resource.RLIM_INFINITY or soft > MEMORY_LIMIT:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, hard))


def failure_file(env, name):
    """DIR/Testing/e2e-failures/<library's directory>/<scenario>.txt: lib, lib-sanitized or
    lib-tsan, so the instrumented runs do not overwrite the plain run's."""
    variant = os.path.basename(os.path.dirname(env.lib)) or "lib"
    path = os.path.join(env.build, "Testing", "e2e-failures", variant, f"{name}.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def report_failure(env, name, text, first=True):
    """FAIL name: the first FAIL_LINES lines of text (each cut to LINE_CHARS; 3 after the
    run's first failure), the rest in a file."""
    lines = text.rstrip("\n").split("\n")
    keep = FAIL_LINES if first else 3
    shown = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " [...]"
             for line in lines[:keep]]
    print(f"FAIL {name}: " + "\n".join(shown))
    path = failure_file(env, name)
    with open(path, "w", encoding="utf-8", errors="replace") as f:
        f.write(f"FAIL {name}: {text}")
    cut = len(lines) > keep or any(len(line) > LINE_CHARS for line in lines[:keep])
    print(f"  {'... ' if cut else ''}full text: {path}")


def left_behind(tmp):
    """What the scenario's processes left in the private TMPDIR (then removed)."""
    names = sorted(os.listdir(tmp))
    for n in names:
        p = os.path.join(tmp, n)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.unlink(p)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--skip", action="append", default=[], help="leave out a scenario")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if args.list:
        print("\n".join(sorted(harness.SCENARIOS)))
        return 0
    limit_memory()
    env = harness.Env(args.build)
    names = [n for n in (args.names or sorted(harness.SCENARIOS)) if n not in args.skip]
    passed = failed = skipped = 0
    failures = []
    # A run of many scenarios (the instrumented ones) prints only what did not pass.
    quiet = len(names) > 1
    # The scenarios' own scratch directories (tempfile in the test code) go in scratch/, which
    # is removed at the end; TMPDIR for everything they run is the empty tmp/ beside it.
    private = tempfile.mkdtemp(prefix="nvtxcorr-e2e-")
    scratch, tmp = os.path.join(private, "scratch"), os.path.join(private, "tmp")
    os.mkdir(scratch)
    os.mkdir(tmp)
    tempfile.tempdir = scratch
    os.environ["TMPDIR"] = tmp
    try:
        for name in names:
            fn = harness.SCENARIOS.get(name)
            if fn is None:
                print(f"FAIL {name}: no such scenario")
                failed += 1
                continue
            try:
                fn(env)
                litter = left_behind(tmp)
                harness.check(not litter, f"left behind in TMPDIR: {litter}")
                if not quiet:
                    print(f"PASS {name}")
                passed += 1
            except harness.Skip as e:
                left_behind(tmp)
                print(f"SKIP {name}: skipped: {e}")
                skipped += 1
            except Exception as e:  # noqa: BLE001 - report every failure, keep going
                text = str(e) or type(e).__name__
                if not isinstance(e, AssertionError):
                    text += "\n" + traceback.format_exc()
                # The scenario's frames go now (with those of the exceptions it chained): after
                # a MemoryError (MEMORY_LIMIT) they hold what filled the address space, and
                # nothing after could run.
                chained = e
                while chained is not None:
                    traceback.clear_frames(chained.__traceback__)
                    chained = chained.__context__
                del e, chained
                left_behind(tmp)
                report_failure(env, name, text, first=not failures)
                failures.append(name)
                failed += 1
    finally:
        env.close()
        shutil.rmtree(private, ignore_errors=True)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "") +
          (f": {' '.join(failures)}" if failures else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
