"""`nvtxcorr ...` and `python -m nvtxcorr ...`: exec the shell launcher of this package with
the same arguments. It finds lib/libnvtxcorr.so relative to itself, as in any install tree;
exec keeps the process what profilers see (nsys and ncu run it as the program)."""
import os
import sys

from nvtxcorr import LAUNCHER


def main():
    # Through sh: the wheel's file modes are not relied upon for the script.
    os.execv("/bin/sh", ["/bin/sh", LAUNCHER, *sys.argv[1:]])


if __name__ == "__main__":
    main()
