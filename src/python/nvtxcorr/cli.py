"""stat and report, as the front end (bin/nvtxcorr, src/cli/front.c) runs them: it owns the
command line, runs a program itself and hands these two commands here with its own path (stat
runs its command through it) and nvtxcorr-tool's (which draws the text tables). Their options
are options.OPTIONS' rows, parsed by options.parse (docs/design.md, Front end)."""
import sys

from nvtxcorr.options import REPORT, STAT, Usage, parse, usage


class Exit(Exception):
    def __init__(self, status, message=None):
        super().__init__(message)
        self.status, self.message = status, message


def fail(status, message):
    raise Exit(status, message)


def main(front, tool, argv):
    """Runs `stat ...` or `report ...` (argv without the program name); front: bin/nvtxcorr,
    tool: nvtxcorr-tool ("" when not found)."""
    import nvtxcorr
    nvtxcorr.FRONT, nvtxcorr.TOOL = front, tool or None
    try:
        status = dispatch(argv)
    except Usage as e:
        status = 2
        print(f"nvtxcorr: error: {e}", file=sys.stderr)
    except Exit as e:
        status = e.status
        if e.message:
            print(f"nvtxcorr: error: {e.message}", file=sys.stderr)
    sys.exit(status)


def dispatch(argv):
    if argv[:1] == [REPORT]:
        from nvtxcorr.report import main as report_main
        return report_main(argv[1:])
    if argv[:1] != [STAT]:
        fail(2, "the Python part of nvtxcorr runs stat and report: use bin/nvtxcorr")
    passthrough = []
    values, rest = parse(STAT, argv[1:], passthrough=passthrough)
    if values.get("help"):
        sys.stdout.write(usage(STAT))
        return 0
    if not rest:
        sys.stderr.write(usage(STAT))
        return 2
    from nvtxcorr.stat import cmd_stat
    return cmd_stat(values, passthrough, rest)
