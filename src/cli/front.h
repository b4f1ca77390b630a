/* The front end, bin/nvtxcorr (docs/design.md, Front end): front.c dispatches the commands,
 * finds the parts next to itself and runs the ones that live elsewhere (nvtxcorr-tool for
 * check, explain, doctor and --version; the Python package for stat and report); launch.c
 * runs a program: nvtxcorr's options parsed from the one declaration (options.h), every check,
 * then the exec. */
#ifndef NVTXCORR_CLI_FRONT_H
#define NVTXCORR_CLI_FRONT_H

#include <limits.h>
#include <stddef.h>

typedef struct {
    char self[PATH_MAX];    /* this program, links resolved */
    char here[PATH_MAX];    /* its directory */
    char library[PATH_MAX]; /* libnvtxcorr.so ("" when none is found) */
    char tool[PATH_MAX];    /* nvtxcorr-tool ("") */
    char tables[PATH_MAX];  /* the shipped label tables' directory ("") */
    char python[PATH_MAX];  /* the directory holding the nvtxcorr package ("") */
} nvtxcorr_front_t;

/* `nvtxcorr: error: ...` on stderr, then exit(status). Also the status stat waits for when it
 * runs the front end (NVTXCORR_LAUNCH_FD: launch.c). */
_Noreturn void nvtxcorr_front_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* exit(status), the status written to stat's launch fd first (launch.c) */
_Noreturn void nvtxcorr_front_exit(int status);
void nvtxcorr_front_say(const char *level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* name searched in PATH as execvp would (an executable regular file), into out (PATH_MAX);
 * NULL when none */
const char *nvtxcorr_front_which(const char *name, char *out);
/* The candidate nearest to word (options.closest's rule), or NULL. */
const char *nvtxcorr_front_closest(const char *word, const char *const *candidates, int n);
/* A shipped table's path for its NAME, into buf; anything else as it is (Paths.shipped). */
const char *nvtxcorr_front_shipped(const nvtxcorr_front_t *f, const char *name, char *buf,
                                   size_t size);
/* path with its directory resolved (links, `..`), the file itself not, into out (PATH_MAX):
 * the library as LD_PRELOAD and doctor name it */
char *nvtxcorr_front_dir_resolved(const char *path, char *out);
/* The shipped tables' names joined by ", " into buf ("none here" when there are none). */
void nvtxcorr_front_table_names(const nvtxcorr_front_t *f, char *buf, size_t size);
_Noreturn void nvtxcorr_front_exec_tool(const nvtxcorr_front_t *f, char **argv);
_Noreturn void nvtxcorr_front_exec_python(const nvtxcorr_front_t *f, char **argv);
/* The launch fd stat passes (-1: none): written one status byte when the run fails. */
void nvtxcorr_front_launch_fd(int fd);
/* check, explain, doctor (argv[0]) by nvtxcorr-tool, shipped table NAMEs made paths */
int nvtxcorr_front_table_command(const nvtxcorr_front_t *f, int argc, char **argv);
int nvtxcorr_front_run(nvtxcorr_front_t *f, int argc, char **argv);

#endif
