// A second shared object with its own NVTX3 (the C++ API), as a library of the program would
// be: its NVTX instance loads the tool for itself. One step: a range in the domain "plugin"
// named by a registered string, around a launch.
#include <cuda.h>
#include <nvtx3/nvtx3.hpp>

struct plugin_domain {
    static constexpr char const *name{"plugin"};
};

extern "C" __attribute__((visibility("default"))) int ctx_plugin_step(CUfunction f, CUstream s,
                                                                      int *levels)
{
    static nvtx3::registered_string_in<plugin_domain> op{"plugin.op"};
    nvtx3::event_attributes attr{op};
    levels[0] = nvtxDomainRangePushEx(nvtx3::domain::get<plugin_domain>(), attr.get());
    int r = 0;
    {
        nvtx3::scoped_range_in<plugin_domain> inner{"plugin.inner"};
        r = (int)cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
    }
    levels[1] = nvtxDomainRangePop(nvtx3::domain::get<plugin_domain>());
    return r;
}
