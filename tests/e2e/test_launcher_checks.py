"""The launcher as a new user meets it (issue 17, items 5 to 9 and 11): everything that can be
checked is checked before the command starts, relative paths are the caller's, shipped tables
by name, subcommands that forgive a typo but never run a misspelt one, `stat`'s options and
its final table. Each run asserts whether the command ran at all (it writes a marker file)."""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile

from harness import ROOT, check, load_trace, scenario
from test_cupti import demo, fake_cupti
from test_profile import launcher, launches, stat_run


def nvtxcorr(env, *args, extra=None):
    """The build tree's launcher, preloading the library of this run (env.lib)."""
    return env.run([launcher(env), *args], preload=False, enabled=False, tool=False, env=extra)


def plain(env, *args, cwd=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    return subprocess.run([launcher(env), *args], capture_output=True, text=True, cwd=cwd, env=e)


def marker_command(tmp, name="ran"):
    """A command that leaves tmp/name behind when it runs."""
    return ["sh", "-c", f"touch {os.path.join(tmp, name)}"]


def not_run(tmp, r, why, name="ran"):
    check(not os.path.exists(os.path.join(tmp, name)), f"{why}: the command ran: {r.err}")
    check(r.rc == 2 and re.search(r"^nvtxcorr: error: .*the command was not run", r.err, re.M),
          f"{why}: rc {r.rc}: {r.err}")


@scenario
def test_launcher_checks_before_run(env):
    """A bad or missing label table, an -o or --trace that exists, is a directory or is in no
    directory: exit 2 before the command starts, in both the plain launcher and stat."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-checks-")
    bad = os.path.join(tmp, "bad.conf")
    with open(bad, "w") as f:
        f.write("flash*\n")
    existing = os.path.join(tmp, "existing.json")
    with open(existing, "w") as f:
        f.write("keep me")
    cases = [
        ("bad table", ["--labels", bad]),
        ("missing table", ["--labels", os.path.join(tmp, "nope.conf")]),
        ("bad inline rules", ["--labels-inline", "a b c"]),
        ("trace exists", ["--trace", existing]),
        ("trace is a directory", ["--trace", tmp]),
        ("trace in no directory", ["--trace", os.path.join(tmp, "no", "t.json")]),
        ("profile exists", ["--profile", existing]),
    ]
    for why, opts in cases:
        r = nvtxcorr(env, *opts, *marker_command(tmp))
        not_run(tmp, r, why)
        if opts[0] != "--profile":  # stat refuses --profile (test_stat_options)
            not_run(tmp, nvtxcorr(env, "stat", *opts, *marker_command(tmp)), f"stat, {why}")
    for why, out in (("-o exists", existing), ("-o is a directory", tmp),
                     ("-o in no directory", os.path.join(tmp, "no", "x.json"))):
        r = nvtxcorr(env, "stat", "-o", out, *marker_command(tmp))
        not_run(tmp, r, why)
    check(open(existing).read() == "keep me", "overwritten")
    r = nvtxcorr(env, "--labels", bad, "--keep-going", *marker_command(tmp))
    check(r.rc == 0 and os.path.exists(os.path.join(tmp, "ran")) and
          "nvtxcorr: warn: the label table has errors" in r.err, f"--keep-going: {r.err}")

    # -f replaces; -o - is stdout; --format beats the extension.
    prog = [env.prog("scn_driver"), "direct"]
    r = nvtxcorr(env, "stat", "-f", "-o", existing, *prog)
    check(r.rc == 0 and json.load(open(existing))["totals"]["launches"] == 6, f"-f: {r.err}")
    trace = os.path.join(tmp, "trace.json")
    with open(trace, "w") as f:
        f.write("old")
    r = nvtxcorr(env, "--force-overwrite", "--trace", trace, *prog)
    check(r.rc == 0 and len(load_trace(trace)) > 6, f"--trace -f: {r.err}")
    r = nvtxcorr(env, "stat", "-o", "-", "--format", "json", *prog)
    d = json.loads(r.out[r.out.index("{"):])
    check(d["totals"]["launches"] == 6 and "rc cuLaunchKernel 0" in r.out, f"-o -: {r.out}")
    txt = os.path.join(tmp, "as.txt")
    r = nvtxcorr(env, "stat", "--format=csv", "-o", txt, *prog)
    check(open(txt).read().startswith("section,label,"), "--format csv into a .txt")

    # A result that cannot be written where asked (its directory went away during the run)
    # is kept, and the path printed.
    gone = os.path.join(tmp, "gone")
    os.mkdir(gone)
    r = nvtxcorr(env, "stat", "-o", os.path.join(gone, "s.json"), "--", "sh", "-c",
                 f'rmdir "{gone}" && exec "$0" "$@"', *prog)
    m = re.search(r"^nvtxcorr: error: .*s\.json: .*; the summary is kept in (.+)$", r.err, re.M)
    check(r.rc == 1 and m and json.load(open(m[1]))["totals"]["launches"] == 6,
          f"kept: {r.err}")
    shutil.rmtree(os.path.dirname(m[1]))  # kept for the user; this test is the user


@scenario
def test_launcher_relative_paths(env):
    """--labels, --profile, --trace and -o are the caller's, though the program cds first."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-relative-")
    os.mkdir(os.path.join(tmp, "elsewhere"))
    with open(os.path.join(tmp, "t.conf"), "w") as f:
        f.write("add1 one\n")
    cd_then = ["sh", "-c", 'cd elsewhere && exec "$0" "$@"', env.prog("scn_driver"), "direct"]
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "LD_PRELOAD"))}
    e["LD_LIBRARY_PATH"] = env.fakes
    e["NVTXCORR_GPU"] = "0"
    for args in (["--labels", "t.conf", "--profile", "p.json", "--trace", "t.json"],
                 ["stat", "--labels", "t.conf", "-o", "s.json", "--trace", "st.json"]):
        r = subprocess.run([launcher(env), *args, *cd_then], cwd=tmp, env=e, capture_output=True,
                           text=True)
        check(r.returncode == 0, f"{args}: {r.stderr}")
    check(os.listdir(os.path.join(tmp, "elsewhere")) == [], "written where the program cd'd")
    for name in ("p.json", "s.json"):
        check(launches(json.load(open(os.path.join(tmp, name))))["one"] == 2, name)
    for name in ("t.json", "st.json"):
        check(len(load_trace(os.path.join(tmp, name))) > 6, name)


@scenario
def test_launcher_shipped_tables(env):
    """--labels NAME, check NAME, `nvtxcorr labels` and doctor, in the build tree and in an
    installed tree."""
    tables = sorted(n[:-5] for n in os.listdir(os.path.join(ROOT, "docs", "labels"))
                    if n.endswith(".conf"))
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], check=True,
                       capture_output=True)
        for tree in (env.build, prefix):
            where = os.path.realpath(os.path.join(tree, "share", "nvtxcorr", "labels"))
            command = os.path.join(tree, "bin", "nvtxcorr")
            r = subprocess.run([command, "labels"], capture_output=True, text=True, cwd="/")
            listed = re.findall(r"^  (\S+) +(\S.*)$", r.stdout, re.M)
            check(r.returncode == 0 and [n for n, _ in listed] == tables and
                  all(p == os.path.join(where, n + ".conf") for n, p in listed),
                  f"{tree}: labels: {r.stdout}{r.stderr}")
            r = subprocess.run([command, "check", "vllm", "pytorch.conf"], capture_output=True,
                               text=True, cwd="/")
            check(r.returncode == 0 and r.stdout.count("rules OK") == 2, f"check: {r.stdout}")
            r = subprocess.run([command, "doctor", "--labels", "vllm"], capture_output=True,
                               text=True, cwd="/")
            check(f"labels       ok: {where}/vllm.conf: " in r.stdout and
                  f"tables       ok: {where} (--labels NAME): {' '.join(tables)}" in r.stdout,
                  f"doctor: {r.stdout}")
        run = nvtxcorr(env, "--labels", "vllm", env.prog("scn_driver"), "direct")
        check(run.rc == 0, f"--labels vllm: {run.err}")


@scenario
def test_launcher_subcommands(env):
    """A misspelt subcommand is an error with a suggestion, never a program; programs and
    paths still run; -- forces a program; help, version, --opt=value, per-command --help."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-words-")
    for word, want in (("stats", "stat"), ("reprot", "report"), ("chek", "check"),
                       ("labls", "labels"), ("docter", "doctor"), ("verison", "version")):
        r = plain(env, word, "x")
        check(r.returncode == 2 and f"did you mean 'nvtxcorr {want}'?" in r.stderr,
              f"{word}: rc {r.returncode}: {r.stderr}")
    # A missing program: one message for every command, 127; no suggestion after --.
    for args in (["--", "stats"], ["stat", "--", "stats"], ["nvtxcorr-no-such"],
                 ["stat", "nvtxcorr-no-such"]):
        r = plain(env, *args)
        check(r.returncode == 127 and r.stderr == f"nvtxcorr: error: {args[-1]}: command not "
              "found\n", f"{args}: {r.returncode}: {r.stderr!r}")
    for args in (["./no-such"], ["stat", "./no-such"]):
        r = plain(env, *args, cwd=tmp)
        check(r.returncode == 127 and r.stderr == "nvtxcorr: error: ./no-such: No such file or "
              "directory\n", f"{args}: {r.returncode}: {r.stderr!r}")
    for args in ([tmp], ["stat", tmp]):
        r = plain(env, *args)
        check(r.returncode == 126 and r.stderr == f"nvtxcorr: error: {tmp}: Is a directory\n",
              f"{args}: {r.returncode}: {r.stderr!r}")
    # `--` runs a program named like a command (coreutils stat).
    r = nvtxcorr(env, "--", "stat", "-c", "%n", "/")
    check(r.rc == 0 and r.out == "/\n", f"-- stat: {r.rc} {r.out!r} {r.err}")
    for args in (["help"], ["--help"], ["help", "stat"], ["stat", "--help"], ["help", "report"],
                 ["report", "--help"], ["check", "--help"], ["explain", "--help"],
                 ["doctor", "--help"], ["labels", "--help"], ["help", "labels"]):
        r = plain(env, *args)
        check(r.returncode == 0 and "usage: nvtxcorr" in r.stdout and r.stderr == "",
              f"{args}: rc {r.returncode}: {r.stdout}{r.stderr}")
    # Options before the word stat; another command's name where the program goes.
    r = nvtxcorr(env, "--labels-inline", "add1 one", "stat", env.prog("scn_driver"), "direct")
    check(r.rc == 0 and re.search(r"^one +- +2 ", r.err, re.M), f"options before stat: {r.err}")
    r = plain(env, "--log", "warn", "report", "x.json")
    check(r.returncode == 2 and "'report' is a command of nvtxcorr: give it first" in r.stderr,
          f"report after options: {r.stderr}")
    v = plain(env, "version")
    check(v.returncode == 0 and v.stdout.startswith("nvtxcorr "), v.stdout)
    run = nvtxcorr(env, "--labels-inline=add1 one", "--capture=skip", env.prog("scn_driver"),
                   "direct", extra={"NVTXCORR_PROFILE": os.path.join(tmp, "eq.json")})
    check(run.rc == 0 and launches(json.load(open(os.path.join(tmp, "eq.json"))))["one"] == 2,
          f"--opt=value: {run.err}")


@scenario
def test_stat_options(env):
    """stat --profile is refused, not ignored; --top N as report has it (default 20, "N more
    rows"); --top 0, negative or not a number is refused before the run."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-statopts-")
    r = nvtxcorr(env, "stat", "--profile", os.path.join(tmp, "p.json"), *marker_command(tmp))
    check(r.rc == 2 and "--profile is not for stat" in r.err and
          not os.path.exists(os.path.join(tmp, "ran")), f"--profile: {r.rc} {r.err}")
    r = nvtxcorr(env, "stat", "--format", "json", *marker_command(tmp))
    check(r.rc == 2 and "--format is the format of -o" in r.err, f"--format alone: {r.err}")
    for top in ("0", "-3", "x"):
        r = nvtxcorr(env, "stat", "--top", top, *marker_command(tmp))
        check(r.rc == 2 and "--top" in r.err and not os.path.exists(os.path.join(tmp, "ran")),
              f"--top {top}: {r.rc} {r.err}")
        r = plain(env, "report", "--top", top, "x.json")
        check(r.returncode == 2 and "--top" in r.stderr, f"report --top {top}: {r.stderr}")
    many = [env.prog("scn_driver"), "many", "30"]
    rows = lambda err: [x for x in err.splitlines() if re.match(r"^kernel\d+ ", x)]
    r = stat_run(env, many)
    check(len(rows(r.err)) == 20 and "(10 more rows; " in r.err, f"default top: {r.err}")
    r = stat_run(env, many, ["--top=5"])
    check(len(rows(r.err)) == 5 and "(25 more rows; " in r.err, f"--top 5: {r.err}")
    r = stat_run(env, many, ["--top", "all"])
    check(len(rows(r.err)) == 30 and "more rows" not in r.err, f"--top all: {r.err}")


@scenario
def test_stat_gpu_first(env):
    """With GPU time the table starts with it and rows follow GPU time (--sort changes that);
    without, the final table says why; a SIGKILLed command is reported as killed."""
    e = {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env),
         "NVTXCORR_LABELS": os.path.join(ROOT, "tests", "demo", "demo.conf")}

    def table(lines, title):
        i = next(i for i, x in enumerate(lines) if x.startswith(title))
        out = []
        for x in lines[i + 2:]:
            if not x or x.startswith(("by ", "graph ", "(")):
                break
            out.append(x)
        return out

    def kernels(row):
        return int(re.search(r" (\d+) +[\d.]+% ", row)[1])

    def ns(cell):
        v, unit = cell.split()
        return float(v) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]

    def total(row):
        return ns(re.search(r"% +([\d.]+ \w+) ", row)[1])

    r = stat_run(env, [demo(env)], extra_env=e)
    lines = r.err.splitlines()
    check(lines[1].startswith("GPU time: ") and "by launch label" in lines[2], r.err)
    by_launch = table(lines, "by launch label")
    check([total(x) for x in by_launch] == sorted((total(x) for x in by_launch), reverse=True),
          f"not by GPU time: {by_launch}")
    cpu = lines.index("CPU time in launch calls, by label")
    check(cpu > lines.index(by_launch[-1]), f"CPU table not after the GPU tables: {r.err}")
    r = stat_run(env, [demo(env)], ["--sort", "launches"], extra_env=e)
    by_launch = table(r.err.splitlines(), "by launch label")
    check([kernels(x) for x in by_launch] == sorted((kernels(x) for x in by_launch),
                                                     reverse=True), f"--sort launches: {r.err}")
    r = stat_run(env, [env.prog("scn_driver"), "direct"])
    check(r.err.splitlines()[-1] == "(no GPU time: NVTXCORR_GPU=0)", r.err)
    r = stat_run(env, ["sh", "-c", "kill -KILL $$"], rc=128 + signal.SIGKILL)
    check("killed by SIGKILL" in r.err and "made no CUDA call" not in r.err, r.err)


@scenario
def test_launcher_nested_says_what_it_replaces(env):
    """A launcher run inside another's command (issue 31, case 13): its own --profile, --trace,
    --window or stat wins for its command, and one warning names both the outer setting and
    its own; the outer's is kept, without a word, where the inner one sets nothing."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-nested-")
    prog = (f"{shlex.quote(launcher(env))} {{}} {shlex.quote(env.prog('scn_driver'))} direct "
            ">/dev/null")
    path = lambda name: os.path.join(tmp, name)

    def nested(outer, inner):
        return nvtxcorr(env, *outer, "--", "sh", "-c", prog.format(inner))

    def replaced(r, *names):
        lines = [x for x in r.err.splitlines() if x.startswith("nvtxcorr: warn: ") and
                 " replaces " in x]
        check(r.rc == 0 and len(lines) == 1 and all(n in lines[0] for n in names),
              f"one warning naming {names}: rc {r.rc}: {r.err}")

    r = nested(["--profile", path("outer.%p.json")], f"--profile {path('inner.%p.json')}")
    replaced(r, "--profile " + path("inner.%p.json"), "NVTXCORR_PROFILE=" + path("outer.%p.json"))
    check([n.split(".")[0] for n in os.listdir(tmp)] == ["inner"], f"{os.listdir(tmp)}")
    os.unlink(path(os.listdir(tmp)[0]))
    r = nested(["--trace", path("outer.json")], f"--trace {path('inner.json')}")
    replaced(r, "--trace " + path("inner.json"), "NVTXCORR_TRACE=" + path("outer.json"))
    r = nested(["--window", "cudaProfilerApi", "--profile", path("w.%w.json")],
               f"--window signal --profile {path('w.%w.json')}")
    replaced(r, "--window signal", "NVTXCORR_WINDOW=cudaProfilerApi")
    # stat outside: its table loses the inner command's processes, and is told why
    r = nested(["stat"], f"--profile {path('in-stat.%p.json')}")
    replaced(r, "--profile " + path("in-stat.%p.json"), "NVTXCORR_PROFILE=")
    check("no summary" in r.err, r.err)
    # stat inside: the outer --profile file is not written
    r = nvtxcorr(env, "--profile", path("around.json"), launcher(env), "stat",
                 env.prog("scn_driver"), "direct")
    replaced(r, "stat replaces NVTXCORR_PROFILE=" + path("around.json"))
    check(not os.path.exists(path("around.json")) and re.search(r"^add1 ", r.err, re.M), r.err)
    # the same setting, or none inside: nothing replaced, nothing said, the outer file written
    for inner in (f"--profile {path('same.json')}", "--log warn"):
        r = nested(["--profile", path("same.json")], inner)
        check(r.rc == 0 and " replaces " not in r.err and os.path.exists(path("same.json")),
              f"{inner}: {r.err}")
        os.unlink(path("same.json"))
    shutil.rmtree(tmp)
