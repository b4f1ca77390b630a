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

set(NVTXCORR_PRELOAD_SOURCES
  init.c config.c window_spec.c log.c resolve.c dlsym.c procaddr.c driver.c driver_hooks.c runtime_hooks.c
  handle_map.c chain_table.c emit.c kernels.c graphs.c capture.c slowstack.c routes.c
  # Program context: nvtxcorr as the program's NVTX tool (NVTXCORR_CONTEXT, nvtxcorr stat).
  context/nvtx_tool.c context/tree.c
  # Profile mode (NVTXCORR_PROFILE, NVTXCORR_TRACE), behind profile/profile.h.
  profile/profile.c profile/stats.c profile/intern.c profile/clock.c profile/out.c
  profile/summary.c profile/window.c profile/summary_json.c profile/summary_csv.c profile/summary_text.c
  profile/summary_context.c
  profile/trace.c profile/trace_chrome.c profile/trace_kineto.c profile/trace_meta.c profile/trace_writer.c profile/exit.c profile/path.c profile/sigaction.c
  profile/pages.c profile/histogram.c profile/context_stats.c profile/devices.c
  # GPU time (CUPTI, loaded at run time) in profile mode.
  profile/cupti.c profile/cupti_load.c profile/gpu.c)

function(nvtxcorr_preload_library target outdir)
  add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME nvtxcorr
    C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${outdir})
  add_dependencies(${target} nvtxcorr_exports)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
    ${CMAKE_CURRENT_SOURCE_DIR}/labels ${CMAKE_CURRENT_SOURCE_DIR}/context
    ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_BINARY_DIR}/include)
  # Header-only use of the toolkit: cuda.h, cuda_runtime_api.h and NVTX3 (CUDA::nvtx3), never
  # a CUDA or NVTX library.
  target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  # Hooking deprecated entry points (cudaGetDriverEntryPoint) is the point.
  target_compile_options(${target} PRIVATE -fno-semantic-interposition
    -Wno-deprecated-declarations)
  target_link_options(${target} PRIVATE -Wl,--version-script=${NVTXCORR_EXPORTS_MAP}
    -Wl,-z,defs -Wl,--as-needed)
  target_link_libraries(${target} PRIVATE CUDA::nvtx3 ${CMAKE_DL_LIBS} Threads::Threads)
  # CUPTI's headers only (libcupti is dlopened by profile/cupti.c), after the CUDA headers.
  if(NVTXCORR_CUPTI_INCLUDE_DIR)
    target_include_directories(${target} SYSTEM AFTER PRIVATE ${NVTXCORR_CUPTI_INCLUDE_DIR})
    target_compile_definitions(${target} PRIVATE NVTXCORR_HAVE_CUPTI=1)
  endif()
  nvtxcorr_target_flags(${target})
endfunction()

nvtxcorr_preload_library(nvtxcorr ${CMAKE_BINARY_DIR}/lib ${NVTXCORR_PRELOAD_SOURCES})
target_link_libraries(nvtxcorr PRIVATE nvtxcorr_labels)
install(TARGETS nvtxcorr LIBRARY DESTINATION lib)

# The same library built with ASan and UBSan (label code included), for the tests: the whole
# end-to-end suite runs against it with the sanitizer runtimes preloaded first (CTest
# e2e.sanitized). It is built without the x86-64 entry stubs, so the portable C entry points
# that other architectures use are tested too. GCC only: it links the runtimes into a shared
# object.
if(NVTXCORR_BUILD_TESTS AND NVTXCORR_INSTRUMENTED_LIBS AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
   AND NOT NVTXCORR_SANITIZE)
  get_target_property(_labels_sources nvtxcorr_labels SOURCES)
  list(TRANSFORM _labels_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/labels/)
  nvtxcorr_preload_library(nvtxcorr_sanitized ${CMAKE_BINARY_DIR}/lib-sanitized
    ${NVTXCORR_PRELOAD_SOURCES} ${_labels_sources})
  target_compile_options(nvtxcorr_sanitized PRIVATE -fsanitize=address,undefined
    -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_definitions(nvtxcorr_sanitized PRIVATE NVTXCORR_NO_ENTRY_STUBS)
  target_link_options(nvtxcorr_sanitized PRIVATE -fsanitize=address,undefined)
endif()

# The same library built with ThreadSanitizer (label code included), for the tests: the whole
# end-to-end suite runs against it with libtsan preloaded first (CTest e2e.tsan). Hooks run on
# every thread of the host process, and the scenarios launch from many threads at once.
if(NVTXCORR_BUILD_TESTS AND NVTXCORR_INSTRUMENTED_LIBS AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
   AND NOT NVTXCORR_SANITIZE)
  nvtxcorr_preload_library(nvtxcorr_tsan ${CMAKE_BINARY_DIR}/lib-tsan
    ${NVTXCORR_PRELOAD_SOURCES} ${_labels_sources})
  target_compile_options(nvtxcorr_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(nvtxcorr_tsan PRIVATE -fsanitize=thread)
endif()

# The core's pure pieces as objects of their own, for the unit tests (tests/unit): the handle
# map, the cuGetProcAddress version choice, JSON escaping, the histogram and the output paths'
# expansion, compiled as the library compiles them and linked into a program without
# preloading anything.
if(NVTXCORR_BUILD_TESTS)
  add_library(nvtxcorr_core_units OBJECT handle_map.c procaddr.c resolve.c driver.c routes.c
    profile/out.c profile/histogram.c profile/path.c context/tree.c)
  target_include_directories(nvtxcorr_core_units PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}
    ${CMAKE_CURRENT_SOURCE_DIR}/labels ${CMAKE_CURRENT_SOURCE_DIR}/context
    ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_BINARY_DIR}/include)
  target_include_directories(nvtxcorr_core_units SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(nvtxcorr_core_units PRIVATE -fno-semantic-interposition
    -Wno-deprecated-declarations)
  target_link_libraries(nvtxcorr_core_units PUBLIC CUDA::nvtx3 ${CMAKE_DL_LIBS}
    Threads::Threads)
  nvtxcorr_target_flags(nvtxcorr_core_units)
endif()
