# Documentation in the install tree, and the .deb and .tar.gz made from that same tree by
# CPack (`cpack -G "DEB;TGZ"` in the build directory). The .deb installs under /usr: the
# front end (bin/nvtxcorr) finds ../lib/libnvtxcorr.so, ../libexec/nvtxcorr/nvtxcorr-tool and
# the Python package in ../libexec/nvtxcorr/python next to itself.
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The licence as Debian policy wants it (a machine-readable copyright file, whose License field
# is the SPDX identifier), for the .deb and, the same tree, the .tar.gz.
set(NVTXCORR_LICENSE Apache-2.0) # SPDX; also pyproject.toml's `license`
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/copyright CONTENT [=[
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nvtxcorr

Files: *
Copyright: nvtxcorr contributors
License: @NVTXCORR_LICENSE@
 The full text is in LICENSE beside this file (on Debian also in
 /usr/share/common-licenses/Apache-2.0).
]=] @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md" PATTERN "labels" EXCLUDE)

set(NVTXCORR_MAINTAINER "nvtxcorr maintainers <nvtxcorr@users.noreply.github.com>"
  CACHE STRING "Maintainer field of the packages")
set(CPACK_PACKAGE_NAME nvtxcorr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${NVTXCORR_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "NVTX ranges named after every CUDA kernel launch, by LD_PRELOAD")
set(CPACK_PACKAGE_DESCRIPTION "nvtxcorr is an LD_PRELOAD library and launcher that wraps \
every CUDA kernel launch and graph launch in an NVTX range named after the kernel (or a label \
from a label table), so Nsight Systems and Nsight Compute timelines read as the model's \
operations. It needs no rebuild of the application and loads no CUDA library itself.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_FILE_NAME
  "${CPACK_PACKAGE_NAME}-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# glibc 2.34: libnvtxcorr.so defines dlsym with the GLIBC_2.34 version to interpose it. Python
# 3.8 (pyproject.toml's requires-python): nvtxcorr stat and report are the Python package.
# e2e.deb-and-tgz proves the list against what the shipped files need (ldd, #! lines, dpkg -S).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), python3 (>= 3.8)")
include(CPack)
