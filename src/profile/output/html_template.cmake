# The HTML report's page as two C arrays, for summary_html.c (cmake -P, at build time):
#   cmake -DSRC=<src/python/nvtxcorr/html> -DOUT=<header> -P html_template.cmake
# report.html with report.css and report.js put in, cut at its data's place: the library writes
# the head, the summary's JSON and the tail, as nvtxcorr/html/__init__.py does (one page, no
# second copy in the repository). Byte arrays, not string literals: the page is longer than
# the 4,095 characters ISO C promises for a literal.
file(READ ${SRC}/report.html page)
file(READ ${SRC}/report.css css)
file(READ ${SRC}/report.js js)
string(REPLACE "/*NVTXCORR_CSS*/" "${css}" page "${page}")
string(REPLACE "/*NVTXCORR_JS*/" "${js}" page "${page}")
set(mark "/*NVTXCORR_DATA*/")
string(FIND "${page}" "${mark}" at)
if(at LESS 0)
  message(FATAL_ERROR "${SRC}/report.html has no ${mark}")
endif()
string(LENGTH "${mark}" mark_len)
math(EXPR after "${at} + ${mark_len}")
string(SUBSTRING "${page}" 0 ${at} head)
string(SUBSTRING "${page}" ${after} -1 tail)
set(out "/* Generated from ${SRC}/report.{html,css,js} by html_template.cmake: do not edit. */\n")
foreach(part head tail)
  string(HEX "${${part}}" hex)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n" hex "${hex}")
  string(APPEND out "static const char nvtxcorr_html_${part}[] = {\n${hex}};\n")
endforeach()
file(WRITE ${OUT}.tmp "${out}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
