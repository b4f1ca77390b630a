/* Timing program for the label matcher (not a test: run it by hand). Builds a table of
 * rules shaped like generated per-kernel tables (exact names, globs with a literal, globs
 * with a set before their literal, a few regexes), matches distinct kernel names against it the way
 * the core does (once per name) and prints load and match times. Usage: bench_match [RULES [NAMES]]
 * (defaults 10000 10000) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labels.h"
#include "names.h"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[4096];
    (void)ctx;
    fprintf(stderr, "nvtxcorr: error: %s\n", nvtxcorr_label_error_text(error, text, sizeof text));
}

int main(int argc, char **argv)
{
    long nrules = argc > 1 ? atol(argv[1]) : 10000;
    long nnames = argc > 2 ? atol(argv[2]) : 10000;
    size_t cap = (size_t)nrules * 128 + 1, len = 0;
    char *text = malloc(cap);
    long exact = 0, glob = 0, regex = 0, setg = 0;

    if (!text || nrules < 1 || nnames < 1) return 2;
    for (long i = 0; i < nrules; i++) {
        char *out = text + len;
        size_t room = cap - len;
        int n;
        switch (i % 10) {
        case 0:
        case 1:
        case 2:
        case 3:
            n = snprintf(out, room,
                         "sm90_xmma_gemm_f16f16_%ld_tn \"gemm {function}\" "
                         "category=matmul\n",
                         i);
            exact++;
            break;
        case 4:
        case 5:
        case 6:
            n = snprintf(out, room, "*flash_fwd_%ld_kernel* attention category=attention\n", i);
            glob++;
            break;
        case 7:
        case 8:
            n = snprintf(out, room, "triton_poi_fused_%ld_* elementwise color=#00ff00\n", i);
            glob++;
            break;
        default:
            if (i % 100 == 9) {
                n = snprintf(out, room, "re:^ncclDevKernel_.*_%ld$ comm category=comm\n", i);
                regex++;
            } else {
                n = snprintf(out, room, "*[fs]m90_xmma_gemm_f16f16_%ld_t? set\n", i);
                setg++;
            }
        }
        len += (size_t)n;
    }

    double t0 = now();
    nvtxcorr_label_table_t *t =
        nvtxcorr_labels_load_buffer("bench.conf", text, len, print_error, NULL);
    double t1 = now();
    if (!t) return 1;

    /* Names: a third hit exact rules, a third globs, the rest nothing; each demangled form
     * is a realistic template instance so trigram scanning sees long strings. */
    long hits = 0;
    double match_time = 0;
    for (long n = 0; n < nnames; n++) {
        char function[128], demangled[512], mangled[512];
        long k = (n * 7919) % (nrules * 2);
        switch (n % 3) {
        case 0:
            snprintf(function, sizeof(function), "sm90_xmma_gemm_f16f16_%ld_tn", k);
            break;
        case 1:
            snprintf(function, sizeof(function), "flash_fwd_%ld_kernel", k);
            break;
        default:
            snprintf(function, sizeof(function), "unlabelled_kernel_%ld", k);
        }
        snprintf(demangled, sizeof(demangled),
                 "void ns::%s<128, 64, cutlass::half_t, Flash_kernel_traits<128, 64, 4, "
                 "false> >(Flash_fwd_params, int, float)",
                 function);
        snprintf(mangled, sizeof(mangled), "_ZN2ns%zu%sILi128ELi64EEEv16Flash_fwd_paramsif",
                 strlen(function), function);
        nvtxcorr_kernel_names_t names = {function, demangled, mangled};
        nvtxcorr_label_result_t r;
        double m0 = now();
        hits += nvtxcorr_labels_match_kernel(t, &names, &r);
        match_time += now() - m0;
    }
    printf("rules: %ld (%ld exact, %ld globs, %ld globs with a set, %ld regexes)\n", nrules, exact,
           glob, setg, regex);
    printf("load: %.3f s\n", t1 - t0);
    printf("match: %ld names in %.3f s (%.1f us/name), %ld matched\n", nnames, match_time,
           match_time * 1e6 / (double)nnames, hits);
    nvtxcorr_labels_free(t);
    free(text);
    return 0;
}
