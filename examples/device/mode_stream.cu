// Seed 003, mode (b): communication enqueued between compute kernels on one stream. The host
// enqueues every iteration at once and waits at the end; the exchange runs in stream order,
// without SMs where the target is mapped (copy engine + cuStreamWriteValue64, and
// cuStreamWaitValue64 for the wait).
//
//   build/tools/hgasrun/hgasrun -n 2 build/examples/hgas-mode-stream
#include "common.cuh"

using namespace example;

__global__ void step1(unsigned long long *a, unsigned long long *sum) { add_one_and_sum(a, sum); }
__global__ void step3(unsigned long long *a, const unsigned long long *left_sum) { add_left(a, *left_sum); }

int main() {
    EX_HGAS(hgas_init());
    use_rank_gpu();
    unsigned long long *a, *sum, *inbox;
    uint64_t *sig;
    EX_CHECK(cudaMalloc(&a, sizeof *a * N));
    EX_CHECK(cudaMalloc(&sum, 64));
    EX_HGAS(hgas_malloc_kind(sizeof *inbox * (ITERS + 1), HGAS_KIND_CUDA, reinterpret_cast<void **>(&inbox)));
    EX_HGAS(hgas_malloc_kind(64, HGAS_KIND_CUDA, reinterpret_cast<void **>(&sig)));
    init(a);
    cudaStream_t s;
    EX_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int right = (hgas_rank_me() + 1) % hgas_rank_n();
    for (int k = 1; k <= ITERS; ++k) {
        EX_CHECK(cudaMemsetAsync(sum, 0, 8, s));
        step1<<<64, THREADS, 0, s>>>(a, sum);
        EX_CHECK(cudaGetLastError());
        EX_HGAS(hgas_put_signal_on_stream(&inbox[k], sum, 8, sig, k, HGAS_SIGNAL_SET, right, s));
        EX_HGAS(hgas_signal_wait_on_stream(sig, HGAS_CMP_GE, k, s));
        step3<<<64, THREADS, 0, s>>>(a, &inbox[k]);
        EX_CHECK(cudaGetLastError());
    }
    EX_HGAS(hgas_stream_sync(s));  // bounded by HGAS_TIMEOUT, unlike cudaStreamSynchronize
    const int rc = check("stream", a);
    EX_HGAS(hgas_barrier());
    EX_CHECK(cudaStreamDestroy(s));
    EX_HGAS(hgas_free(sig));
    EX_HGAS(hgas_free(inbox));
    EX_CHECK(cudaFree(sum));
    EX_CHECK(cudaFree(a));
    EX_HGAS(hgas_finalize());
    return rc;
}
