"""The command line: `nvtxcorr [options] command`, `stat`, `report`, `check`, `explain`,
`labels`, `doctor`, `help`, `version` (docs/usage.md). bin/nvtxcorr (src/cli/nvtxcorr) is a
shim that execs python3 on main(); the wheel's `nvtxcorr` command calls it directly.

Running a program: every check first (the program exists, the label table loads, the output
paths can be written, each value is one the library takes), then, only once all passed, the
old outputs -f replaces are removed and the program is exec'd with the library prepended to
LD_PRELOAD and NVTXCORR=1: the same process, so it keeps its pid and works as the program
given to nsys and ncu. This path imports only what it needs (start-up time: docs/
performance.md); stat and report import their modules when they run."""
import os
import sys

from nvtxcorr import options as opts
from nvtxcorr.options import REPORT, RUN, STAT, Usage

COMMANDS = ("stat", "report", "check", "explain", "labels", "doctor", "help", "version")

USAGE = """usage: nvtxcorr [options] [--] command [args...]   run command with NVTX ranges per launch
       nvtxcorr stat [options] [--] command [args...]   run it in profile mode, print a table
       nvtxcorr report [options] FILE.json...      merge profile summaries into one table
       nvtxcorr check FILE|NAME...                 validate label tables
       nvtxcorr explain FILE|NAME KERNEL...        the label each kernel name gets
       nvtxcorr labels                             the label tables shipped with nvtxcorr
       nvtxcorr doctor                             what nvtxcorr finds here (for bug reports)
       nvtxcorr help [COMMAND] | version
options:
"""
USAGE_TAIL = """Options take --opt VALUE or --opt=VALUE. A command word that is neither a program on PATH
nor a path is an error; `--` makes the next word the program even when it is a command name.
"""
USAGE_STAT = """usage: nvtxcorr stat [options] [--] command [args...]
Runs the command in profile mode and prints one table for all its processes on stderr when it
ends; the exit status is the command's (128+N after signal N). See docs/profile.md.
"""
USAGE_REPORT = """usage: nvtxcorr report [options] FILE.json...
Merges profile summaries (NVTXCORR_PROFILE=....%p.json, stat -o) into one table on stdout;
--by rank takes the ranks from the summaries (and from Kineto traces given beside them).
See docs/profile.md.
"""
USAGE_LABELS = """usage: nvtxcorr labels
Lists the label tables shipped with nvtxcorr and where they are; `--labels NAME`, `nvtxcorr
check NAME` and `nvtxcorr explain NAME ...` take a table by its NAME.
"""


def usage(command=RUN):
    if command == STAT:
        return USAGE_STAT + opts.option_lines(STAT)
    if command == REPORT:
        return USAGE_REPORT + opts.option_lines(REPORT)
    return USAGE + opts.option_lines(RUN) + USAGE_TAIL


class Exit(Exception):
    def __init__(self, status, message=None):
        super().__init__(message)
        self.status, self.message = status, message


def fail(status, message):
    raise Exit(status, message)


def which(name):
    for d in os.environ.get("PATH", "").split(":"):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def absolute(path):
    return path if path.startswith("/") else os.path.join(os.getcwd(), path)


def check_program(name, forced):
    """A program the launcher cannot run, reported the same way for every command before
    anything starts; else the path to exec (PATH searched here once, as execvp would)."""
    if "/" in name:
        if not os.path.exists(name):
            fail(127, f"{name}: No such file or directory")
        if os.path.isdir(name):
            fail(126, f"{name}: Is a directory")
        if not os.access(name, os.X_OK):
            fail(126, f"{name}: Permission denied")
        interpreter_problem(name)
        return name
    found = which(name)
    if name in COMMANDS and not forced and not found:
        fail(2, f"'{name}' is a command of nvtxcorr: give it first (nvtxcorr {name} ...), "
                f"or -- {name} for a program of that name")
    if not found:
        near = None if forced else opts.closest(name, COMMANDS)
        if near:
            fail(2, f"'{name}' is neither a command of nvtxcorr nor a program on PATH; did you "
                    f"mean 'nvtxcorr {near}'? (nvtxcorr help)")
        fail(127, f"{name}: command not found")
    interpreter_problem(found)
    return found


def interpreter_problem(path):
    """A script whose #! interpreter is missing: exec would say the script itself is not
    there."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return
    if head.startswith(b"#!"):
        argv = head[2:].split(b"\n")[0].split()
        if argv and not os.path.exists(argv[0]):
            interp = argv[0].decode(errors="backslashreplace")
            fail(127, f"{path}: its interpreter {interp} (#! line) does not exist")


def probe_directory(option, path, d):
    """Whether a file can be created in d, tried (access() says yes to root for /proc)."""
    probe = os.path.join(d, f".nvtxcorr-probe-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        fail(2, f"{option} {path}: cannot create a file in {d}: {e.strerror}; the command was "
                "not run")


def check_output(option, path, force, removals):
    """An output path the library (or stat) will create: a %-expanded name is only known in
    the process, but its directory still is. An existing file -f replaces is only noted here:
    removed once every check has passed."""
    if "%" not in path:
        if os.path.isdir(path):
            fail(2, f"{option} {path}: is a directory; the command was not run")
        if os.path.lexists(path):
            if not force:
                fail(2, f"{option} {path}: exists (-f overwrites it); the command was not run")
            removals.append((option, path))
    d = os.path.dirname(path)
    if "%" in d:
        return
    if not os.path.exists(d):
        fail(2, f"{option} {path}: no such directory; the command was not run")
    if not os.path.isdir(d):
        fail(2, f"{option} {path}: a component of the path is not a directory; the command "
                "was not run")
    if not os.access(d, os.W_OK | os.X_OK):
        fail(2, f"{option} {path}: cannot write in {d}: Permission denied; the command was "
                "not run")
    probe_directory(option, path, d)


def need_tool(paths):
    if not paths.tool:
        fail(2, f"nvtxcorr-tool not found next to {launcher_path(paths)} (build or install "
                "first)")
    return paths.tool


def launcher_path(paths):
    return paths.launcher or os.path.join(paths.here, "nvtxcorr")


def exec_tool(paths, argv):
    tool = need_tool(paths)
    sys.stdout.flush()
    os.execv(tool, [tool] + argv)


def list_tables(paths):
    if not paths.tables:
        fail(2, f"no label tables found next to {launcher_path(paths)} (share/nvtxcorr/labels)")
    print(f"label tables shipped with nvtxcorr (--labels NAME), in {paths.tables}:")
    for name in paths.table_names():
        print(f"  {name:<12} {os.path.join(paths.tables, name + '.conf')}")


def help_for(paths, command):
    if command in (None, "help", "version"):
        sys.stdout.write(usage())
    elif command in (STAT, REPORT):
        sys.stdout.write(usage(command))
    elif command == "labels":
        sys.stdout.write(USAGE_LABELS)
    elif command in ("check", "explain", "doctor"):
        exec_tool(paths, [command, "--help"])
    else:
        fail(2, f"no command '{command}' (nvtxcorr help lists them)")
    return 0


def real_library(paths):
    lib = paths.library
    if lib and os.path.exists(lib):
        return os.path.join(os.path.realpath(os.path.dirname(lib)), os.path.basename(lib))
    return lib


def table_command(paths, command, argv):
    """check, explain, doctor: nvtxcorr-tool, a shipped table's NAME made its path (check's
    files, explain's first argument, doctor's --labels value)."""
    out, previous, positional = [], "", 0
    for arg in argv:
        if previous in ("--inline", "--labels-inline"):
            pass
        elif previous == "--labels":
            arg = paths.shipped(arg) if command == "doctor" else arg
        elif arg.startswith("--labels="):
            if command == "doctor":
                arg = "--labels=" + paths.shipped(arg[len("--labels="):])
        elif not (arg.startswith("-") and len(arg) > 1):
            positional += 1
            if command == "check" or (command == "explain" and positional == 1):
                arg = paths.shipped(arg)
        previous = arg
        out.append(arg)
    if command == "doctor":
        tables = ["--tables", paths.tables] if paths.tables else []
        exec_tool(paths, ["doctor", "--library", real_library(paths) or ""] + tables + out)
    exec_tool(paths, [command] + out)


def main(here, argv, launcher=None):
    """Runs the command line argv (without the program name); here: the launcher's
    directory, launcher: its path as it was run (for messages)."""
    import nvtxcorr
    from nvtxcorr.paths import Paths
    paths = Paths(here)
    paths.launcher = launcher
    nvtxcorr.TOOL = paths.tool
    try:
        status = dispatch(paths, argv)
    except Usage as e:
        status = 2
        print(f"nvtxcorr: error: {e}", file=sys.stderr)
    except Exit as e:
        status = e.status
        if e.message:
            print(f"nvtxcorr: error: {e.message}", file=sys.stderr)
    sys.exit(status)


def dispatch(paths, argv):
    first = argv[0] if argv else ""
    if first == "help":
        return help_for(paths, argv[1] if len(argv) > 1 else None)
    if first in ("version", "--version"):
        exec_tool(paths, ["--version"])
    if first == "labels":
        if argv[1:2] in (["-h"], ["--help"]):
            sys.stdout.write(USAGE_LABELS)
            return 0
        if len(argv) > 1:
            fail(2, f"labels takes no arguments, not '{argv[1]}' (nvtxcorr help labels)")
        list_tables(paths)
        return 0
    if first == REPORT:
        from nvtxcorr.report import main as report_main
        return report_main(argv[1:])
    if first in ("check", "explain", "doctor"):
        table_command(paths, first, argv[1:])
    return run(paths, argv)


def run(paths, argv):
    """nvtxcorr [options] command, and nvtxcorr stat [options] command."""
    command = RUN
    if argv[:1] == ["stat"]:
        command, argv = STAT, argv[1:]
    values, rest = opts.parse(command, argv)
    if command == RUN and rest[:1] == ["stat"] and not values.get("forced"):
        # `nvtxcorr --labels vllm stat ./app`: options may come before the word too.
        command = STAT
        values, rest = opts.parse(STAT, rest[1:], values)
    if values.get("help"):
        sys.stdout.write(usage(command))
        return 0
    if not rest:
        sys.stderr.write(usage(command))
        return 2
    if command == RUN and rest[0] == "doctor" and not values.get("forced"):
        # `nvtxcorr --labels FILE doctor`: the table given before the word.
        tables = ["--tables", paths.tables] if paths.tables else []
        given = ["--labels", paths.shipped(values["labels"])] if values.get("labels") else []
        exec_tool(paths, ["doctor", "--library", real_library(paths) or ""] + tables + given +
                  rest[1:])
    if values.get("library"):
        paths.library = values["library"]
    from nvtxcorr.launch import prepare
    return prepare(paths, command, values, rest)
