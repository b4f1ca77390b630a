/* libFuzzer target for the label table: every input is parsed as a label file (through
 * nvtxcorr_labels_load_buffer, no file system) and as NVTXCORR_LABELS_INLINE text; a table
 * that loads is matched against kernel names of real shapes, against the input itself as a
 * kernel name, and against a few graphs. The input also goes through the name functions.
 * Beyond "no crash, no leak, no undefined behaviour" (ASan/UBSan), it checks the contracts
 * the preload core relies on: error lines have the documented prefix and no newline, labels
 * fit NVTXCORR_LABEL_MAX, a match names its source. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    unsigned *count = ctx;

    if (!error->source || !error->reason || !error->reason[0] || strchr(error->reason, '\n'))
        abort();
    (*count)++;
}

static void check_result(const nvtxcorr_label_table_t *t, const nvtxcorr_label_result_t *r)
{
    if (strnlen(r->label, NVTXCORR_LABEL_MAX) >= NVTXCORR_LABEL_MAX) abort();
    if (r->matched && (!r->source || r->line == 0 || !nvtxcorr_labels_rule_text(t, r))) abort();
    if (r->skip && !r->matched) abort();
}

static void exercise(const nvtxcorr_label_table_t *t, const char *input)
{
    static const char *const mangled[] = {
        "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params",
        "_Z4add1Pii",
        "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4EEv6Params",
        "_ZN2at6native18elementwise_kernelIZ3usevEUlfE_EEviT_",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "triton_poi_fused_add_0",
        "sm90_xmma_gemm_f16f16_f32_tn_n_tilesize128x128x64",
        "graph#1",
    };
    char storage[1024];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_label_result_t r;

    for (size_t i = 0; i < sizeof(mangled) / sizeof(mangled[0]); i++) {
        nvtxcorr_names_from_mangled(mangled[i], &names, storage, sizeof(storage));
        nvtxcorr_labels_match_kernel(t, &names, &r);
        check_result(t, &r);
    }
    /* The input's first line as a name: rules written by the fuzzer then meet names that
     * share their text, which reaches the exact, trigram and regex paths. */
    char name[512];
    size_t n = strcspn(input, "\n");
    if (n >= sizeof(name)) n = sizeof(name) - 1;
    memcpy(name, input, n);
    name[n] = '\0';
    nvtxcorr_kernel_names_t own = {name, name, name};
    nvtxcorr_labels_match_kernel(t, &own, &r);
    check_result(t, &r);

    nvtxcorr_graph_keys_t graphs[] = {
        {1, 40, 36, "9f2c01ab", "flash_fwd_splitkv_kernel"},
        {2, 0, 0, NULL, NULL},
        {4294967295u, 4294967295u, 4294967295u, "ffffffff", name},
    };
    for (size_t i = 0; i < sizeof(graphs) / sizeof(graphs[0]); i++) {
        nvtxcorr_labels_match_graph(t, &graphs[i], &r);
        check_result(t, &r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    unsigned errors = 0;
    nvtxcorr_label_table_t *t;

    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    t = nvtxcorr_labels_load_buffer("fuzz.conf", (const char *)data, size, on_error, &errors);
    if ((t != NULL) == (errors != 0))
        abort(); /* a table loads exactly when no error was reported */
    exercise(t, text);
    nvtxcorr_labels_free(t);

    errors = 0;
    t = nvtxcorr_labels_load(text, NULL, on_error, &errors);
    if (t && errors) abort();
    exercise(t, text);
    nvtxcorr_labels_free(t);

    /* The name functions on arbitrary text (a C string stops at the first NUL). */
    char base[256], storage[512];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_names_base(text, base, sizeof(base));
    nvtxcorr_names_from_mangled(text, &names, storage, sizeof(storage));
    free(text);
    return 0;
}
