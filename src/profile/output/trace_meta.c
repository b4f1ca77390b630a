/* The Kineto trace's top-level fields (trace.c writes the events): what PyTorch's profiler
 * (Kineto, libkineto/src/output_json.cpp) writes before and after "traceEvents", so that the
 * tools that read its traces (Holistic Trace Analysis, Perfetto, TraceLens) read ours.
 *
 * Facts about HTA (facebookresearch/HolisticTraceAnalysis) this relies on:
 * - hta/common/trace_file.py finds a file's rank with the regex '"rank":\s+(\d+)' on the
 *   first line that matches: "rank" is written with a space after the colon, in the head
 *   (the first line), before "local_rank" (whose key does not match: its quote is before
 *   "local_"). Without a match HTA takes rank 0 and warns.
 * - hta/common/trace_parser.py (parse_metadata_ijson) reads only the keys before
 *   "traceEvents" when it parses with ijson: distributedInfo is written there. Its plain-json
 *   parser reads every top-level key but "traceEvents" as metadata, so deviceProperties,
 *   which is known only once the GPU has run something, may follow the events.
 * - hta/common/trace.py adds baseTimeNanoseconds to "ts" (in microseconds) for Unix time. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include "core/config.h"
#include "core/cuda_calls.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "trace_format.h"
#include "trace_meta.h"
/* A decimal integer setting ("3"), or -1 when it is not one. */
static long env_number(const char *v)
{
    if (v == NULL || *v < '0' || *v > '9') return -1;
    char *end;
    long r = strtol(v, &end, 10);
    return *end || r < 0 || r > 1000000000 ? -1 : r;
}

/* The head: "{" and the fields before "traceEvents", up to its "[". Without launcher
 * variables the process is rank 0 of 1 (what HTA assumes anyway). `p` has 512 bytes. */
size_t nvtxcorr_prof_kineto_head(char *p)
{
    long rank = env_number(nvtxcorr_config.rank);
    long local = env_number(nvtxcorr_config.local_rank);
    long world = env_number(nvtxcorr_config.world_size);
    if (rank < 0) rank = 0;
    if (local < 0) local = rank;
    if (world <= rank) world = rank + 1;
    /* Kineto's baseTimeNanoseconds: the Unix time, in ns, of the events' ts 0 (the origin of
     * profile mode's clock). */
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    uint64_t now = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
    uint64_t since = prof_ticks_ns(prof_now() - nvtxcorr_prof_clock.origin);
    size_t n = 0;
    PUT("{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": ");
    n += nvtxcorr_fmt_u64(p + n, now > since ? now - since : 0);
    PUT(", \"distributedInfo\": {\"rank\": ");
    n += nvtxcorr_fmt_u64(p + n, (uint64_t)rank);
    PUT(", \"local_rank\": ");
    n += nvtxcorr_fmt_u64(p + n, (uint64_t)local);
    PUT(", \"world_size\": ");
    n += nvtxcorr_fmt_u64(p + n, (uint64_t)world);
    PUT("}, \"traceName\": \"nvtxcorr\", \"traceEvents\": [");
    return n;
}

/* deviceProperties, Kineto's field names (output_json.cpp, devicePropertiesJson), asked of
 * the driver the program loaded through the table of the calls nvtxcorr makes for itself
 * (driver.c), once, on the first GPU operation: the driver is initialised by then. Empty
 * when there is no driver to ask. */
static char props[4096];
static size_t props_len;
static int props_asked; /* under gpu.c's lock, where GPU operations are traced */

typedef CUresult (*count_fn)(int *);
typedef CUresult (*name_fn)(char *, int, CUdevice);
typedef CUresult (*mem_fn)(size_t *, CUdevice);
typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);

void nvtxcorr_prof_kineto_devices(void)
{
    if (props_asked) return;
    props_asked = 1;
    count_fn count = (count_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceGetCount);
    name_fn name = (name_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceGetName);
    mem_fn mem = (mem_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceTotalMem_v2);
    attr_fn attr = (attr_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceGetAttribute);
    int devices = 0;
    if (count && name && mem && attr && count(&devices) == CUDA_SUCCESS) {
        static const struct {
            const char *key;
            CUdevice_attribute a;
        } attrs[] = {
            {"computeMajor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
            {"computeMinor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
            {"maxThreadsPerBlock", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
            {"maxThreadsPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
            {"regsPerBlock", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
            {"regsPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
            {"warpSize", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
            {"sharedMemPerBlock", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
            {"sharedMemPerMultiprocessor",
             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
            {"numSms", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
            {"sharedMemPerBlockOptin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
        };
        char *p = props;
        size_t n = 0;
        PUT(",\n\"deviceProperties\": [");
        /* At most 8 devices fit (about 420 bytes each, names at most 64 bytes). */
        for (int d = 0; d < devices && d < 8; d++) {
            char text[64] = "";
            size_t bytes = 0;
            if (name(text, sizeof text, d) != CUDA_SUCCESS) text[0] = 0;
            text[sizeof text - 1] = 0;
            if (mem(&bytes, d) != CUDA_SUCCESS) bytes = 0;
            PUT("\n  {\"id\": ");
            n += nvtxcorr_fmt_u64(p + n, (uint64_t)d);
            PUT(", \"name\": \"");
            n += nvtxcorr_fmt_json(p + n, 400, text);
            PUT("\", \"totalGlobalMem\": ");
            n += nvtxcorr_fmt_u64(p + n, bytes);
            for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
                int v = 0;
                if (attr(&v, attrs[i].a, d) != CUDA_SUCCESS || v < 0) v = 0;
                PUT(", \"");
                memcpy(p + n, attrs[i].key, strlen(attrs[i].key)), n += strlen(attrs[i].key);
                PUT("\": ");
                n += nvtxcorr_fmt_u64(p + n, (uint64_t)v);
            }
            PUT("}");
            if (d + 1 < devices && d + 1 < 8) PUT(",");
        }
        PUT("\n]");
        props_len = n;
    }
}

/* What follows the events' "]" at a normal close: deviceProperties when known, then "}". */
size_t nvtxcorr_prof_kineto_tail(char *p, size_t size)
{
    size_t n = 0;
    if (props_len + 2 <= size) memcpy(p, props, props_len), n = props_len;
    p[n++] = '}';
    p[n++] = '\n';
    return n;
}
