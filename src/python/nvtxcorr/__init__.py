"""nvtxcorr's stat and report (docs/design.md, Front end). Installed from a wheel, the CMake
install tree lives inside this package too (bin/nvtxcorr, the front end; lib/libnvtxcorr.so,
libexec/nvtxcorr/nvtxcorr-tool, share/nvtxcorr/labels). Kept small: stat and report import it
first."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "bin", "nvtxcorr")
FRONT = None  # bin/nvtxcorr, which ran cli.main: stat runs its command through it
TOOL = None  # nvtxcorr-tool, as the front end found it: render.py draws the text tables with it


def say(level, msg):
    """One diagnostic line, `nvtxcorr: LEVEL: msg`, on stderr."""
    print(f"nvtxcorr: {level}: {msg}", file=sys.stderr)
