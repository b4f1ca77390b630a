"""A stub of the few PyTorch calls tests/gpu/*.py make, for testing scripts/gpu-check's own
logic on the fakes (tests/gpu/test_gpu_check.py): every op launches one kernel of a real
PyTorch/cuBLAS name through the fake driver (ctypes, so through dlsym like a plugin), CUDA
graphs are the fake driver's stream capture, and torch.profiler reports what the fake CUPTI
reports (100 ns per character of a kernel's mangled name). Knobs, to break it on purpose:
  STUB_TORCH_NO_CUDA=1        torch.cuda.is_available() is False
  STUB_TORCH_PROF_SCALE=x     torch.profiler's kernel times are multiplied by x
  STUB_TORCH_PROF_EXTRA=1     torch.profiler reports one kernel execution more
  STUB_TORCH_FAIL=what        raise in torch.profiler.profile (profiler) or CUDA graph
                              capture (graph)
  STUB_TORCH_LOAD_CUPTI=name  import loads this libcupti by name (as libtorch_cuda does)
  STUB_TORCH_GPU_SLOWDOWN=x   the "GPU" that synchronize waits for takes x times the fake
                              CUPTI's durations (a loop stays GPU-bound on a loaded machine)
  STUB_TORCH_PROF_OP_NS=n     what torch.profiler costs the launching thread per op while a
                              session is open (spent spinning; default 10000: Kineto's API
                              records and op events)
A GEMM (`@`) is the fake cuBLAS's (libfake_blas.so, its own runtime built in); every op first
makes the driver calls PyTorch makes that are not launches; a CUDA graph's capture begins with
the two fill kernels of PyTorch's generator prologue, which run.
"""
import contextlib
import ctypes
import os
import time

from . import _driver as _d

__version__ = "0.0-stub"
float32 = "float32"


def _ns(name):  # the fake CUPTI's duration of one execution
    return 100 * len(name)


_recording = []  # torch.profiler sessions open: lists of kernel names executed
_timeline = []  # every execution's duration, for torch.cuda.Event


_busy_until = [0.0]  # when the "GPU" finishes what it was given (time.monotonic)
_SLOWDOWN = float(os.environ.get("STUB_TORCH_GPU_SLOWDOWN", "1"))
_PROF_OP_S = float(os.environ.get("STUB_TORCH_PROF_OP_NS", "10000")) / 1e9


def _profiled_op():
    """torch.profiler's own cost for one op, while a session is open."""
    if _recording:
        end = time.perf_counter() + _PROF_OP_S
        while time.perf_counter() < end:
            pass


def _executed(names):
    """Kernels the GPU runs: the profiler's, the events' and the GPU's clock (synchronize
    waits for it, so that loops are bound by the GPU as on hardware)."""
    for r in _recording:
        r.extend(names)
    ns = [_ns(n) for n in names]
    _timeline.extend(ns)
    _busy_until[0] = max(_busy_until[0], time.monotonic()) + sum(ns) * _SLOWDOWN / 1e9


def _wait_gpu():
    left = _busy_until[0] - time.monotonic()
    if left > 0:
        time.sleep(left)


if os.environ.get("STUB_TORCH_LOAD_CUPTI"):
    ctypes.CDLL(os.environ["STUB_TORCH_LOAD_CUPTI"])

from . import cuda, nn, profiler  # noqa: E402,F401


def _launch(name):
    cuda._current().launch(name)


class Tensor:
    def __init__(self, shape):
        self.shape = tuple(shape)

    def _op(self, name):
        _launch(name)
        return Tensor(self.shape)

    def __matmul__(self, other):
        return Tensor(self.shape[:-1] + other.shape[-1:])._op(_d.GEMM)

    def __add__(self, other):
        return self._op(_d.ADD)

    __radd__ = __add__

    def add_(self, other):
        _launch(_d.ADD)
        return self

    def __mul__(self, other):
        return Tensor(self.shape)  # CPU tensors only, here

    def __truediv__(self, other):
        return self._op(_d.DIV)

    def sum(self):
        return self._op(_d.SUM)

    def cpu(self):
        cuda.synchronize()
        return self

    def isfinite(self):
        return self

    def all(self):
        return True

    def __float__(self):
        cuda.synchronize()
        return 1.0

    def item(self):
        return float(self)

    def __eq__(self, other):
        return self


def randn(*shape, device=None):
    return Tensor(shape)._op(_d.RANDN)


def ones(*shape, device=None):
    return Tensor(shape)._op(_d.FILL) if device else Tensor(shape)


def empty(*shape, device=None, dtype=None):
    return Tensor(shape)


def relu(x):
    return x._op(_d.RELU)


def softmax(x, dim=-1):
    return x._op(_d.SOFTMAX)


def isfinite(x):
    return x


def allclose(a, b, **kw):
    return True


def manual_seed(n):
    pass


def device(name):
    return name


@contextlib.contextmanager
def no_grad():
    yield


def zeros(*shape, device=None, dtype=None):
    return Tensor(shape)._op(_d.FILL)
