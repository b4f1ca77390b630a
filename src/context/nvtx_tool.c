/* nvtxcorr as the program's NVTX tool: the entry point InitializeInjectionNvtx2, which every
 * NVTX instance of the process calls once for itself when NVTX_INJECTION64_PATH names this
 * library (NVTX3 is header-only: each shared object embedding it has its own function table
 * and loads the tool on its first call). It fills the range slots of that table, so the
 * program's pushes and pops keep one stack of context nodes per thread (context.h).
 *
 * What is filled: nvtxRangePushA/W/Ex and nvtxRangePop (the default domain),
 * nvtxDomainRangePushEx/Pop, nvtxDomainCreateA/W, nvtxDomainDestroy and
 * nvtxDomainRegisterStringA/W. Every other slot (marks, start/end ranges, categories, thread
 * names, resources) is left empty, which NVTX turns into a no-op once the tool has loaded.
 *
 * nvtxcorr's own NVTX instance (emit.c's) is refused: nvtxcorr is no tool for itself, so its
 * own domain sees no tool, and profile mode runs as it does without one. Ranges of a domain
 * named `nvtxcorr` are never context; NVTXCORR_CONTEXT_DOMAINS (globs, fnmatch) narrows the
 * domains that are, the default domain matched as `default`.
 *
 * Hostile input is counted, never trusted (context.h): a message is read up to the element's
 * bound only (a 10 MB message costs what a 256-byte one does), bytes that are not UTF-8 are
 * written as \xNN, a pop with nothing open is ignored, a push past the depth bound adds no
 * element but is still matched by its pop; a domain or string registered again is the same
 * handle, and past their bounds new ones share one (the interned handles, below). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "context.h"
#include "core/attributes.h"
#include "core/config.h"
#include "core/emit.h"
#include "core/log.h"
#include "core/resolve.h"
#include "labels/hash.h"
#include "labels/utf8.h"
__thread nvtxcorr_context_thread_t nvtxcorr_context_self __attribute__((tls_model("initial-exec")));

#define MAGIC_DOMAIN 0x6e637844u /* "Dxcn" */
#define MAGIC_STRING 0x6e637853u

/* What the program gets from nvtxDomainCreate* and nvtxDomainRegisterString* of an instance
 * that loaded nvtxcorr: a pointer to one of these, cast to NVTX's opaque handle types (which it
 * never looks into). One per distinct name, interned (below); never freed, so handles stay
 * valid: NVTX has no way to unregister a string, and a destroyed domain may be another
 * instance's too. */
typedef struct entry {
    uint32_t magic; /* MAGIC_DOMAIN or MAGIC_STRING */
    uint32_t hash;  /* nvtxcorr_context_hash of the text */
    size_t len;     /* the text, already cut and escaped as a path element */
    int context;    /* a domain's: its ranges are context */
    char text[];
} entry_t;

static int default_is_context = 1;

/* ---- which domains are context ---- */
enum { PATTERNS_MAX = 16 };
static char pattern_text[1024];
static const char *patterns[PATTERNS_MAX];
static unsigned npatterns;

static void read_patterns(void)
{
    const char *v = nvtxcorr_config_context_domains();
    if (v == NULL) return;
    size_t n = strlen(v);
    if (n >= sizeof pattern_text) n = sizeof pattern_text - 1;
    memcpy(pattern_text, v, n);
    for (char *p = pattern_text, *end; p && npatterns < PATTERNS_MAX; p = end) {
        end = strchr(p, ',');
        if (end) *end++ = 0;
        if (*p) patterns[npatterns++] = p;
    }
    if (npatterns == 0) patterns[npatterns++] = ""; /* set but empty: no domain */
}

static int is_context(const char *name)
{
    if (!strcmp(name, "nvtxcorr")) return 0;
    if (npatterns == 0) return 1;
    for (unsigned i = 0; i < npatterns; i++)
        if (fnmatch(patterns[i], name, 0) == 0) return 1;
    return 0;
}

/* ---- messages into path elements ---- */
/* A path element: its text, or (registered) the registered string's, never copied. */
typedef struct element {
    size_t len;
    uint32_t hash;
    const char *text;
    char buf[NVTXCORR_CONTEXT_ELEMENT_MAX + 1];
} element_t;

static void from_ascii_slow(element_t *e, const unsigned char *s, size_t o, size_t i);

/* The common case in one pass: printable ASCII up to the bound, hashed as it is read; anything
 * else (a byte of 0x80 or more, or a message longer than the bound) goes on slowly. */
static void from_ascii(element_t *e, const char *m)
{
    const unsigned char *s = (const unsigned char *)(m ? m : "[unnamed]");
    uint32_t h = NVTXCORR_FNV32_START; /* nvtxcorr_context_hash, one byte at a time */
    size_t i = 0;
    for (; i < NVTXCORR_CONTEXT_ELEMENT_MAX && s[i] && s[i] < 0x80; i++)
        h = nvtxcorr_fnv32_byte(h, s[i]);
    if (NVTXCORR_LIKELY(s[i] == 0)) { /* the message itself is the element */
        e->text = (const char *)s, e->len = i, e->hash = h;
        return;
    }
    memcpy(e->buf, s, i);
    from_ascii_slow(e, s, i, i);
}

static void from_ascii_slow(element_t *e, const unsigned char *s, size_t o, size_t i)
{
    static const char hex[] = "0123456789abcdef";
    int invalid = 0;
    while (s[i]) {
        size_t n = s[i] < 0x80 ? 1 : nvtxcorr_utf8_len((const char *)s + i);
        if (n == 0) { /* not UTF-8: \xNN */
            if (o + 4 > NVTXCORR_CONTEXT_ELEMENT_MAX) break;
            e->buf[o++] = '\\', e->buf[o++] = 'x';
            e->buf[o++] = hex[s[i] >> 4], e->buf[o++] = hex[s[i] & 15];
            invalid = 1;
            i++;
            continue;
        }
        if (o + n > NVTXCORR_CONTEXT_ELEMENT_MAX) break;
        memcpy(e->buf + o, s + i, n);
        o += n, i += n;
    }
    e->buf[o] = 0;
    e->text = e->buf, e->len = o, e->hash = nvtxcorr_context_hash(e->buf, o);
    if (s[i])
        atomic_fetch_add_explicit(&nvtxcorr_context_counts.long_messages, 1, memory_order_relaxed);
    if (invalid)
        atomic_fetch_add_explicit(&nvtxcorr_context_counts.invalid_utf8, 1, memory_order_relaxed);
}

/* wchar_t is UTF-32 on Linux: encoded as UTF-8; a value that is no code point is escaped. */
static void from_wide(element_t *e, const wchar_t *m)
{
    char buf[4 * NVTXCORR_CONTEXT_ELEMENT_MAX + 8];
    size_t o = 0;
    int invalid = 0;
    for (const wchar_t *w = m ? m : L""; *w && o < sizeof buf - 8; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80) {
            buf[o++] = (char)c;
        } else if (c < 0x800) {
            buf[o++] = (char)(0xc0 | c >> 6), buf[o++] = (char)(0x80 | (c & 63));
        } else if (c < 0x10000 && (c < 0xd800 || c > 0xdfff)) {
            buf[o++] = (char)(0xe0 | c >> 12), buf[o++] = (char)(0x80 | (c >> 6 & 63));
            buf[o++] = (char)(0x80 | (c & 63));
        } else if (c >= 0x10000 && c <= 0x10ffff) {
            buf[o++] = (char)(0xf0 | c >> 18), buf[o++] = (char)(0x80 | (c >> 12 & 63));
            buf[o++] = (char)(0x80 | (c >> 6 & 63)), buf[o++] = (char)(0x80 | (c & 63));
        } else {
            buf[o++] = '?';
            invalid = 1;
        }
    }
    buf[o] = 0;
    from_ascii(e, buf);
    if (e->text != e->buf) { /* buf is this function's: the element must outlive it */
        memcpy(e->buf, e->text, e->len);
        e->buf[e->len] = 0;
        e->text = e->buf;
    }
    if (invalid)
        atomic_fetch_add_explicit(&nvtxcorr_context_counts.invalid_utf8, 1, memory_order_relaxed);
}

static void from_attributes(element_t *e, const nvtxEventAttributes_t *a)
{
    if (a == NULL || a->size < NVTX_EVENT_ATTRIB_STRUCT_SIZE) {
        from_ascii(e, "[unnamed]");
        return;
    }
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        from_ascii(e, a->message.ascii);
        return;
    case NVTX_MESSAGE_TYPE_UNICODE:
        from_wide(e, a->message.unicode);
        return;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
        const entry_t *s = (const entry_t *)a->message.registered;
        if (s != NULL && s->magic == MAGIC_STRING) {
            e->text = s->text, e->len = s->len, e->hash = s->hash;
            return;
        }
        break;
    }
    default:
        break;
    }
    from_ascii(e, "[unnamed]");
}

/* ---- listeners ---- */
static _Atomic(nvtxcorr_range_fn) listeners[NVTXCORR_CONTEXT_LISTENERS];
static _Atomic unsigned nlisteners;

int nvtxcorr_context_on_range(nvtxcorr_range_fn fn)
{
    for (unsigned i = 0; i < NVTXCORR_CONTEXT_LISTENERS; i++) {
        nvtxcorr_range_fn none = NULL;
        if (atomic_compare_exchange_strong(&listeners[i], &none, fn)) {
            atomic_fetch_add_explicit(&nlisteners, 1, memory_order_release);
            return 0;
        }
    }
    return -1;
}

static void tell(int push, const char *domain, const char *message)
{
    for (unsigned i = 0; i < NVTXCORR_CONTEXT_LISTENERS; i++) {
        nvtxcorr_range_fn fn = atomic_load_explicit(&listeners[i], memory_order_acquire);
        if (fn) fn(push, domain, message);
    }
}

/* ---- the stack ---- */
static int push(nvtxDomainHandle_t handle, const element_t *e)
{
    const entry_t *d = (const entry_t *)handle;
    if (d != NULL && d->magic != MAGIC_DOMAIN) return -1; /* not a handle of ours */
    const char *dname = d ? d->text : "";
    int context = d ? d->context : default_is_context;
    nvtxcorr_context_thread_t *t = &nvtxcorr_context_self;
    int level = (int)t->depth;
    if (context) {
        if (t->depth < NVTXCORR_CONTEXT_MAX_DEPTH)
            t->node[t->depth + 1] =
                nvtxcorr_context_child_hashed(t->node[t->depth], e->text, e->len, e->hash);
        else
            atomic_fetch_add_explicit(&nvtxcorr_context_counts.truncated, 1, memory_order_relaxed);
        t->depth++;
    }
    if (atomic_load_explicit(&nlisteners, memory_order_relaxed)) tell(1, dname, e->text);
    return level;
}

static int pop(nvtxDomainHandle_t handle)
{
    const entry_t *d = (const entry_t *)handle;
    if (d != NULL && d->magic != MAGIC_DOMAIN) return -1;
    int context = d ? d->context : default_is_context;
    const char *message = NULL;
    int level = -1;
    if (context) {
        nvtxcorr_context_thread_t *t = &nvtxcorr_context_self;
        if (t->depth == 0) {
            atomic_fetch_add_explicit(&nvtxcorr_context_counts.unbalanced, 1, memory_order_relaxed);
        } else {
            if (t->depth <= NVTXCORR_CONTEXT_MAX_DEPTH)
                message = nvtxcorr_context_name(t->node[t->depth]);
            level = (int)--t->depth;
        }
    }
    if (atomic_load_explicit(&nlisteners, memory_order_relaxed)) tell(0, d ? d->text : "", message);
    return level;
}

/* ---- the callbacks ---- */
static int NVTX_API t_RangePushA(const char *m)
{
    element_t e;
    from_ascii(&e, m);
    return push(NULL, &e);
}
static int NVTX_API t_RangePushW(const wchar_t *m)
{
    element_t e;
    from_wide(&e, m);
    return push(NULL, &e);
}
static int NVTX_API t_RangePushEx(const nvtxEventAttributes_t *a)
{
    element_t e;
    from_attributes(&e, a);
    return push(NULL, &e);
}
static int NVTX_API t_RangePop(void)
{
    return pop(NULL);
}
static int NVTX_API t_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    element_t e;
    from_attributes(&e, a);
    return push(d, &e);
}
static int NVTX_API t_DomainRangePop(nvtxDomainHandle_t d)
{
    return pop(d);
}

/* ---- interned handles: a hash table per kind, bounded ----
 * A program may create a domain or register a string as often as it likes (once per call
 * site is the intent, once per range happens: 10M registrations of one string made 10M
 * copies, 480 MB, and 100,000 distinct domains took 10.7 s in a list walk). Each distinct
 * text is one entry, found lock-free once it exists (open addressing, at most half full);
 * a new one is made under intern_lock. Past the bound every new name is one shared entry,
 * "[other]", said once: its ranges are still balanced, its name is lost. */
typedef struct table {
    entry_t *_Atomic *slots;
    size_t mask;        /* slots - 1, a power of two */
    unsigned count;     /* under intern_lock */
    unsigned max;       /* at most half the slots */
    _Atomic int warned; /* the bound was said */
    const char *what;
} table_t;

static entry_t *_Atomic domain_slots[2 * NVTXCORR_CONTEXT_MAX_DOMAINS];
static entry_t *_Atomic string_slots[2 * NVTXCORR_CONTEXT_MAX_STRINGS];
static table_t domains = {
    domain_slots,  2 * NVTXCORR_CONTEXT_MAX_DOMAINS - 1, 0, NVTXCORR_CONTEXT_MAX_DOMAINS, 0,
    "NVTX domains"};
static table_t strings = {string_slots,
                          2 * NVTXCORR_CONTEXT_MAX_STRINGS - 1,
                          0,
                          NVTXCORR_CONTEXT_MAX_STRINGS,
                          0,
                          "NVTX registered strings"};
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* The shared entries past the bound: a domain whose ranges are context and one whose are not
 * (NVTXCORR_CONTEXT_DOMAINS still decides by the name asked for), and a string. */
#define FOLD(magic, context)                                                                       \
    {                                                                                              \
        {(magic), 0, 7, (context)}, "[other]"                                                      \
    }
static struct {
    entry_t e;
    char text[8];
} fold_context = FOLD(MAGIC_DOMAIN, 1), fold_plain = FOLD(MAGIC_DOMAIN, 0),
  fold_string = FOLD(MAGIC_STRING, 0);
#undef FOLD

/* The element hash is FNV-1a: mixed again for the slot, as tree.c does for its own. */
static size_t slot_of(const table_t *t, uint32_t h)
{
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h & t->mask;
}

static entry_t *find(const table_t *t, const element_t *e, size_t *at)
{
    for (size_t i = slot_of(t, e->hash);; i = (i + 1) & t->mask) {
        entry_t *x = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (x == NULL) {
            *at = i;
            return NULL;
        }
        if (x->hash == e->hash && x->len == e->len && memcmp(x->text, e->text, e->len) == 0)
            return x;
    }
}

/* A fork while another thread holds the lock: the child gets a fresh one (an entry half made
 * in the parent is not findable there, and is made again). */
static void intern_child_after_fork(void)
{
    pthread_mutex_init(&intern_lock, NULL);
}
static void intern_at_fork(void)
{
    pthread_atfork(NULL, NULL, intern_child_after_fork);
}

/* The entry of e's text in t, made if new; NULL past the bound or out of memory. */
static entry_t *intern(table_t *t, const element_t *e, uint32_t magic, int context)
{
    size_t at;
    entry_t *x = find(t, e, &at);
    if (NVTXCORR_LIKELY(x != NULL)) return x;
    /* A registration from a signal handler that interrupted this thread's own insertion must
     * not wait for the lock it holds (nor malloc inside malloc). */
    static __thread int inserting;
    if (inserting) return NULL;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, intern_at_fork);
    inserting = 1;
    pthread_mutex_lock(&intern_lock);
    x = find(t, e, &at); /* made meanwhile? */
    int full = x == NULL && t->count >= t->max;
    if (x == NULL && !full && (x = malloc(sizeof *x + e->len + 1)) != NULL) {
        x->magic = magic, x->hash = e->hash, x->len = e->len, x->context = context;
        memcpy(x->text, e->text, e->len);
        x->text[e->len] = 0;
        t->count++;
        atomic_store_explicit(&t->slots[at], x, memory_order_release);
    }
    pthread_mutex_unlock(&intern_lock);
    inserting = 0;
    if (full && !atomic_exchange(&t->warned, 1))
        nvtxcorr_warn("more than %u distinct %s: the rest share one, \"[other]\" (program "
                      "context)",
                      t->max, t->what);
    return x;
}

static nvtxStringHandle_t register_string(const element_t *e)
{
    entry_t *s = intern(&strings, e, MAGIC_STRING, 0);
    return (nvtxStringHandle_t)(s ? s : &fold_string.e);
}
static nvtxStringHandle_t NVTX_API t_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    (void)d; /* one entry per text, whichever domain: the handle only names it */
    element_t e;
    from_ascii(&e, s);
    return register_string(&e);
}
static nvtxStringHandle_t NVTX_API t_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    element_t e;
    from_wide(&e, s);
    return register_string(&e);
}

/* One handle per name, whichever instance asks: a domain created by two shared objects is one
 * domain. */
static nvtxDomainHandle_t domain_named(const element_t *e)
{
    size_t at;
    entry_t *d = find(&domains, e, &at);
    if (NVTXCORR_LIKELY(d != NULL)) return (nvtxDomainHandle_t)d;
    int context = is_context(e->text);
    d = intern(&domains, e, MAGIC_DOMAIN, context);
    return (nvtxDomainHandle_t)(d ? d : context ? &fold_context.e : &fold_plain.e);
}
static nvtxDomainHandle_t NVTX_API t_DomainCreateA(const char *name)
{
    element_t e;
    from_ascii(&e, name);
    return domain_named(&e);
}
static nvtxDomainHandle_t NVTX_API t_DomainCreateW(const wchar_t *name)
{
    element_t e;
    from_wide(&e, name);
    return domain_named(&e);
}
static void NVTX_API t_DomainDestroy(nvtxDomainHandle_t d)
{
    (void)d; /* kept: another instance may hold the same handle */
}

/* ---- the entry point ---- */
typedef struct slot {
    unsigned index;
    NvtxFunctionPointer fn;
} slot_t;
#define SLOT(module, name)                                                                         \
    {                                                                                              \
        NVTX_CBID_##module##_##name, (NvtxFunctionPointer)t_##name                                 \
    }
static const slot_t core[] = {SLOT(CORE, RangePushEx), SLOT(CORE, RangePushA),
                              SLOT(CORE, RangePushW), SLOT(CORE, RangePop)};
static const slot_t core2[] = {
    SLOT(CORE2, DomainRangePushEx),     SLOT(CORE2, DomainRangePop),
    SLOT(CORE2, DomainRegisterStringA), SLOT(CORE2, DomainRegisterStringW),
    SLOT(CORE2, DomainCreateA),         SLOT(CORE2, DomainCreateW),
    SLOT(CORE2, DomainDestroy)};
#undef SLOT

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const slot_t *slots,
                size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL) return 0;
    for (size_t i = 0; i < n; i++)
        if (slots[i].index < size && table[slots[i].index] != NULL)
            *table[slots[i].index] = slots[i].fn;
    return 1;
}

static void setup(void)
{
    uint32_t h = nvtxcorr_context_hash("[other]", 7); /* as an ASCII "[other]" would hash */
    fold_context.e.hash = fold_plain.e.hash = fold_string.e.hash = h;
    read_patterns();
    default_is_context = is_context("default");
}

/* Whether `fn` is code of this library: the export-table function of nvtxcorr's own NVTX
 * instance (emit.c's) lies in it. */
static int ours(const void *fn)
{
    Dl_info self, other;
    return dladdr((const void *)ours, &self) && dladdr(fn, &other) &&
           self.dli_fbase == other.dli_fbase;
}

_Atomic int nvtxcorr_context_active;

int nvtxcorr_context_injected(void)
{
    return atomic_load_explicit(&nvtxcorr_context_active, memory_order_acquire);
}

NVTXCORR_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    if (getExportTable == NULL) return 0;
    if (nvtxcorr_first_copy() != NULL) { /* this copy stands aside: the first one is the tool */
        int (*first)(NvtxGetExportTableFunc_t) = (int (*)(
            NvtxGetExportTableFunc_t))nvtxcorr_first_copy_lookup("InitializeInjectionNvtx2");
        return first ? first(getExportTable) : 0;
    }
    if (ours((const void *)getExportTable)) {
        atomic_store_explicit(&nvtxcorr_nvtx_refused_self, 1, memory_order_relaxed);
        return 0;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup);
    const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof *cb || cb->GetModuleFunctionTable == NULL) return 0;
    const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
    if (vi != NULL && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion != NULL)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    if (!fill(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof *core) ||
        !fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof *core2))
        return 0;
    atomic_fetch_add_explicit(&nvtxcorr_context_counts.instances, 1, memory_order_relaxed);
    atomic_store_explicit(&nvtxcorr_context_active, 1, memory_order_release);
    return 1;
}
