/* Kernel names: from the raw (usually Itanium-mangled) name a driver reports to the three
 * forms the label table matches on. Demangling uses the C++ runtime's __cxa_demangle, found
 * at run time (dlsym, then dlopen of libstdc++.so.6), so a pure C host process works too and
 * the library keeps no NEEDED entry on libstdc++. Called once per distinct kernel, never on
 * the per-launch hot path. */
#ifndef NVTXCORR_NAMES_H
#define NVTXCORR_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h" /* nvtxcorr_hash_str, for the files that name kernels */

/* The name of a kernel the driver or CUPTI cannot name. */
#define NVTXCORR_UNKNOWN_KERNEL "unknown_kernel"

typedef struct nvtxcorr_kernel_names {
    const char *function;  /* base name: no namespace, template arguments, parameters or
                              return type ("flash_fwd_kernel"), as ncu --kernel-name-base
                              function shows it */
    const char *demangled; /* full demangled name; the mangled name when not demangleable */
    const char *mangled;   /* the raw name as the driver reported it */
} nvtxcorr_kernel_names_t;

/* Fills *out from `mangled`. The three strings point into `storage` (or at `mangled`).
 * Never fails: a name that does not demangle is its own base and demangled name.
 * Returns 0, or -1 when storage was too small and names were truncated. */
int nvtxcorr_names_from_mangled(const char *mangled, nvtxcorr_kernel_names_t *out, char *storage,
                                size_t storage_size);

/* The base name of an already demangled name, written into buf. */
void nvtxcorr_names_base(const char *demangled, char *buf, size_t size);

/* Kernel names, paths and table text come from elsewhere and may hold control bytes (an ANSI
 * escape in a kernel name drives the terminal that shows it and reaches the NVTX tool raw).
 * Copies s into out with every C0 control byte and DEL written as the four characters \xNN,
 * never cutting an escape or a UTF-8 character short; returns the length written. */
size_t nvtxcorr_escape_controls(char *out, size_t size, const char *s);
static inline int nvtxcorr_is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7F;
}

#endif
