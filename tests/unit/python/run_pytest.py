"""Runs one of this directory's pytest files against src/python/nvtxcorr (CTest's unit.python-*
tests); "skipped: " when pytest is not installed (scripts/test installs it into build/venv)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "src", "python"))
try:
    import pytest
except ImportError:
    print("skipped: no pytest in this Python (scripts/test installs it into build/venv)")
    sys.exit(0)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", HERE,
                      os.path.join(HERE, "test_" + sys.argv[1])]))
