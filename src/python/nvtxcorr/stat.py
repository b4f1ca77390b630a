"""`nvtxcorr stat`: the command run in profile mode (each of its processes writes its summaries
into a private directory), then one table for all of them on stderr, like `perf stat`; the
exit status is the command's (128+N after signal N), or 1 when it succeeded but a result was
not written where asked. Also -o's checks and writing, which report shares."""
import errno
import os
import signal
import subprocess
import sys
import tempfile

from nvtxcorr import say
from nvtxcorr.cli import fail


def format_of(path, fmt=None):
    """--format, else the extension rule: .json, .csv, anything else (and -) text."""
    return fmt or ("json" if path.endswith(".json") else "csv" if path.endswith(".csv")
                   else "html" if path.endswith(".html") else "text")


def output_problem(path, force):
    """Why the summary could not be written to path, checked before the command runs; None
    when it can."""
    if path == "-":
        return None
    if os.path.isdir(path):
        return "is a directory"
    if os.path.lexists(path) and not force:
        return "exists (-f overwrites it)"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return "no such directory" if not os.path.exists(parent) else \
            "a component of the path is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write in {parent}: Permission denied"
    return None


def write_output(path, text, force):
    """Writes text to path: a new file (O_EXCL, never through a symlink), or with force a
    temporary file renamed over the old one, so that a failure leaves the old one whole.
    Returns None or why it failed."""
    if path == "-":
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader went away (| head): what it read was what it wanted. stdout goes
            # to /dev/null so that the interpreter's own flush at exit does not fail too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return None
    try:
        if force:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                       prefix=".nvtxcorr-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.chmod(tmp, 0o644)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
            except BaseException:
                os.unlink(path)  # ours, and only part of it
                raise
    except OSError as e:
        return "exists (-f overwrites it)" if e.errno == errno.EEXIST else \
            (e.strerror or str(e))
    return None



def probe_directory(option, path, d):
    """Whether a file can be created in d, tried (access() says yes to root for /proc)."""
    probe = os.path.join(d, f".nvtxcorr-probe-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        fail(2, f"{option} {path}: cannot create a file in {d}: {e.strerror}; the command was "
                "not run")


def check_stat(values):
    """stat's own checks, before anything runs: -o (its path absolute), --format, --window.
    An existing -o that -f replaces is replaced when the new one is written (write_output);
    the front end checks the rest before it starts the command."""
    output = values.get("output")
    if output == "":
        fail(2, f"-o needs a file name (- for stdout)")
    if output and output != "-":
        output = os.path.abspath(output)
    if values.get("format") and not output:
        fail(2, "--format is the format of -o FILE (or -o - for stdout)")
    # --html: every window in one page, unless -o has %w or is a directory
    one_page = False
    if values.get("html"):
        if values.get("format"):
            fail(2, "--html is the format of -o: not with --format")
        output = output or os.path.abspath("report.html")
        one_page = "%w" not in output and not os.path.isdir(output)
    if "window" in values and not one_page:
        if not output or output == "-" or ("%w" not in output and not os.path.isdir(output)):
            fail(2, "stat --window: -o names where the windows go: a path with %w (one summary "
                    "per window, %w its number) or a directory (each process's windows as they "
                    "were written); the command was not run")
        return output
    if output:
        why = output_problem(output, values.get("force"))
        if why:
            fail(2, f"{output}: {why}; the command was not run")
        if output != "-":
            probe_directory("-o", output, os.path.dirname(output))
    return output


def cmd_stat(values, passthrough, cmd):
    """values: stat's options; passthrough: those the front end takes too, as given (it checks
    them); cmd: the command."""
    output = check_stat(values)
    env = dict(os.environ)
    if env.get("NVTXCORR_PROFILE"):
        # An outer launcher's (nvtxcorr --profile ... -- script that runs nvtxcorr stat), or
        # one set by hand: stat's own wins for its command, as in the launcher (docs/usage.md).
        say("warn", f"stat replaces NVTXCORR_PROFILE={env.pop('NVTXCORR_PROFILE')}, set "
            "outside this nvtxcorr (by an nvtxcorr --profile around it?), for this command and "
            "its children: their summaries are only in stat's table (-o FILE keeps it)")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-stat-")
    try:
        return run_stat(values, passthrough, cmd, env, output, tmp)
    finally:
        # Also when the command cannot start or the output cannot be written: the directory
        # goes, unless a summary is still in it (never deleted behind the user's back).
        try:
            os.rmdir(tmp)
        except OSError:
            pass


def start(argv, env):
    """The front end running the command, with the terminal's Ctrl-C reaching it directly;
    TERM and HUP sent to stat are passed on. (child, None) once the command started, or
    (child, status) when the front end refused to run it (its message said why): it writes
    its exit status to NVTXCORR_LAUNCH_FD, which closes unwritten when the command starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    r, w = os.pipe()
    env["NVTXCORR_LAUNCH_FD"] = str(w)
    try:
        child = subprocess.Popen(argv, env=env, restore_signals=True, pass_fds=(w,),
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    finally:
        os.close(w)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    with os.fdopen(r, "rb") as f:
        refused = f.read(1)
    return child, refused[0] if refused else None


def run_stat(values, passthrough, cmd, env, output, tmp):
    from nvtxcorr import FRONT
    from nvtxcorr.schema import load_all
    windows = "window" in values
    profile = os.path.join(tmp, "summary.%p.%w.json" if windows else "summary.%p.json")
    # Program context (docs/profile.md, Context): the library is the program's NVTX tool
    # unless one is already named (Nsight's wins; the library then says there is no context).
    env.setdefault("NVTXCORR_CONTEXT", "nvtx")
    argv = [FRONT] + passthrough + ["--profile", profile] + \
        (["--"] if values.get("forced") else []) + cmd
    try:
        child, refused = start(argv, env)
    except OSError as e:
        say("error", f"{FRONT}: {e.strerror}")
        return 2
    rc = child.wait()
    if refused is not None:
        return refused
    status = 128 - rc if rc < 0 else rc
    killed = signal.Signals(-rc).name if rc < 0 and -rc in signal.valid_signals() else None
    why = " (out of memory? kill -9?)" if rc == -signal.SIGKILL else ""
    files = sorted(os.path.join(tmp, n) for n in os.listdir(tmp))
    summaries, _ = load_all(files)
    failed = False
    if not summaries and killed:
        say("error", f"the command was killed by {killed} before it wrote its summary{why}")
    elif not summaries:
        say("warn", "no summary: the command made no CUDA call that nvtxcorr saw")
    else:
        if rc == -signal.SIGKILL:
            say("warn", "the command was killed by SIGKILL (out of memory, or kill -9?): "
                        "the killed process wrote no summary; the table has the others")
        print_tables(values, summaries)
        if output:
            failed = write_results(values, summaries, output, tmp, windows)
        trace = os.path.abspath(values["trace"]) if values.get("trace") else \
            env.get("NVTXCORR_TRACE")
        if trace and "%" not in trace and not os.path.exists(trace):
            say("error", f"--trace {trace}: not written (the library's message above says why)")
            failed = True
    if not failed:
        for f in files:
            os.unlink(f)
    if failed:  # the command's own status first; a success that lost a result is not one
        say("error", f"a result was not written where asked; the command's exit status was "
                     f"{status}")
        return status or 1
    return status


def print_tables(values, summaries):
    """The tables on stderr, GPU ones first, and the program-context tree after them (all
    drawn by nvtxcorr-tool render) when the program's ranges are in the rows, not only graph
    labels (a replayed kernel's path starts with its graph's label even without any range:
    the by-kernel view again)."""
    from nvtxcorr.context import merge_contexts
    from nvtxcorr.render import render
    top, sort = values.get("top", 20), values.get("sort")
    ranges = any(len(p) > 1 or (p and c["launches"])
                 for (p, _), c in merge_contexts(summaries).items())
    sys.stderr.write(render(summaries, "text", top=top, sort=sort, gpu_first=True,
                            contexts=ranges))


def write_results(values, summaries, output, tmp, windows):
    """-o: one file, one per window (%w), or the windows' files into a directory. True when
    one could not be written (then every summary stays in tmp, named in the error)."""
    from nvtxcorr.render import render
    force, top, sort = values.get("force"), values.get("top", 20), values.get("sort")
    if windows and os.path.isdir(output):
        ext = ".html" if values.get("html") else ""  # summary.<pid>.<w>.json: each window's page
        jobs = [(os.path.join(output, os.path.basename(p)[:-5 if ext else None] + ext), [(p, d)])
                for p, d in summaries]
    elif windows and "%w" in output:
        by_window = {}
        for p, d in summaries:
            by_window.setdefault((d.get("window") or {}).get("index", 0), []).append((p, d))
        jobs = [(output.replace("%w", str(w)), s) for w, s in sorted(by_window.items())]
    else:
        jobs = [(output, summaries)]
    failed = False
    for path, group in jobs:
        fmt = format_of(path, "html" if values.get("html") else values.get("format"))
        if fmt == "json" and len(group) == 1:
            text = open(group[0][0], encoding="utf-8").read()
        elif fmt == "html":
            from nvtxcorr.html import page
            text = page(group)
        else:
            text = render(group, fmt, top=top, sort=sort)
        why = write_output(path, text, force)
        if why:
            # Never lost: the result stays where it was made, and the user is told where.
            kept = os.path.join(tmp, "summary." + fmt.replace("text", "txt"))
            if len(jobs) > 1:
                kept = tmp
            else:
                with open(kept, "w", encoding="utf-8") as f:
                    f.write(text)
            say("error", f"{path}: {why}; the summary is kept in {kept}")
            failed = True
    return failed
