// A build without CUDA: --kind cuda says so.
#include "device.hpp"

namespace episim {
std::unique_ptr<Device> make_cuda_device(std::string *why) {
    *why = "this episim was built without CUDA (configure with CUDA on for --kind cuda)";
    return nullptr;
}
}  // namespace episim
