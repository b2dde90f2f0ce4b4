// himeno built without CUDA: mode cpu only; the GPU modes say how to get them.
#include "modes.hpp"

namespace himeno {

bool mode_built(mode m, std::string *why) {
    if (m == mode::cpu) return true;
    *why = "this himeno was built without CUDA (configure with -DHGAS_CUDA=ON where nvcc exists)";
    return false;
}

bool gpu_visible(std::string *why) {
    *why = "this himeno was built without CUDA";
    return false;
}

int run_gpu(const options &, run_output &) { return 2; }  // not reached: mode_built refused

}  // namespace himeno
