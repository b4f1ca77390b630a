/* Well-formed UTF-8: the one check that the label loader, program context and profile mode's
 * writers share (utf8.h). Pure and async-signal-safe: profile mode's writers also run in a
 * signal handler. */
#include "utf8.h"

size_t nvtxcorr_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
               : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
               : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                              : 0;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (s[0] == 0xE0) lo = 0xA0;
    if (s[0] == 0xED) hi = 0x9F;
    if (s[0] == 0xF0) lo = 0x90;
    if (s[0] == 0xF4) hi = 0x8F;
    if (n == 0 || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}
