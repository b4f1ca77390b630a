"""torch.cuda of the stub: streams, events, graphs, nvtx."""
import contextlib
import os

import torch
from torch import _driver as _d

from . import nvtx  # noqa: F401


def is_available():
    return not os.environ.get("STUB_TORCH_NO_CUDA")


def get_device_name(i=0):
    return "stub GPU (fake driver)"


class Stream:
    def __init__(self):
        self.handle = _d.stream()
        self.capturing = None  # kernel names of the capture in progress

    def launch(self, name):
        torch._profiled_op()
        _d.op_calls(self.handle)
        if name == _d.GEMM:
            _d.gemm(self.handle)
        else:
            _d.launch(name, self.handle)
        names = list(name) if isinstance(name, tuple) else [name]
        if self.capturing is not None:
            self.capturing.extend(names)
        else:
            torch._executed(names)

    def wait_stream(self, other):
        pass

    def synchronize(self):
        _d.sync(self.handle)
        torch._wait_gpu()


_default = None
_stack = []


def _current():
    global _default
    if _stack:
        return _stack[-1]
    if _default is None:
        _default = Stream()
    return _default


def current_stream():
    return _current()


@contextlib.contextmanager
def stream(s):
    _stack.append(s)
    try:
        yield
    finally:
        _stack.pop()


def synchronize():
    _current().synchronize()


class Event:
    """elapsed_time: the kernels run between the two records, plus 1 us a kernel of gaps."""
    def __init__(self, enable_timing=False):
        self.at = 0

    def record(self, stream=None):
        self.at = len(torch._timeline)

    def elapsed_time(self, end):
        spans = torch._timeline[self.at:end.at]
        return (sum(spans) + 1000 * len(spans)) / 1e6

    def synchronize(self):
        synchronize()


class CUDAGraph:
    def __init__(self):
        self.exec, self.kernels, self.stream = None, [], None

    def replay(self):
        s = _current()
        _d.graph_launch(self.exec, s.handle)
        torch._executed(self.kernels)


@contextlib.contextmanager
def graph(g):
    if os.environ.get("STUB_TORCH_FAIL") == "graph":
        raise RuntimeError("stub torch: graph capture broken on purpose (STUB_TORCH_FAIL)")
    s = Stream()
    # PyTorch's CUDAGraph.capture_begin: the default generator's capture prologue fills its
    # seed and offset tensors (two fill kernels that run) before the capture begins.
    for _ in range(2):
        s.launch(_d.FILL)
    s.capturing = []
    _d.begin_capture(s.handle)
    _stack.append(s)
    try:
        yield
    finally:
        _stack.pop()
        g.exec, g.kernels, g.stream = _d.end_capture(s.handle), s.capturing, s
        s.capturing = None
