"""The command line as a new user met it (issue 33, item 5), one scenario per finding: nothing
removed before every check passed, stat's windows, report's options that make no sense
together, --diff --by kernel per kernel execution, the same head in every view, 100 columns,
messages that say what to do, values checked before the run, results not written where asked,
a closed pipe."""
import json
import os
import subprocess
import sys
import tempfile

from harness import Skip, check, scenario, unpreloadable, write_json
from test_launcher_checks import marker_command, nvtxcorr, plain
from test_profile import launcher


def row(label, launches, cpu_ns, gpu_ns=None, gpu_kernels=None, kernel=False):
    e = {"launches": launches, "graph_launches": 0, "errors": 0, "capture_launches": 0,
         "cpu_ns": cpu_ns, "cpu_min_ns": 0, "cpu_max_ns": cpu_ns,
         "cpu_histogram": [[0, launches]] if launches else [], "label": label,
         "category": None, "gpu_ns": gpu_ns, "gpu_kernels": gpu_kernels,
         "gpu_min_ns": None if gpu_ns is None else 0,
         "gpu_max_ns": None if gpu_ns is None else gpu_ns, "gpu_histogram": None}
    if kernel:
        e.update(name=label + "_kernel", function=label + "_kernel")
    return e


def summary(labels, kernel_labels=(), pid=1, window=None, totals=None):
    d = {"nvtxcorr_profile": 1, "pid": pid, "host": "h", "command": ["app"],
         "gpu_time": any(r["gpu_ns"] is not None for r in labels),
         "labels": labels, "kernels": [dict(r, name=r["label"] + "_k", function=r["label"] + "_k")
                                       for r in labels],
         "kernel_labels": [{"label": k, "category": None, "kind": "kernel", "gpu_ns": ns,
                            "gpu_kernels": n, "gpu_min_ns": 1, "gpu_max_ns": ns,
                            "gpu_histogram": None} for k, n, ns in kernel_labels],
         "start_ns": 0, "end_ns": 10**9}
    if window is not None:
        d["window"] = {"index": window, "reason": "every", "start_ns": 0, "end_ns": 10**9}
    if totals is not None:
        d["totals"] = totals
    return d



@scenario
def test_frontend_force_removes_nothing_before_the_checks(env):
    with tempfile.TemporaryDirectory() as tmp:
        old = write_json(tmp, "old.json", {"old": 1})
        prof = write_json(tmp, "p.json", {"old": 1})
        for args in (["-f", "--trace", old, "--profile", "/nonexistent/p.json"],
                     ["-f", "--profile", prof, "--window", "bogus"],
                     ["stat", "-f", "--trace", old, "-o", "/nonexistent/x.json"]):
            r = plain(env, *args, *marker_command(tmp))
            check(r.returncode == 2 and os.path.exists(old) and os.path.exists(prof) and
                  not os.path.exists(os.path.join(tmp, "ran")),
                  f"{args}: rc {r.returncode}, old files {os.listdir(tmp)}: {r.stderr}")


@scenario
def test_frontend_stat_windows(env):
    r = plain(env, "help", "stat")
    check(r.returncode == 0 and "--window" in r.stdout, f"help stat: {r.stdout}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w.%w.json")
        r = nvtxcorr(env, "stat", "--library", env.lib, "--window", "cudaProfilerApi", "-o", out,
                     "--", env.prog("scn_windows"), "api", "direct")
        got = sorted(os.listdir(tmp))
        check(r.rc == 0 and got == ["w.1.json", "w.2.json", "w.3.json"],
              f"rc {r.rc}: {got}: {r.err}")
        check("3 windows" in r.err, f"the head names the windows: {r.err}")
        r = plain(env, "stat", "--window", "cudaProfilerApi", "-o", os.path.join(tmp, "x.json"),
                  *marker_command(tmp))
        check(r.returncode == 2 and "%w" in r.stderr and
              not os.path.exists(os.path.join(tmp, "ran")), r.stderr)


@scenario
def test_frontend_report_options_that_do_not_go_together(env):
    with tempfile.TemporaryDirectory() as tmp:
        a = write_json(tmp, "a.json", summary([row("x", 1, 100)]))
        for args, what in ((["--threshold", "5", a], "--diff"),
                           (["--diff", a, a, "--threshold", "-5"], "--threshold"),
                           (["--diff", a, a, "--by", "process"], "--by")):
            r = plain(env, "report", *args)
            check(r.returncode == 2 and r.stderr.startswith("nvtxcorr: error: ") and
                  what in r.stderr and "usage:" not in r.stderr, f"{args}: {r.returncode} "
                  f"{r.stderr}")


@scenario
def test_frontend_diff_by_kernel_per_execution(env):
    """A label whose launches are graphs: per launch its mean doubles with twice the nodes per
    graph; per kernel execution it is unchanged. A label that runs only inside graphs (no
    launch of its own) still gets a mean, so the threshold can flag it."""
    with tempfile.TemporaryDirectory() as tmp:
        a = write_json(tmp, "a.json", summary([row("mm", 1, 100, 900, 9)], [("mm", 9, 900)]))
        b = write_json(tmp, "b.json", summary([row("mm", 1, 100, 1800, 18)], [("mm", 18, 1800)]))
        r = plain(env, "report", "--diff", "--by", "kernel", a, b, "--threshold", "5")
        check(r.returncode == 0, f"per execution unchanged: {r.returncode} {r.stdout}{r.stderr}")
        c = write_json(tmp, "c.json", summary([row("mm", 1, 100, 900, 9)],
                                       [("mm", 9, 900), ("node", 4, 400)]))
        d = write_json(tmp, "d.json", summary([row("mm", 1, 100, 900, 9)],
                                       [("mm", 9, 900), ("node", 4, 800)]))
        r = plain(env, "report", "--diff", "--by", "kernel", c, d, "--threshold", "5")
        check(r.returncode == 1 and "node" in r.stderr, f"graph-only label: {r.returncode} "
              f"{r.stdout}{r.stderr}")


@scenario
def test_frontend_same_head_in_every_view(env):
    with tempfile.TemporaryDirectory() as tmp:
        d = summary([row("x", 3, 300)], totals={"launches": 5, "graph_launches": 0,
                                                 "errors": 0, "cpu_ns": 500})
        d["kernels"].append(dict(row("skipped", 2, 200), name="s_k", function="s_k",
                                 label=None))
        p = write_json(tmp, "p.json", d)
        heads = {by: plain(env, "report", "--by", by, p).stdout.splitlines()[0]
                 for by in ("label", "kernel")}
        check(len(set(heads.values())) == 1, f"heads: {heads}")
        ws = [write_json(tmp, f"w{i}.json", summary([row("x", 1, 100)], pid=7, window=i))
              for i in (1, 2, 3)]
        head = plain(env, "report", *ws).stdout.splitlines()[0]
        check("pid 7" in head and "3 windows" in head and "processes" not in head, head)
        z = write_json(tmp, "z.json", summary([row("x", 1, 100), row("idle", 0, 0)]))
        out = plain(env, "report", "--diff", z, z).stdout
        check("idle" not in out, f"a row with nothing on either side: {out}")


@scenario
def test_frontend_hundred_columns(env):
    with tempfile.TemporaryDirectory() as tmp:
        long = "a_very_long_label_name_" * 4 + "end"
        labels = [row(long + str(i), 1, 100 * (i + 1)) for i in range(30)]
        a = write_json(tmp, "a.json", summary(labels))
        r = plain(env, "report", "--diff", a, a, "--top", "5")
        lines = r.stdout.splitlines()
        check(max(map(len, lines)) <= 100 and "(25 more rows" in r.stdout, r.stdout)
        ranks = []
        for k in range(8):
            d = summary(labels, pid=100 + k)
            d["rank"] = str(k)
            ranks.append(write_json(tmp, f"r{k}.json", d))
        r = plain(env, "report", "--by", "rank", *ranks)
        check(r.returncode == 0 and max(map(len, r.stdout.splitlines())) <= 100, r.stdout)
        c = summary([row("x", 1, 100)])
        c["contexts"] = [{"context": ["outer", long], "label": f"k{i}", "launches": 1,
                          "cpu_ns": 10, "gpu_ns": None, "gpu_kernels": None}
                         for i in range(4)]
        r = plain(env, "report", "--by", "context", "--top", "2", write_json(tmp, "c.json", c))
        check("..." in r.stdout and "(2 more" in r.stdout, r.stdout)


@scenario
def test_frontend_messages(env):
    with tempfile.TemporaryDirectory() as tmp:
        r = plain(env, "stat", "--tpo", "3", "true")
        check(r.returncode == 2 and "did you mean --top?" in r.stderr and
              "usage:" not in r.stderr, r.stderr)
        r = plain(env, "report", "--bogus", "x.json")
        check(r.returncode == 2 and r.stderr.startswith("nvtxcorr: error: ") and
              "[-h]" not in r.stderr, r.stderr)
        r = plain(env, "--labels", "nope", *marker_command(tmp))
        check(r.returncode == 2 and "nvtxcorr labels" in r.stderr, r.stderr)
        script = os.path.join(tmp, "s.sh")
        with open(script, "w") as f:
            f.write("#!/nonexistent/interpreter\n")
        os.chmod(script, 0o755)
        r = plain(env, script)
        check(r.returncode == 127 and "interpreter" in r.stderr, r.stderr)
        bad = write_json(tmp, "bad.conf", {})
        with open(bad, "w") as f:
            f.write("this is not a rule\n")
        r = nvtxcorr(env, "--library", env.lib, "--labels", bad, "--keep-going",
                     env.prog("scn_driver"), "direct")
        errors = [x for x in r.err.splitlines() if "bad.conf:1" in x]
        check(r.rc == 0 and len(errors) == 1, f"each table error once: {r.err}")


@scenario
def test_frontend_values_checked_before_the_run(env):
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["--log", "verbose"], ["--capture", "bogus"]):
            r = plain(env, *args, *marker_command(tmp))
            check(r.returncode == 2 and args[0] in r.stderr and
                  not os.path.exists(os.path.join(tmp, "ran")), f"{args}: {r.stderr}")


@scenario
def test_frontend_results_not_written_where_asked(env):
    if os.geteuid() != 0:
        raise Skip("skipped: needs root (access() says /proc is writable only to root)")
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["stat", "-o", "/proc/x.json"], ["--trace", "/proc/t.json"]):
            r = plain(env, *args, *marker_command(tmp))
            check(r.returncode != 0 and not os.path.exists(os.path.join(tmp, "ran")),
                  f"{args}: rc {r.returncode}: {r.stderr}")


@scenario
def test_frontend_stat_closed_pipe(env):
    """stat -o - into a reader that is gone (| head -1): the program's status, nothing left in TMPDIR (the runner
    fails a scenario that leaves anything there)."""
    with tempfile.TemporaryDirectory() as tmp:
        e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRE"))}
        e.update(LD_LIBRARY_PATH=f"{env.fakes}:{env.bin}", NVTXCORR_GPU="0")
        # The program's own output elsewhere: the pipe is the summary's (-o -).
        quiet = ["sh", "-c", 'exec "$0" "$@" >/dev/null', env.prog("scn_driver"), "direct"]
        p = subprocess.Popen([launcher(env), "stat", "--library", env.lib, "-o", "-", "--",
                              *quiet], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=e, cwd=tmp)
        p.stdout.close()  # closed before stat writes: its write meets EPIPE
        err = p.stderr.read().decode()
        rc = p.wait()
        check(rc == 0, f"rc {rc}: {err}")
        left = [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("nvtxcorr-stat-")]
        check(not left, f"left in TMPDIR: {left}")


@scenario
def test_frontend_one_renderer(env):
    """The text table is drawn in one place (nvtxcorr-tool render runs the library's own
    writer): the table the library prints at exit and `nvtxcorr report --format text` of the
    JSON it wrote in the same run are the same, byte for byte, and so are the exit table's
    program-context tree and `nvtxcorr report --by context`'s, here with GPU time, a graph and
    program context (the demo, the fake CUPTI, nvtxcorr as the NVTX tool). libkeep_summary.so
    makes the JSON's publish fail, so the library prints its table to stderr and the JSON is
    kept beside (tests/fakes/keep_summary.c)."""
    cupti = os.path.join(env.fakes, "libfake_cupti.so")
    if not os.path.exists(cupti):
        raise Skip("built without CUPTI headers: no fake CUPTI")
    keep = os.path.join(env.fakes, "libkeep_summary.so")
    with tempfile.TemporaryDirectory() as tmp:
        if unpreloadable(keep):  # a clone under a path with a space: through a link
            os.symlink(keep, os.path.join(tmp, "libkeep_summary.so"))
            keep = os.path.join(tmp, "libkeep_summary.so")
        path = os.path.join(tmp, "run.json")
        run = env.run([os.path.join(env.build, "tests", "demo", "demo_infer")], tool=False,
                      preload_value=f"{env.lib}:{keep}",
                      env={"NVTXCORR_PROFILE": path, "NVTXCORR_GPU": "1",
                           "NVTXCORR_CUPTI_LIBRARY": cupti, "NVTX_INJECTION64_PATH": env.lib})
        first, _, table = run.err.partition("\n")
        check(run.rc == 0 and "summary printed to stderr instead" in first, run.err)
        kept = [n for n in os.listdir(tmp) if n.endswith(".nvtxcorr-tmp.kept")]
        check(len(kept) == 1, f"no JSON kept: {os.listdir(tmp)}")
        os.rename(os.path.join(tmp, kept[0]), path)
        d = json.load(open(path))
        check(d["gpu_time"] and d["graphs"] and any(c["context"] for c in d["contexts"]),
              "the demo's summary has GPU time, a graph and context")
        r = plain(env, "report", "--format", "text", path)
        check(r.returncode == 0 and r.stdout == table,
              f"report's table differs from the exit table:\n{r.stdout}\n---\n{table}")
        # The program-context tree too: report --by context's (the rows merged in Python, drawn
        # by nvtxcorr-tool render --tree) is the exit table's, line for line.
        check("\nBy program context" in table, f"no tree in the exit table:\n{table}")
        tree = table[table.index("\nBy program context") + 1:]
        r = plain(env, "report", "--by", "context", path)
        check(r.returncode == 0 and r.stdout == tree and len(tree.splitlines()) > 4,
              f"report --by context's tree differs from the exit table's:\n{r.stdout}\n---\n"
              f"{tree}")


def declaration():
    """src/python/nvtxcorr/options.py: the one declaration both parsers read."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    sys.path.insert(0, os.path.join(root, "src", "python"))
    from nvtxcorr import options
    return options


@scenario
def test_frontend_c_and_python_read_one_declaration(env):
    """The front end (C) parses nvtxcorr's options and prints every help; stat and report parse
    theirs in Python. Both from options.py: every help text, every wrong-command message, every
    checked value's message and the misspelling hint are the same as the Python parser's."""
    options = declaration()
    for command, words in ((options.RUN, ["help"]), (options.STAT, ["help", "stat"]),
                           (options.REPORT, ["help", "report"]), (options.STAT, ["stat", "-h"]),
                           (options.REPORT, ["report", "--help"]), (options.RUN, ["--help"])):
        r = plain(env, *words)
        check(r.returncode == 0 and r.stdout == options.usage(command),
              f"{words}: rc {r.returncode}, not options.usage({command}): {r.stdout}{r.stderr}")
    r = plain(env, "labels", "--help")
    check(r.stdout == options.USAGE_LABELS, r.stdout)

    def python_says(argv):
        try:
            options.parse(options.RUN, argv)
        except options.Usage as e:
            return f"nvtxcorr: error: {e}\n"
        return None

    with tempfile.TemporaryDirectory() as tmp:
        cases = [["--lables", "x"], ["--no-graph-mark"], ["--log=verbose"], ["--log"],
                 ["--keep-going=yes"]]
        for o in options.OPTIONS:
            for name in o.names:
                cases.append([name] + (["bogus"] if o.metavar else []))
        for argv in cases:
            expected = python_says(argv + marker_command(tmp))
            if expected is None:
                continue
            r = plain(env, *argv, *marker_command(tmp))
            check(r.returncode == 2 and r.stderr == expected and
                  not os.path.exists(os.path.join(tmp, "ran")),
                  f"{argv}: rc {r.returncode}: the front end says {r.stderr!r}, the "
                  f"declaration's parser {expected!r}")


@scenario
def test_frontend_runs_the_program_itself(env):
    """nvtxcorr -- command: the front end is a program, not an interpreter's script, and the
    command is exec'd in its process (the pid nsys or ncu started)."""
    with open(launcher(env), "rb") as f:
        check(f.read(4) == b"\x7fELF", f"{launcher(env)} is not an ELF program")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    p = subprocess.Popen([launcher(env), "--", "sh", "-c", "echo $$"], stdout=subprocess.PIPE,
                         text=True, env=e)
    out = p.communicate()[0]
    check(p.returncode == 0 and out.strip() == str(p.pid), f"pid {p.pid}, the command's {out}")


@scenario
def test_frontend_stat_tells_a_refused_run_from_the_command_status(env):
    """stat runs its command through the front end: a run the front end refuses is its status
    and its one message, a command that ran and failed is the command's status with stat's
    table (here: its note that there is no summary); the command gets neither the launch fd
    nor its variable."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    with tempfile.TemporaryDirectory() as tmp:
        for args, rc in ((["--log", "bogus", "--", "true"], 2), (["--", "nosuch-program"], 127),
                         (["--trace", "/nonexistent/t.json", "--", "true"], 2)):
            r = plain(env, "stat", "--library", env.lib, *args)
            lines = r.stderr.splitlines()
            check(r.returncode == rc and len(lines) == 1 and
                  lines[0].startswith("nvtxcorr: error: "), f"{args}: rc {r.returncode}: "
                  f"{r.stderr}")
        r = plain(env, "stat", "--library", env.lib, "--", "sh", "-c", "exit 3")
        check(r.returncode == 3 and "no summary" in r.stderr, f"rc {r.returncode}: {r.stderr}")
        out = os.path.join(tmp, "seen")
        # listdir's own fd is 3; the file is opened after it
        show = ("import os, sys; seen = repr((sorted(os.listdir('/proc/self/fd')), "
                "'NVTXCORR_LAUNCH_FD' in os.environ)); open(sys.argv[1], 'w').write(seen)")
        r = subprocess.run([launcher(env), "stat", "--library", env.lib, "--", sys.executable,
                            "-c", show, out], capture_output=True, text=True, env=e,
                           stdin=subprocess.DEVNULL)
        with open(out) as f:
            fds, variable = eval(f.read())
        check(r.returncode == 0 and fds == ["0", "1", "2", "3"] and not variable,
              f"rc {r.returncode}: the command's fds {fds}, variable {variable}: {r.stderr}")


@scenario
def test_frontend_found_through_a_lone_link(env):
    """A link to the front end alone (ln -s .../bin/nvtxcorr ~/bin/nvtxcorr), with no lib/ or
    libexec/ beside it: the parts are found next to the program it links to."""
    if unpreloadable(env.build):
        raise Skip("skipped: the build tree's path has a space or a colon")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    with tempfile.TemporaryDirectory() as tmp:
        link = os.path.join(tmp, "nvtxcorr")
        os.symlink(os.path.join(env.build, "bin", "nvtxcorr"), link)
        want = os.path.join(os.path.realpath(os.path.join(env.build, "lib")), "libnvtxcorr.so")
        for argv, path in (([link], e.get("PATH", "")),
                           (["nvtxcorr"], tmp + ":" + e.get("PATH", ""))):
            r = subprocess.run([*argv, "--", "sh", "-c", 'echo "$LD_PRELOAD"'],
                               capture_output=True, text=True, env=dict(e, PATH=path),
                               executable=link)
            check(r.returncode == 0 and r.stdout.split(":")[0].strip() == want,
                  f"{argv}: rc {r.returncode}: LD_PRELOAD {r.stdout!r}, not {want}: {r.stderr}")
            r = subprocess.run([*argv, "labels"], capture_output=True, text=True,
                               env=dict(e, PATH=path), executable=link)
            check(r.returncode == 0 and "vllm" in r.stdout, f"{argv} labels: {r.stderr}")
