#!/usr/bin/env python3
"""Runs the end-to-end scenarios of tests/e2e/test_*.py against a build directory.

usage: run_tests.py --build DIR [--list] [--skip NAME]... [scenario ...]   (none: all)
CTest runs one scenario per test. The last line is "N passed, N failed[, N skipped]"; a
scenario that cannot run here (no nvcc) prints "SKIP name: skipped: why" and does not fail.
"""
import argparse
import glob
import importlib
import os
import sys
import traceback

import harness

# Every tests/e2e/test_*.py registers its scenarios when imported.
HERE = os.path.dirname(os.path.abspath(__file__))
for _path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])


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
    env = harness.Env(args.build)
    names = [n for n in (args.names or sorted(harness.SCENARIOS)) if n not in args.skip]
    passed = failed = skipped = 0
    for name in names:
        fn = harness.SCENARIOS.get(name)
        if fn is None:
            print(f"FAIL {name}: no such scenario")
            failed += 1
            continue
        try:
            fn(env)
            print(f"PASS {name}")
            passed += 1
        except harness.Skip as e:
            print(f"SKIP {name}: skipped: {e}")
            skipped += 1
        except Exception as e:  # noqa: BLE001 - report every failure, keep going
            print(f"FAIL {name}: {e}")
            if not isinstance(e, AssertionError):
                traceback.print_exc()
            failed += 1
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
