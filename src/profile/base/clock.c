/* The clock that times launch calls: the cheapest one that is correct across threads and
 * CPUs. rdtsc is used only when the CPU reports an invariant TSC (CPUID 0x80000007 EDX bit 8:
 * constant rate, counting through sleep states) *and* the kernel's own clocksource is "tsc",
 * which Linux selects only after checking that the TSCs of all CPUs are synchronised; its rate
 * is calibrated against CLOCK_MONOTONIC at start-up (about 2 ms). Anything else uses
 * clock_gettime(CLOCK_MONOTONIC), answered by the vDSO without a system call. */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "clock.h"
prof_clock_t nvtxcorr_prof_clock = {.tsc = 0, .mult = 1ull << 32};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t nvtxcorr_prof_now_slow(void)
{
    return mono_ns();
}

uint64_t nvtxcorr_prof_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static int kernel_uses_tsc(void)
{
    char buf[32] = {0};
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 3 && !strncmp(buf, "tsc", 3) && (buf[3] == '\n' || buf[3] == 0);
}

/* A (tsc, monotonic) pair read as close together as the machine allows: of a few tries,
 * the one with the shortest monotonic bracket. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = mono_ns(), t = __builtin_ia32_rdtsc(), b = mono_ns();
        if (b - a < best) best = b - a, *tsc = t, *ns = a + (b - a) / 2;
    }
}

static int tsc_usable(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return 0;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d & (1u << 8)) && kernel_uses_tsc();
}
#endif

void nvtxcorr_prof_clock_init(void)
{
#if defined(__x86_64__)
    if (tsc_usable()) {
        uint64_t t0, n0, t1, n1;
        pair(&t0, &n0);
        do
            pair(&t1, &n1);
        while (n1 - n0 < 2000000 && n1 >= n0);
        if (t1 > t0 && n1 > n0) {
            nvtxcorr_prof_clock.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
            nvtxcorr_prof_clock.tsc = 1;
            nvtxcorr_prof_clock.origin = t1;
            return;
        }
    }
#endif
    nvtxcorr_prof_clock.origin = mono_ns();
}
