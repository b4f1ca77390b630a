"""Running the program: every check before it starts, then the exec (nvtxcorr command) or
stat's run (nvtxcorr stat command). Nothing is removed or replaced until every check has
passed: -f's old outputs go only just before the program starts."""
import os
import sys

from nvtxcorr.cli import absolute, check_output, check_program, fail, launcher_path
from nvtxcorr.options import STAT


def library_path(paths):
    lib = paths.library
    if not lib or not os.path.exists(lib):
        fail(2, f"libnvtxcorr.so not found next to {launcher_path(paths)} (build or install "
                "first)")
    lib = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(lib))),
                       os.path.basename(lib))
    # ld.so splits LD_PRELOAD at spaces and colons and cannot quote them: such a path would
    # load nothing and the program would run uninstrumented, so refuse it instead.
    if any(c.isspace() or c == ":" for c in lib):
        fail(2, f"cannot preload '{lib}': LD_PRELOAD cannot hold a path with a space or a "
                "colon; install nvtxcorr elsewhere or pass --library PATH")
    return lib


def label_settings(paths, values, env):
    """The label table's variables as the program will see them."""
    if "labels" in values:
        v = values["labels"]
        if v and "/" not in v and not os.path.exists(v) and paths.shipped(v) == v:
            names = ", ".join(paths.table_names()) if paths.tables else "none here"
            fail(2, f"--labels {v}: no such file, nor a table shipped with nvtxcorr ({names}; "
                    "nvtxcorr labels lists them); the command was not run")
        env["NVTXCORR_LABELS"] = absolute(paths.shipped(v)) if v else ""
    if "labels_inline" in values:
        env["NVTXCORR_LABELS_INLINE"] = values["labels_inline"]


def check_labels(paths, values, env):
    """The label table the program will load, loaded here by the library's own parser
    (nvtxcorr-tool check) first. With --keep-going a table with errors is taken out of the
    program's environment: the library would load none of it anyway, and would print every
    error a second time."""
    rules = (env.get("NVTXCORR_LABELS") or "") + (env.get("NVTXCORR_LABELS_INLINE") or "")
    if not rules.strip():  # blank inline rules are no table, for the library too
        return
    import subprocess
    from nvtxcorr.cli import need_tool
    tool = need_tool(paths)
    if subprocess.run([tool, "check"], env=env, stdout=subprocess.DEVNULL).returncode == 0:
        return
    if not values.get("keep_going"):
        fail(2, "the label table has errors (above); the command was not run (--keep-going "
                "runs it, with default labels)")
    print("nvtxcorr: warn: the label table has errors (above); running with default labels "
          "(--keep-going)", file=sys.stderr)
    env.pop("NVTXCORR_LABELS", None)
    env.pop("NVTXCORR_LABELS_INLINE", None)


def check_window(paths, spec):
    """The library's own NVTXCORR_WINDOW parser, so a typo stops here rather than hours into
    a run."""
    import subprocess
    from nvtxcorr.cli import need_tool
    p = subprocess.run([need_tool(paths), "check-window", spec], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail(2, f"--window {spec}: {p.stdout.strip()}; the command was not run")


def replaces(option, value, variable, env):
    """A launcher inside another one's command finds the outer one's settings in its
    environment: its own win for its command, but never silently (docs/usage.md)."""
    outer = env.get(variable)
    if outer and outer != value:
        print(f"nvtxcorr: warn: {option} {value} replaces {variable}={outer}, set outside this "
              "nvtxcorr (by an nvtxcorr or nvtxcorr stat around it?), for this command and its "
              "children", file=sys.stderr)


def prepare(paths, command, values, cmd):
    env = dict(os.environ)
    label_settings(paths, values, env)
    if "log" in values:
        env["NVTXCORR_LOG"] = values["log"]
    if "capture" in values:
        env["NVTXCORR_CAPTURE"] = values["capture"]
    if values.get("no_graph_marks"):
        env["NVTXCORR_GRAPH_MARKS"] = "0"
    library = library_path(paths)
    program = check_program(cmd[0], values.get("forced"))
    check_labels(paths, values, env)
    force, removals = values.get("force"), []
    trace = absolute(values["trace"]) if values.get("trace") else None
    profile = absolute(values["profile"]) if values.get("profile") else None
    output = values.get("output")
    if trace:
        check_output("--trace", trace, force, removals)
    if profile:
        check_output("--profile", profile, force, removals)
    window = values.get("window")
    if window is not None:
        check_window(paths, window)
        if command != STAT and not profile:
            fail(2, "--window needs --profile FILE (one summary per window); the command was "
                    "not run")
    if values.get("metrics") and command != STAT and not profile:
        fail(2, "--metrics needs --profile FILE (its counts are profile mode's); the command was "
                "not run")
    if command == STAT:
        from nvtxcorr.stat import check_stat
        output = check_stat(values, removals)
    if trace:
        replaces("--trace", trace, "NVTXCORR_TRACE", env)
        env["NVTXCORR_TRACE"] = trace
    if profile:
        replaces("--profile", profile, "NVTXCORR_PROFILE", env)
        env["NVTXCORR_PROFILE"] = profile
    if values.get("metrics"):
        metrics = absolute(values["metrics"])
        replaces("--metrics", metrics, "NVTXCORR_METRICS", env)
        env["NVTXCORR_METRICS"] = metrics
    if window is not None:
        replaces("--window", window, "NVTXCORR_WINDOW", env)
        env["NVTXCORR_WINDOW"] = window
    if command == STAT:
        from nvtxcorr.stat import cmd_stat
        return cmd_stat(values, cmd, library, env, output, removals)
    remove(removals)
    env["LD_PRELOAD"] = library + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["NVTXCORR"] = "1"
    sys.stdout.flush()
    try:
        # execve, not execvpe: PATH was searched by check_program, and os.execvpe imports
        # warnings (docs/performance.md, Launcher start-up).
        os.execve(program, cmd, env)
    except OSError as e:
        fail(127 if e.errno == 2 else 126, f"{cmd[0]}: {e.strerror}")


def remove(removals):
    """The old outputs -f replaces, once every check has passed."""
    for option, path in removals:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            fail(2, f"{option} {path}: cannot replace it: {e.strerror}; the command was not run")
