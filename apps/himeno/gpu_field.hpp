// One rank's slab in GPU memory and the kernels that sweep it (gpu_field.cu).
//
// Arrays as in the original (a0..a3, b0..b2, c0..c2, bnd, wrk1, p, wrk2), each (n+2) planes of
// mjmax x mkmax floats, local plane l = global plane lo-1+l. p and wrk2 are a pair swapped after
// each sweep (both start as the initial field, so their fixed boundaries agree): that is the
// original's copy wrk2 -> p without moving 8 bytes per point.
//
// Every point is computed with the original expression in its order, in IEEE single precision
// without FMA contraction (__fmul_rn, __fadd_rn): the field is bitwise the CPU version's. gosa
// is summed in double per plane: each block of the kernel covers a fixed tile of (j, k) and adds
// its points of a plane in a fixed tree; plane_sums() adds a plane's tiles in a fixed tree. The
// tiles depend only on mjmax and mkmax, so each plane's sum is the same whatever the
// decomposition along i.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace himeno::gpu {

/// What a sweep kernel reads and writes (gpu_stencil.cuh's sweep_tile): the arrays, and which
/// planes the blocks cover: block z sweeps planes [lo + z*step, min(lo + z*step + chunk, hi)).
struct sweep_args {
    const float *a0, *a1, *a2, *a3, *b0, *b1, *b2, *c0, *c1, *c2, *bnd, *wrk1;
    const float *p;
    float *w;
    double *partial;  // [local plane][tile]: gosa of each tile of each plane
    long long plane;  // floats per plane
    int mj, mk;
    int tiles_k, tiles_j;  // tiles of a plane along k and j (tile (x, y) is partial's column y*tiles_k + x)
    int lo, hi, step, chunk;
};

/// One rank's part: global interior planes [lo, lo+n) of an mi x mj x mk grid.
struct slab_dims {
    int mi, mj, mk, lo, n;
};

class field {
public:
    /// Allocates the arrays on the current device (cudaMalloc); ends the job if they do not fit.
    explicit field(const slab_dims &d);
    ~field();
    field(const field &) = delete;
    field &operator=(const field &) = delete;

    /// The initial state on stream s: coefficients, p = wrk2 = i^2/(mimax-1)^2.
    void init(cudaStream_t s);
    /// Sweeps (p -> wrk2 and the gosa of each tile of each plane) on stream s:
    void sweep_boundary(cudaStream_t s);  // planes 1 and n
    void sweep_interior(cudaStream_t s);  // planes 2..n-1 (nothing when n < 3)
    void sweep_all(cudaStream_t s);       // planes 1..n in one launch
    /// gosa of each plane 1..n from the tile sums, into out[0..n-1]: memory the GPU writes,
    /// device memory or cudaMallocHost'd (read it after an event says it is done).
    void plane_sums(cudaStream_t s, double *out);
    /// The arguments of a sweep of planes [lo, hi) in chunks (the current p and wrk2): for the
    /// kernels of other modes, which call sweep_tile themselves.
    sweep_args args(int lo, int hi, int step, int chunk) const;
    /// The chunked sweeps' geometry: chunks of the interior (planes 2..n-1) and of all planes.
    static int chunk_planes();
    int tiles() const { return tiles_k_ * tiles_j_; }
    int tiles_k() const { return tiles_k_; }
    int tiles_j() const { return tiles_j_; }
    /// Doubles of the tile sums array (partial): (n + 2) planes x tiles.
    size_t partial_doubles() const { return size_t(d_.n + 2) * tiles_k_ * tiles_j_; }
    /// p <-> wrk2, after a sweep and its halo planes are complete.
    void swap();

    const float *p_plane(int l) const { return p_ + size_t(l) * plane_; }
    float *wrk2_plane(int l) { return w_ + size_t(l) * plane_; }
    size_t plane_floats() const { return plane_; }
    int planes() const { return d_.n; }
    /// Fewest bytes a sweep over planes 1..n moves through device memory: 12 coefficient
    /// arrays read and wrk2 written at each interior point, each point of p read once.
    double sweep_bytes() const;
    /// Copies p plane l to host memory (synchronous; after the GPU has finished).
    void download_p(int l, float *host) const;

private:
    void launch(cudaStream_t s, int lo, int hi, int step, int chunk, int chunks);

    slab_dims d_;
    size_t plane_, stride_;  // floats per plane; floats per array (rounded up to 512 bytes)
    int tiles_k_, tiles_j_;
    float *mem_ = nullptr;   // the 14 arrays, one allocation
    float *p_ = nullptr, *w_ = nullptr;
    double *partial_ = nullptr;  // [local plane 0..n+1][tile]: gosa of each tile of each plane
};

}  // namespace himeno::gpu
