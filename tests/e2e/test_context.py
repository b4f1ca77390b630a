"""Program context (issue 20): nvtxcorr as the program's NVTX tool, the context open at each
launch, capture-time context for graph nodes, and the views of it (docs/profile.md, Context).
The programs annotate themselves with NVTX3 (scenarios/scn_context.c, a C++ shared object
with its own NVTX instance: scenarios/ctx_plugin.cpp)."""
import json
import os
import re
import tempfile

from harness import check, scenario


def tool_env(env, extra=None):
    """nvtxcorr as the NVTX tool, as nvtxcorr stat and NVTXCORR_CONTEXT=nvtx set it."""
    return {"NVTX_INJECTION64_PATH": env.lib, **(extra or {})}


def levels(run):
    return dict(re.findall(r"^level (\S+) (-?\d+)$", run.out, re.M))


@scenario
def test_context_nvtx_tool_levels(env):
    """Every NVTX instance (the program's, and a C++ shared object's own) takes nvtxcorr as its
    tool: pushes and pops in the default domain, a custom domain, by registered string and wide
    string return the thread's levels; marks and start/end ranges are tolerated."""
    with tempfile.TemporaryDirectory() as tmp:
        run = env.run_ok([env.prog("scn_context"), "levels"], tool=False,
                         env=tool_env(env, {"NVTXCORR_PROFILE": os.path.join(tmp, "p.json")}))
        got = levels(run)
        want = {"push-a": "0", "push-ex": "1", "push-w": "2", "plugin-push": "3",
                "plugin-pop": "3", "pop-w": "2", "pop-ex": "1", "pop-a": "0"}
        check(got == want, f"levels through nvtxcorr as the tool: {got}, expected {want}\n"
              f"stderr: {run.err}")
        check(run.err == "", f"unexpected stderr: {run.err!r}")
        # Without the tool NVTX answers every call itself (no tool: -2), so the levels above
        # are nvtxcorr's.
        bare = env.run_ok([env.prog("scn_context"), "levels"], tool=False, preload=False)
        check(set(levels(bare).values()) == {"-2"}, f"without a tool: {levels(bare)}")
