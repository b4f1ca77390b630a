/* Windows as counts (windows.h): which window launches are in, and while a window's summary is
 * written, the cuts it is the difference of. Set by lifecycle/window.c. */
#include <stdatomic.h>
#include "core/config.h"
#include "core/window_spec.h"
#include "windows.h"
_Atomic unsigned nvtxcorr_prof_windows_opened;
const prof_window_t *nvtxcorr_prof_window_now;
const prof_snap_t *nvtxcorr_prof_snap_cur, *nvtxcorr_prof_snap_base;
uint64_t nvtxcorr_prof_window_own_base;

int nvtxcorr_prof_windows(void)
{
    return nvtxcorr_config.window_kind != NVTXCORR_WINDOW_NONE && nvtxcorr_config.profile;
}
