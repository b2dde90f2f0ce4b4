// The one place that maps a GPU mode to its driver; a new mode adds a case here and a file.
#include "gpu_mode.hpp"

namespace himeno::gpu {

bool gpu_mode_built(mode m, std::string *why) {
    switch (m) {
        case mode::hybrid: return true;  // gpu_hybrid.cpp: the CPU drives (seed 003, Fig. 3)
        case mode::stream:               // gpu_device_modes.cu: stream-ordered communication (Fig. 6)
        case mode::kernel:               // in-kernel: the last block sends, blocks wait (Fig. 5)
        case mode::device:               // a persistent kernel runs every sweep (Fig. 7)
#ifdef HIMENO_EMULATE
            // tests/emu has no hgas device API (GPU-issued puts, stream memory operations).
            *why = "himeno-emu (the CPU emulator) has no hgas device API; run the real himeno on a GPU";
            return false;
#else
            return true;
#endif
        case mode::cpu: break;
    }
    *why = "not a GPU mode";
    return false;
}

std::unique_ptr<driver> make_driver(mode m, context &c) {
    switch (m) {
        case mode::hybrid: return make_hybrid(c);
#ifndef HIMENO_EMULATE
        case mode::stream: return make_stream(c);
        case mode::kernel: return make_kernel(c);
        case mode::device: return make_device(c);
#endif
        default: return nullptr;  // refused by gpu_mode_built before hgas_init
    }
}

}  // namespace himeno::gpu
