/* Compiler attributes every part of the library uses: visibility, branch hints, and the
 * sanitizer exemption for code a sanitizer runtime reaches before it is initialised. */
#ifndef NVTXCORR_ATTRIBUTES_H
#define NVTXCORR_ATTRIBUTES_H

#define NVTXCORR_EXPORT __attribute__((visibility("default")))
/* Not exported: a reference from inside this library binds to this definition at link time,
 * whatever else the process defines under the same name. */
#define NVTXCORR_HIDDEN __attribute__((visibility("hidden")))
#define NVTXCORR_LIKELY(x) __builtin_expect(!!(x), 1)
#define NVTXCORR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For code that a sanitizer runtime reaches before it is initialised: ASan and TSan resolve
 * their own interceptors with dlsym, which is ours (the sanitized and TSan test builds). TSan
 * would otherwise record the function entry on a thread state it has not yet set up. */
#define NVTXCORR_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

#endif
