#!/usr/bin/env python3
"""Runs the end-to-end scenarios of tests/test_*.py against a build directory.

usage: run_tests.py --build DIR [--list] [--skip NAME]... [scenario ...]   (none: all)
CTest runs one scenario per test. The last line is "N passed, N failed".
"""
import argparse
import sys
import traceback

import harness
import test_core  # noqa: F401  (registers scenarios)
import test_graphs  # noqa: F401
import test_labels_e2e  # noqa: F401
import test_profile  # noqa: F401


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
    passed = failed = 0
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
        except Exception as e:  # noqa: BLE001 - report every failure, keep going
            print(f"FAIL {name}: {e}")
            if not isinstance(e, AssertionError):
                traceback.print_exc()
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
