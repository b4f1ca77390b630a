/* Memory for profile mode (pages.c): mmap, never malloc, async-signal-safe. */
#ifndef NVTXCORR_PROF_PAGES_H
#define NVTXCORR_PROF_PAGES_H

#include <stddef.h>

/* pages.c: zeroed, never freed, async-signal-safe (mmap): per-thread state. */
void *nvtxcorr_prof_zalloc(size_t size);
/* Small zeroed blocks for the process's life, and a copy of s there (pages.c): NULL without
 * memory. */
void *nvtxcorr_prof_alloc(size_t size);
char *nvtxcorr_prof_strdup(const char *s);

#endif
