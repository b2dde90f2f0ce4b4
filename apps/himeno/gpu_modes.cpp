// The one place that maps a GPU mode to its driver; a new mode adds a case here and a file.
#include "gpu_mode.hpp"

namespace himeno::gpu {

bool gpu_mode_built(mode m, std::string *why) {
    switch (m) {
        case mode::hybrid: return true;
        case mode::stream:  // communication kernels in stream order (seed 003, Fig. 6)
        case mode::kernel:  // in-kernel synchronization, the last block communicates (Fig. 5)
        case mode::device:  // a control kernel launches the sweeps (dynamic parallelism, Fig. 7)
            *why = "it needs hgas's device-side API (puts and signals issued by the GPU), which is not merged yet";
            return false;
        case mode::cpu: break;
    }
    *why = "not a GPU mode";
    return false;
}

std::unique_ptr<driver> make_driver(mode m, context &c) {
    switch (m) {
        case mode::hybrid: return make_hybrid(c);
        default: return nullptr;  // refused by gpu_mode_built before hgas_init
    }
}

}  // namespace himeno::gpu
