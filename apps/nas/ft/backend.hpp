// The compute of nas-ft, apart from communication: FFTW on the host (cpu_backend.cpp) or cuFFT
// and kernels on the GPU (cuda_backend.cu). Arrays are the rank's own memory (host pointers, or
// device pointers for cuda); the driver (ft_run.cpp) owns them and moves data between ranks.
#pragma once

#include <complex>
#include <memory>
#include <mutex>
#include <string>

#include "layout.hpp"
#include "options.hpp"

namespace ft {

struct arrays {
    cplx *slab = nullptr;    // [zl][y][x]: initial field, x-y transforms, inverse result
    cplx *pencil = nullptr;  // [z][yl][x]: z transforms, evolve (the frequency-space field)
    cplx *work = nullptr;    // [z][yl][x]: inverse z transform's output (the next transpose's source)
    cplx *send = nullptr;    // packed: n blocks of block_elems()
};

class backend {
public:
    virtual ~backend() = default;
    virtual const char *name() const = 0;  // "FFTW 3.3.10, 4 threads" / "cuFFT 12.x"
    virtual int threads() const = 0;
    /// Makes every plan the run needs (plane groups of `group` planes, row chunks of `chunk`
    /// rows), before any data is in the arrays (FFTW_MEASURE overwrites them).
    virtual void plan(const arrays &a, int group, int chunk) = 0;
    /// NPB's initial conditions for this rank's planes into a.slab (perturbed: one value moved).
    virtual void init_field(bool perturb) = 0;
    /// 2-D transforms of local planes [za, zb) of a.slab in place; dir -1 forward, +1 inverse.
    virtual void fft_xy(int za, int zb, int dir) = 0;
    /// Forward z transform of pencil rows [ya, yb), in place.
    virtual void fft_z_forward(int ya, int yb) = 0;
    /// evolve (pencil *= twiddle) on rows [ya, yb), then their inverse z transform into a.work.
    virtual void evolve_inverse_z(int ya, int yb) = 0;
    /// The NPB checksum's terms on this rank's planes (the caller adds over ranks, divides by N).
    virtual cplx checksum() = 0;
    /// dst[r * dpitch + i] = src[r * spitch + i] for i < width, r < rows (elements).
    virtual void copy2d(cplx *dst, size_t dpitch, const cplx *src, size_t spitch, size_t width, size_t rows) = 0;
    /// Work queued so far (GPU: on the stream) is complete, so that hgas may read its output.
    virtual void sync() = 0;
    /// A marker for the work queued so far and a wait for it (pipelining; host: no-ops).
    virtual int mark() { return 0; }
    virtual void wait_mark(int) {}
    /// GPU: seconds the GPU spent in the local transforms since the last reset (host: negative,
    /// the driver times them on the clock).
    virtual double device_fft_seconds(bool reset) {
        (void)reset;
        return -1;
    }
    /// Seconds of a whole 3-D transform of the same grid by the library alone (the cuFFT peer),
    /// or negative when not measured.
    virtual double library_3d_seconds(int) { return -1; }
};

std::unique_ptr<backend> make_cpu_backend(const layout &l, const arrays &a, int threads, bool measure);
// FFTW's planner (fftw_init_threads, fftw_plan_with_nthreads, fftw_plan_*, fftw_destroy_plan)
// keeps global state and is not thread safe; only fftw_execute* may run concurrently. With
// ranks as threads (hgasrun --threads T) several ranks plan at once, so every planner call
// holds this lock, the process's one (fftw_plan_with_nthreads then fftw_plan_* under one hold).
std::mutex &fftw_planner_lock();
/// nullptr with *why set where this build has no CUDA.
std::unique_ptr<backend> make_cuda_backend(const layout &l, const arrays &a, std::string *why);

/// The real twiddle factors of one dimension: exp(-4 alpha pi^2 k^2), k wrapped to [-n/2, n/2).
void twiddle_1d(int n, double *out);

}  // namespace ft
