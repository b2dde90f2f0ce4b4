// A build without CUDA: --kind cuda says so.
#include "engine.hpp"

namespace matmul {

std::unique_ptr<engine> make_cuda_engine(std::string *why) {
    *why = "--kind cuda: this matmul was built without CUDA (configure with CUDA on, on a machine with nvcc)";
    return nullptr;
}

}  // namespace matmul
