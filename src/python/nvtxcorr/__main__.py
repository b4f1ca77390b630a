"""`nvtxcorr ...` and `python -m nvtxcorr ...` of the wheel: the command line (cli.main), with
this package's bin/ as the launcher's directory, where the install tree's parts are found."""
import os
import sys


def main():
    from nvtxcorr import HERE
    from nvtxcorr.cli import main as cli_main
    cli_main(os.path.join(HERE, "bin"), sys.argv[1:], sys.argv[0])


if __name__ == "__main__":
    main()
