/*
 * Recording NVTX tool (libnvtx_recorder.so), loaded by NVTX through NVTX_INJECTION64_PATH.
 *
 * NVTX v3 is header-only: every shared object that uses it loads the tool and calls the exported
 * InitializeInjectionNvtx2 with its own export table, through which the tool fills that
 * object's function-pointer slots, module by module (CORE, CORE2, ...).  So the entry point may
 * run several times; the tool's state (domains, strings, thread ids, output) is process-wide.
 *
 * Output (NVTXREC_OUT=<path>, appended at exit and whenever the buffer fills), one event per
 * line, tab-separated, for the whole process:
 *   push      <tid> <domain> <text> color=<0xAARRGGBB or -> category=<id or 0> registered=<0|1>
 *   pop       <tid> <domain>
 *   mark      <tid> <domain> <text> color=<..> category=<..> registered=<0|1>
 *   category  <domain> <id> <name>
 *   domain    <name>                      (once per distinct name)
 * <tid> is 1, 2, 3... in the order threads first record something; the NULL domain and the
 * non-domain calls are "default"; a registered-string message prints its text (and
 * registered=1, so tests can tell); tabs and newlines inside texts print as \t and \n.
 *
 * NVTXREC_MODE=noop registers callbacks that only return (domain and string handles are still
 * real, non-NULL and distinct) and writes nothing: the "no-op tool" of the overhead benchmark.
 * NVTXREC_WITHOUT=<name> leaves that one callback unset (DomainRangePop, for example), as a
 * tool that implements only part of NVTX does: NVTX's calls of it then do nothing.
 * NVTXREC_FAIL_INIT=1 makes InitializeInjectionNvtx2 return 0 (a tool that fails to load).
 * NVTXREC_INIT_SLEEP_MS=n makes InitializeInjectionNvtx2 a slow tool's: it sleeps n ms, then
 * uses the dynamic loader (dlopen), as real tools do when they load their back ends; with
 * NVTXREC_INIT_MARK=path it creates that file first, so a test can act while the tool loads.
 */
#define _GNU_SOURCE
#define NVTX_NO_IMPL /* a tool: the types and declarations, none of the inline implementation */
#include <nvtx3/nvToolsExt.h>

#include "nvtx_recorder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC_MAGIC_DOMAIN 0x444f4d4eu
#define REC_MAGIC_STRING 0x53545247u

/* The opaque handle types of nvToolsExt.h, given a body here. */
struct nvtxDomainRegistration_st {
    uint32_t magic;
    char *name;
    struct nvtxDomainRegistration_st *next;
};

struct nvtxStringRegistration_st {
    uint32_t magic;
    char *text;
    struct nvtxStringRegistration_st *next; /* all strings, reachable for leak checkers */
};

static pthread_mutex_t rec_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvtxDomainRegistration_st *rec_domains;
static struct nvtxStringRegistration_st *rec_strings;
static int rec_enabled;                /* NVTXREC_OUT is writable: format events */
static unsigned rec_register_delay_us; /* NVTXREC_REGISTER_DELAY_US */
static atomic_int rec_next_tid;
static __thread int rec_tid;   /* 0 until the thread's first event */
static __thread int rec_depth; /* push/pop nesting, for the return values */

static int rec_thread_id(void)
{
    if (rec_tid == 0) rec_tid = atomic_fetch_add(&rec_next_tid, 1) + 1;
    return rec_tid;
}

static const char *rec_domain_name(nvtxDomainHandle_t d)
{
    if (d == NULL) return "default";
    return d->magic == REC_MAGIC_DOMAIN ? d->name : "<invalid domain>";
}

/* push/mark: "<kind> <tid> <domain> <text> color=<..> category=<..> registered=<..>" */
static void rec_event(const char *kind, nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a,
                      const char *ascii)
{
    struct rec_line l;
    rec_line_init(&l);
    rec_line_fmt(&l, "%s\t%d\t", kind, rec_thread_id());
    rec_line_text(&l, rec_domain_name(domain));
    rec_line_str(&l, "\t");
    if (ascii != NULL) {
        rec_line_text(&l, ascii);
    } else if (a != NULL) {
        switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII:
            rec_line_text(&l, a->message.ascii ? a->message.ascii : "");
            break;
        case NVTX_MESSAGE_TYPE_UNICODE:
            if (a->message.unicode != NULL) rec_line_wtext(&l, a->message.unicode);
            break;
        case NVTX_MESSAGE_TYPE_REGISTERED: {
            nvtxStringHandle_t s = a->message.registered;
            rec_line_text(&l,
                          s != NULL && s->magic == REC_MAGIC_STRING ? s->text : "<invalid string>");
            break;
        }
        default:
            break;
        }
    }
    if (a != NULL && a->colorType == NVTX_COLOR_ARGB)
        rec_line_fmt(&l, "\tcolor=0x%08X", (unsigned)a->color);
    else
        rec_line_str(&l, "\tcolor=-");
    rec_line_fmt(&l, "\tcategory=%u", a != NULL ? (unsigned)a->category : 0u);
    /* Whether the text came as a registered string: tools resolve those without copying. */
    rec_line_fmt(&l, "\tregistered=%d",
                 a != NULL && ascii == NULL && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED);
    rec_line_emit(&l);
}

static int rec_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, const char *ascii)
{
    if (rec_enabled) rec_event("push", d, a, ascii);
    return rec_depth++;
}

static int rec_pop(nvtxDomainHandle_t d)
{
    if (rec_enabled) {
        struct rec_line l;
        rec_line_init(&l);
        rec_line_fmt(&l, "pop\t%d\t", rec_thread_id());
        rec_line_text(&l, rec_domain_name(d));
        rec_line_emit(&l);
    }
    /* Still recorded above when unbalanced, so tests see the stray pop. */
    return rec_depth > 0 ? --rec_depth : -1;
}

static void rec_category(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
    if (!rec_enabled) return;
    struct rec_line l;
    rec_line_init(&l);
    rec_line_str(&l, "category\t");
    rec_line_text(&l, rec_domain_name(d));
    rec_line_fmt(&l, "\t%u\t", (unsigned)id);
    rec_line_text(&l, name ? name : "");
    rec_line_emit(&l);
}

/* ---- recording callbacks --------------------------------------------------------------------- */

static void NVTX_API r_MarkEx(const nvtxEventAttributes_t *a)
{
    if (rec_enabled) rec_event("mark", NULL, a, NULL);
}

static void NVTX_API r_MarkA(const char *message)
{
    if (rec_enabled) rec_event("mark", NULL, NULL, message ? message : "");
}

static int NVTX_API r_RangePushEx(const nvtxEventAttributes_t *a)
{
    return rec_push(NULL, a, NULL);
}

static int NVTX_API r_RangePushA(const char *message)
{
    return rec_push(NULL, NULL, message ? message : "");
}

static int NVTX_API r_RangePop(void)
{
    return rec_pop(NULL);
}

static void NVTX_API r_NameCategoryA(uint32_t category, const char *name)
{
    rec_category(NULL, category, name);
}

static void NVTX_API r_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (rec_enabled) rec_event("mark", d, a, NULL);
}

static int NVTX_API r_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return rec_push(d, a, NULL);
}

static int NVTX_API r_DomainRangePop(nvtxDomainHandle_t d)
{
    return rec_pop(d);
}

static void NVTX_API r_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t id, const char *name)
{
    rec_category(d, id, name);
}

static nvtxStringHandle_t NVTX_API r_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    struct nvtxStringRegistration_st *r = calloc(1, sizeof(*r));
    if (r == NULL) return NULL;
    r->text = strdup(s ? s : "");
    if (r->text == NULL) {
        free(r);
        return NULL;
    }
    r->magic = REC_MAGIC_STRING;
    pthread_mutex_lock(&rec_reg_lock);
    if (rec_register_delay_us) usleep(rec_register_delay_us); /* a slow tool, for fork tests */
    r->next = rec_strings; /* never freed: NVTX has no way to unregister a string */
    rec_strings = r;
    pthread_mutex_unlock(&rec_reg_lock);
    return r;
}

static nvtxDomainHandle_t NVTX_API r_DomainCreateA(const char *name)
{
    if (name == NULL) name = "";
    pthread_mutex_lock(&rec_reg_lock);
    struct nvtxDomainRegistration_st *d = rec_domains;
    while (d != NULL && strcmp(d->name, name) != 0)
        d = d->next;
    int created = 0;
    if (d == NULL && (d = calloc(1, sizeof(*d))) != NULL) {
        if ((d->name = strdup(name)) == NULL) {
            free(d);
            d = NULL;
        } else {
            d->magic = REC_MAGIC_DOMAIN;
            d->next = rec_domains;
            rec_domains = d;
            created = 1;
        }
    }
    pthread_mutex_unlock(&rec_reg_lock);
    if (created && rec_enabled) {
        struct rec_line l;
        rec_line_init(&l);
        rec_line_str(&l, "domain\t");
        rec_line_text(&l, name);
        rec_line_emit(&l);
    }
    return d;
}

static void NVTX_API r_DomainDestroy(nvtxDomainHandle_t d)
{
    /*
     * Kept alive: creating the same name again must give the same handle, and handles
     * another module still holds must stay valid.
     */
}

/* ---- no-op callbacks (NVTXREC_MODE=noop) ----------------------------------------------------- */

static void NVTX_API n_MarkEx(const nvtxEventAttributes_t *a) {}
static void NVTX_API n_MarkA(const char *m) {}
static int NVTX_API n_RangePushEx(const nvtxEventAttributes_t *a)
{
    return 0;
}
static int NVTX_API n_RangePushA(const char *m)
{
    return 0;
}
static int NVTX_API n_RangePop(void)
{
    return 0;
}
static void NVTX_API n_NameCategoryA(uint32_t c, const char *n) {}
static void NVTX_API n_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {}
static int NVTX_API n_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return 0;
}
static int NVTX_API n_DomainRangePop(nvtxDomainHandle_t d)
{
    return 0;
}
static void NVTX_API n_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n) {}
/*
 * Handles keep their recording behaviour in noop mode (distinct per name, distinct per string,
 * nothing written): a profiler may key its state on them, and they are not on any hot path.
 */
/* The no-op tool keeps nothing: every registration gets the same handle, so that tests can
 * tell the profiled library's memory from a tool's. */
static nvtxStringHandle_t NVTX_API n_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    static struct nvtxStringRegistration_st shared = {.magic = REC_MAGIC_STRING, .text = ""};
    (void)d, (void)s;
    return &shared;
}
#define n_DomainCreateA r_DomainCreateA
#define n_DomainDestroy r_DomainDestroy

/* ---- injection entry point ------------------------------------------------------------------- */

struct rec_slot {
    unsigned index;
    NvtxFunctionPointer rec, noop;
    const char *name;
};

#define SLOT(id, name)                                                                             \
    {                                                                                              \
        id, (NvtxFunctionPointer)r_##name, (NvtxFunctionPointer)n_##name, #name                    \
    }

static const struct rec_slot rec_core[] = {
    SLOT(NVTX_CBID_CORE_MarkEx, MarkEx),
    SLOT(NVTX_CBID_CORE_MarkA, MarkA),
    SLOT(NVTX_CBID_CORE_RangePushEx, RangePushEx),
    SLOT(NVTX_CBID_CORE_RangePushA, RangePushA),
    SLOT(NVTX_CBID_CORE_RangePop, RangePop),
    SLOT(NVTX_CBID_CORE_NameCategoryA, NameCategoryA),
};

static const struct rec_slot rec_core2[] = {
    SLOT(NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx),
    SLOT(NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx),
    SLOT(NVTX_CBID_CORE2_DomainRangePop, DomainRangePop),
    SLOT(NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA),
    SLOT(NVTX_CBID_CORE2_DomainCreateA, DomainCreateA),
    SLOT(NVTX_CBID_CORE2_DomainDestroy, DomainDestroy),
};

static int rec_noop;

static void rec_setup(void)
{
    const char *mode = getenv("NVTXREC_MODE");
    rec_noop = mode != NULL && strcmp(mode, "noop") == 0;
    const char *delay = getenv("NVTXREC_REGISTER_DELAY_US");
    rec_register_delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
    rec_enabled = !rec_noop && rec_out_open();
}

/* Fills one module's slots; 0 when the module's table is missing. */
static int rec_fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                    const struct rec_slot *slots, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL) return 0;
    const char *without = getenv("NVTXREC_WITHOUT");
    for (size_t i = 0; i < n; i++)
        if (slots[i].index < size && table[slots[i].index] != NULL &&
            (without == NULL || strcmp(without, slots[i].name) != 0))
            *table[slots[i].index] = rec_noop ? slots[i].noop : slots[i].rec;
    return 1;
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const char *fail = getenv("NVTXREC_FAIL_INIT");
    if (fail != NULL && strcmp(fail, "1") == 0) return 0;
    if (getExportTable == NULL) return 0;
    const char *sleep_ms = getenv("NVTXREC_INIT_SLEEP_MS");
    if (sleep_ms != NULL && atoi(sleep_ms) > 0) {
        int ms = atoi(sleep_ms);
        const char *mark = getenv("NVTXREC_INIT_MARK");
        if (mark != NULL) {
            int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) close(fd);
        }
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
        void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL) dlclose(h);
    }
    pthread_once(&once, rec_setup);

    const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof(*cb) || cb->GetModuleFunctionTable == NULL) return 0;
    const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
    if (vi != NULL && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion != NULL)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    if (!rec_fill(cb, NVTX_CB_MODULE_CORE, rec_core, sizeof(rec_core) / sizeof(rec_core[0])) ||
        !rec_fill(cb, NVTX_CB_MODULE_CORE2, rec_core2, sizeof(rec_core2) / sizeof(rec_core2[0])))
        return 0;
    return 1;
}
