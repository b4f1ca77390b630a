# Where cuda.h, cuda_runtime_api.h, cudaTypedefs.h and NVTX3 come from. Only headers are used
# (libnvtxcorr.so carries no NEEDED entry on a CUDA or NVTX library), so a CUDA toolkit is not
# required: without one, or with NVTXCORR_HEADERS_FROM_WHEELS=ON, the headers come from PyPI's
# nvidia-cuda-runtime and nvidia-nvtx wheels installed for Python3_EXECUTABLE (the wheel build
# lists them as build requirements; scripts/test installs them into build/venv).
# Either way the result is CUDAToolkit_INCLUDE_DIRS and the target CUDA::nvtx3, as
# FindCUDAToolkit gives them; CUDAToolkit_NVCC_EXECUTABLE is empty without a toolkit.
option(NVTXCORR_HEADERS_FROM_WHEELS
  "Take the CUDA and NVTX headers from the nvidia-cuda-runtime/nvidia-nvtx wheels, not a toolkit"
  OFF)

if(NOT NVTXCORR_HEADERS_FROM_WHEELS)
  find_package(CUDAToolkit QUIET)
endif()

if(NVTXCORR_HEADERS_FROM_WHEELS OR NOT CUDAToolkit_FOUND)
  # CUDA 13 wheels put headers in nvidia/cu13/include, CUDA 12 ones in nvidia/<name>/include.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c [=[
import glob, os, sys
def find(rel):
    for base in sys.path:
        for d in sorted(glob.glob(os.path.join(base, "nvidia", "*", "include")), reverse=True):
            if os.path.isfile(os.path.join(d, rel)):
                return d
    return ""
print(find("cuda.h") + ";" + find("nvtx3/nvToolsExt.h") + ";" + find("cudaProfiler.h"), end="")
]=]
    OUTPUT_VARIABLE _nvtxcorr_wheel_dirs RESULT_VARIABLE _rc)
  list(GET _nvtxcorr_wheel_dirs 0 _cuda_inc)
  list(GET _nvtxcorr_wheel_dirs 1 _nvtx_inc)
  list(GET _nvtxcorr_wheel_dirs 2 _profiler_inc)
  # cudaProfiler.h (cuProfilerStart/Stop, hooked for NVTXCORR_WINDOW=cudaProfilerApi) is not in
  # nvidia-cuda-runtime but in nvidia-cuda-profiler-api. Required: a compiler would otherwise
  # take it from any CUDA headers in /usr/local/include, of another version.
  if(NOT _rc EQUAL 0 OR NOT _cuda_inc OR NOT _nvtx_inc OR NOT _profiler_inc
     OR NOT EXISTS ${_cuda_inc}/cudaTypedefs.h OR NOT EXISTS ${_cuda_inc}/cuda_runtime_api.h)
    message(FATAL_ERROR "No CUDA toolkit, and no CUDA/NVTX headers from the wheels for "
      "${Python3_EXECUTABLE}. Install a toolkit, or: ${Python3_EXECUTABLE} -m pip install "
      "'nvidia-cuda-runtime>=13,<14' 'nvidia-cuda-profiler-api>=13,<14' 'nvidia-nvtx>=13,<14' "
      "(then reconfigure).")
  endif()
  message(STATUS "CUDA headers from the nvidia-cuda-runtime wheel: ${_cuda_inc}")
  message(STATUS "NVTX3 headers from the nvidia-nvtx wheel: ${_nvtx_inc}")
  set(CUDAToolkit_INCLUDE_DIRS ${_cuda_inc})
  if(NOT _profiler_inc STREQUAL _cuda_inc)
    list(APPEND CUDAToolkit_INCLUDE_DIRS ${_profiler_inc})
  endif()
  set(CUDAToolkit_NVCC_EXECUTABLE "")
  add_library(CUDA::nvtx3 INTERFACE IMPORTED)
  set_target_properties(CUDA::nvtx3 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_nvtx_inc}
    INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
endif()

# CUPTI's headers, for profile mode's GPU time (src/profile/gpu/cupti.c): only headers, libcupti is
# loaded with dlopen at run time. The nvidia-cuda-cupti wheel's include directory, else the
# toolkit's include or extras/CUPTI/include (also when the other headers come from the wheels:
# CUPTI's declare only CUPTI's own types over cuda.h's). Added after CUDAToolkit_INCLUDE_DIRS,
# so cuda.h still comes from where it came from. Without them profile mode says "GPU time
# unavailable: built without CUPTI headers".
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c [=[
import glob, os, sys
for base in sys.path:
    for d in sorted(glob.glob(os.path.join(base, "nvidia", "*", "include")), reverse=True):
        if os.path.isfile(os.path.join(d, "cupti_activity.h")):
            print(d, end=""); sys.exit(0)
]=]
  OUTPUT_VARIABLE _cupti_wheel_inc ERROR_QUIET)
find_path(NVTXCORR_CUPTI_INCLUDE_DIR cupti_activity.h
  HINTS ${_cupti_wheel_inc} ${CUDAToolkit_INCLUDE_DIRS} $ENV{CUDA_HOME}/include
        $ENV{CUDA_HOME}/extras/CUPTI/include /usr/local/cuda/include
        /usr/local/cuda/extras/CUPTI/include
  NO_DEFAULT_PATH)
if(NVTXCORR_CUPTI_INCLUDE_DIR)
  message(STATUS "CUPTI headers: ${NVTXCORR_CUPTI_INCLUDE_DIR}")
else()
  message(STATUS "No CUPTI headers: profile mode will report no GPU time")
endif()
