"""The fake driver through ctypes: a function per kernel name, launches, stream capture; and the
fake cuBLAS, which carries its own runtime as cuBLAS 13 does."""
import ctypes
import os

# The fake cuBLAS's GEMM (libfake_blas.so): these two kernels, as cuBLAS ran the MLP's small-N
# GEMMs on the H200.
GEMM = ("gemmSN_NN_kernel", "splitKreduce_kernel")
ADD = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEE"
       "St5arrayIPcLm3EEEEviT0_T1_")
DIV = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_"
       "10DivFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_")
RELU = "_ZN2at6native11relu_kernelEPfi"
NORM = "_ZN2at6native28vectorized_layer_norm_kernelIffEEviPKT_"
GELU = "_ZN2at6native11gelu_kernelEPfi"
RANDN = "_ZN2at6native12randn_kernelEPfi"
FILL = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE"
        "St5arrayIPcLm1EEEEviT0_T1_")
SUM = "_ZN2at6native13reduce_kernelILi512ELi1EEEvPf"
SOFTMAX = "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi4EfffEEvPT2_PKT0_i"
# torch.profiler's names are demangled (c++filt of the above)
DEMANGLED = {
    "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi4EfffEEvPT2_PKT0_i":
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>(floa"
        "t*, float const*, int)",
    "gemmSN_NN_kernel": "void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false, cublasGemvTensorS"
    "trided<float const>, cublasGemvTensorStrided<float const>, cublasGemvTensorStrided<float> >("
    "cublasGemmSmallNParams<cublasGemvTensorStrided<float const>, cublasGemvTensorStrided<float "
    "const>, cublasGemvTensorStrided<float>, float>)",
    "splitKreduce_kernel": "void splitKreduce_kernel<32, 16, int, float, float, float, float, tru"
    "e, false, false>(cublasSplitKParams<float>, float const*, float const*, float*, float const"
    "*, float const*, float const*, float const*, float*, void*, long, float*, int*)",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEE"
    "viT0_T1_":
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, st"
        "d::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_10DivFunctorIfEE"
    "EESt5arrayIPcLm3EEEEviT0_T1_":
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float"
        ", float, at::native::DivFunctor<float> >, std::array<char*, 3ul> >(int, at::native::Bina"
        "ryFunctor<float, float, float, at::native::DivFunctor<float> >, std::array<char*, 3ul>)",
    "_ZN2at6native11relu_kernelEPfi":
        "at::native::relu_kernel(float*, int)",
    "_ZN2at6native28vectorized_layer_norm_kernelIffEEviPKT_":
        "void at::native::vectorized_layer_norm_kernel<float, float>(int, float const*)",
    "_ZN2at6native11gelu_kernelEPfi":
        "at::native::gelu_kernel(float*, int)",
    "_ZN2at6native12randn_kernelEPfi":
        "at::native::randn_kernel(float*, int)",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0"
    "_T1_":
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::a"
        "rray<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
    "_ZN2at6native13reduce_kernelILi512ELi1EEEvPf":
        "void at::native::reduce_kernel<512, 1>(float*)",
}

_cu = ctypes.CDLL("libcuda.so.1")
_cu.cuInit(0)
_blas = ctypes.CDLL("libfake_blas.so")
_funcs = {}


def check(what, rc):
    if rc != 0:
        raise RuntimeError(f"stub torch: {what}: CUresult {rc}")


def function(name):
    f = _funcs.get(name)
    if f is None:
        f = ctypes.c_void_p()
        check("fakecuda_make_function", _cu.fakecuda_make_function(name.encode(), ctypes.byref(f)))
        _funcs[name] = f
    return f


def stream():
    s = ctypes.c_void_p()
    check("cuStreamCreate", _cu.cuStreamCreate(ctypes.byref(s), 1))  # non-blocking
    return s


def op_calls(s):
    """The driver calls PyTorch makes around an op that are not launches (its context, the
    stream's capture state): CUPTI sees them all."""
    ctx, st = ctypes.c_void_p(), ctypes.c_int()
    check("cuCtxGetCurrent", _cu.cuCtxGetCurrent(ctypes.byref(ctx)))
    check("cuStreamIsCapturing", _cu.cuStreamIsCapturing(s, ctypes.byref(st)))


def gemm(s):
    """One cuBLAS GEMM: the fake cuBLAS's runtime launches its kernels (GEMM)."""
    check("fakeblas_gemm", _blas.fakeblas_gemm(s))


def launch(name, s):
    u = ctypes.c_uint
    check("cuLaunchKernel", _cu.cuLaunchKernel(function(name), u(1), u(1), u(1), u(32), u(1), u(1),
                                               u(0), s, None, None))


def launch_ex(name, s, grid=1):
    """cuLaunchKernelEx, as Triton's launcher calls it (found with dlsym)."""
    class Config(ctypes.Structure):
        _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                    ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                    ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                    ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                    ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]
    c = Config(grid, 1, 1, 128, 1, 1, 0, s, None, 0)
    check("cuLaunchKernelEx", _cu.cuLaunchKernelEx(ctypes.byref(c), function(name), None, None))


def begin_capture(s):
    check("cuStreamBeginCapture_v2", _cu.cuStreamBeginCapture_v2(s, 0))


def end_capture(s):
    g, e = ctypes.c_void_p(), ctypes.c_void_p()
    check("cuStreamEndCapture", _cu.cuStreamEndCapture(s, ctypes.byref(g)))
    check("cuGraphInstantiateWithFlags",
          _cu.cuGraphInstantiateWithFlags(ctypes.byref(e), g, ctypes.c_ulonglong(0)))
    return e


def graph_launch(e, s):
    check("cuGraphLaunch", _cu.cuGraphLaunch(e, s))


def sync(s):
    check("cuStreamSynchronize", _cu.cuStreamSynchronize(s))


_ = os  # the module reads no environment
