#!/usr/bin/env python3
"""Start-up cost of launchers side by side (docs/performance.md, "Launcher start-up"):
`LAUNCHER -- true` for each launcher given, interleaved (one run of each per round, in a fresh
random order), wall time from posix_spawn to waitpid. Prints a Markdown table of min, median
and p90 per launcher. A LAUNCHER with spaces is a command and its first arguments (the
interpreter alone: "python3.11 -I -S -c pass").

    tests/bench/launcher_startup.py [--runs N] NAME=LAUNCHER...
"""
import argparse
import os
import random
import statistics
import time


def once(argv):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter_ns() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)}: exit status {status}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("launchers", nargs="+", metavar="NAME=LAUNCHER")
    args = ap.parse_args()
    launchers = [(name, argv.split()) for name, argv in
                 (item.split("=", 1) for item in args.launchers)]
    times = {name: [] for name, _ in launchers}
    for name, path in launchers:  # warm the page cache
        once(path + ["--", "true"])
    for _ in range(args.runs):
        random.shuffle(launchers)
        for name, path in launchers:
            times[name].append(once(path + ["--", "true"]))
    print("| launcher | min | median | p90 |")
    print("|---|---:|---:|---:|")
    for name in (item.split("=", 1)[0] for item in args.launchers):
        t = sorted(times[name])
        p90 = t[min(len(t) - 1, int(round(0.9 * (len(t) - 1))))]
        print(f"| {name} | {t[0] / 1e6:.1f} ms | {statistics.median(t) / 1e6:.1f} ms | "
              f"{p90 / 1e6:.1f} ms |")
    print(f"\n{args.runs} runs each, interleaved; load average at the end "
          f"{os.getloadavg()[0]:.2f}.")


if __name__ == "__main__":
    main()
