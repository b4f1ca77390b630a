# Warnings and sanitizer flags, in one place, for every target of the project.
set(NVTXCORR_WARNINGS -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow
    -Wformat=2 -Wno-unused-parameter)

function(nvtxcorr_target_flags target)
  get_target_property(_lang ${target} LINKER_LANGUAGE)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${NVTXCORR_WARNINGS}>)
  if(NVTXCORR_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
