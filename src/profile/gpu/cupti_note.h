/* The note of GPU time (cupti_note.c): why there is no (or only partial) GPU time, as the
 * adapter's files write it; the summary reads it through nvtxcorr_prof_gpu_note (cupti.h). */
#ifndef NVTXCORR_PROF_CUPTI_NOTE_H
#define NVTXCORR_PROF_CUPTI_NOTE_H

enum { PROF_CUPTI_NOTE_SIZE = 512 };
/* Writes a, b and c (b and c may be NULL) into the note being written: the one shown, or
 * during CUPTI's start the one that start will show. */
void nvtxcorr_prof_cupti_note(const char *a, const char *b, const char *c);
/* The same into `to`, of PROF_CUPTI_NOTE_SIZE bytes. */
void nvtxcorr_prof_cupti_note_in(char *to, const char *a, const char *b, const char *c);
/* The note shown ("" when there is none yet). */
char *nvtxcorr_prof_cupti_note_shown(void);
/* CUPTI's start: its outcome written into the buffer not shown (emptied here), then shown. */
void nvtxcorr_prof_cupti_note_begin_start(void);
void nvtxcorr_prof_cupti_note_show_start(void);

#endif
