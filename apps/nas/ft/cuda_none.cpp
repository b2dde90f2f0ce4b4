// nas-ft in a build without CUDA: --kind cuda says so.
#include "backend.hpp"

namespace ft {

std::unique_ptr<backend> make_cuda_backend(const layout &, const arrays &, std::string *why) {
    *why = "this nas-ft was built without CUDA (configure hgas with CUDA to get it)";
    return nullptr;
}

bool cuda_memory_total(size_t *) { return false; }

std::string cuda_pci_bus_id(bool *counts) {
    *counts = false;
    return "";
}

}  // namespace ft
