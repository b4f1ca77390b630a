/* The command line's one declaration (src/python/nvtxcorr/options.py, OPTIONS) as the front end
 * reads it: options_table.c is generated from it at build time (`python3 options.py --c`), so
 * the two cannot drift. The front end parses nvtxcorr's own options (RUN) with it; the rows of
 * the other commands give the message that names the command an option is for. */
#ifndef NVTXCORR_CLI_OPTIONS_H
#define NVTXCORR_CLI_OPTIONS_H

#include <stddef.h>

enum { NVTXCORR_CMD_RUN = 1, NVTXCORR_CMD_STAT = 2, NVTXCORR_CMD_REPORT = 4 };

struct nvtxcorr_option {
    const char *names[2];     /* "-o", "--output"; a second name or NULL */
    const char *metavar;      /* NULL: a flag */
    unsigned commands;        /* NVTXCORR_CMD_* bits */
    const char *dest;         /* the value's key, as in options.py */
    const char *choices[8];   /* the values it takes, NULL-ended; none: any */
    int fold;                 /* choices compared ignoring case; empty allowed */
    const char *wrong_run[2]; /* per name: the error when given to nvtxcorr itself */
};

extern const struct nvtxcorr_option nvtxcorr_options[];
extern const int nvtxcorr_option_count;
extern const char nvtxcorr_usage_run[], nvtxcorr_usage_stat[], nvtxcorr_usage_report[],
    nvtxcorr_usage_labels[];

#endif
