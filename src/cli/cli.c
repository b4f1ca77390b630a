/* nvtxcorr-tool: the `nvtxcorr check`, `explain`, `doctor` (src/cli/doctor.c) and `--version`
 * commands (the front end, bin/nvtxcorr, execs this binary with the subcommand), and `render`
 * (render.c: a summary's JSON drawn by the library's own writer). Both load a label
 * table through the same parser and matcher the preload library uses, so what `check` accepts is
 * exactly what a profiled process will load, and `explain` shows the label a kernel will get. Exit
 * status: 0 success, 1 the table has errors, 2 usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nvtxcorr/version.h>

#include "doctor.h"
#include "render.h"
#include "labels.h"
#include "names.h"

static const char usage_text[] =
    "usage: nvtxcorr check [--inline RULES] [FILE...]\n"
    "       nvtxcorr explain [--inline RULES] FILE|- NAME...\n"
    "       nvtxcorr doctor [--labels FILE] [--labels-inline RULES]\n"
    "       nvtxcorr --version\n"
    "\n"
    "check    validate label tables: prints every error, or \"FILE: N rules OK\" for each.\n"
    "         With neither FILE nor --inline, checks what $NVTXCORR_LABELS_INLINE and\n"
    "         $NVTXCORR_LABELS name, as the preload library would load them.\n"
    "explain  show the names, the matching rule and the resulting label, color and\n"
    "         category for each NAME: a kernel name as the driver reports it (mangled or\n"
    "         plain), or graph:DESCRIPTOR, e.g. \"graph:graph#3 nodes=40 kernels=36\n"
    "         sig=9f2c01ab top=flash_fwd_kernel\". FILE - means inline rules only.\n"
    "doctor   what nvtxcorr finds here, one line each: library, NVTX tool, CUDA driver,\n"
    "         label table, the shipped tables' directory, CUPTI. Always exits 0.\n"
    "--inline RULES   rules as in $NVTXCORR_LABELS_INLINE (';'-separated), tried first.\n"
    "\n"
    "The format is described in docs/labels.md.\n";

static int usage(const char *why)
{
    if (why) fprintf(stderr, "nvtxcorr: %s\n", why);
    fputs(usage_text, stderr);
    return 2;
}

/* Kernel names, rule text and paths are shown with control bytes as \xNN (an escape sequence
 * in a kernel name must not drive the user's terminal). Returns a malloc'd copy, or a
 * placeholder when out of memory; free it with release(). */
static char *shown(const char *s)
{
    size_t size = 4 * strlen(s) + 1;
    char *out = malloc(size);

    if (!out) return (char *)"(out of memory)";
    nvtxcorr_escape_controls(out, size, s);
    return out;
}

static void release(char *s)
{
    if (strcmp(s, "(out of memory)") != 0) free(s);
}

static void print_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[8192];
    char *v = shown(nvtxcorr_label_error_text(error, text, sizeof text));
    (void)ctx;
    fprintf(stderr, "nvtxcorr: error: %s\n", v);
    release(v);
}

static void field(const char *name, const char *value)
{
    char *v = shown(value);

    printf("  %-11s %s\n", name, v);
    release(v);
}

/* Loads one source alone so the success line can give a count per source. */
static int check_one(const char *inline_rules, const char *path)
{
    nvtxcorr_label_table_t *t;

    if (inline_rules && inline_rules[strspn(inline_rules, " \t\r\n")] == '\0') {
        print_error(NULL, &(nvtxcorr_label_error_t){"NVTXCORR_LABELS_INLINE", 0, "no rules"});
        return 1;
    }
    t = nvtxcorr_labels_load(inline_rules, path, print_error, NULL);
    if (!t) return 1;
    char *source = shown(path ? path : "NVTXCORR_LABELS_INLINE");
    printf("%s: %zu rules OK\n", source, nvtxcorr_labels_rule_count(t));
    release(source);
    nvtxcorr_labels_free(t);
    return 0;
}

static int cmd_check(const char *inline_rules, int have_inline, int argc, char **argv)
{
    const char *path = NULL;
    int rc = 0;

    if (argc >= 1) path = argv[0];
    if (!path && !have_inline) {
        const char *env_inline = getenv("NVTXCORR_LABELS_INLINE");
        const char *env_path = getenv("NVTXCORR_LABELS");
        if (env_inline && env_inline[strspn(env_inline, " \t\r\n")] != '\0') {
            inline_rules = env_inline;
            have_inline = 1;
        }
        if (env_path && env_path[0]) path = env_path;
        if (!path && !have_inline)
            return usage("check: nothing to check (give FILE or --inline, or set "
                         "NVTXCORR_LABELS or NVTXCORR_LABELS_INLINE)");
    }
    /* Both sources share the table's regex budgets: load them together first, as the
     * preload library does, so that a table that fits only source by source is refused. */
    if (have_inline && path && inline_rules[strspn(inline_rules, " \t\r\n")] != '\0') {
        nvtxcorr_label_table_t *t = nvtxcorr_labels_load(inline_rules, path, print_error, NULL);
        if (!t) return 1;
        nvtxcorr_labels_free(t);
    }
    if (have_inline) rc |= check_one(inline_rules, NULL);
    if (path) rc |= check_one(NULL, path);
    for (int i = 1; i < argc; i++) /* each further table on its own, as its own process would */
        rc |= check_one(NULL, argv[i]);
    return rc;
}

static void print_result(const nvtxcorr_label_table_t *t, const nvtxcorr_label_result_t *res)
{
    const char *text = nvtxcorr_labels_rule_text(t, res);

    if (res->matched) {
        char *source = shown(res->source), *rule = shown(text ? text : "");
        printf("  %-11s %s:%u: %s\n", "rule:", source, res->line, rule);
        release(source);
        release(rule);
    } else
        field("rule:", "no rule (default label)");
    if (res->skip)
        field("label:", "skip (no range)");
    else
        field("label:", res->label);
    if (res->has_color)
        printf("  %-11s #%06X\n", "color:", (unsigned)(res->color & 0xFFFFFFu));
    else
        field("color:", "none");
    field("category:", res->category ? res->category : "none");
}

/* "graph#N nodes=.. kernels=.. sig=.. top=..", any key may be left out. */
static int parse_graph(const char *desc, nvtxcorr_graph_keys_t *keys, char *sig, char *top,
                       size_t size)
{
    char copy[1024];
    char *save = NULL;

    memset(keys, 0, sizeof(*keys));
    sig[0] = top[0] = '\0';
    keys->sig = sig;
    keys->top = top;
    if (strlen(desc) >= sizeof(copy)) return -1;
    strcpy(copy, desc);
    for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *end = NULL;
        if (strncmp(tok, "graph#", 6) == 0) {
            keys->ordinal = (unsigned)strtoul(tok + 6, &end, 10);
        } else if (strncmp(tok, "nodes=", 6) == 0) {
            keys->nodes = (unsigned)strtoul(tok + 6, &end, 10);
        } else if (strncmp(tok, "kernels=", 8) == 0) {
            keys->kernels = (unsigned)strtoul(tok + 8, &end, 10);
        } else if (strncmp(tok, "sig=", 4) == 0) {
            snprintf(sig, size, "%s", tok + 4);
            continue;
        } else if (strncmp(tok, "top=", 4) == 0) {
            snprintf(top, size, "%s", tok + 4);
            continue;
        } else {
            return -1;
        }
        if (!end || *end != '\0' || end == tok) return -1;
    }
    return 0;
}

static int explain_graph(const nvtxcorr_label_table_t *t, const char *arg)
{
    nvtxcorr_graph_keys_t keys;
    nvtxcorr_label_result_t res;
    char sig[256], top[256], buf[1024];

    if (parse_graph(arg + 6, &keys, sig, top, sizeof(sig)) != 0) {
        char *bad = shown(arg);
        fprintf(stderr,
                "nvtxcorr: explain: cannot parse '%s' (expected graph:graph#N [nodes=N] "
                "[kernels=N] [sig=HEX] [top=NAME])\n",
                bad);
        release(bad);
        return 2;
    }
    char *heading = shown(arg);
    printf("%s\n", heading);
    release(heading);
    nvtxcorr_graph_name(&keys, buf, sizeof(buf));
    field("graph:", buf);
    nvtxcorr_graph_descriptor(&keys, buf, sizeof(buf));
    field("descriptor:", buf);
    nvtxcorr_labels_match_graph(t, &keys, &res);
    print_result(t, &res);
    return 0;
}

static void explain_kernel(const nvtxcorr_label_table_t *t, const char *name)
{
    static char storage[64 * 1024];
    static char base[4096];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_label_result_t res;

    nvtxcorr_names_from_mangled(name, &names, storage, sizeof(storage));
    /* A name typed in demangled form ("void foo<int>(int)") is matched as given; its base
     * name still helps the user see what {function} and globs on it would see. */
    if (names.demangled == names.mangled && strpbrk(name, "(<: ")) {
        nvtxcorr_names_base(name, base, sizeof(base));
        names.function = base;
    }
    char *heading = shown(name);
    printf("%s\n", heading);
    release(heading);
    field("mangled:", names.mangled);
    field("demangled:", names.demangled);
    field("function:", names.function);
    nvtxcorr_labels_match_kernel(t, &names, &res);
    print_result(t, &res);
}

static int cmd_explain(const char *inline_rules, int have_inline, int argc, char **argv)
{
    nvtxcorr_label_table_t *t;
    const char *path;
    int rc = 0;

    if (argc < 2) return usage("explain needs FILE (or -) and at least one NAME");
    path = strcmp(argv[0], "-") == 0 ? NULL : argv[0];
    if (!path && !have_inline) return usage("explain: FILE - needs --inline RULES");
    if (have_inline && inline_rules[strspn(inline_rules, " \t\r\n")] == '\0') {
        print_error(NULL, &(nvtxcorr_label_error_t){"NVTXCORR_LABELS_INLINE", 0, "no rules"});
        return 1;
    }
    t = nvtxcorr_labels_load(inline_rules, path, print_error, NULL);
    if (!t) return 1;
    for (int i = 1; i < argc; i++) {
        if (i > 1) printf("\n");
        if (strncmp(argv[i], "graph:", 6) == 0)
            rc |= explain_graph(t, argv[i]);
        else
            explain_kernel(t, argv[i]);
    }
    nvtxcorr_labels_free(t);
    return rc;
}

int main(int argc, char **argv)
{
    const char *inline_rules = NULL;
    int have_inline = 0;
    char **rest;
    int nrest = 0;

    if (argc < 2) return usage(NULL);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("nvtxcorr %s\n", NVTXCORR_VERSION_STRING);
        return 0;
    }
    /* `nvtxcorr check --help` and the like: help asked for is not a usage error. */
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
    if (strcmp(argv[1], "doctor") == 0) return nvtxcorr_doctor(argc - 1, argv + 1);
    if (strcmp(argv[1], "render") == 0) return nvtxcorr_render(argc - 1, argv + 1);
    rest = calloc((size_t)argc, sizeof(*rest));
    if (!rest) return 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--inline") == 0) {
            if (i + 1 >= argc) {
                free(rest);
                return usage("--inline needs RULES");
            }
            inline_rules = argv[++i];
            have_inline = 1;
        } else if (strncmp(argv[i], "--inline=", 9) == 0) {
            inline_rules = argv[i] + 9;
            have_inline = 1;
        } else if (strcmp(argv[i], "--") == 0) {
            while (++i < argc)
                rest[nrest++] = argv[i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            char *bad = shown(argv[i]);
            fprintf(stderr, "nvtxcorr: unknown option '%s'\n", bad);
            release(bad);
            free(rest);
            return usage(NULL);
        } else {
            rest[nrest++] = argv[i];
        }
    }

    int rc;
    if (strcmp(argv[1], "check") == 0)
        rc = cmd_check(inline_rules, have_inline, nrest, rest);
    else if (strcmp(argv[1], "explain") == 0)
        rc = cmd_explain(inline_rules, have_inline, nrest, rest);
    else
        rc = usage("unknown command (expected check, explain or doctor)");
    free(rest);
    return rc;
}
