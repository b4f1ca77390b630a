/* Reading glob and bracket syntax without matching: where a bracket expression ends (globs
 * and regexes alike) and the literal every match of a glob must contain, which the rule
 * parser keeps for the matcher's indexes. */
#include <string.h>

#include "labels_impl.h"

/* The one reader of bracket expressions, for globs and regexes alike (labels_impl.h). For a
 * glob it follows glibc's fnmatch, which lets '\\' escape inside a set too; skipping escapes
 * is safe either way, since a misjudged set only hides a literal. */
const char *nvtxcorr_labels_bracket_end(const char *open, enum bracket_syntax syntax)
{
    const char *p = open + 1;

    if (*p == '^' || (syntax == BRACKET_GLOB && *p == '!')) p++;
    if (*p == ']') p++;
    while (*p && *p != ']') {
        if (p[0] == '[' && p[1] && strchr(":.=", p[1])) {
            char close[3] = {p[1], ']', '\0'};
            const char *e = strstr(p + 2, close);
            if (!e) return NULL;
            p = e + 2;
        } else if (syntax == BRACKET_GLOB && p[0] == '\\' && p[1]) {
            p += 2;
        } else {
            p++;
        }
    }
    return *p ? p : NULL;
}

void nvtxcorr_labels_glob_literal(const char *glob, const char **lit, size_t *len)
{
    /* fnmatch with flags 0: '*' and '?' are wildcards, '\\' quotes the next character and
     * '[' opens a set. Runs of other characters must all appear in a match; the longest
     * one is the hint. An unclear set ends the scan (runs before it still count). */
    const char *best = glob, *run = glob;
    size_t best_len = 0;

    for (const char *c = glob;; c++) {
        if (*c == '\0' || *c == '*' || *c == '?' || *c == '[' || *c == '\\') {
            if ((size_t)(c - run) > best_len) {
                best = run;
                best_len = (size_t)(c - run);
            }
            if (*c == '\0') break;
            if (*c == '[') {
                c = nvtxcorr_labels_bracket_end(c, BRACKET_GLOB);
                if (!c) break;
            } else if (*c == '\\' && c[1]) {
                c++;
            }
            run = c + 1;
        }
    }
    *lit = best;
    *len = best_len;
}
