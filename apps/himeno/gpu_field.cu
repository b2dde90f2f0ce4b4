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

constexpr int TK = 64, TJ = 4, THREADS = TK * TJ, WARPS = THREADS / 32;
constexpr int CHUNK = 16;                    // planes per block of the interior launch
constexpr int SK = TK + 2, SP = SK * (TJ + 2);  // shared tile with its halo: row length, points
constexpr int SLOTS = (SP + THREADS - 1) / THREADS;  // tile points each thread loads
constexpr int SUM_THREADS = 128;             // plane_sums: threads per plane
constexpr float OMEGA = 0.8f;

struct sweep_args {
    const float *a0, *a1, *a2, *a3, *b0, *b1, *b2, *c0, *c1, *c2, *bnd, *wrk1;
    const float *p;
    float *w;
    double *partial;  // [plane][tile]
    long long plane;  // floats per plane
    int mj, mk;
    int lo, hi, step, chunk;  // block z sweeps planes [lo + z*step, min(lo + z*step + chunk, hi))
};

// Coefficients are read once per sweep: streaming loads (evict first) keep p in the caches.
__device__ __forceinline__ float stream_in(const float *x, long long i) { return __ldcs(x + i); }

__global__ void __launch_bounds__(THREADS) jacobi(const sweep_args a) {
    __shared__ float sp[4][SP];
    __shared__ double red[CHUNK][WARPS];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TK + tx;
    const int k0 = blockIdx.x * TK, j0 = blockIdx.y * TJ;
    const int k = k0 + tx, j = j0 + ty;
    const int l0 = a.lo + blockIdx.z * a.step, l1 = min(l0 + a.chunk, a.hi);
    if (l0 >= l1) return;  // the whole block: no barrier is left waiting
    const bool active = k >= 1 && k < a.mk - 1 && j >= 1 && j < a.mj - 1;
    const long long at = (long long)j * a.mk + k;  // this thread's point within a plane

    // The tile and its halo, points (j0-1 .. j0+TJ, k0-1 .. k0+TK); outside the grid: 0, unused.
    long long src[SLOTS];
    bool in[SLOTS];
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
        const int e = tid + s * THREADS, gj = j0 - 1 + e / SK, gk = k0 - 1 + e % SK;
        in[s] = e < SP && gj >= 0 && gj < a.mj && gk >= 0 && gk < a.mk;
        src[s] = (long long)gj * a.mk + gk;
    }
    float next[SLOTS];
    auto fetch = [&](int l) {
        const float *pl = a.p + l * a.plane;
#pragma unroll
        for (int s = 0; s < SLOTS; ++s) next[s] = in[s] ? __ldg(pl + src[s]) : 0.0f;
    };
    auto stash = [&](int l) {
#pragma unroll
        for (int s = 0; s < SLOTS; ++s)
            if (tid + s * THREADS < SP) sp[l & 3][tid + s * THREADS] = next[s];
    };
    fetch(l0 - 1);
    stash(l0 - 1);
    fetch(l0);
    stash(l0);
    fetch(l0 + 1);

    const int c = (ty + 1) * SK + tx + 1;  // this thread's point in the shared tile
    for (int l = l0; l < l1; ++l) {
        // Issue this plane's coefficient loads before the barrier, so they are in flight while
        // the block waits there.
        const long long x = l * a.plane + at;
        float a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, c0 = 0, c1 = 0, c2 = 0, bnd = 0, wrk1 = 0;
        if (active) {
            a0 = stream_in(a.a0, x), a1 = stream_in(a.a1, x), a2 = stream_in(a.a2, x), a3 = stream_in(a.a3, x);
            b0 = stream_in(a.b0, x), b1 = stream_in(a.b1, x), b2 = stream_in(a.b2, x);
            c0 = stream_in(a.c0, x), c1 = stream_in(a.c1, x), c2 = stream_in(a.c2, x);
            bnd = stream_in(a.bnd, x), wrk1 = stream_in(a.wrk1, x);
        }
        stash(l + 1);                  // buffer (l+1)&3 was last read for plane l-2: all threads
        if (l + 1 < l1) fetch(l + 2);  // passed the previous barrier after that
        __syncthreads();

        double g = 0.0;
        if (active) {
            const float *m = sp[(l - 1) & 3], *o = sp[l & 3], *q = sp[(l + 1) & 3];  // planes i-1, i, i+1
            // s0 exactly as the original writes it (left to right), rounded step by step.
            float s0 = __fadd_rn(__fadd_rn(__fmul_rn(a0, q[c]), __fmul_rn(a1, o[c + SK])), __fmul_rn(a2, o[c + 1]));
            s0 = __fadd_rn(s0, __fmul_rn(b0, __fadd_rn(__fsub_rn(__fsub_rn(q[c + SK], q[c - SK]), m[c + SK]), m[c - SK])));
            s0 = __fadd_rn(s0, __fmul_rn(b1, __fadd_rn(__fsub_rn(__fsub_rn(o[c + SK + 1], o[c - SK + 1]), o[c + SK - 1]),
                                                       o[c - SK - 1])));
            s0 = __fadd_rn(s0, __fmul_rn(b2, __fadd_rn(__fsub_rn(__fsub_rn(q[c + 1], m[c + 1]), q[c - 1]), m[c - 1])));
            s0 = __fadd_rn(s0, __fmul_rn(c0, m[c]));
            s0 = __fadd_rn(s0, __fmul_rn(c1, o[c - SK]));
            s0 = __fadd_rn(s0, __fmul_rn(c2, o[c - 1]));
            s0 = __fadd_rn(s0, wrk1);
            const float ss = __fmul_rn(__fsub_rn(__fmul_rn(s0, a3), o[c]), bnd);
            a.w[x] = __fadd_rn(o[c], __fmul_rn(OMEGA, ss));
            g = __dmul_rn(double(ss), double(ss));
        }
        // The tile's gosa of this plane: a fixed tree within each warp, warps added in order below.
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) g = __dadd_rn(g, __shfl_down_sync(0xffffffffu, g, off));
        if ((tid & 31) == 0) red[l - l0][tid >> 5] = g;
    }
    __syncthreads();
    if (tid < l1 - l0) {
        double s = 0.0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) s = __dadd_rn(s, red[tid][w]);
        a.partial[(long long)(l0 + tid) * (gridDim.x * gridDim.y) + blockIdx.y * gridDim.x + blockIdx.x] = s;
    }
}

// Block b: gosa of plane first+b from its tiles, in a fixed order (strided partial sums, then a
// tree), so that it depends only on the number of tiles.
__global__ void __launch_bounds__(SUM_THREADS) sum_planes(const double *partial, int tiles, int first, double *out) {
    __shared__ double s[SUM_THREADS];
    const int t = threadIdx.x;
    const double *row = partial + (long long)(first + blockIdx.x) * tiles;
    double v = 0.0;
    for (int i = t; i < tiles; i += SUM_THREADS) v = __dadd_rn(v, row[i]);
    s[t] = v;
    __syncthreads();
    for (int h = SUM_THREADS / 2; h > 0; h >>= 1) {
        if (t < h) s[t] = __dadd_rn(s[t], s[t + h]);
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
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

void field::launch(cudaStream_t s, int lo, int hi, int step, int chunk, int chunks) {
    if (chunks <= 0) return;
    if (chunk > CHUNK) die("himeno: internal error: a sweep chunk of " + std::to_string(chunk) + " planes (at most 16)");
    sweep_args a;
    a.a0 = mem_ + 0 * stride_, a.a1 = mem_ + 1 * stride_, a.a2 = mem_ + 2 * stride_, a.a3 = mem_ + 3 * stride_;
    a.b0 = mem_ + 4 * stride_, a.b1 = mem_ + 5 * stride_, a.b2 = mem_ + 6 * stride_;
    a.c0 = mem_ + 7 * stride_, a.c1 = mem_ + 8 * stride_, a.c2 = mem_ + 9 * stride_;
    a.bnd = mem_ + 10 * stride_, a.wrk1 = mem_ + 11 * stride_;
    a.p = p_, a.w = w_, a.partial = partial_;
    a.plane = (long long)plane_, a.mj = d_.mj, a.mk = d_.mk;
    a.lo = lo, a.hi = hi, a.step = step, a.chunk = chunk;
    HIMENO_LAUNCH(jacobi, dim3(tiles_k_, tiles_j_, chunks), dim3(TK, TJ), s, a);
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

// The kernel writes the sums straight into the pinned host buffer (cudaMallocHost memory is
// mapped at the same address for the GPU): no copy on the critical path of the next sweep.
void field::plane_sums(cudaStream_t s, double *host) {
    HIMENO_LAUNCH(sum_planes, d_.n, SUM_THREADS, s, partial_, tiles_k_ * tiles_j_, 1, host);
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
