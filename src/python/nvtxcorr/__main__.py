"""`nvtxcorr ...` and `python -m nvtxcorr ...` of the wheel: the front end, this package's
bin/nvtxcorr (a C program: docs/design.md, Front end), exec'd with the arguments."""
import os
import sys


def main():
    from nvtxcorr import LAUNCHER
    sys.stdout.flush()
    try:
        os.execv(LAUNCHER, [LAUNCHER] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"nvtxcorr: error: {LAUNCHER}: {e.strerror} (the wheel's front end)")


if __name__ == "__main__":
    main()
