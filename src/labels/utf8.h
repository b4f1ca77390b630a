/* Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), as
 * every part reads it: the label table's lines, program context's NVTX messages and profile
 * mode's JSON and text output. */
#ifndef NVTXCORR_UTF8_H
#define NVTXCORR_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 character at s, or 0 when the byte there
 * starts none. s is NUL-terminated: a NUL is never a continuation byte, so a character cut
 * short by the end of the string is 0 and nothing past the NUL is read. */
size_t nvtxcorr_utf8_len(const char *s);

#endif
