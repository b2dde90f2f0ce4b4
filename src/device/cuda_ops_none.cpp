// A build without CUDA: the device layer still has its proxy (host producers can use it), but
// nothing that needs a GPU. state.cpp checks built() before any of these is reached.
#include <cstdlib>

#include "device/cuda_ops.hpp"

namespace hgas::device::cu {

namespace {
constexpr int no_cuda = -2;
}

bool built() { return false; }
const char *error_text(int) { return "hgas was built without CUDA"; }
int set_device(int) { return no_cuda; }
int preload() { return no_cuda; }
int dev_alloc(void **p, size_t) {
    *p = nullptr;
    return no_cuda;
}
void dev_free(void *) {}
int copy_to_device(void *, const void *, size_t) { return no_cuda; }
void *host_device_pointer(void *) { return nullptr; }
bool native_host_atomics(int) { return false; }
bool memops_available(int, const char **why) {
    *why = "hgas was built without CUDA";
    return false;
}
int memcpy_async(void *, const void *, size_t, cudaStream_t) { return no_cuda; }
int write64(cudaStream_t, void *, uint64_t) { return no_cuda; }
int wait64(cudaStream_t, const void *, uint64_t, bool) { return no_cuda; }
int launch_store64(void *, uint64_t, cudaStream_t) { return no_cuda; }
int launch_wait_geq64(const void *, uint64_t, uint64_t, void *, uint64_t, cudaStream_t) { return no_cuda; }
int stream_query(cudaStream_t) { return no_cuda; }
int event_create(void **ev) {
    *ev = nullptr;
    return no_cuda;
}
void event_destroy(void *) {}
int event_record(void *, void *) { return no_cuda; }
int event_query(void *) { return no_cuda; }
int event_elapsed_ms(float *, void *, void *) { return no_cuda; }
int event_calibrate(void *, uint64_t *) { return no_cuda; }
int launch_put(const hgas_device_ctx_t &, void *, const void *, size_t, int, cudaStream_t) { return no_cuda; }
int launch_put_signal(const hgas_device_ctx_t &, void *, const void *, size_t, uint64_t *, uint64_t, hgas_signal_op_t,
                      int, cudaStream_t) {
    return no_cuda;
}
int launch_wait(const hgas_device_ctx_t &, const uint64_t *, hgas_cmp_t, uint64_t, cudaStream_t) { return no_cuda; }
int launch_barrier(const hgas_device_ctx_t &, cudaStream_t) { return no_cuda; }
int launch_quiet(const hgas_device_ctx_t &, cudaStream_t) { return no_cuda; }

}  // namespace hgas::device::cu
