// Seed 003, mode (a): communication inside the compute kernel. The host launches one kernel
// per iteration; inside it the last block to finish its part (hgas::device::last_block) sends
// the boundary, and every block waits for the left neighbour's before the second step
// (grid_wait_until). Blocks waiting for a block of the same kernel need the whole grid
// resident: hgas::device::check_resident guards the launch.
//
//   build/tools/hgasrun/hgasrun -n 2 build/examples/hgas-mode-kernel
#include "common.cuh"

namespace hd = hgas::device;
using namespace example;

__global__ void iteration(hd::ctx c, unsigned long long *a, unsigned long long *sum, unsigned int *count,
                          unsigned long long *inbox, uint64_t *sig, int k) {
    add_one_and_sum(a, sum);
    if (hd::last_block(count)) {
        // Every block has added its part: *sum is this iteration's S. Send it, then clear it
        // for the next launch (put returns once *sum has been read).
        hd::put_signal<hd::scope::block>(c, &inbox[k], sum, 8, sig, k, HGAS_SIGNAL_SET, (c.me + 1) % c.n);
        if (threadIdx.x == 0) *sum = 0;
    }
    hd::grid_wait_until(c, sig, HGAS_CMP_GE, static_cast<uint64_t>(k));
    add_left(a, *reinterpret_cast<volatile unsigned long long *>(&inbox[k]));
}

int main() {
    EX_HGAS(hgas_init());
    use_rank_gpu();
    hgas_device_ctx_t c;
    EX_HGAS(hgas_device_ctx_get(&c));
    unsigned long long *a, *sum, *inbox;
    uint64_t *sig;
    unsigned int *count;
    EX_CHECK(cudaMalloc(&a, sizeof *a * N));
    EX_CHECK(cudaMalloc(&sum, 64));
    EX_CHECK(cudaMalloc(&count, 64));
    EX_CHECK(cudaMemset(sum, 0, 64));
    EX_CHECK(cudaMemset(count, 0, 64));
    EX_HGAS(hgas_malloc_kind(sizeof *inbox * (ITERS + 1), HGAS_KIND_CUDA, reinterpret_cast<void **>(&inbox)));
    EX_HGAS(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&sig)));
    init(a);
    const int blocks = 16;
    EX_HGAS(hd::check_resident(iteration, blocks, THREADS, 0, 1));  // one block's room for the proxy's kernels
    cudaStream_t s;
    EX_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int k = 1; k <= ITERS; ++k) {
        iteration<<<blocks, THREADS, 0, s>>>(c, a, sum, count, inbox, sig, k);
        EX_CHECK(cudaGetLastError());
    }
    EX_HGAS(hgas_stream_sync(s));
    const int rc = check("kernel", a);
    EX_HGAS(hgas_barrier());
    EX_CHECK(cudaStreamDestroy(s));
    EX_HGAS(hgas_free(sig));
    EX_HGAS(hgas_free(inbox));
    EX_CHECK(cudaFree(count));
    EX_CHECK(cudaFree(sum));
    EX_CHECK(cudaFree(a));
    EX_HGAS(hgas_finalize());
    return rc;
}
