# libnvtxcorr.so: a MODULE for LD_PRELOAD. Headers only from the CUDA toolkit (cuda.h,
# cuda_runtime_api.h, NVTX3): no NEEDED entry on libcuda, libcudart or NVTX. Everything is
# hidden except the hooked symbols, listed by a version script derived from hooks.def.
set(NVTXCORR_EXPORTS_MAP ${CMAKE_CURRENT_BINARY_DIR}/exports.map)
add_custom_command(
  OUTPUT ${NVTXCORR_EXPORTS_MAP}
  COMMAND ${CMAKE_C_COMPILER} -E -P -x c ${CMAKE_CURRENT_SOURCE_DIR}/exports.map.in
          -I${CMAKE_CURRENT_SOURCE_DIR} -o ${NVTXCORR_EXPORTS_MAP}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/exports.map.in ${CMAKE_CURRENT_SOURCE_DIR}/hooks.def
  COMMENT "Deriving the export list from hooks.def")
add_custom_target(nvtxcorr_exports DEPENDS ${NVTXCORR_EXPORTS_MAP})

add_library(nvtxcorr MODULE
  core.c config.c log.c resolve.c dlsym.c procaddr.c driver_hooks.c runtime_hooks.c
  handles.c emit.c kernels.c graphs.c capture.c)
set_target_properties(nvtxcorr PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
add_dependencies(nvtxcorr nvtxcorr_exports)
target_include_directories(nvtxcorr PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
# Header-only use of the toolkit: cuda.h, cuda_runtime_api.h and NVTX3 (CUDA::nvtx3), never a
# CUDA or NVTX library.
target_include_directories(nvtxcorr SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# Hooking deprecated entry points (cudaGetDriverEntryPoint) is the point.
target_compile_options(nvtxcorr PRIVATE -fno-semantic-interposition -Wno-deprecated-declarations)
target_link_options(nvtxcorr PRIVATE -Wl,--version-script=${NVTXCORR_EXPORTS_MAP}
  -Wl,-z,defs -Wl,--as-needed)
target_link_libraries(nvtxcorr PRIVATE nvtxcorr_labels CUDA::nvtx3 ${CMAKE_DL_LIBS} Threads::Threads)
nvtxcorr_target_flags(nvtxcorr)
install(TARGETS nvtxcorr LIBRARY DESTINATION lib)
