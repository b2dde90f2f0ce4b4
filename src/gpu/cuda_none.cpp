// Build without CUDA: the cuda kind is never available.
#include "gpu/gpu.hpp"

namespace hgas::gpu {

result<std::unique_ptr<device>> open_cuda(const open_args &) {
    return fail(status::unsupported, "kind cuda is not available: hgas was built without CUDA (configure with "
                "nvcc on PATH, or -DHGAS_CUDA=ON)");
}
bool cuda_built() { return false; }
std::vector<std::string> cuda_machine() { return {"no CUDA in this build"}; }
void warn_if_lazy_loading() {}
std::vector<std::string> cuda_ipc_plan(const std::string &setting) {
    return {"HGAS_CUDA_IPC=" + setting + ", no CUDA in this build"};
}

}  // namespace hgas::gpu
