/* OTLP/HTTP metrics push (otlp.h). JSON rather than protobuf: the collector's OTLP/HTTP
 * receiver takes both (Content-Type application/json), and JSON needs no generated code and
 * no library in the host process. Cumulative temporality: the counters are the run's totals
 * (metrics.c), as in the Prometheus textfile, so a lost push loses nothing but its moment,
 * and the next one carries everything; the start time of every point is the process's.
 *
 * The HTTP client is the least that works: `http://host[:port][/path]` (default port 4318,
 * path /v1/metrics), one connection per push, `Connection: close`, the status line read and
 * the rest ignored. The host is resolved once (getaddrinfo, on this helper thread, never in a
 * hook or a handler). Every step waits with poll() in slices of 20 ms against a deadline of
 * 2 s for the whole push, one retry inside it after a refused connection or a 5xx, and gives
 * up at once when the exit asks (otlp_abort): the program never waits for a collector that is
 * down, slow or wrong, and a failed push is said once. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/config.h"
#include "metrics.h"
#include "otlp.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/stats.h"
enum { BUDGET_MS = 2000, SLICE_MS = 20 };
static _Atomic int aborted, failed_said;
static char body[262144]; /* 100 labels x 5 series of ~300 bytes, and the head */
static size_t blen;
static int overflow;
static struct sockaddr_storage addr;
static socklen_t addr_len;
static char host[256], path[512], start[24];

void nvtxcorr_prof_otlp_abort(void)
{
    atomic_store(&aborted, 1);
}

static void put(const char *s)
{
    size_t n = strlen(s);
    if (blen + n >= sizeof body) {
        overflow = 1;
        return;
    }
    memcpy(body + blen, s, n);
    blen += n;
}
static void put_str(const char *s) /* a JSON string */
{
    char buf[1024];
    put("\"");
    buf[nvtxcorr_fmt_json(buf, sizeof buf - 1, s ? s : "")] = 0;
    put(buf);
    put("\"");
}
static void put_u64(uint64_t v)
{
    char buf[24];
    buf[nvtxcorr_fmt_u64(buf, v)] = 0;
    put(buf);
}
static void attr(const char *key, const char *value, int comma)
{
    put(comma ? ",{\"key\":" : "{\"key\":");
    put_str(key);
    put(",\"value\":{\"stringValue\":");
    put_str(value);
    put("}}");
}

/* One metric: a monotonic cumulative sum of every label with something counted in field. */
static void metric(const char *name, const char *unit, size_t field, const char *view,
                   const char *key, int seconds, uint64_t now_ns, int *first_metric)
{
    const prof_metrics_t *m = nvtxcorr_prof_metrics_last();
    put(*first_metric ? "{\"name\":" : ",{\"name\":");
    *first_metric = 0;
    put_str(name);
    put(",\"unit\":");
    put_str(unit);
    put(",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,\"dataPoints\":[");
    int first = 1;
    for (uint32_t k = 0, n = key ? m->nlabels : 1; k < n; k++) {
        uint64_t v = key ? *(const uint64_t *)((const char *)&m->series[k] + field) : field;
        const prof_label_t *l =
            key ? atomic_load_explicit(&nvtxcorr_prof_labels[k], memory_order_acquire) : NULL;
        if (key && (v == 0 || l == NULL)) continue;
        put(first ? "{\"attributes\":[" : ",{\"attributes\":[");
        first = 0;
        if (key) {
            attr(key, l->text, 0);
            attr("category", l->category, 1);
            if (view) attr("view", view, 1);
        }
        put("],\"startTimeUnixNano\":\"");
        put(start);
        put("\",\"timeUnixNano\":\"");
        put_u64(now_ns);
        put(seconds ? "\",\"asDouble\":" : "\",\"asInt\":\"");
        if (seconds) {
            char buf[40];
            buf[nvtxcorr_prom_seconds(buf, v)] = 0;
            put(buf);
            put("}");
        } else {
            put_u64(v);
            put("\"}");
        }
    }
    put("]}}");
}

static void make_body(void)
{
    const prof_metrics_t *m = nvtxcorr_prof_metrics_last();
    uint64_t now_ns = nvtxcorr_prof_realtime_ns();
    char pid[24];
    pid[nvtxcorr_fmt_u64(pid, (uint64_t)nvtxcorr_prof_process.pid)] = 0;
    start[nvtxcorr_fmt_u64(start, nvtxcorr_prof_process.start_ns)] = 0;
    blen = 0, overflow = 0;
    put("{\"resourceMetrics\":[{\"resource\":{\"attributes\":[");
    attr("service.name", "nvtxcorr", 0);
    attr("process.pid", pid, 1);
    attr("process.executable.name", m->command, 1);
    attr("nvtxcorr.rank", nvtxcorr_config.rank, 1);
    put("]},\"scopeMetrics\":[{\"scope\":{\"name\":\"nvtxcorr\"},\"metrics\":[");
    int first = 1;
    if (m->gpu) {
        metric("nvtxcorr.gpu.time", "s", offsetof(prof_metrics_series_t, gpu_launch_ns), "launch",
               "label", 1, now_ns, &first);
        metric("nvtxcorr.gpu.time", "s", offsetof(prof_metrics_series_t, gpu_kernel_ns), "kernel",
               "label", 1, now_ns, &first);
    }
    metric("nvtxcorr.launches", "{launch}", offsetof(prof_metrics_series_t, launches), NULL,
           "label", 0, now_ns, &first);
    metric("nvtxcorr.cpu.time", "s", offsetof(prof_metrics_series_t, cpu_ns), NULL, "label", 1,
           now_ns, &first);
    if (m->gpu) {
        metric("nvtxcorr.graph.replays", "{replay}", offsetof(prof_metrics_series_t, replays), NULL,
               "graph", 0, now_ns, &first);
        metric("nvtxcorr.gpu.dropped_records", "{record}", m->dropped, NULL, NULL, 0, now_ns,
               &first);
        metric("nvtxcorr.gpu.uncorrelated", "{operation}", m->uncorrelated, NULL, NULL, 0, now_ns,
               &first);
    }
    put("]}]}]}");
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Until fd is ready for events, in slices (the exit may abort); 0, or -1 past the deadline. */
static int wait_for(int fd, short events, uint64_t deadline)
{
    for (;;) {
        if (atomic_load(&aborted)) return -1;
        uint64_t t = now_ms();
        if (t >= deadline) return -1;
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, deadline - t < SLICE_MS ? (int)(deadline - t) : SLICE_MS);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* "http://host[:port][/path]" into host, port and path; 0, or -1. */
static int parse(const char *url, char *port, size_t port_size)
{
    if (strncmp(url, "http://", 7) != 0) return -1;
    const char *h = url + 7, *slash = strchr(h, '/'), *end = slash ? slash : h + strlen(h);
    const char *colon = memchr(h, ':', (size_t)(end - h));
    size_t hl = (size_t)((colon ? colon : end) - h);
    if (hl == 0 || hl >= sizeof host) return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    size_t pl = colon ? (size_t)(end - colon - 1) : 4;
    if (pl == 0 || pl >= port_size) return -1;
    memcpy(port, colon ? colon + 1 : "4318", pl);
    port[pl] = 0;
    const char *p = slash && slash[1] ? slash : "/v1/metrics";
    if (strlen(p) >= sizeof path) return -1;
    strcpy(path, p);
    return 0;
}

/* The endpoint's address, resolved once. */
static const char *resolve(void)
{
    if (addr_len) return NULL;
    char port[16];
    if (parse(nvtxcorr_config.otlp_endpoint, port, sizeof port) != 0)
        return "not http://host[:port][/path]";
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0 || res == NULL) return "host not found";
    memcpy(&addr, res->ai_addr, res->ai_addrlen);
    addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return NULL;
}

/* One POST: NULL, or why it failed; *retry when another try may do better. */
static const char *post(const char *head, size_t head_len, uint64_t deadline, int *retry)
{
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    *retry = 0;
    if (fd < 0) return "no socket";
    const char *why = NULL;
    int err = 0;
    socklen_t el = sizeof err;
    if (connect(fd, (struct sockaddr *)&addr, addr_len) != 0 &&
        (errno != EINPROGRESS || wait_for(fd, POLLOUT, deadline) != 0 ||
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0)) {
        *retry = err == ECONNREFUSED || errno == ECONNREFUSED;
        why = *retry ? "connection refused" : "no connection within the time allowed";
    }
    const char *parts[2] = {head, body};
    size_t lens[2] = {head_len, blen};
    for (int i = 0; i < 2 && !why; i++)
        for (size_t sent = 0; sent < lens[i] && !why;) {
            ssize_t n = send(fd, parts[i] + sent, lens[i] - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR)
                why = "the connection broke while sending";
            else if (wait_for(fd, POLLOUT, deadline) != 0)
                why = "the collector did not take the request in time";
        }
    char status[16];
    size_t got = 0;
    while (!why && got < 12) {
        ssize_t n = recv(fd, status + got, 12 - got, 0);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            why = "the connection closed without an answer";
        else if (wait_for(fd, POLLIN, deadline) != 0)
            why = "no answer within the time allowed";
    }
    close(fd);
    if (why) return why;
    if (memcmp(status, "HTTP/1.", 7) != 0) return "an answer that is not HTTP";
    if (status[9] == '2') return NULL;
    *retry = status[9] == '5';
    return *retry ? "the collector answered 5xx" : "the collector refused the request";
}

void nvtxcorr_prof_otlp_push(void)
{
    if (!nvtxcorr_config.otlp_endpoint || atomic_load(&aborted)) return;
    uint64_t deadline = now_ms() + BUDGET_MS;
    const char *why = resolve();
    if (!why) {
        make_body();
        if (overflow) why = "the metrics do not fit the request's buffer";
    }
    char head[1024], len[24];
    len[nvtxcorr_fmt_u64(len, blen)] = 0;
    const char *hp[] = {"POST ",
                        path,
                        " HTTP/1.1\r\nHost: ",
                        host,
                        "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                        "Content-Length: ",
                        len,
                        "\r\n\r\n"};
    size_t hl = nvtxcorr_prof_join(head, sizeof head, 0, hp, sizeof hp / sizeof *hp);
    for (int attempt = 0; !why && attempt < 2; attempt++) {
        int retry;
        why = post(head, hl, deadline, &retry);
        if (!why || !retry || attempt == 1 || atomic_load(&aborted)) break;
        struct timespec ts = {0, 100 * 1000 * 1000}; /* the retry, a moment later */
        nanosleep(&ts, NULL);
        why = NULL;
    }
    if (why && !atomic_load(&aborted) && !atomic_exchange(&failed_said, 1))
        nvtxcorr_prof_say("warn", "NVTXCORR_OTLP_ENDPOINT=", nvtxcorr_config.otlp_endpoint, ": ",
                          why, "; metrics not pushed (said once; each window tries again)",
                          (char *)NULL);
}
