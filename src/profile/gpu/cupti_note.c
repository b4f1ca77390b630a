/* The note of GPU time (cupti_note.h): why there is no (or only partial) GPU time. Written by
 * the adapter's files only, read through nvtxcorr_prof_gpu_note; others say why through
 * nvtxcorr_prof_gpu_set_partial. Two buffers, one shown (a pointer published with release):
 * CUPTI's start writes its outcome on the first launching thread while a window's summary may
 * read the note on the window helper, so the start writes the buffer not shown and then shows
 * it. The other writers (start-up, a forked child, the summary's end) write the shown one,
 * while no summary reads it. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "cupti.h"
#include "cupti_note.h"
static char note_bufs[2][PROF_CUPTI_NOTE_SIZE];
static char *_Atomic note_shown = note_bufs[0];
static char *note_target = note_bufs[0]; /* where nvtxcorr_prof_cupti_note writes */

void nvtxcorr_prof_cupti_note_in(char *to, const char *a, const char *b, const char *c)
{
    snprintf(to, PROF_CUPTI_NOTE_SIZE, "%s%s%s", a, b ? b : "", c ? c : "");
}

void nvtxcorr_prof_cupti_note(const char *a, const char *b, const char *c)
{
    nvtxcorr_prof_cupti_note_in(note_target, a, b, c);
}

char *nvtxcorr_prof_cupti_note_shown(void)
{
    return atomic_load_explicit(&note_shown, memory_order_acquire);
}

void nvtxcorr_prof_cupti_note_begin_start(void)
{
    note_target = note_shown == note_bufs[0] ? note_bufs[1] : note_bufs[0];
    note_target[0] = 0;
}

void nvtxcorr_prof_cupti_note_show_start(void)
{
    atomic_store_explicit(&note_shown, note_target, memory_order_release);
}

const char *nvtxcorr_prof_gpu_note(void)
{
    const char *shown = atomic_load_explicit(&note_shown, memory_order_acquire);
    return shown[0] ? shown : NULL;
}

/* Async-signal-safe: a plain copy. */
void nvtxcorr_prof_gpu_set_partial(const char *why)
{
    char *shown = atomic_load_explicit(&note_shown, memory_order_acquire);
    if (shown[0] != 0) return;
    size_t n = strlen(why);
    if (n >= PROF_CUPTI_NOTE_SIZE) n = PROF_CUPTI_NOTE_SIZE - 1;
    memcpy(shown, why, n);
    shown[n] = 0;
}
