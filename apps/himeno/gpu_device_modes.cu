// Modes stream, kernel and device (seed 003's GPU-controlled communication, Figs 4-7): the GPU
// itself moves the halos, with hgas's stream-ordered operations (hgas_device.h) or its device
// API (hgas_device.cuh). What each mode computes is mode hybrid's: the kernels call the same
// sweep_tile and sum_plane (gpu_stencil.cuh) over the same tiles, so the field and the plane
// sums are bitwise hybrid's, and gosa is combined over the ranks by the same combine_gosa.
//
// Shared by the three:
//  - Receive halo buffers and their signal words in the cuda heap (dev_halo): two slots by sweep
//    parity as in hybrid (a neighbour is at most one sweep ahead: it needs my halo of sweep it
//    to start sweep it+1, and I send that only after unpacking its halo of sweep it-1); the
//    value after sweep it is it+1, SET.
//  - gosa: the plane sums of every sweep go to a device array (a ring when very long runs would
//    not fit), written by the GPU; the host reads the last sweep's at the end and combines it
//    over the ranks. The host takes no part in a sweep.
//  - The host waits sleeping: wait_event (event query, hgas_progress, usleep(--poll-us)), then
//    hgas_stream_sync only to collect what a kernel recorded (a device-side wait past
//    HGAS_TIMEOUT, a bad address): the stream is idle by then, so it does not spin. Mode device's
//    kernel counts its sweeps in host memory, and the host sleeps for a quarter of what is left
//    at the rate so far (wait_event_progress): a few dozen wake-ups a run instead of one every
//    --poll-us (H200, size L, 4000 sweeps: the process's CPU time per sweep 0.023 -> 0.0074 ms).
//  - Modes stream and kernel enqueue at most WINDOW sweeps ahead of the GPU (seed 003 saw the
//    host stall once a stream held ~1000 entries; a bounded window keeps the host asleep).
//
// Not compiled into himeno-emu: the emulator has no hgas device API.
#include <hgas/hgas.h>
#include <hgas/hgas_device.cuh>

#include <algorithm>
#include <string>
#include <vector>

#include "common.hpp"
#include "gpu_check.hpp"
#include "gpu_mode.hpp"
#include "gpu_stencil.cuh"

namespace himeno::gpu {
namespace {

namespace hd = hgas::device;
using namespace stencil;

constexpr int WINDOW = 48;                         // sweeps enqueued ahead of the GPU (stream, kernel)
constexpr int WAITERS = 8;                         // blocks per side that wait for a halo and copy a part
constexpr size_t SUMS_BYTES = size_t(64) << 20;    // plane sums kept per run (beyond: a ring of sweeps)

void hgas_ck(hgas_status_t s, const char *what) {
    if (s != HGAS_OK) die(std::string("himeno: rank ") + std::to_string(hgas_rank_me()) + ": " + what + ": " +
                          hgas_last_error());
}

// Receive halo buffers [side][slot][plane] (side 0 from me-1, side 1 from me+1) and one signal
// word per side (sig[8*side], a cache line apart), all in the cuda heap: a peer GPU's kernel or
// copy engine writes them directly, and a stream wait on them is a stream memory operation.
// Collective; zeroes the signals on stream s (the caller waits for s and barriers before any
// rank sends).
struct dev_halo {
    float *recv = nullptr;
    uint64_t *sig = nullptr;
    size_t floats;
    dev_halo(size_t plane_floats, cudaStream_t s) : floats(plane_floats) {
        check(hgas_malloc_kind(4 * floats * sizeof(float), HGAS_KIND_CUDA, reinterpret_cast<void **>(&recv)),
              "hgas_malloc_kind (halo buffers)");
        check(hgas_malloc_kind(16 * sizeof(uint64_t), HGAS_KIND_CUDA, reinterpret_cast<void **>(&sig)),
              "hgas_malloc_kind (halo signals)");
        HIMENO_CK(cudaMemsetAsync(sig, 0, 16 * sizeof(uint64_t), s));
    }
    ~dev_halo() {
        hgas_free(sig);
        hgas_free(recv);
    }
    dev_halo(const dev_halo &) = delete;
    dev_halo &operator=(const dev_halo &) = delete;
    float *slot(int side, int it) const { return recv + (size_t(side) * 2 + (it & 1)) * floats; }
};

// What a kernel needs to exchange halos; lower/upper are -1 where there is no neighbour or no
// exchange (--no-exchange).
struct exch {
    hd::ctx c;
    float *recv;  // symmetric: names the same buffers on every rank
    uint64_t *sig;
    long long floats;
    int lower, upper;
};

__device__ __forceinline__ float *slot_of(const exch &x, int side, int it) {
    return x.recv + (2LL * side + (it & 1)) * x.floats;
}

// My new boundary planes of sweep it (wrk2 planes 1 and n) into the neighbours' slots, each with
// its signal. Every thread of one block calls it; put_signal returns when the planes may be
// rewritten (sweep it+2 rewrites them, long after).
__device__ __forceinline__ void send_halos(const exch &x, const float *w, int n, int it) {
    const size_t bytes = size_t(x.floats) * sizeof(float);
    const uint64_t v = uint64_t(it) + 1;
    if (x.lower >= 0)  // my plane 1 is the lower neighbour's upper halo (its side 1)
        hd::put_signal<hd::scope::block>(x.c, slot_of(x, 1, it), w + x.floats, bytes, x.sig + 8, v, HGAS_SIGNAL_SET,
                                         x.lower);
    if (x.upper >= 0)  // my plane n is the upper neighbour's lower halo (its side 0)
        hd::put_signal<hd::scope::block>(x.c, slot_of(x, 0, it), w + n * x.floats, bytes, x.sig, v, HGAS_SIGNAL_SET,
                                         x.upper);
}

// The halos of sweep it, in 2 x WAITERS parts (part q: side q % 2, piece q / 2); this block
// takes parts first, first + stride, ...: waits for that side's signal, then copies its piece
// of the received plane into wrk2's halo plane (0 or n+1). Every thread of the block calls it.
// The waits depend only on the neighbours' progress, never on another block of this kernel.
__device__ __forceinline__ void unpack_halos(const exch &x, float *w, int n, int it, int first, int stride) {
    const int t = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    const long long per = (x.floats + WAITERS - 1) / WAITERS;
    for (int q = first; q < 2 * WAITERS; q += stride) {
        const int side = q & 1;
        if ((side == 0 ? x.lower : x.upper) < 0) continue;  // the same in every thread of the block
        hd::signal_wait_until<hd::scope::block>(x.c, x.sig + 8 * side, HGAS_CMP_GE, uint64_t(it) + 1);
        const float *src = slot_of(x, side, it);
        float *dst = w + (side == 0 ? 0LL : (long long)(n + 1) * x.floats);
        const long long b = (q >> 1) * per, e = min(x.floats, b + per);
        for (long long i = b + t; i < e; i += nt) dst[i] = __ldcv(src + i);  // written by a peer: not from a cache
        __syncthreads();
    }
}

// ---- mode kernel: one launch for the boundary planes, whose last block sends them; one for
// the interior, whose last blocks wait for the neighbours' planes and unpack them.
__global__ void __launch_bounds__(THREADS) boundary_send(const sweep_args a, const exch x, unsigned *count, int n, int it) {
    sweep_tile(a, blockIdx.x, blockIdx.y, blockIdx.z);
    // The block that finishes last sees every boundary tile written (last_block's fences).
    if (hd::last_block(count)) send_halos(x, a.w, n, it);
}

__global__ void __launch_bounds__(THREADS) interior_wait(const sweep_args a, const exch x, int items, int n, int it) {
    const int b = blockIdx.x, tiles = a.tiles_k * a.tiles_j;
    if (b < items)  // the interior tiles first, in the order of hybrid's 3-D grid
        sweep_tile(a, b % a.tiles_k, (b % tiles) / a.tiles_k, b / tiles);
    else  // the last 2 x WAITERS blocks: the halos of this sweep
        unpack_halos(x, a.w, n, it, b - items, 2 * WAITERS);
}

// ---- mode device: one persistent kernel runs every sweep.
struct control_args {
    sweep_args bnd, in;   // planes 1 and n (chunks of one plane); planes 2..n-1 (chunks of CHUNK)
    int bchunks, ichunks;
    double *partial2;     // tile sums of odd sweeps (even: bnd.partial), so that the plane sums of
                          // sweep it and the tiles of sweep it+1 need no barrier between them
    double *sums;         // [sweep % rows][plane]
    int rows, n, iters;
    exch x;
    unsigned *count;      // last_block's counter
    hd::grid_barrier *gb;
    unsigned long long *progress;  // sweeps finished, in host memory (the host's sleeps)
};

// Per sweep: boundary tiles; the last block to finish its share sends them (last_block, no
// barrier); interior tiles; halo waits and unpacking; grid_sync; plane sums; p <-> wrk2. One
// grid barrier per sweep: the plane sums of sweep it overlap the tiles of sweep it+1, which
// write the other tile-sum buffer. All blocks are resident (cooperative launch, checked first
// with check_resident), so grid_sync never waits for a block that is not running; the halo
// waits depend only on the neighbours' kernels.
__global__ void __launch_bounds__(THREADS) control(const control_args d) {
    sweep_args bnd = d.bnd, in = d.in;
    const int tiles = bnd.tiles_k * bnd.tiles_j, G = gridDim.x, b = blockIdx.x;
    float *p = const_cast<float *>(bnd.p), *w = bnd.w;
    double *const part[2] = {bnd.partial, d.partial2};
    for (int it = 0; it < d.iters; ++it) {
        bnd.p = in.p = p, bnd.w = in.w = w, bnd.partial = in.partial = part[it & 1];
        for (int q = b; q < tiles * d.bchunks; q += G) sweep_tile(bnd, q % bnd.tiles_k, (q % tiles) / bnd.tiles_k, q / tiles);
        if (hd::last_block(d.count)) send_halos(d.x, w, d.n, it);
        for (int q = b; q < tiles * d.ichunks; q += G) sweep_tile(in, q % in.tiles_k, (q % tiles) / in.tiles_k, q / tiles);
        unpack_halos(d.x, w, d.n, it, b, G);
        if (!hd::grid_sync(d.x.c, d.gb)) return;  // past HGAS_TIMEOUT: recorded, the host reports it
        // One 8-byte store to host memory a sweep: what the host's sleeps are planned from.
        if (b == 0 && threadIdx.x == 0 && threadIdx.y == 0)
            *reinterpret_cast<volatile unsigned long long *>(d.progress) = it + 1;
        double *row = d.sums + (long long)(it % d.rows) * d.n;
        for (int q = b; q < d.n; q += G) sum_plane(part[it & 1], tiles, 1 + q, row + q);
        float *t = p;
        p = w, w = t;
    }
}

// What the three drivers share: the device context, halo buffers, the plane sums of every
// sweep, the events of the window and the sleeping waits.
class device_driver : public driver {
public:
    explicit device_driver(context &c) : c_(c) {
        hgas_ck(hgas_device_ctx_get(&ctx_), "hgas_device_ctx_get");
        HIMENO_CK(cudaEventCreateWithFlags(&boundary_done_, cudaEventDisableTiming));
        HIMENO_CK(cudaEventCreateWithFlags(&halo_done_, cudaEventDisableTiming));
        HIMENO_CK(cudaEventCreateWithFlags(&sweep_done_, cudaEventDisableTiming));
        for (auto &e : window_) HIMENO_CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        rows_ = int(std::max<size_t>(1, std::min<size_t>(c_.o.iters, SUMS_BYTES / (sizeof(double) * c_.n))));
        HIMENO_CK(cudaMalloc(&sums_, sizeof(double) * c_.n * rows_));
    }
    ~device_driver() override {  // unchecked: a destructor must not end the job
        cudaFree(sums_);
        for (auto &e : window_) cudaEventDestroy(e);
        cudaEventDestroy(sweep_done_);
        cudaEventDestroy(halo_done_);
        cudaEventDestroy(boundary_done_);
    }

    void prepare(bool exchange) override {
        exchange_ = exchange;
        if (exchange) h_ = std::make_unique<dev_halo>(c_.f.plane_floats(), c_.bulk);
        c_.f.init(c_.bulk);
        HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
        wait_event(sweep_done_, "the initial state", c_.o.poll_us);
        // timed() barriers next: no rank sends before every rank's signals are zero.
    }

    double run() override {
        sweeps();
        wait_sweeps();
        // The streams are idle: these return at once, with any error a kernel recorded.
        hgas_ck(hgas_stream_sync(c_.boundary), "a device-side operation (boundary stream)");
        hgas_ck(hgas_stream_sync(c_.bulk), "a device-side operation (bulk stream)");
        std::vector<double> last(c_.n);
        HIMENO_CK(cudaMemcpy(last.data(), sums_ + size_t((c_.o.iters - 1) % rows_) * c_.n, sizeof(double) * c_.n,
                             cudaMemcpyDeviceToHost));
        return combine_gosa(c_.o.mimax, c_.lo, c_.n, last.data());
    }

    void release() override { h_.reset(); }

protected:
    /// Enqueues (or runs) the o.iters sweeps; records sweep_done_ after the last.
    virtual void sweeps() = 0;
    /// Waits, sleeping, for sweep_done_.
    virtual void wait_sweeps() { wait_event(sweep_done_, "the last sweep", c_.o.poll_us); }

    bool lower() const { return exchange_ && hgas_rank_me() > 0; }
    bool upper() const { return exchange_ && hgas_rank_me() < hgas_rank_n() - 1; }
    exch halo_args() const {
        exch x{};
        x.c = ctx_;
        x.recv = h_ ? h_->recv : nullptr;
        x.sig = h_ ? h_->sig : nullptr;
        x.floats = (long long)c_.f.plane_floats();
        x.lower = lower() ? hgas_rank_me() - 1 : -1;
        x.upper = upper() ? hgas_rank_me() + 1 : -1;
        return x;
    }
    double *sums_row(int it) const { return sums_ + size_t(it % rows_) * c_.n; }
    // Before enqueuing sweep it: the GPU has finished sweep it - WINDOW (sleeping meanwhile).
    void throttle(int it) {
        if (it >= WINDOW) wait_event(window_[it % WINDOW], "a sweep (window)", c_.o.poll_us);
    }
    void sweep_enqueued(int it) { HIMENO_CK(cudaEventRecord(window_[it % WINDOW], c_.bulk)); }

    context &c_;
    hd::ctx ctx_{};
    bool exchange_ = false;
    std::unique_ptr<dev_halo> h_;
    cudaEvent_t boundary_done_ = nullptr, halo_done_ = nullptr, sweep_done_ = nullptr, window_[WINDOW] = {};
    double *sums_ = nullptr;
    int rows_ = 1;
};

// Mode stream (seed 003, Fig. 6): everything in stream order, the host only enqueues.
//   boundary stream: wait sweep_done(it-1); planes 1 and n; record boundary_done;
//                    hgas_put_signal_on_stream of each to its neighbour (copy engine + stream
//                    memory write where mapped); hgas_quiet_on_stream (nothing unless proxied);
//                    hgas_signal_wait_on_stream for each incoming halo (a stream memory wait on
//                    the cuda heap), copy it into wrk2's halo plane; record halo_done
//   bulk stream:     interior planes (overlapping the exchange); wait boundary_done; plane sums;
//                    wait halo_done; record sweep_done
class stream_mode final : public device_driver {
public:
    using device_driver::device_driver;

private:
    void sweeps() override {
        const int me = hgas_rank_me(), n = c_.n;
        const size_t bytes = c_.f.plane_floats() * sizeof(float);
        field &f = c_.f;
        for (int it = 0; it < c_.o.iters; ++it) {
            throttle(it);
            const uint64_t v = uint64_t(it) + 1;
            HIMENO_CK(cudaStreamWaitEvent(c_.boundary, sweep_done_, 0));  // p's halos in, sweep it-1's reads done
            f.sweep_boundary(c_.boundary);
            HIMENO_CK(cudaEventRecord(boundary_done_, c_.boundary));
            if (lower())
                hgas_ck(hgas_put_signal_on_stream(h_->slot(1, it), f.wrk2_plane(1), bytes, h_->sig + 8, v,
                                                  HGAS_SIGNAL_SET, me - 1, c_.boundary),
                        "hgas_put_signal_on_stream (halo to the lower rank)");
            if (upper())
                hgas_ck(hgas_put_signal_on_stream(h_->slot(0, it), f.wrk2_plane(n), bytes, h_->sig, v, HGAS_SIGNAL_SET,
                                                  me + 1, c_.boundary),
                        "hgas_put_signal_on_stream (halo to the upper rank)");
            if (lower() || upper()) hgas_ck(hgas_quiet_on_stream(c_.boundary), "hgas_quiet_on_stream");
            if (lower()) {
                hgas_ck(hgas_signal_wait_on_stream(h_->sig, HGAS_CMP_GE, v, c_.boundary), "hgas_signal_wait_on_stream");
                HIMENO_CK(cudaMemcpyAsync(f.wrk2_plane(0), h_->slot(0, it), bytes, cudaMemcpyDeviceToDevice, c_.boundary));
            }
            if (upper()) {
                hgas_ck(hgas_signal_wait_on_stream(h_->sig + 8, HGAS_CMP_GE, v, c_.boundary),
                        "hgas_signal_wait_on_stream");
                HIMENO_CK(cudaMemcpyAsync(f.wrk2_plane(n + 1), h_->slot(1, it), bytes, cudaMemcpyDeviceToDevice,
                                          c_.boundary));
            }
            HIMENO_CK(cudaEventRecord(halo_done_, c_.boundary));
            f.sweep_interior(c_.bulk);
            HIMENO_CK(cudaStreamWaitEvent(c_.bulk, boundary_done_, 0));  // tile sums of planes 1, n
            f.plane_sums(c_.bulk, sums_row(it));
            HIMENO_CK(cudaStreamWaitEvent(c_.bulk, halo_done_, 0));
            HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
            sweep_enqueued(it);
            f.swap();
        }
    }
};

// Mode kernel (seed 003, Fig. 5): the kernels communicate. Per sweep:
//   boundary stream: wait sweep_done(it-1); boundary_send (planes 1 and n; the last block to
//                    finish puts them with their signals); record boundary_done
//   bulk stream:     interior_wait (interior tiles, then 2 x WAITERS blocks wait for the
//                    neighbours' signals and unpack the halos); wait boundary_done; plane sums;
//                    record sweep_done
// Guard: the waiting blocks wait only for other GPUs (never for a block of their own kernel),
// but they occupy their SMs while they spin; check_resident makes sure that they, a block of
// the boundary kernel and one block for hgas's proxy agent fit at once, so the boundary kernel
// that the neighbours wait for can always run.
class kernel_mode final : public device_driver {
public:
    explicit kernel_mode(context &c) : device_driver(c) {
        HIMENO_CK(cudaMalloc(&count_, 64));
        HIMENO_CK(cudaMemset(count_, 0, 64));
        hgas_ck(hd::check_resident(interior_wait, 2 * WAITERS + 1, THREADS, 0, 1),
                "mode kernel: the halo-waiting blocks do not fit beside the boundary kernel");
    }
    ~kernel_mode() override { cudaFree(count_); }

private:
    void sweeps() override {
        const int n = c_.n, ch = field::chunk_planes();
        const int ichunks = n >= 3 ? (n - 2 + ch - 1) / ch : 0, items = c_.f.tiles() * ichunks;
        const int waiters = (lower() || upper()) ? 2 * WAITERS : 0;
        const exch x = halo_args();
        field &f = c_.f;
        for (int it = 0; it < c_.o.iters; ++it) {
            throttle(it);
            HIMENO_CK(cudaStreamWaitEvent(c_.boundary, sweep_done_, 0));
            boundary_send<<<dim3(f.tiles_k(), f.tiles_j(), n > 1 ? 2 : 1), dim3(TK, TJ), 0, c_.boundary>>>(
                f.args(1, n + 1, n - 1, 1), x, count_, n, it);
            HIMENO_CK_LAUNCH(boundary_send);
            HIMENO_CK(cudaEventRecord(boundary_done_, c_.boundary));
            if (items + waiters > 0) {
                interior_wait<<<items + waiters, dim3(TK, TJ), 0, c_.bulk>>>(f.args(2, n, ch, ch), x, items, n, it);
                HIMENO_CK_LAUNCH(interior_wait);
            }
            HIMENO_CK(cudaStreamWaitEvent(c_.bulk, boundary_done_, 0));
            f.plane_sums(c_.bulk, sums_row(it));
            HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
            sweep_enqueued(it);
            f.swap();
        }
    }

    unsigned *count_ = nullptr;
};

// Mode device (seed 003, Fig. 7): one host launch for all sweeps. The paper's control kernel
// launched child grids and waited with device-side cudaDeviceSynchronize, which CUDA 12
// removed; a persistent kernel (cooperative launch, check_resident) with one grid barrier per
// sweep keeps the control on the GPU the same way.
class device_mode final : public device_driver {
public:
    explicit device_mode(context &c) : device_driver(c) {
        HIMENO_CK(cudaMalloc(&count_, 64));
        HIMENO_CK(cudaMalloc(&gb_, sizeof(hd::grid_barrier)));
        HIMENO_CK(cudaHostAlloc(reinterpret_cast<void **>(&progress_), 64, cudaHostAllocMapped));
        HIMENO_CK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&progress_dev_), progress_, 0));
        HIMENO_CK(cudaMalloc(&partial2_, sizeof(double) * c_.f.partial_doubles()));
        int dev = 0, sms = 0, per_sm = 0;
        HIMENO_CK(cudaGetDevice(&dev));
        HIMENO_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        HIMENO_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, control, THREADS, 0));
        // As many blocks as fit at once, less one for hgas's proxy agent kernel, and no more than
        // there are tiles of a sweep.
        const int ch = field::chunk_planes(), n = c_.n;
        const int most = std::max(c_.f.tiles() * ((n + ch - 1) / ch), 2 * WAITERS);
        blocks_ = std::min(sms * per_sm - 1, most);
        if (blocks_ < 1) blocks_ = 1;
        hgas_ck(hd::check_resident(control, blocks_, THREADS, 0, 1), "mode device: the persistent kernel does not fit");
    }
    ~device_mode() override {
        cudaFreeHost(progress_);
        cudaFree(partial2_);
        cudaFree(gb_);
        cudaFree(count_);
    }

private:
    void sweeps() override {
        const int n = c_.n, ch = field::chunk_planes();
        field &f = c_.f;
        HIMENO_CK(cudaMemsetAsync(count_, 0, 64, c_.bulk));
        HIMENO_CK(cudaMemsetAsync(gb_, 0, sizeof(hd::grid_barrier), c_.bulk));
        HIMENO_CK(cudaMemsetAsync(partial2_, 0, sizeof(double) * f.partial_doubles(), c_.bulk));
        control_args d{};
        d.bnd = f.args(1, n + 1, n - 1, 1);
        d.in = f.args(2, n, ch, ch);
        d.bchunks = n > 1 ? 2 : 1;
        d.ichunks = n >= 3 ? (n - 2 + ch - 1) / ch : 0;
        d.partial2 = partial2_;
        d.sums = sums_, d.rows = rows_, d.n = n, d.iters = c_.o.iters;
        d.x = halo_args();
        d.count = count_, d.gb = gb_;
        *reinterpret_cast<volatile unsigned long long *>(progress_) = 0;  // no kernel of ours runs now
        d.progress = progress_dev_;
        void *args[] = {&d};
        HIMENO_CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(control), dim3(blocks_), dim3(TK, TJ), args, 0,
                                              c_.bulk));
        HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
        for (int it = 0; it < c_.o.iters; ++it) f.swap();  // as the kernel swapped them
    }

    void wait_sweeps() override { wait_event_progress(sweep_done_, progress_, c_.o.iters, "the sweeps", c_.o.poll_us); }

    unsigned *count_ = nullptr;
    hd::grid_barrier *gb_ = nullptr;
    double *partial2_ = nullptr;
    unsigned long long *progress_ = nullptr;      // pinned, mapped: written by the kernel
    unsigned long long *progress_dev_ = nullptr;  // its address on the GPU
    int blocks_ = 1;
};

}  // namespace

std::unique_ptr<driver> make_stream(context &c) { return std::make_unique<stream_mode>(c); }
std::unique_ptr<driver> make_kernel(context &c) { return std::make_unique<kernel_mode>(c); }
std::unique_ptr<driver> make_device(context &c) { return std::make_unique<device_mode>(c); }

}  // namespace himeno::gpu
