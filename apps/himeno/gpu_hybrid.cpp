// Mode hybrid (seed 003, Fig. 3): the GPU computes, the CPU launches the kernels, issues the
// halo puts and waits on events and signals, sleeping --poll-us between checks.
//
// One sweep it (p -> wrk2; f.swap() then makes wrk2 the next p):
//   boundary stream: wait sweep_done(it-1); boundary planes 1 and n; record boundary_done
//   bulk stream:     interior planes 2..n-1; wait boundary_done; gosa per plane into pinned
//                    host memory (written by the kernel)
//   CPU: wait boundary_done; put the new planes 1 and n straight from GPU memory into the
//        neighbours' cuda halo buffers with their signals; combine gosa of sweep it-1 (ready:
//        boundary_done(it) waited for sweep_done(it-1)) while the interior runs; quiet; wait
//        for the neighbours' signals; bulk stream: copy the received planes into wrk2's halo
//        planes 0 and n+1; record sweep_done.
// The CPU runs at most one sweep ahead of the GPU (it waits for boundary_done each sweep), so
// the bulk stream always has the next interior queued when the current one ends.
#include <hgas/hgas.h>

#include <optional>

#include "common.hpp"
#include "gpu_check.hpp"
#include "gpu_mode.hpp"
#include "halo.hpp"

namespace himeno::gpu {
namespace {

class hybrid final : public driver {
public:
    explicit hybrid(context &c) : c_(c) {
        HIMENO_CK(cudaEventCreateWithFlags(&boundary_done_, cudaEventDisableTiming));
        HIMENO_CK(cudaEventCreateWithFlags(&sweep_done_, cudaEventDisableTiming));
        for (auto &s : sums_) HIMENO_CK(cudaMallocHost(&s, sizeof(double) * c_.n));
    }
    ~hybrid() override {  // unchecked: a destructor must not end the job; errors surfaced earlier
        for (auto &s : sums_) cudaFreeHost(s);
        cudaEventDestroy(sweep_done_);
        cudaEventDestroy(boundary_done_);
    }

    void prepare(bool exchange) override {
        exchange_ = exchange;
        if (exchange) h_.emplace(c_.halo, c_.f.plane_floats(), hgas_rank_me());
        c_.f.init(c_.bulk);
        HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
        wait_event(sweep_done_, "the initial state", c_.o.poll_us);
    }

    double run() override {
        const int me = hgas_rank_me(), ranks = hgas_rank_n(), n = c_.n, poll = c_.o.poll_us;
        const bool lower = exchange_ && me > 0, upper = exchange_ && me < ranks - 1;
        const size_t plane_bytes = c_.f.plane_floats() * sizeof(float);
        field &f = c_.f;
        double gosa = 0.0;
        for (int it = 0; it < c_.o.iters; ++it) {
            HIMENO_CK(cudaStreamWaitEvent(c_.boundary, sweep_done_, 0));  // p's halo planes are in
            f.sweep_boundary(c_.boundary);
            HIMENO_CK(cudaEventRecord(boundary_done_, c_.boundary));
            f.sweep_interior(c_.bulk);
            HIMENO_CK(cudaStreamWaitEvent(c_.bulk, boundary_done_, 0));  // the tile sums of planes 1, n
            f.plane_sums(c_.bulk, sums_[it & 1]);

            wait_event(boundary_done_, "the boundary planes", poll);
            if (lower) h_->send(me - 1, 1, it, f.wrk2_plane(1));
            if (upper) h_->send(me + 1, 0, it, f.wrk2_plane(n));
            // As in mode cpu, the ranks combine gosa every sweep (the original's reduction).
            if (exchange_ && it > 0) gosa = combine_gosa(c_.o.mimax, c_.lo, n, sums_[(it - 1) & 1]);
            if (lower || upper) check(hgas_quiet(), "hgas_quiet");  // wrk2 planes 1, n are rewritten in sweep it+2
            // The signal says the plane is in my GPU's memory: a copy queued now reads it.
            if (lower) {
                h_->wait(0, it, poll);
                HIMENO_CK(cudaMemcpyAsync(f.wrk2_plane(0), h_->slot(0, it), plane_bytes, cudaMemcpyDeviceToDevice,
                                          c_.bulk));
            }
            if (upper) {
                h_->wait(1, it, poll);
                HIMENO_CK(cudaMemcpyAsync(f.wrk2_plane(n + 1), h_->slot(1, it), plane_bytes,
                                          cudaMemcpyDeviceToDevice, c_.bulk));
            }
            HIMENO_CK(cudaEventRecord(sweep_done_, c_.bulk));
            f.swap();
        }
        wait_event(sweep_done_, "the last sweep", poll);
        gosa = combine_gosa(c_.o.mimax, c_.lo, n, sums_[(c_.o.iters - 1) & 1]);
        return gosa;
    }

    void release() override { h_.reset(); }

private:
    context &c_;
    bool exchange_ = false;
    std::optional<halo> h_;
    cudaEvent_t boundary_done_ = nullptr, sweep_done_ = nullptr;
    double *sums_[2] = {nullptr, nullptr};  // pinned: gosa of each plane, by sweep parity
};

}  // namespace

std::unique_ptr<driver> make_hybrid(context &c) { return std::make_unique<hybrid>(c); }

}  // namespace himeno::gpu
