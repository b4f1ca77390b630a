"""torch.profiler of the stub: the kernels executed while it is open, with the fake CUPTI's
durations (torch.profiler's own names would be demangled: the check matches by function)."""
import os

import torch
from torch import _driver as _d


class ProfilerActivity:
    CPU, CUDA = "CPU", "CUDA"


class _Range:
    def __init__(self, ns):
        self.ns = ns

    def elapsed_us(self):
        return self.ns / 1000


class _Event:
    device_type = "DeviceType.CUDA"

    def __init__(self, name, ns):
        self.name, self.time_range = _d.DEMANGLED.get(name, name), _Range(ns)


class profile:
    def __init__(self, activities=None, **kw):
        if os.environ.get("STUB_TORCH_FAIL") == "profiler":
            raise RuntimeError("stub torch: profiler broken on purpose (STUB_TORCH_FAIL)")
        self.names = []

    def __enter__(self):
        torch._recording.append(self.names)
        return self

    def __exit__(self, *a):
        torch.cuda.synchronize()
        torch._recording.remove(self.names)

    def events(self):
        scale = float(os.environ.get("STUB_TORCH_PROF_SCALE", "1"))
        names = self.names + self.names[:1] * int(os.environ.get("STUB_TORCH_PROF_EXTRA", "0"))
        return [_Event(n, torch._ns(n) * scale) for n in names]
