/* The GPUs the process sees, for the summary's "gpus" (report --diff warns when two runs
 * differ in them): each device's name, asked once of the driver the program loaded, through
 * the table of the calls nvtxcorr makes for itself (driver.c), when profile mode makes its
 * first site (the first launch: the driver is initialised by then, and the program is inside
 * a launch call, where nvtxcorr already asks the driver for kernel names). Kept as the JSON
 * array the summary writes, so writing it (maybe in a signal handler) only copies. */
#include <cuda.h>
#include <stdatomic.h>
#include "core/cuda_calls.h"
#include "devices.h"
#include "out.h"
enum { DEVICES_MAX = 16 };
static char json[DEVICES_MAX * 80 + 8];
static _Atomic int asked, ready;

typedef CUresult (*count_fn)(int *);
typedef CUresult (*name_fn)(char *, int, CUdevice);

void nvtxcorr_prof_devices_ask(void)
{
    if (atomic_exchange(&asked, 1)) return;
    count_fn count = (count_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceGetCount);
    name_fn name = (name_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuDeviceGetName);
    int devices = 0;
    CUresult r = count && name ? count(&devices) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_ERROR_NOT_INITIALIZED) atomic_store(&asked, 0); /* the next site asks again */
    if (r != CUDA_SUCCESS || devices <= 0) return;
    size_t n = 0;
    json[n++] = '[';
    for (int d = 0; d < devices && d < DEVICES_MAX; d++) {
        char text[64] = "";
        if (name(text, sizeof text, d) != CUDA_SUCCESS) text[0] = 0;
        text[sizeof text - 1] = 0;
        if (d) json[n++] = ',', json[n++] = ' ';
        json[n++] = '"';
        n += nvtxcorr_fmt_json(json + n, 72, text);
        json[n++] = '"';
    }
    json[n++] = ']';
    json[n] = 0;
    atomic_store_explicit(&ready, 1, memory_order_release);
}

/* ["name", ...] one per device, or NULL when not known (no launch yet, no driver). */
const char *nvtxcorr_prof_devices_json(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire) ? json : NULL;
}
