// The per-point and per-tile code of the GPU sweep, shared by every GPU mode's kernels
// (gpu_field.cu's launches, gpu_device_modes.cu's in-kernel and persistent kernels): the
// arithmetic, the tiles and the order of the gosa sums are literally the same code, so every
// mode computes the same field and the same plane sums, bit for bit. gpu_field.hpp says what
// is guaranteed; gpu_field.cu's head comment describes the blocking.
#pragma once

#include "gpu_field.hpp"

namespace himeno::gpu {
namespace stencil {

constexpr int TK = 64, TJ = 4, THREADS = TK * TJ, WARPS = THREADS / 32;
constexpr int CHUNK = 16;                    // planes per block of the interior launch
constexpr int SK = TK + 2, SP = SK * (TJ + 2);  // shared tile with its halo: row length, points
constexpr int SLOTS = (SP + THREADS - 1) / THREADS;  // tile points each thread loads
constexpr int SUM_THREADS = 128;             // plane_sums: threads per plane
constexpr float OMEGA = 0.8f;


// Coefficients are read once per sweep: streaming loads (evict first) keep p in the caches.
__device__ __forceinline__ float stream_in(const float *x, long long i) { return __ldcs(x + i); }

// One block's share of a sweep: tile (bx, by) of (k, j), chunk bz of planes. Called by every
// thread of a block of TK x TJ threads (threadIdx.x along k); the whole block returns together.
// The kernels of every mode call it (the grid's block, or items of a persistent kernel), so
// each point and each tile's gosa are computed by literally the same code. A block may call it
// again at once: the shared buffers are rewritten only after a barrier that every reader of the
// previous call has passed.
__device__ __forceinline__ void sweep_tile(const sweep_args &a, int bx, int by, int bz) {
    __shared__ float sp[4][SP];
    __shared__ double red[CHUNK][WARPS];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TK + tx;
    const int k0 = bx * TK, j0 = by * TJ;
    const int k = k0 + tx, j = j0 + ty;
    const int l0 = a.lo + bz * a.step, l1 = min(l0 + a.chunk, a.hi);
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
        a.partial[(long long)(l0 + tid) * (a.tiles_k * a.tiles_j) + by * a.tiles_k + bx] = s;
    }
}

// gosa of plane `row` of `partial` from its tiles, into *out, in a fixed order (strided partial
// sums over SUM_THREADS threads, then a tree), so that it depends only on the number of tiles.
// Called by every thread of a block of at least SUM_THREADS threads (the others only pass the
// barriers).
__device__ __forceinline__ void sum_plane(const double *partial, int tiles, long long row, double *out) {
    __shared__ double s[SUM_THREADS];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < SUM_THREADS) {
        const double *r = partial + row * tiles;
        double v = 0.0;
        for (int i = t; i < tiles; i += SUM_THREADS) v = __dadd_rn(v, r[i]);
        s[t] = v;
    }
    __syncthreads();
    for (int h = SUM_THREADS / 2; h > 0; h >>= 1) {
        if (t < h) s[t] = __dadd_rn(s[t], s[t + h]);
        __syncthreads();
    }
    if (t == 0) *out = s[0];
    __syncthreads();  // s is free for the next call
}

}  // namespace stencil
}  // namespace himeno::gpu
