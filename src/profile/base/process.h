/* Facts of this process that every output carries (process.c), and its helper threads. */
#ifndef NVTXCORR_PROF_PROCESS_H
#define NVTXCORR_PROF_PROCESS_H

#include <stddef.h>
#include <stdint.h>

/* Captured at start and after fork. */
typedef struct prof_process {
    int pid;
    uint64_t start_ns; /* CLOCK_REALTIME */
    char profile_path[4096], trace_path[4096];
    char metrics_path[4096]; /* NVTXCORR_METRICS expanded, or "" */
} prof_process_t;
extern prof_process_t nvtxcorr_prof_process;
/* path.c: expands %p %h %q{VAR} %% into out; returns -1 when it does not fit. */
int nvtxcorr_prof_expand(const char *pattern, char *out, size_t size);
/* This process's facts, at start-up and in a forked child (its pid, start, output paths). */
void nvtxcorr_prof_facts_reset(void);
/* The program's command line (/proc/self/cmdline: its arguments, each NUL-terminated) into buf,
 * NUL-terminated; its length, 0 when it cannot be read. Async-signal-safe. */
size_t nvtxcorr_prof_cmdline(char *buf, size_t size);
/* fn on a detached thread that blocks every signal (0, or pthread_create's error): window.c's
 * helper and trace_writer.c's writer. */
int nvtxcorr_prof_helper_thread(void *(*fn)(void *));
/* The label table's hash ("label_table"), 0 with default labels (set by profile.c). */
extern uint64_t nvtxcorr_prof_label_hash;

#endif
