"""Reliability of label tables inside the profiled process: a table that would exhaust memory
or time is refused with default labels and the program runs on; names and labels with control
bytes never reach NVTX or the terminal raw."""
import os
import tempfile

from harness import KERNELS6, check, scenario


def near_limit_table(n):
    """n regexes each just under the per-regex weight limit (about 1 MB compiled each), in a
    shape whose matching is cheap, so that the compile budget is the one they meet."""
    return "".join(f"re:k{i}_[a-z]{{990}} lab{i}\n" for i in range(n))


def run_limited(env, table, args=("direct",), what=None):
    """Runs scn_driver with the table (env.run_ok), under a 2 GiB address-space and 60 s CPU
    limit when the library is not sanitized (ASan and TSan reserve terabytes of shadow address
    space)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "labels.conf")
        with open(path, "w") as f:
            f.write(table)
        argv = [env.prog("scn_driver"), *args]
        if not env.preload_first:
            argv = ["prlimit", f"--as={2 << 30}", "--cpu=60", "--", *argv]
        run = env.run_ok(argv, what=what, env={"NVTXCORR_LABELS": path})
        run.table_path = path
    return run


@scenario
def test_labels_regex_budget_preload(env):
    for n in (1000, 10000):
        run = run_limited(env, near_limit_table(n), what=f"{n} rules")
        want = (f"nvtxcorr: error: {run.table_path}:5: regex budget exceeded: the table's "
                "regexes cost more than 4000000")
        check(want in run.err, f"{n} rules: {run.err[-2000:]}")
        check(run.err.count("regex budget") == 1, f"one budget error expected: {run.err[-2000:]}")
        check("label table rejected; using default labels" in run.err, run.err[-2000:])
        check(run.labels() == KERNELS6, f"{n} rules: default labels expected: {run.labels()}")


@scenario
def test_labels_regex_budget_within(env):
    table = near_limit_table(2) + "re:^flash_fwd attention\n" + "".join(
        f"re:^ncclDevKernel_AllReduce_.*_f{i}_ lab{i}\n" for i in range(1000))
    run = run_limited(env, table)
    check(run.err == "", f"unexpected stderr: {run.err[-2000:]}")
    check(run.labels() == ["add1", "attention", "triton_poi_fused_add_0"] * 2,
          f"labels {run.labels()}")


@scenario
def test_labels_regex_match_budget(env):
    """issue 16 case 12: four regexes with long literals that must fail after many optional
    atoms passed every budget, yet each first launch of a kernel whose name held the literal
    spent seconds in glibc's regexec. The match budget refuses the first of them, naming it;
    the table is rejected and the program runs on with default labels."""
    long_name = "flash_attention_forward_kernel_" + "x" * 200
    table = "flash_fwd_kernel attention\n" + "".join(
        f"re:flash_attention_forward_kernel_(.?){{950}}Z slow{i}\n" for i in range(4))
    run = run_limited(env, table, args=("named", long_name, "add1"))
    want = (f"nvtxcorr: error: {run.table_path}:2: regex budget exceeded: matching one kernel "
            "name against every kernel regex could cost more than 8000000 (this one "
            "'flash_attention_forward_kernel_(.?){950}Z'")
    check(want in run.err, f"match budget error expected: {run.err[-2000:]}")
    check(run.err.count("regex budget") == 1, f"one budget error expected: {run.err[-2000:]}")
    check("label table rejected; using default labels" in run.err, run.err[-2000:])
    check(run.labels() == [long_name, "add1"], f"default labels expected: {run.labels()}")


ESC_NAME = "red\x1b[31mkernel\x07"             # a C name: all three names are this
ESC_MANGLED = "_Z6ev\x1bil\x7fPf"                  # demangles to ev\x1bil\x7f(float*)


@scenario
def test_labels_control_bytes(env):
    """Control bytes in kernel names never reach NVTX or stderr raw: default labels, labels
    templated with {mangled} and {demangled}, and error lines show them as \\xNN."""
    run = env.run_ok([env.prog("scn_driver"), "named", ESC_NAME, ESC_MANGLED],
                     env={"NVTXCORR_LOG": "debug"})
    labels = run.labels()
    check(labels == ["red\\x1b[31mkernel\\x07", "ev\\x1bil\\x7f"], f"default labels {labels!r}")
    check("\x1b" not in run.err and "\x07" not in run.err, f"raw control bytes: {run.err!r}")

    run = env.run_ok([env.prog("scn_driver"), "named", ESC_NAME, ESC_MANGLED],
                     env={"NVTXCORR_LABELS_INLINE": 'red* "m={mangled}"; _Z* "d={demangled}\t!"'})
    labels = run.labels()
    check(labels == ["m=red\\x1b[31mkernel\\x07", "d=ev\\x1bil\\x7f(float*)\\x09!"],
          f"templated labels {labels!r}")
    bad = [t for t in labels if any(ord(c) < 0x20 or ord(c) == 0x7F for c in t)]
    check(not bad, f"control bytes reach NVTX: {bad!r}")

    # An error line about a rule holding an escape sequence.
    run = env.run_ok([env.prog("scn_driver"), "named", ESC_NAME],
                     env={"NVTXCORR_LABELS_INLINE": 'x "a\x1b[2Jb" colour=#FFFFFF'})
    check("nvtxcorr: error: NVTXCORR_LABELS_INLINE:1: unknown option 'colour'" in run.err,
          run.err)
    check(run.labels() == ["red\\x1b[31mkernel\\x07"], f"labels {run.labels()!r}")
    run = env.run([env.prog("scn_driver"), "named", ESC_NAME],
                  env={"NVTXCORR_LABELS": "/nonexistent/\x1b[2J.conf"})
    check("nvtxcorr: error: /nonexistent/\\x1b[2J.conf: cannot open" in run.err, repr(run.err))
    check("\x1b" not in run.err, f"raw escape on stderr: {run.err!r}")
