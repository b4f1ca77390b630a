import os
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "src", "python"))


@pytest.fixture
def tool(monkeypatch):
    """nvtxcorr-tool as the front end finds it (nvtxcorr.TOOL): the one CTest names in
    NVTXCORR_TEST_TOOL (tests/unit/CMakeLists.txt), which draws the text tables."""
    import nvtxcorr
    path = os.environ.get("NVTXCORR_TEST_TOOL")
    assert path and os.access(path, os.X_OK), \
        "NVTXCORR_TEST_TOOL names no nvtxcorr-tool (CTest sets it to the built one)"
    monkeypatch.setattr(nvtxcorr, "TOOL", path)
    return path
