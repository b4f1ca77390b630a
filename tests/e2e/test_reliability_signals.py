"""Signals, exit and start-up, as a hostile program uses them (issue 16 cases 3, 4, 10, 11;
issue 23 cases 2, 3): exit() from the program's own SIGTERM handler, a handler that chains to
the previous one, siglongjmp out of a launch, launches while nvtxcorr initialises, launches
from a signal handler on a thread that never launched, and boolean variables that are not
understood. The statistical cases state their trial count; each trial that deadlocks is a
child process still alive long after its signal (scenarios/scn_signals.c)."""
import json
import os
import re
import tempfile

from harness import check, scenario


@scenario
def test_config_booleans_not_understood(env):
    """NVTXCORR_GPU=garbage used to mean on, NVTXCORR_GRAPH_MARKS=garbage off, both silently:
    each now says it is not understood, names the value and what is used instead (the
    default)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        run = env.run_ok([env.prog("scn_profile"), "exit-code", "0"], tool=False,
                         env={"NVTXCORR_PROFILE": path, "NVTXCORR_GPU": "garbage"})
        check("nvtxcorr: error: NVTXCORR_GPU=garbage: not understood" in run.err
              and "GPU time stays on" in run.err, run.err)
        with open(path) as f:
            note = json.load(f)["gpu_time_note"]
        check("NVTXCORR_GPU" not in (note or ""), f"GPU time turned off: {note}")
    run = env.run_ok([env.prog("scn_driver"), "graphs"], env={"NVTXCORR_GRAPH_MARKS": "yess"})
    check("nvtxcorr: error: NVTXCORR_GRAPH_MARKS=yess: not understood" in run.err
          and "using 1 (marks on)" in run.err, run.err)
    check(len(run.marks()) == 7, f"marks are on by default: {run.marks()}")
    quiet = env.run_ok([env.prog("scn_driver"), "graphs"], env={"NVTXCORR_GRAPH_MARKS": "off"})
    check("NVTXCORR_GRAPH_MARKS" not in quiet.err and quiet.marks() == [], quiet.err)
