// A build without CUDA: kind cuda is refused with the reason.
#include "backend.hpp"

namespace mg {

std::unique_ptr<backend> make_cuda_backend(std::string *why) {
    *why = "this nas-mg was built without CUDA (configure with CUDA on)";
    return nullptr;
}

}  // namespace mg
