"""nvtxcorr, installed from a wheel: the CMake install tree lives inside this package
(bin/nvtxcorr, lib/libnvtxcorr.so, libexec/nvtxcorr/nvtxcorr-tool, share/nvtxcorr/labels).
The `nvtxcorr` command and `python -m nvtxcorr` run the launcher in bin/."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "bin", "nvtxcorr")
LIBRARY = os.path.join(HERE, "lib", "libnvtxcorr.so")
LABELS = os.path.join(HERE, "share", "nvtxcorr", "labels")
