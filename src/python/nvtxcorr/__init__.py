"""nvtxcorr's command line and report (docs/design.md, Front end). Installed from a wheel, the
CMake install tree lives inside this package too (bin/nvtxcorr, lib/libnvtxcorr.so,
libexec/nvtxcorr/nvtxcorr-tool, share/nvtxcorr/labels). Kept small: the launcher imports it
on every run."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "bin", "nvtxcorr")
LIBRARY = os.path.join(HERE, "lib", "libnvtxcorr.so")
LABELS = os.path.join(HERE, "share", "nvtxcorr", "labels")
TOOL = None  # nvtxcorr-tool, as cli.main found it: render.py draws the text tables with it


def say(level, msg):
    """One diagnostic line, `nvtxcorr: LEVEL: msg`, on stderr."""
    print(f"nvtxcorr: {level}: {msg}", file=sys.stderr)
