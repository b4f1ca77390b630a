/* Fork (fork.c): every lock of the library, profile mode's included, is taken by the one
 * pthread_atfork prepare handler, in one order, and released in the parent and re-initialised
 * in the child (in the reverse order), so that a child never starts with one held or with the
 * data it guards half-updated. The order: profile mode's steps as it registered them (its
 * locks are held while the core's are taken: gpu.c's holder interns sites, matches labels and
 * registers ranges), then the core's. Where a code path holds one lock while taking another,
 * the one held comes first, so the order cannot deadlock (docs/design.md, Fork). */
#ifndef NVTXCORR_FORK_H
#define NVTXCORR_FORK_H

typedef enum { NVTXCORR_FORK_PREPARE, NVTXCORR_FORK_PARENT, NVTXCORR_FORK_CHILD } nvtxcorr_fork_t;
typedef void (*nvtxcorr_fork_fn)(nvtxcorr_fork_t phase);
/* Profile mode's steps, in their prepare order (at most NVTXCORR_FORK_STEPS): registered once,
 * while it initialises, before the core's steps and the handlers (nvtxcorr_fork_start). */
enum { NVTXCORR_FORK_STEPS = 8 };
void nvtxcorr_on_fork(const nvtxcorr_fork_fn *steps, unsigned n);
/* Appends the core's steps (at most 4) after profile mode's and registers the handlers: once,
 * by initialisation, when the hooks become active. */
void nvtxcorr_fork_start(const nvtxcorr_fork_fn *steps, unsigned n);
/* Applies phase to a mutex (lock, unlock, or re-initialise in the child). */
void nvtxcorr_fork_mutex(void *mutex, nvtxcorr_fork_t phase);

#endif
