// A build without CUDA: --kind cuda says so.
#include "device.hpp"

namespace seismic {

std::unique_ptr<device> make_cuda_device(std::string *why) {
    *why = "this seismic was built without CUDA (configure with CUDA on, on a machine with nvcc)";
    return nullptr;
}

}  // namespace seismic
