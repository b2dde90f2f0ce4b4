// What the three control-mode examples share: the problem and its check.
//
// Every rank owns N numbers a[i] (a[i] = 1000 * rank + i at the start). One iteration k:
//   1. compute:  a[i] += 1 on every element, and S = the sum of the new a[];
//   2. exchange: S goes to the right neighbour (rank + 1 mod n), as the boundary of a stencil;
//   3. compute:  a[i] += S_left, the sum the left neighbour sent in this iteration.
// The examples differ only in who drives steps 1-3 (seed 003's modes); the host replays all
// ranks at the end and compares every element.
#pragma once
#include <hgas/hgas_device.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace example {

constexpr int N = 1 << 16, ITERS = 10, THREADS = 256;

#define EX_CHECK(call)                                                                          \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "rank %d: %s: %s\n", hgas_rank_me(), #call, cudaGetErrorString(e_)); \
            hgas_abort(1, "CUDA error");                                                        \
        }                                                                                       \
    } while (0)
#define EX_HGAS(call)                                                                           \
    do {                                                                                        \
        if ((call) != HGAS_OK) {                                                                \
            std::fprintf(stderr, "rank %d: %s: %s\n", hgas_rank_me(), #call, hgas_last_error()); \
            hgas_abort(1, "hgas error");                                                        \
        }                                                                                       \
    } while (0)

// Step 1 for the elements a grid-stride loop gives this thread; adds their sum to *sum.
__device__ inline void add_one_and_sum(unsigned long long *a, unsigned long long *sum) {
    unsigned long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) s += ++a[i];
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, s);
}
// Step 3.
__device__ inline void add_left(unsigned long long *a, unsigned long long left_sum) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) a[i] += left_sum;
}

// After hgas_init: this program's CUDA runtime on the rank's GPU, or a clear exit.
inline void use_rank_gpu() {
    if (!hgas_kind_available(HGAS_KIND_CUDA)) {
        std::fprintf(stderr, "rank %d: this example needs a GPU (kind cuda is unavailable here)\n", hgas_rank_me());
        hgas_abort(1, "no GPU");
    }
    EX_CHECK(cudaSetDevice(hgas_device_gpu()));
}

// Initial values into device memory `a`.
inline void init(unsigned long long *a) {
    std::vector<unsigned long long> h(N);
    for (int i = 0; i < N; ++i) h[i] = 1000ull * hgas_rank_me() + i;
    EX_CHECK(cudaMemcpy(a, h.data(), sizeof h[0] * N, cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA has landed, and the modes' own
    // non-blocking streams do not wait for the legacy stream it ran on: wait for it here.
    EX_CHECK(cudaStreamSynchronize(nullptr));
}

// Replays every rank on the host and compares this rank's a[]. Prints the result line the
// tests look for; returns the exit status.
inline int check(const char *mode, const unsigned long long *a) {
    const int n = hgas_rank_n(), me = hgas_rank_me();
    std::vector<std::vector<unsigned long long>> v(n, std::vector<unsigned long long>(N));
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < N; ++i) v[r][i] = 1000ull * r + i;
    for (int k = 1; k <= ITERS; ++k) {
        std::vector<unsigned long long> s(n, 0);
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < N; ++i) s[r] += ++v[r][i];
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < N; ++i) v[r][i] += s[(r + n - 1) % n];
    }
    std::vector<unsigned long long> got(N);
    EX_CHECK(cudaMemcpy(got.data(), a, sizeof got[0] * N, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i)
        if (got[i] != v[me][i]) {
            std::printf("mode %s: rank %d: WRONG a[%d] = %llu, expected %llu\n", mode, me, i, got[i], v[me][i]);
            return 1;
        }
    std::printf("mode %s: rank %d of %d verified %d values after %d iterations\n", mode, me, n, N, ITERS);
    return 0;
}

}  // namespace example
