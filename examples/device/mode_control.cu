// Seed 003, mode (c): a device control loop. The host launches one persistent kernel and waits;
// the kernel runs every iteration itself -- compute, grid barrier, exchange, grid barrier --
// with no CPU involvement until the end. The cooperative launch guarantees that all blocks are
// resident (it fails rather than deadlock); grid_sync has a deadline besides.
//
//   build/tools/hgasrun/hgasrun -n 2 build/examples/hgas-mode-control
#include "common.cuh"

namespace hd = hgas::device;
using namespace example;

__global__ void control(hd::ctx c, unsigned long long *a, unsigned long long *sum, hd::grid_barrier *gb,
                        unsigned long long *inbox, uint64_t *sig) {
    for (int k = 1; k <= ITERS; ++k) {
        add_one_and_sum(a, sum);
        if (!hd::grid_sync(c, gb)) return;  // past HGAS_TIMEOUT: recorded, the host reports it
        if (blockIdx.x == 0) {
            hd::put_signal<hd::scope::block>(c, &inbox[k], sum, 8, sig, k, HGAS_SIGNAL_SET, (c.me + 1) % c.n);
            hd::signal_wait_until<hd::scope::block>(c, sig, HGAS_CMP_GE, static_cast<uint64_t>(k));
            if (threadIdx.x == 0) *sum = 0;  // sent (put returned): ready for the next iteration
        }
        if (!hd::grid_sync(c, gb)) return;  // block 0 has seen the signal: inbox[k] is there
        add_left(a, *reinterpret_cast<volatile unsigned long long *>(&inbox[k]));
    }
}

int main() {
    EX_HGAS(hgas_init());
    use_rank_gpu();
    const int dev = hgas_device_gpu();
    hgas_device_ctx_t c;
    EX_HGAS(hgas_device_ctx_get(&c));
    unsigned long long *a, *sum, *inbox;
    uint64_t *sig;
    hd::grid_barrier *gb;
    EX_CHECK(cudaMalloc(&a, sizeof *a * N));
    EX_CHECK(cudaMalloc(&sum, 64));
    EX_CHECK(cudaMalloc(&gb, sizeof *gb));
    EX_CHECK(cudaMemset(sum, 0, 64));
    EX_CHECK(cudaMemset(gb, 0, sizeof *gb));
    EX_HGAS(hgas_malloc_kind(sizeof *inbox * (ITERS + 1), HGAS_KIND_CUDA, reinterpret_cast<void **>(&inbox)));
    EX_HGAS(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&sig)));
    init(a);
    // As many blocks as run at once, less one block's room for the proxy's kernels.
    int sms = 0, per_sm = 0;
    EX_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    EX_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, control, THREADS, 0));
    const int blocks = sms * per_sm - 1 < 32 ? sms * per_sm - 1 : 32;
    EX_HGAS(hd::check_resident(control, blocks, THREADS, 0, 1));
    cudaStream_t s;
    EX_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *args[] = {&c, &a, &sum, &gb, &inbox, &sig};
    EX_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void *>(control), blocks, THREADS, args, 0, s));
    EX_HGAS(hgas_stream_sync(s));
    const int rc = check("control", a);
    EX_HGAS(hgas_barrier());
    EX_CHECK(cudaStreamDestroy(s));
    EX_HGAS(hgas_free(sig));
    EX_HGAS(hgas_free(inbox));
    EX_CHECK(cudaFree(gb));
    EX_CHECK(cudaFree(sum));
    EX_CHECK(cudaFree(a));
    EX_HGAS(hgas_finalize());
    return rc;
}
