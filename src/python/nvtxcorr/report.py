"""`nvtxcorr report`: summaries written with NVTXCORR_PROFILE=...%p.json (or stat -o) merged
into one table on stdout, or the views around it: --by kernel, process, rank, context,
--csv, --json, --suggest, --hatchet, --folded, --diff (docs/profile.md). Its options are
options.OPTIONS' rows for report."""
import sys

from nvtxcorr import say
from nvtxcorr.options import REPORT, Usage, parse


def check_args(args, files):
    """What parses but makes no sense together: each an error naming the fix."""
    by = args.get("by", "label")
    if "threshold" in args and not args.get("diff"):
        raise Usage("--threshold is a gate for --diff: nvtxcorr report --diff A B --threshold "
                    "PCT", REPORT)
    if args.get("diff") and by not in ("label", "kernel", "context"):
        raise Usage(f"--diff compares --by label, kernel or context, not --by {by}", REPORT)
    if args.get("html"):
        other = [o for o in ("csv", "json", "suggest", "folded", "hatchet", "format")
                 if o in args]
        if other or by != "label":
            raise Usage(f"--html draws every view in one page: not with "
                        f"{'--by ' + by if by != 'label' else '--' + other[0]}", REPORT)
    elif "output" in args:
        raise Usage("report writes to stdout; -o is where --html writes", REPORT)
    if not files:
        raise Usage("report needs summaries: nvtxcorr report [options] FILE.json... "
                    "(nvtxcorr help report)", REPORT)


def main(argv):
    for stream in (sys.stdout, sys.stderr):  # a label no encoding can print is escaped
        stream.reconfigure(errors="backslashreplace")
    args, files = parse(REPORT, argv, stop_at_program=False)
    if args.pop("forced", None):
        pass
    if args.get("help"):
        from nvtxcorr.options import usage
        sys.stdout.write(usage(REPORT))
        return 0
    check_args(args, files)
    try:
        return cmd_report(args, files)
    except BrokenPipeError:
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except MemoryError:
        # What each file needs is checked as it is read (load); this is the merge of many
        # large ones under a memory limit.
        say("error", "out of memory (ulimit -v, or a container's limit?)")
        return 1


def cmd_report(args, files):
    from nvtxcorr.schema import load_all
    by, top, sort = args.get("by", "label"), args.get("top", 20), args.get("sort")
    if args.get("diff"):
        from nvtxcorr.diff import cmd_diff
        return cmd_diff(args, files)
    if args.get("html"):
        return write_html(args, files)
    pid_rank = {}
    if by == "rank":  # traces given beside the summaries: their distributedInfo
        from nvtxcorr.rank import trace_rank
        summaries_files = []
        for f in files:
            pr = trace_rank(f)
            if pr:
                pid_rank[pr[0]] = pr[1:]
            else:
                summaries_files.append(f)
        files = summaries_files
    summaries, bad = load_all(files)
    fmt = "json" if args.get("json") else "csv" if args.get("csv") else args.get("format", "text")
    out = sys.stdout
    if summaries:
        if args.get("suggest"):
            from nvtxcorr.suggest import suggest
            out.write(suggest(summaries))
        elif args.get("hatchet") and by == "context":
            from nvtxcorr.hatchet import hatchet_context
            out.write(hatchet_context(summaries, args.get("depth"), args.get("focus")))
        elif args.get("hatchet"):
            from nvtxcorr.hatchet import hatchet
            out.write(hatchet(summaries))
        elif by == "rank":
            from nvtxcorr.rank import by_rank
            table = by_rank(summaries, pid_rank, top)
            if table is None:
                return 1
            out.write(table)
        elif args.get("folded"):
            from nvtxcorr.context import folded, merge_contexts
            gpu = any(d.get("gpu_time") for _, d in summaries)
            out.write(folded(merge_contexts(summaries, args.get("depth"), args.get("focus")),
                             gpu))
        elif by == "context":
            from nvtxcorr.context import by_context, context_notes
            out.write(by_context(summaries, fmt, args.get("depth"), args.get("focus"), top))
            for n in context_notes(summaries) if fmt == "text" else ():
                say("note", n)
        else:
            from nvtxcorr.render import render
            out.write(render(summaries, fmt, by, top, sort))
    elif not bad:
        say("error", "no summary given")
    return 1 if bad or not summaries else 0


def write_html(args, files):
    """--html: the page of every view (nvtxcorr/html) in -o, default report.html; its path on
    stdout."""
    from nvtxcorr.html import page
    from nvtxcorr.schema import load_all
    summaries, bad = load_all(files)
    if not summaries:
        if not bad:
            say("error", "no summary given")
        return 1
    if not write_page(args, page(summaries)):
        return 1
    return 1 if bad else 0


def html_diff(args, data):
    """--diff --html: the diff's page in -o (default report.html); 1 when a label is slower
    past --threshold, as the text diff."""
    from nvtxcorr.html import page
    if not write_page(args, page(diff=data)):
        return 2
    return 1 if data["slower"] else 0


def write_page(args, html):
    """The page into -o (default report.html), its path on stdout; False, said, when it could
    not be written."""
    import os
    from nvtxcorr.stat import output_problem, write_output
    path = args.get("output") or "report.html"
    why = output_problem(path, args.get("force")) or write_output(path, html, args.get("force"))
    if why:
        say("error", f"{path}: {why}")
        return False
    if path != "-":
        print(os.path.abspath(path))
    return True
