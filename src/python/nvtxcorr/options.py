"""Every option of the command line, declared once: the parser (parse), the help texts
(usage), the checks of each value before anything runs, and docs/usage.md's option table
(markdown_table; tests/unit/test_options.py compares the two) all come from OPTIONS.

A command is "run" (nvtxcorr [options] command: the program with the library preloaded),
"stat" or "report". An option's row says which commands take it; given to another it is an
error naming the command that does. Values are checked here, as they are parsed, so a typo
stops the launcher before the program starts (a profiled run can take an hour)."""

import json

RUN, STAT, REPORT = "run", "stat", "report"
BOTH = (RUN, STAT)


class Usage(Exception):
    """A command line that cannot be run: the message (after `nvtxcorr: error: `), and the
    command whose help it points to."""

    def __init__(self, message, command=None):
        super().__init__(message)
        self.command = command


def _top(text):
    """--top N: a positive count, or all (None)."""
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise ValueError(f"must be a positive count or 'all', not '{text}'")
    return n


def _percent(text):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 <= v < float("inf"):
        raise ValueError(f"must be a percentage of 0 or more, not '{text}'")
    return v


def _regex(text):
    import re
    try:
        return re.compile(text)
    except re.error as e:
        raise ValueError(f"not a regular expression: {e}") from None


def _choice(*choices, fold=False):
    def check(text):
        if (text.lower() if fold else text) in choices or (fold and text == ""):
            return text
        raise ValueError(f"must be one of {', '.join(choices)}, not '{text}'")
    check.choices, check.fold = choices, fold
    return check


class Opt:
    """names; metavar (None: a flag); the commands that take it; help; check (text -> value,
    ValueError(why) when the text is no such value); dest; the environment variable it sets
    for the program (documentation: the launcher sets it); group: at most one option of a
    group per command line."""

    def __init__(self, names, metavar, commands, help, check=None, dest=None, env=None,
                 group=None):
        self.names, self.metavar, self.commands, self.help = names, metavar, commands, help
        self.check, self.env, self.group = check, env, group
        self.dest = dest or names[-1].lstrip("-").replace("-", "_")


OPTIONS = [
    Opt(("--labels",), "FILE|NAME", BOTH, "label table; NAME: a shipped table (nvtxcorr labels)",
        env="NVTXCORR_LABELS"),
    Opt(("--labels-inline",), "RULES", BOTH, "inline rules, ';'-separated",
        env="NVTXCORR_LABELS_INLINE"),
    Opt(("--keep-going",), None, BOTH, "run even when the label table has errors (with "
        "default labels)"),
    Opt(("--log",), "LEVEL", BOTH, "error|warn|info|debug",
        _choice("error", "warn", "info", "debug", fold=True), env="NVTXCORR_LOG"),
    Opt(("--capture",), "MODE", BOTH, "mark|skip|plain: launches made during stream capture",
        _choice("mark", "skip", "plain", fold=True), env="NVTXCORR_CAPTURE"),
    Opt(("--no-graph-marks",), None, BOTH, "no NVTX mark at graph instantiation",
        env="NVTXCORR_GRAPH_MARKS=0"),
    Opt(("--profile",), "FILE", (RUN,), "per-label summary at exit, %p = pid, %w = window "
        "(stat: -o)", env="NVTXCORR_PROFILE"),
    Opt(("--trace",), "FILE", BOTH, "trace of every launch, Kineto form for .json",
        env="NVTXCORR_TRACE"),
    Opt(("--metrics",), "FILE", BOTH, "Prometheus textfile of counters per label, rewritten at "
        "every window and at exit (%p = pid)", env="NVTXCORR_METRICS"),
    Opt(("--window",), "SPEC", BOTH, "one summary per window: cudaProfilerApi, signal (SIGUSR2 "
        "toggles), every:SECONDS; options ,delay:S ,count:N; needs --profile (stat: -o with %w, "
        "or a directory)", env="NVTXCORR_WINDOW"),
    Opt(("-o", "--output"), "FILE", (STAT, REPORT), "keep the summary in FILE too (.json, .csv, "
        ".html, else text; - for stdout); report: where --html writes"),
    Opt(("--html",), None, (STAT, REPORT), "the HTML report, one self-contained page, in -o "
        "(default report.html); report --diff A B too"),
    Opt(("--format",), "F", (STAT, REPORT), "json|csv|text: the format of -o (stat) or of the "
        "output (report), whatever the extension", _choice("json", "csv", "text"),
        group="format"),
    Opt(("-f", "--force-overwrite"), None, (RUN, STAT, REPORT), "replace an existing --trace, --profile or -o "
        "file (only once every check has passed)", dest="force"),
    Opt(("--top",), "N|all", (STAT, REPORT), "rows per table (default 20)", _top),
    Opt(("--sort",), "KEY", (STAT, REPORT), "gpu|cpu|launches: row order (default: each "
        "table by its own time)", _choice("gpu", "cpu", "launches")),
    Opt(("--library",), "PATH", BOTH, "the libnvtxcorr.so to preload"),
    Opt(("--by",), "VIEW", (REPORT,), "label|kernel|process|rank|context (default label)",
        _choice("label", "kernel", "process", "rank", "context")),
    Opt(("--depth",), "N", (REPORT,), "--by context, --folded: paths cut to their outermost N "
        "ranges", _top),
    Opt(("--focus",), "REGEX", (REPORT,), "--by context, --folded: rows under a range matching "
        "REGEX, from it", _regex),
    Opt(("--csv",), None, (REPORT,), "as --format csv", group="format"),
    Opt(("--json",), None, (REPORT,), "as --format json", group="format"),
    Opt(("--suggest",), None, (REPORT,), "a starter label table", group="format"),
    Opt(("--folded",), None, (REPORT,), "GPU time by program context as folded stacks "
        "(flamegraph.pl)", group="format"),
    Opt(("--hatchet",), None, (REPORT,), "the label tree (--by context: the context tree) in "
        "Hatchet's literal JSON", group="format"),
    Opt(("--diff",), None, (REPORT,), "compare two runs: A B, each a file, directory, glob or "
        "comma-separated list", group="format"),
    Opt(("--threshold",), "PCT", (REPORT,), "with --diff: exit 1 when a label is PCT% slower "
        "per launch (--by kernel: per kernel execution)", _percent),
    Opt(("-h", "--help"), None, (RUN, STAT, REPORT), "this text"),
]
BY_NAME = {n: o for o in OPTIONS for n in o.names}


def distance(a, b):
    """Optimal string alignment distance (Levenshtein with transpositions)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def closest(word, candidates):
    """The candidate nearest to word: at most 1 edit for words of up to 4 letters, 2 above;
    None when none is that near."""
    best, limit = None, 1 if len(word) <= 4 else 2
    for c in candidates:
        k = distance(word.lower(), c)
        if k <= limit:
            best, limit = c, k - 1
    return best


def unknown(arg, command):
    names = [n for o in OPTIONS if command in o.commands for n in o.names if n.startswith("--")]
    near = closest(arg.split("=", 1)[0], names)
    hint = f"; did you mean {near}?" if near else ""
    return Usage(f"unknown option {arg}{hint} (nvtxcorr help{' ' + command if command != RUN else ''})",
                 command)


def parse(command, argv, values=None, stop_at_program=True, passthrough=None):
    """(values, rest): the options of command taken from argv into values (dest -> value;
    flags True), and the arguments left. With stop_at_program the first word that is not an
    option (or `--`, dropped, values["forced"] then True) ends the options: the program and
    its arguments are rest. Otherwise options and words may mix (report's files). With a
    passthrough list, the options nvtxcorr (RUN) takes too are appended to it as they were
    given, their values unchecked: stat hands them to the front end, which checks them."""
    values = {} if values is None else values
    rest, i = [], 0
    while i < len(argv):
        start, arg = i, argv[i]
        i += 1
        if arg == "--":
            values["forced"] = True
            rest += argv[i:]
            break
        if not arg.startswith("-") or arg == "-":
            if stop_at_program:
                rest += argv[i - 1:]
                break
            rest.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        opt = BY_NAME.get(name)
        if opt is None:
            raise unknown(arg, command)
        if command not in opt.commands:
            raise Usage(wrong_command(name, command), command)
        if opt.metavar is None:
            if eq:
                raise Usage(f"{name} takes no value", command)
            value = True
        elif not eq:
            if i >= len(argv):
                raise Usage(f"{name} needs a value", command)
            value = argv[i]
            i += 1
        if passthrough is not None and RUN in opt.commands and opt.dest != "help":
            passthrough += argv[start:i]
        elif opt.check is not None and value is not True:
            try:
                value = opt.check(value)
            except ValueError as e:
                raise Usage(f"{name} {value}: {e}", command) from None
        if opt.group:
            other = values.get(("group", opt.group))
            if other and other != name:
                raise Usage(f"{name} and {other} do not go together: give one", command)
            values[("group", opt.group)] = name
        values[opt.dest] = value
    return values, rest


def wrong_command(name, command):
    o = BY_NAME[name]
    if name == "--profile" and command == STAT:
        return ("--profile is not for stat, which writes its summary with -o FILE (or run "
                "nvtxcorr --profile FILE command, without stat)")
    if command == RUN and STAT in o.commands:
        return f"{name} is for nvtxcorr stat (nvtxcorr help stat)"
    where = " or ".join("nvtxcorr" if c == RUN else f"nvtxcorr {c}" for c in o.commands)
    return f"{name} is for {where}, not {'nvtxcorr' if command == RUN else 'nvtxcorr ' + command}"


def option_lines(command):
    """The help lines of command's options, from OPTIONS."""
    out = []
    for o in OPTIONS:
        if command not in o.commands:
            continue
        left = ", ".join(o.names) + (f" {o.metavar}" if o.metavar else "")
        text = o.help + (f" ({o.env})" if o.env else "")
        words, lines, line = text.split(), [], ""
        for w in words:
            if line and len(line) + 1 + len(w) > 98 - 25:
                lines.append(line)
                line = w
            else:
                line = f"{line} {w}" if line else w
        lines.append(line)
        if len(left) > 22:
            out.append(f"  {left}")
            out += [" " * 25 + x for x in lines]
        else:
            out.append(f"  {left:<22} {lines[0]}")
            out += [" " * 25 + x for x in lines[1:]]
    return "\n".join(out) + "\n"


def markdown_table():
    """docs/usage.md's option table (between its `options table` markers)."""
    out = ["| option | commands | what |", "|---|---|---|"]
    for o in OPTIONS:
        names = " ".join(f"`{n}{' ' + o.metavar if o.metavar else ''}`"
                         for n in o.names).replace("|", "\\|")
        cmds = ", ".join("nvtxcorr" if c == RUN else c for c in o.commands)
        what = (o.help + (f" ({o.env})" if o.env else "")).replace("|", "\\|")
        out.append(f"| {names} | {cmds} | {what} |")
    return "\n".join(out) + "\n"


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
    """A command's help: its text and its options' lines."""
    if command == STAT:
        return USAGE_STAT + option_lines(STAT)
    if command == REPORT:
        return USAGE_REPORT + option_lines(REPORT)
    return USAGE + option_lines(RUN) + USAGE_TAIL


def c_string(text):
    assert text.isascii(), text
    return json.dumps(text)


def c_source():
    """The front end's copy of the declaration (src/cli/options.h), generated at build time:
    each option's names, value, commands and the check of its value where nvtxcorr (the
    command RUN) takes it, the message for one it does not take, and the help texts."""
    bits = {RUN: 1, STAT: 2, REPORT: 4}
    out = ["/* Generated from src/python/nvtxcorr/options.py by `python3 options.py --c`: the",
           " * front end's copy of the one declaration of the command line. Do not edit. */",
           '#include "options.h"', "", "const struct nvtxcorr_option nvtxcorr_options[] = {"]
    for o in OPTIONS:
        names = list(o.names) + [None] * (2 - len(o.names))
        check = o.check
        if RUN in o.commands and (o.group or check is not None and
                                  not hasattr(check, "choices")):
            raise SystemExit(f"{o.names[-1]}: the front end checks choices only, no groups")
        choices = getattr(check, "choices", None) if RUN in o.commands else None
        wrong = [None if RUN in o.commands or n is None else wrong_command(n, RUN)
                 for n in names]
        fields = [
            "{" + ", ".join(c_string(n) if n else "NULL" for n in names) + "}",
            c_string(o.metavar) if o.metavar else "NULL",
            f"{sum(bits[c] for c in o.commands)}u",
            c_string(o.dest),
            "{" + ", ".join([c_string(x) for x in choices or ()] + ["NULL"]) + "}",
            "1" if getattr(check, "fold", False) else "0",
            "{" + ", ".join(c_string(w) if w else "NULL" for w in wrong) + "}",
        ]
        out.append("    {" + ", ".join(fields) + "},")
    out += ["};", f"const int nvtxcorr_option_count = {len(OPTIONS)};"]
    for name, text in (("run", usage(RUN)), ("stat", usage(STAT)), ("report", usage(REPORT)),
                       ("labels", USAGE_LABELS)):
        out.append(f"const char nvtxcorr_usage_{name}[] = {c_string(text)};")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    # python3 -m nvtxcorr.options: the table for docs/usage.md; --c: the front end's copy.
    import sys
    sys.stdout.write(c_source() if sys.argv[1:] == ["--c"] else markdown_table())
