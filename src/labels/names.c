/* Kernel names: turns the raw name a driver reports (an Itanium-mangled C++ name or a plain
 * C name) into the three forms the label table matches on: the mangled name, the demangled
 * name and the base "function" name that ncu --kernel-name-base function shows.
 *
 * Demangling borrows the C++ runtime's __cxa_demangle, looked up at run time: a C++ host
 * already has it in the global scope; a pure C host (or a Triton/Python process that has not
 * loaded libstdc++ yet) gets it from a private dlopen of libstdc++.so.6. Linking against
 * libstdc++ instead would add a NEEDED entry to the preload library and drag the C++ runtime
 * into every process it is injected into. Nothing here allocates memory that outlives a call;
 * results live in the caller's storage. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* Itanium C++ ABI, section 3.4: `char *__cxa_demangle(const char *mangled, char *buf,
 * size_t *n, int *status)`; with buf == NULL the result is malloc'd and owned by the caller. */
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangler;

/* Longer names are left mangled: the demangler recurses on nested types, and a driver never
 * reports names this long for real kernels. */
enum { DEMANGLE_INPUT_MAX = 64 * 1024 };

static void resolve_demangler(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");

    if (!sym) {
        /* RTLD_LOCAL keeps libstdc++'s symbols out of the global scope, so loading it here
         * cannot change which operator new or exception runtime the host binds to. The
         * handle is never closed: the function pointer stays in use for the process life. */
        void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (lib) sym = dlsym(lib, "__cxa_demangle");
    }
    /* POSIX allows converting dlsym's void * to a function pointer (XSH dlsym rationale). */
    memcpy(&demangler, &sym, sizeof(sym));
}

/* Only `_Z` names are C++ function or variable encodings: __cxa_demangle also accepts bare
 * type encodings, and would turn a C kernel named "i" into "int". */
static char *demangle(const char *mangled)
{
    int status = 0;

    if (mangled[0] != '_' || mangled[1] != 'Z' || strlen(mangled) > DEMANGLE_INPUT_MAX) return NULL;
    pthread_once(&demangler_once, resolve_demangler);
    if (!demangler) return NULL;
    char *out = demangler(mangled, NULL, NULL, &status);
    if (status != 0 || !out || !out[0]) {
        free(out);
        return NULL;
    }
    return out;
}

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

static int is_open(char c)
{
    return c == '(' || c == '<' || c == '[' || c == '{';
}

static int is_close(char c)
{
    return c == ')' || c == '>' || c == ']' || c == '}';
}

/* If s[i..] is the keyword `operator` naming an operator function ("operator()",
 * "operator<<", "operator new[]", a conversion "operator unsigned int"), returns the index
 * just past the operator's name, else i. Its characters are part of the name, and its `<`,
 * `>` or `(` must not be taken for brackets. */
static size_t skip_operator(const char *s, size_t len, size_t i)
{
    static const char opchars[] = "+-*/%^&|~!=<>,";
    size_t j = i + 8;

    if (len - i < 9 || memcmp(s + i, "operator", 8) != 0 || (i > 0 && is_ident(s[i - 1]))) return i;
    if ((s[j] == '(' && j + 1 < len && s[j + 1] == ')') ||
        (s[j] == '[' && j + 1 < len && s[j + 1] == ']'))
        return j + 2;
    if (strchr(opchars, s[j])) {
        size_t k = 0;
        while (j < len && k < 3 && strchr(opchars, s[j])) {
            j++;
            k++;
        }
        return j;
    }
    if (s[j] == ' ') {
        /* new, delete, conversions: the name runs to the parameter or template list. */
        j++;
        while (j < len && (is_ident(s[j]) || s[j] == ' ' || s[j] == '*' || s[j] == '&' ||
                           s[j] == ':' || (s[j] == '[' && j + 1 < len && s[j + 1] == ']'))) {
            j += s[j] == '[' ? 2 : 1;
        }
        while (j > i + 9 && s[j - 1] == ' ')
            j--;
        return j;
    }
    return i;
}

#define NO_END ((size_t)-1) /* base_scan.nend before the name's end is seen */

/* What base_span knows while it reads a demangled name left to right. */
typedef struct base_scan {
    char stack[128]; /* open brackets, innermost last */
    size_t depth;
    size_t comp;      /* start of the current name component */
    size_t nend;      /* end of the component's name proper, once seen */
    size_t bs, be;    /* the last function name seen before a parameter list */
    int have;         /* bs, be are set */
    int after_params; /* past that parameter list */
} base_scan_t;

/* Inside brackets only nesting matters. Angle brackets count only outside parentheses, where
 * the demangler prints expressions such as "(3)>(2)". Returns 0, or -1 when too deep. */
static int scan_nested(base_scan_t *st, char c)
{
    char top = st->stack[st->depth - 1];

    if (is_open(c) && !(c == '<' && top == '(')) {
        if (st->depth == sizeof(st->stack)) return -1;
        st->stack[st->depth++] = c;
    } else if (is_close(c) && !(c == '>' && top != '<')) {
        st->depth--;
    }
    return 0;
}

/* " const", " &&", " [clone .cold]" after the parameter list. Returns 0, or -1 when a
 * bracket closes that never opened. */
static int scan_after_params(base_scan_t *st, char c)
{
    if (is_open(c))
        st->stack[st->depth++] = c;
    else if (is_close(c))
        return -1;
    return 0;
}

/* Outside brackets, before any parameter list: a space ends a return type, '(' after name
 * characters opens the parameters. Returns 0, or -1 when a bracket closes that never opened. */
static int scan_top_level(base_scan_t *st, const char *s, size_t i)
{
    char c = s[i];

    if (c == ' ') {
        /* Top-level space: what came before was a return type. */
        st->comp = i + 1;
        st->nend = NO_END;
    } else if (c == '(' && i > st->comp) {
        if (st->nend == NO_END) st->nend = i;
        st->bs = st->comp;
        st->be = st->nend;
        st->have = 1;
        st->after_params = 1;
        st->stack[st->depth++] = c;
    } else if (is_open(c)) {
        /* "(anonymous namespace)" and "{lambda(int)#1}" are names; a '<' or '[' after
         * name characters opens template arguments or an ABI tag. */
        if (i > st->comp && st->nend == NO_END && c != '{') st->nend = i;
        st->stack[st->depth++] = c;
    } else if (is_close(c)) {
        return -1;
    }
    return 0;
}

/* Past an operator's name ending at j; returns where reading goes on. The demangler writes
 * "operator< <int>" so the template list cannot fuse with the operator; that space is not a
 * return-type separator. */
static size_t after_operator(base_scan_t *st, const char *s, size_t len, size_t j)
{
    if (st->depth == 0 && j + 1 < len && s[j] == ' ' && s[j + 1] == '<') {
        if (st->nend == NO_END) st->nend = j;
        j++;
    }
    return j;
}

/* Finds the base name inside a demangled name: the last name component (after `::`) of the
 * function, without template arguments, `[abi:...]` tags, parameters, qualifiers or a
 * leading return type. One pass with a bracket stack. Returns 0 and the span [*b, *e), or -1
 * when the name does not parse (unbalanced or too deep). */
static int base_span(const char *s, size_t len, size_t *b, size_t *e)
{
    base_scan_t st;

    memset(&st, 0, sizeof(st));
    st.nend = NO_END;
    for (size_t i = 0; i < len;) {
        size_t j = skip_operator(s, len, i);
        int rc;

        if (j != i) {
            i = after_operator(&st, s, len, j);
            continue;
        }
        if (s[i] == ':' && st.depth == 0 && i + 1 < len && s[i + 1] == ':') {
            /* A local entity ("outer(int)::inner(float)"): the name starts over. */
            st.after_params = 0;
            st.comp = i + 2;
            st.nend = NO_END;
            i += 2;
            continue;
        }
        if (st.depth > 0)
            rc = scan_nested(&st, s[i]);
        else if (st.after_params)
            rc = scan_after_params(&st, s[i]);
        else
            rc = scan_top_level(&st, s, i);
        if (rc != 0) return -1;
        i++;
    }
    if (st.depth > 0) return -1;
    if (!st.after_params && st.comp < len) {
        st.bs = st.comp;
        st.be = st.nend == NO_END ? len : st.nend;
        st.have = 1;
    }
    if (!st.have || st.be <= st.bs) return -1;
    *b = st.bs;
    *e = st.be;
    return 0;
}

/* The base name's span, or the whole name when it does not parse: any text is its own base
 * name rather than none. */
static void base_or_whole(const char *s, size_t len, size_t *b, size_t *e)
{
    if (base_span(s, len, b, e) != 0) {
        *b = 0;
        *e = len;
    }
}

/* Copies n bytes of src into buf as a string; returns -1 when it had to truncate. */
static int copy_span(char *buf, size_t size, const char *src, size_t n)
{
    int rc = 0;

    if (size == 0) return -1;
    if (n >= size) {
        n = size - 1;
        rc = -1;
    }
    memcpy(buf, src, n);
    buf[n] = '\0';
    return rc;
}

static int base_into(const char *demangled, char *buf, size_t size)
{
    size_t len = strlen(demangled);
    size_t b, e;

    base_or_whole(demangled, len, &b, &e);
    return copy_span(buf, size, demangled + b, e - b);
}

void nvtxcorr_names_base(const char *demangled, char *buf, size_t size)
{
    if (!buf || size == 0) return;
    if (!demangled) {
        buf[0] = '\0';
        return;
    }
    (void)base_into(demangled, buf, size);
}

int nvtxcorr_names_from_mangled(const char *mangled, nvtxcorr_kernel_names_t *out, char *storage,
                                size_t storage_size)
{
    if (!mangled) mangled = "";
    out->mangled = mangled;
    out->demangled = mangled;
    out->function = mangled;

    char *dem = demangle(mangled);
    if (!dem) return 0;
    if (!storage || storage_size < 2) {
        free(dem);
        return -1;
    }

    /* The base name goes first: it is the default label, so it gets the storage when both
     * do not fit. */
    size_t len = strlen(dem);
    size_t b, e;
    base_or_whole(dem, len, &b, &e);
    size_t base_room = e - b + 1 < storage_size ? e - b + 1 : storage_size - 1;
    int rc = copy_span(storage, base_room, dem + b, e - b);
    char *rest = storage + base_room;
    size_t rest_size = storage_size - base_room;
    if (copy_span(rest, rest_size, dem, len) != 0) rc = -1;
    out->function = storage;
    out->demangled = rest;
    free(dem);
    return rc;
}

size_t nvtxcorr_escape_controls(char *out, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    if (!out || size == 0) return 0;
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        size_t need = 1;
        if (nvtxcorr_is_control(c))
            need = 4;
        else if (c >= 0xF0)
            need = 4;
        else if (c >= 0xE0)
            need = 3;
        else if (c >= 0xC0)
            need = 2;
        if (o + need >= size) break;
        if (nvtxcorr_is_control(c)) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            size_t k = 0; /* a sequence cut short by the end of s is copied as it is */
            while (k < need && s[k])
                out[o++] = s[k++];
            s += k - 1;
        }
    }
    out[o] = '\0';
    return o;
}
