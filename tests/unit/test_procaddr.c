/* The cuGetProcAddress version choice (nvtxcorr_wrap_driver, src/hooks/procaddr.c): for a pointer
 * the driver returned, the hook whose ABI the driver chose by name, cudaVersion and flags,
 * from the rows of hooks.def. The pointers here are functions of this program, which no
 * exported symbol names, so the choice is made from the table alone. */
#include "core/cuda_abi.h"
#include "core/resolve.h"
#include "hooks/hooks.h"
#include "test_core.h"

static void real_a(void) {}
static void real_b(void) {}

enum {
    LEGACY = CU_GET_PROC_ADDRESS_LEGACY_STREAM,
    PTSZ = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
};

static void clear_slots(void)
{
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++)
        atomic_store(&nvtxcorr_real_fn[i], NULL);
}

/* Wrapping `fn` for (name, version, flags) gives slot `want`'s hook and stores fn there; want
 * < 0: fn itself, and no slot changes. */
static void expect(const char *name, int version, unsigned long long flags, int want, int line)
{
    clear_slots();
    void *fn = (void *)real_a;
    void *got = nvtxcorr_wrap_driver(name, version, flags, fn);
    void *hook = want >= 0 ? nvtxcorr_hooks[want].hook : fn;
    if (got != hook) {
        int slot = nvtxcorr_slot_of_hook(got);
        fprintf(stderr, "test_procaddr.c:%d: %s at %d, flags %llu: got %s, expected %s\n", line,
                name, version, flags, slot >= 0 ? nvtxcorr_hooks[slot].symbol : "unwrapped",
                want >= 0 ? nvtxcorr_hooks[want].symbol : "unwrapped");
        test_failures++;
    }
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++)
        if (atomic_load(&nvtxcorr_real_fn[i]) != (i == want ? fn : NULL)) {
            fprintf(stderr, "test_procaddr.c:%d: slot %s holds %p\n", line,
                    nvtxcorr_hooks[i].symbol, atomic_load(&nvtxcorr_real_fn[i]));
            test_failures++;
        }
}

#define EXPECT(name, version, flags, want) expect(name, version, flags, want, __LINE__)

void test_procaddr(void)
{
    /* The newest ABI at or below the version asked for. */
    EXPECT("cuGraphInstantiate", 10000, LEGACY, NVTXCORR_SLOT_cuGraphInstantiate);
    EXPECT("cuGraphInstantiate", 10999, LEGACY, NVTXCORR_SLOT_cuGraphInstantiate);
    EXPECT("cuGraphInstantiate", 11000, LEGACY, NVTXCORR_SLOT_cuGraphInstantiate_v2);
    EXPECT("cuGraphInstantiate", 13000, LEGACY, NVTXCORR_SLOT_cuGraphInstantiate_v2);
    EXPECT("cuGraphExecUpdate", 11999, LEGACY, NVTXCORR_SLOT_cuGraphExecUpdate);
    EXPECT("cuGraphExecUpdate", 12000, LEGACY, NVTXCORR_SLOT_cuGraphExecUpdate_v2);
    /* Below the first ABI of a name: not ours to guess. */
    EXPECT("cuGraphInstantiate", 9020, LEGACY, -1);
    EXPECT("cuLaunchKernel", 3020, LEGACY, -1);
    /* The stream variant by flag; a name without a per-thread variant has only the one. */
    EXPECT("cuLaunchKernel", 12000, LEGACY, NVTXCORR_SLOT_cuLaunchKernel);
    EXPECT("cuLaunchKernel", 12000, PTSZ, NVTXCORR_SLOT_cuLaunchKernel_ptsz);
    EXPECT("cuLaunchKernel", 6050, PTSZ, -1); /* _ptsz exists from 7000 */
    EXPECT("cuStreamBeginCapture", 10000, PTSZ, NVTXCORR_SLOT_cuStreamBeginCapture_ptsz);
    EXPECT("cuGraphInstantiate", 12000, PTSZ, NVTXCORR_SLOT_cuGraphInstantiate_v2);
    /* An unknown ABI version (cudaGetDriverEntryPoint), an unhooked name, no pointer. */
    EXPECT("cuLaunchKernel", -1, LEGACY, -1);
    EXPECT("cuMemAlloc", 12000, LEGACY, -1);
    clear_slots();
    CHECK(nvtxcorr_wrap_driver("cuLaunchKernel", 12000, LEGACY, NULL) == NULL);

    /* Our own hook comes back as it is, never stored as a real function. */
    void *hook = nvtxcorr_hooks[NVTXCORR_SLOT_cuLaunchKernel].hook;
    CHECK(nvtxcorr_wrap_driver("cuLaunchKernel", 12000, LEGACY, hook) == hook);
    CHECK(atomic_load(&nvtxcorr_real_fn[NVTXCORR_SLOT_cuLaunchKernel]) == NULL);

    /* A pointer a slot already holds is that slot's ABI, whatever was asked. */
    clear_slots();
    atomic_store(&nvtxcorr_real_fn[NVTXCORR_SLOT_cuGraphInstantiate], (void *)real_a);
    CHECK(nvtxcorr_wrap_driver("cuGraphInstantiate", 13000, LEGACY, (void *)real_a) ==
          nvtxcorr_hooks[NVTXCORR_SLOT_cuGraphInstantiate].hook);
    /* The first real function of a slot wins: a second one passes through unwrapped. */
    CHECK(nvtxcorr_wrap_driver("cuGraphInstantiate", 10000, LEGACY, (void *)real_b) ==
          (void *)real_b);
    CHECK(atomic_load(&nvtxcorr_real_fn[NVTXCORR_SLOT_cuGraphInstantiate]) == (void *)real_a);
    clear_slots();
}
