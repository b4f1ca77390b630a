# libnvtxcorr.so: a MODULE for LD_PRELOAD. Headers only from the CUDA toolkit (cuda.h,
# cuda_runtime_api.h, NVTX3): no NEEDED entry on libcuda, libcudart or NVTX. Everything is
# hidden except the hooked symbols, listed by a version script derived from hooks.def.
set(NVTXCORR_EXPORTS_MAP ${CMAKE_CURRENT_BINARY_DIR}/exports.map)
add_custom_command(
  OUTPUT ${NVTXCORR_EXPORTS_MAP}
  COMMAND ${CMAKE_C_COMPILER} -E -P -x c ${CMAKE_CURRENT_SOURCE_DIR}/hooks/exports.map.in
          -I${CMAKE_CURRENT_SOURCE_DIR}/core -o ${NVTXCORR_EXPORTS_MAP}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/hooks/exports.map.in
          ${CMAKE_CURRENT_SOURCE_DIR}/core/hooks.def
  COMMENT "Deriving the export list from hooks.def")
add_custom_target(nvtxcorr_exports DEPENDS ${NVTXCORR_EXPORTS_MAP})

# The library's layers, from the bottom (docs/design.md, "Source layout"): each calls only the ones
# below it, and each is an object library of its own, so that the linker can tell
# (check-layers --objects: style.layers). The label library (src/labels) is the lowest.
set(NVTXCORR_LAYERS core context profile hooks)
# The core: configuration, diagnostics, process state, real functions, labels by handle,
# graphs, captures, NVTX emission.
set(NVTXCORR_LAYER_core
  core/config.c core/log.c core/io.c core/state.c core/fork.c core/slowstack.c core/resolve.c
  core/routes.c core/cuda_calls.c core/handle_map.c core/chain_table.c core/emit.c core/kernels.c core/graphs.c
  core/capture.c core/window_spec.c)
# Program context: nvtxcorr as the program's NVTX tool (NVTXCORR_CONTEXT, nvtxcorr stat).
set(NVTXCORR_LAYER_context context/inject.c context/nvtx_tool.c context/tree.c)
# Profile mode (NVTXCORR_PROFILE, NVTXCORR_TRACE), with GPU time from CUPTI (loaded at run
# time).
set(NVTXCORR_LAYER_profile
  # base: memory, strings, the clock, the histogram, the writer, this process's facts
  profile/base/pages.c profile/base/intern.c profile/base/clock.c profile/base/histogram.c
  profile/base/out.c profile/base/path.c profile/base/process.c profile/base/devices.c
  # counting: sites, records, program context, windows as counts
  profile/counting/stats.c profile/counting/context_stats.c profile/counting/windows.c
  # GPU time: the session, the aggregator, the CUPTI adapter
  profile/gpu/session.c profile/gpu/gpu.c profile/gpu/cupti_load.c profile/gpu/cupti_note.c
  profile/gpu/cupti_buffers.c profile/gpu/cupti_launch.c profile/gpu/cupti_thread.c
  profile/gpu/cupti.c
  # output: the summary and its writers, the trace and its forms
  profile/output/summary_fields.c profile/output/summary_file.c profile/output/summary_gpu.c
  profile/output/summary.c profile/output/summary_json.c profile/output/summary_csv.c
  profile/output/summary_text.c profile/output/summary_tree.c profile/output/summary_context.c
  profile/output/summary_html.c
  profile/output/trace_file.c profile/output/trace.c
  profile/output/trace_chrome.c profile/output/trace_kineto.c profile/output/trace_meta.c
  profile/output/trace_writer.c profile/output/metrics.c profile/output/otlp.c
  # lifecycle: windows, signals, the exit
  profile/lifecycle/window.c profile/lifecycle/sigaction.c profile/lifecycle/exit.c
  # the front door (profile.h): the launch path, start-up and fork
  profile/profile.c)
# The hooks: every exported entry point, the resolvers' answers and initialisation, which
# starts everything below.
set(NVTXCORR_LAYER_hooks
  hooks/init.c hooks/claim.c hooks/dlsym.c hooks/procaddr.c hooks/driver_hooks.c
  hooks/runtime_hooks.c)
# The HTML report's page (src/python/nvtxcorr/html), made a C header for profile/output's
# summary_html.c at build time: one template, which the report inlines too.
set(NVTXCORR_HTML_DIR ${PROJECT_SOURCE_DIR}/src/python/nvtxcorr/html)
set(NVTXCORR_HTML_HEADER ${CMAKE_CURRENT_BINARY_DIR}/generated/html_template.h)
add_custom_command(OUTPUT ${NVTXCORR_HTML_HEADER}
  COMMAND ${CMAKE_COMMAND} -DSRC=${NVTXCORR_HTML_DIR} -DOUT=${NVTXCORR_HTML_HEADER}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/profile/output/html_template.cmake
  DEPENDS ${NVTXCORR_HTML_DIR}/report.html ${NVTXCORR_HTML_DIR}/report.css
          ${NVTXCORR_HTML_DIR}/report.js ${CMAKE_CURRENT_SOURCE_DIR}/profile/output/html_template.cmake
  COMMENT "Embedding the HTML report's page")
add_custom_target(nvtxcorr_html_template DEPENDS ${NVTXCORR_HTML_HEADER})
set(NVTXCORR_PRELOAD_SOURCES)
foreach(_layer ${NVTXCORR_LAYERS})
  list(APPEND NVTXCORR_PRELOAD_SOURCES ${NVTXCORR_LAYER_${_layer}})
endforeach()

# Compiles `target` as the preload library's code is compiled.
function(nvtxcorr_preload_flags target)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
    ${CMAKE_CURRENT_BINARY_DIR}/generated)
  # Header-only use of the toolkit: cuda.h, cuda_runtime_api.h and NVTX3 (CUDA::nvtx3), never
  # a CUDA or NVTX library.
  target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  set_target_properties(${target} PROPERTIES C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
  # Hooking deprecated entry points (cudaGetDriverEntryPoint) is the point.
  target_compile_options(${target} PRIVATE -fno-semantic-interposition
    -Wno-deprecated-declarations)
  target_link_libraries(${target} PRIVATE CUDA::nvtx3)
  # CUPTI's headers only (libcupti is dlopened by profile/cupti.c), after the CUDA headers.
  if(NVTXCORR_CUPTI_INCLUDE_DIR)
    target_include_directories(${target} SYSTEM AFTER PRIVATE ${NVTXCORR_CUPTI_INCLUDE_DIR})
    target_compile_definitions(${target} PRIVATE NVTXCORR_HAVE_CUPTI=1)
  endif()
  nvtxcorr_target_flags(${target})
endfunction()

# One preload library: an object library per layer (${target}_<layer>, compiled with `options`
# and `definitions`), linked into the MODULE with `extra` objects (the sanitized builds' own
# label library).
function(nvtxcorr_preload_library target outdir)
  cmake_parse_arguments(P "" "" "OPTIONS;DEFINITIONS;LINK_OPTIONS;EXTRA" ${ARGN})
  set(_objects)
  foreach(_layer ${NVTXCORR_LAYERS})
    add_library(${target}_${_layer} OBJECT ${NVTXCORR_LAYER_${_layer}})
    nvtxcorr_preload_flags(${target}_${_layer})
    add_dependencies(${target}_${_layer} nvtxcorr_labels nvtxcorr_html_template)
    target_compile_options(${target}_${_layer} PRIVATE ${P_OPTIONS})
    target_compile_definitions(${target}_${_layer} PRIVATE ${P_DEFINITIONS})
    list(APPEND _objects $<TARGET_OBJECTS:${target}_${_layer}>)
  endforeach()
  add_library(${target} MODULE ${_objects} ${P_EXTRA})
  nvtxcorr_preload_flags(${target})
  target_compile_options(${target} PRIVATE ${P_OPTIONS})
  target_compile_definitions(${target} PRIVATE ${P_DEFINITIONS})
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME nvtxcorr
    LIBRARY_OUTPUT_DIRECTORY ${outdir} LINKER_LANGUAGE C)
  add_dependencies(${target} nvtxcorr_exports)
  target_link_options(${target} PRIVATE -Wl,--version-script=${NVTXCORR_EXPORTS_MAP}
    -Wl,-z,defs -Wl,--as-needed ${P_LINK_OPTIONS})
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
endfunction()

nvtxcorr_preload_library(nvtxcorr ${CMAKE_BINARY_DIR}/lib)
target_link_libraries(nvtxcorr PRIVATE nvtxcorr_labels)
install(TARGETS nvtxcorr LIBRARY DESTINATION lib)

# The objects of each layer, for the layer test (scripts/check-layers --objects DIR, CTest
# style.layers): layers/<layer>.objects in the build tree, one path a line.
foreach(_layer ${NVTXCORR_LAYERS})
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers/${_layer}.objects
    CONTENT "$<JOIN:$<TARGET_OBJECTS:nvtxcorr_${_layer}>,\n>\n")
endforeach()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers/labels.objects
  CONTENT "$<TARGET_FILE:nvtxcorr_labels>\n")

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
    OPTIONS -fsanitize=address,undefined -fno-omit-frame-pointer
            -fno-sanitize-recover=undefined
    DEFINITIONS NVTXCORR_NO_ENTRY_STUBS
    LINK_OPTIONS -fsanitize=address,undefined
    EXTRA ${_labels_sources})
endif()

# The same library built with ThreadSanitizer (label code included), for the tests: the whole
# end-to-end suite runs against it with libtsan preloaded first (CTest e2e.tsan). Hooks run on
# every thread of the host process, and the scenarios launch from many threads at once.
if(NVTXCORR_BUILD_TESTS AND NVTXCORR_INSTRUMENTED_LIBS AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
   AND NOT NVTXCORR_SANITIZE)
  nvtxcorr_preload_library(nvtxcorr_tsan ${CMAKE_BINARY_DIR}/lib-tsan
    OPTIONS -fsanitize=thread -fno-omit-frame-pointer
    LINK_OPTIONS -fsanitize=thread
    EXTRA ${_labels_sources})
endif()

# The core's pure pieces as objects of their own, for the unit tests (tests/unit): the handle
# map, the cuGetProcAddress version choice, JSON escaping, the histogram and the output paths'
# expansion, compiled as the library compiles them and linked into a program without
# preloading anything.
if(NVTXCORR_BUILD_TESTS)
  add_library(nvtxcorr_core_units OBJECT core/handle_map.c hooks/procaddr.c core/resolve.c
    hooks/claim.c core/cuda_calls.c core/routes.c profile/base/out.c profile/base/histogram.c
    profile/base/path.c context/tree.c)
  target_include_directories(nvtxcorr_core_units PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}
    ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_BINARY_DIR}/include)
  target_include_directories(nvtxcorr_core_units SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(nvtxcorr_core_units PRIVATE -fno-semantic-interposition
    -Wno-deprecated-declarations)
  target_link_libraries(nvtxcorr_core_units PUBLIC CUDA::nvtx3 ${CMAKE_DL_LIBS}
    Threads::Threads)
  nvtxcorr_target_flags(nvtxcorr_core_units)
endif()
