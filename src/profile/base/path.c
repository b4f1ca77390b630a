/* The output paths' patterns (NVTXCORR_PROFILE, NVTXCORR_TRACE; docs/profile.md): %p
 * the process id, %h the host name, %q{VAR} the environment variable VAR (empty when unset),
 * %% a percent sign; anything else is copied as it is. Expanded at start-up and again in a
 * forked child (exit.c), never on the signal path. */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "core/config.h"
#include "out.h"
#include "process.h"
int nvtxcorr_prof_expand(const char *p, char *out, size_t size)
{
    size_t n = 0;
    char num[24];
    for (; *p; p++) {
        const char *add = p;
        size_t len = 1;
        if (p[0] == '%' && p[1] == 'p') {
            add = num, len = nvtxcorr_fmt_u64(num, (uint64_t)getpid()), p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            static struct utsname u;
            add = uname(&u) == 0 ? u.nodename : "unknown-host", len = strlen(add), p++;
        } else if (p[0] == '%' && p[1] == '%') {
            p++;
        } else if (p[0] == '%' && p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}')) {
            char name[256];
            size_t k = (size_t)(strchr(p + 3, '}') - (p + 3));
            if (k >= sizeof name) return -1;
            memcpy(name, p + 3, k);
            name[k] = 0;
            add = nvtxcorr_config_env(name);
            add = add ? add : "";
            len = strlen(add);
            p += 3 + k;
        }
        if (n + len >= size) return -1;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = 0;
    return 0;
}
