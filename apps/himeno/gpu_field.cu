// The GPU sweep of Himeno (gpu_field.hpp says what it guarantees).
//
// Memory-bound: per interior point 12 coefficient loads and one store, p read about once. The
// kernel walks along i (2.5-D blocking): a block owns a TK x TJ tile of (k, j) and a chunk of up
// to CHUNK planes; p of planes l-1, l, l+1 with a one-point halo in j and k sits in shared memory
// (4 rotating buffers, so one barrier per plane suffices), filled one plane ahead from registers
// so that no barrier waits for a fresh load. Warps run along k: every load and store of a warp
// is 128 contiguous, aligned bytes (tiles start at k = 0; the threads on the boundary idle).
#include "gpu_check.hpp"
#include "gpu_field.hpp"
#include "gpu_stencil.cuh"

#include <hgas/hgas.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common.hpp"

// tests/emu runs this file on the CPU (HIMENO_EMULATE): its cuda_runtime.h supplies the
// builtins and launches kernels there.
#ifdef HIMENO_EMULATE
#define HIMENO_LAUNCH(kernel, grid, block, stream, ...) ::emu::launch(stream, grid, block, #kernel, kernel, __VA_ARGS__)
#else
#define HIMENO_LAUNCH(kernel, grid, block, stream, ...) kernel<<<grid, block, 0, stream>>>(__VA_ARGS__)
#endif

namespace himeno::gpu {
namespace {

using namespace stencil;

__global__ void __launch_bounds__(THREADS) jacobi(const sweep_args a) { sweep_tile(a, blockIdx.x, blockIdx.y, blockIdx.z); }

// Block b: gosa of plane first+b from its tiles (sum_plane), into out[b].
__global__ void __launch_bounds__(SUM_THREADS) sum_planes(const double *partial, int tiles, int first, double *out) {
    sum_plane(partial, tiles, first + blockIdx.x, out + blockIdx.x);
}

__global__ void fill(float *x, long long n, float v) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = v;
}

// p of local planes 0..planes-1: float(i*i) / float((mi-1)^2) with i = i0 + l, as the original
// (int products converted to float, then an IEEE division).
__global__ void fill_p(float *p, int planes, long long plane, int i0, int mi) {
    const long long n = planes * plane;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x < n; x += (long long)gridDim.x * blockDim.x) {
        const int i = i0 + int(x / plane);
        p[x] = __fdiv_rn(float(i * i), float((mi - 1) * (mi - 1)));
    }
}

constexpr int FILL_THREADS = 256;
// Grid of a grid-stride fill of n points: enough blocks to fill the GPU, no more than needed.
int fill_blocks(long long n) { return int(std::min<long long>(1024, (n + FILL_THREADS - 1) / FILL_THREADS)); }

}  // namespace

field::field(const slab_dims &d)
    : d_(d),
      plane_(size_t(d.mj) * d.mk),
      stride_((size_t(d.n + 2) * plane_ + 127) / 128 * 128),
      tiles_k_((d.mk + TK - 1) / TK),
      tiles_j_((d.mj + TJ - 1) / TJ) {
    const size_t bytes = 14 * stride_ * sizeof(float);
    cudaError_t e = cudaMalloc(&mem_, bytes);
    if (e != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        cudaGetLastError();
        cudaMemGetInfo(&free_b, &total_b);
        die("himeno: rank " + std::to_string(hgas_rank_me()) + ": cannot allocate " + std::to_string(bytes >> 20) +
            " MiB on the GPU for 14 arrays of " + std::to_string(d.n + 2) + " planes (" + cudaGetErrorString(e) +
            "; " + std::to_string(free_b >> 20) + " MiB free): use more ranks or a smaller size");
    }
    p_ = mem_ + 12 * stride_;
    w_ = mem_ + 13 * stride_;
    HIMENO_CK(cudaMalloc(&partial_, size_t(d.n + 2) * tiles_k_ * tiles_j_ * sizeof(double)));
}

field::~field() {
    // No checks here: a destructor must not end the job; errors surfaced earlier.
    cudaFree(partial_);
    cudaFree(mem_);
}

void field::init(cudaStream_t s) {
    const long long n = (long long)(d_.n + 2) * plane_;
    const float value[12] = {1, 1, 1, 1.0f / 6.0f, 0, 0, 0, 1, 1, 1, 1, 0};  // a0..a3 b0..b2 c0..c2 bnd wrk1
    for (int q = 0; q < 12; ++q) {
        HIMENO_LAUNCH(fill, fill_blocks(n), FILL_THREADS, s, mem_ + q * stride_, n, value[q]);
        HIMENO_CK_LAUNCH(fill);
    }
    for (float *x : {p_, w_}) {
        HIMENO_LAUNCH(fill_p, fill_blocks(n), FILL_THREADS, s, x, d_.n + 2, (long long)plane_, d_.lo - 1, d_.mi);
        HIMENO_CK_LAUNCH(fill_p);
    }
    HIMENO_CK(cudaMemsetAsync(partial_, 0, size_t(d_.n + 2) * tiles_k_ * tiles_j_ * sizeof(double), s));
}

sweep_args field::args(int lo, int hi, int step, int chunk) const {
    sweep_args a;
    a.a0 = mem_ + 0 * stride_, a.a1 = mem_ + 1 * stride_, a.a2 = mem_ + 2 * stride_, a.a3 = mem_ + 3 * stride_;
    a.b0 = mem_ + 4 * stride_, a.b1 = mem_ + 5 * stride_, a.b2 = mem_ + 6 * stride_;
    a.c0 = mem_ + 7 * stride_, a.c1 = mem_ + 8 * stride_, a.c2 = mem_ + 9 * stride_;
    a.bnd = mem_ + 10 * stride_, a.wrk1 = mem_ + 11 * stride_;
    a.p = p_, a.w = w_, a.partial = partial_;
    a.plane = (long long)plane_, a.mj = d_.mj, a.mk = d_.mk;
    a.tiles_k = tiles_k_, a.tiles_j = tiles_j_;
    a.lo = lo, a.hi = hi, a.step = step, a.chunk = chunk;
    return a;
}

int field::chunk_planes() { return CHUNK; }

void field::launch(cudaStream_t s, int lo, int hi, int step, int chunk, int chunks) {
    if (chunks <= 0) return;
    if (chunk > CHUNK) die("himeno: internal error: a sweep chunk of " + std::to_string(chunk) + " planes (at most 16)");
    HIMENO_LAUNCH(jacobi, dim3(tiles_k_, tiles_j_, chunks), dim3(TK, TJ), s, args(lo, hi, step, chunk));
    HIMENO_CK_LAUNCH(jacobi);
}

void field::sweep_boundary(cudaStream_t s) {
    // Chunks of one plane: z = 0 is plane 1, z = 1 plane n.
    launch(s, 1, d_.n + 1, d_.n - 1, 1, d_.n > 1 ? 2 : 1);
}

void field::sweep_interior(cudaStream_t s) {
    if (d_.n < 3) return;
    launch(s, 2, d_.n, CHUNK, CHUNK, (d_.n - 2 + CHUNK - 1) / CHUNK);
}

void field::sweep_all(cudaStream_t s) { launch(s, 1, d_.n + 1, CHUNK, CHUNK, (d_.n + CHUNK - 1) / CHUNK); }

// The kernel writes the sums straight into `out`: pinned host memory (mode hybrid: cudaMallocHost
// memory is mapped at the same address for the GPU, no copy on the critical path of the next
// sweep) or device memory (the modes whose host reads gosa only at the end).
void field::plane_sums(cudaStream_t s, double *out) {
    HIMENO_LAUNCH(sum_planes, d_.n, SUM_THREADS, s, partial_, tiles_k_ * tiles_j_, 1, out);
    HIMENO_CK_LAUNCH(sum_planes);
}

void field::swap() { std::swap(p_, w_); }

double field::sweep_bytes() const {
    const double interior = double(d_.n) * (d_.mj - 2) * (d_.mk - 2);
    return 4.0 * (13.0 * interior + double(d_.n + 2) * plane_);
}

void field::download_p(int l, float *host) const {
    HIMENO_CK(cudaMemcpy(host, p_plane(l), plane_ * sizeof(float), cudaMemcpyDeviceToHost));
}

}  // namespace himeno::gpu
