// Kind sim: the nine wave fields live in hgas's simulated device memory (a symmetric sim
// allocation), which the CPU cannot load or store: the "kernels" copy the fields they read
// into a host working copy with hgas_get, update it with the CPU loops and copy what they
// wrote back with hgas_put, as a GPU's kernels would update device memory in place. The
// memory variables and the medium are the kernels' own and stay in the working copy. So the
// halo exchange sees device memory exactly as on a GPU: typed messages on sim addresses
// (style integrated) or face copies through the sim copy engine (basic, pipelined).
#include <hgas/hgas.h>

#include <cstdint>
#include <cstdlib>

#include "device.hpp"

namespace seismic {
namespace {

void check(hgas_status_t st, const char *what) {
    if (st != HGAS_OK) {
        std::string m = std::string("seismic: sim device: ") + what + " failed";
        hgas_abort(1, m.c_str());
    }
}

class sim_device : public device {
public:
    ~sim_device() override {
        if (dev_) hgas_free(dev_);
    }
    std::string init(const setup &s) override {
        s_ = &s;
        if (!hgas_kind_available(HGAS_KIND_SIM))
            return "--kind sim: this job has no sim memory; set HGAS_SIM_HEAP_SIZE (e.g. 256M) to turn it on";
        uint64_t mine = s.cells, most = 0;
        if (hgas_allreduce(&most, &mine, 1, HGAS_UINT64, HGAS_OP_MAX) != HGAS_OK) return "allreduce of the slab size failed";
        const size_t bytes = static_cast<size_t>(most) * k_wave_fields * sizeof(float);
        void *p = nullptr;
        hgas_status_t st = hgas_malloc_kind(bytes, HGAS_KIND_SIM, &p);
        if (st != HGAS_OK)
            return "--kind sim: allocating " + std::to_string(bytes >> 20) +
                   " MiB of sim memory for the wave fields failed; raise HGAS_SIM_HEAP_SIZE";
        dev_ = static_cast<float *>(p);
        shadow_.assign(static_cast<size_t>(NFIELDS) * s.cells, 0.0f);
        fill_medium(s, shadow_.data() + LAM * s.cells, shadow_.data() + MU * s.cells, shadow_.data() + RHO * s.cells);
        v_ = make_view(s, shadow_.data(), s.prof_x.data(), s.prof_y.data(), s.prof_z.data());
        for (int f = 0; f < k_wave_fields; ++f) upload(f);  // zeros: sim memory starts undefined
        for (const receiver &r : s.recs)
            if (r.owner == s.rank) mine_.push_back(s.at(r.i, r.j, r.k));
        return "";
    }
    float *field(int f) override {
        return f < k_wave_fields ? dev_ + static_cast<size_t>(f) * s_->cells : v_.f[f];
    }
    // Part all: every wave field in, update, the written ones out. Part interior: every
    // wave field in (the halos may be arriving meanwhile: the interior does not read them),
    // update the interior, nothing out yet; part rim then brings in only the halos of the
    // fields it reads, updates the rim and writes the fields out.
    void stress(double src, part p, const poll_fn &poll) override {
        if (p == part::rim) for (int f = VX; f <= VZ; ++f) download_halos(f);
        else for (int f = 0; f < k_wave_fields; ++f) download(f);
        for (const box &b : boxes(*s_, p)) cpu_stress(v_, b, poll);
        if (p == part::interior) return;
        if (src != 0 && s_->src_owner == s_->rank) {
            const size_t c = s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk);
            const float a = static_cast<float>(src);
            v_.f[SXX][c] += a, v_.f[SYY][c] += a, v_.f[SZZ][c] += a;
        }
        for (int f = SXX; f <= SYZ; ++f) upload(f);
    }
    void velocity(double src, int dir, part p, const poll_fn &poll) override {
        if (p == part::rim) for (int f = SXX; f <= SYZ; ++f) download_halos(f);
        else for (int f = 0; f < k_wave_fields; ++f) download(f);
        for (const box &b : boxes(*s_, p)) cpu_velocity(v_, b, poll);
        if (p == part::interior) return;
        if (src != 0 && s_->src_owner == s_->rank)
            v_.f[VX + dir][s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk)] += static_cast<float>(src);
        for (int f = VX; f <= VZ; ++f) upload(f);
    }
    // The working copy holds what the last kernel wrote: the velocities after velocity().
    void record() override {
        for (size_t c : mine_)
            for (int f = VX; f <= VZ; ++f) rec_.push_back(v_.f[f][c]);
    }
    std::vector<float> records() override { return rec_; }
    energy_sum energy() override { return cpu_energy(*s_, v_); }
    void finish() override {}
    void to_host(void *dst, const float *src, size_t rows, size_t stride, int) override {
        const size_t nx = s_->opt.nx;
        if (stride == nx) return get(dst, src, rows * nx * sizeof(float));
        for (size_t r = 0; r < rows; ++r) get(static_cast<float *>(dst) + r * nx, src + r * stride, nx * sizeof(float));
    }
    void to_dev(float *dst, const void *src, size_t rows, size_t stride, int) override {
        const size_t nx = s_->opt.nx;
        if (stride == nx) return put(dst, src, rows * nx * sizeof(float));
        for (size_t r = 0; r < rows; ++r)
            put(dst + r * stride, static_cast<const float *>(src) + r * nx, nx * sizeof(float));
    }
    void set_streams(int) override {}
    int record_event(int) override { return 0; }
    bool done(int) override { return true; }
    void sync(int) override {}
    void *alloc_host(size_t bytes) override { return std::calloc(1, bytes); }
    void free_host(void *p) override { std::free(p); }

private:
    hgas_gptr_t gp(const void *p) {
        hgas_gptr_t g;
        check(hgas_ptr(p, hgas_rank_me(), &g), "hgas_ptr of a sim address");
        return g;
    }
    void get(void *dst, const float *src, size_t bytes) { check(hgas_get(dst, gp(src), bytes), "hgas_get"); }
    void put(float *dst, const void *src, size_t bytes) { check(hgas_put(gp(dst), src, bytes), "hgas_put"); }
    void download(int f) { get(v_.f[f], field(f), s_->cells * sizeof(float)); }
    void upload(int f) { put(field(f), v_.f[f], s_->cells * sizeof(float)); }
    // The halo cells of field f that neighbours write: the z halo planes (contiguous) and
    // the y halo rows of the owned planes (one get per row).
    void download_halos(int f) {
        const size_t nx = s_->opt.nx, plane = nx * (s_->nyl + 2);
        const float *d = field(f);
        float *h = v_.f[f];
        if (s_->zlo >= 0) get(h, d, plane * sizeof(float));
        if (s_->zhi >= 0) get(h + (s_->nzl + 1) * plane, d + (s_->nzl + 1) * plane, plane * sizeof(float));
        for (int kl = 1; kl <= s_->nzl; ++kl) {
            if (s_->ylo >= 0) get(h + kl * plane, d + kl * plane, nx * sizeof(float));
            if (s_->yhi >= 0) {
                const size_t o = kl * plane + (s_->nyl + 1) * nx;
                get(h + o, d + o, nx * sizeof(float));
            }
        }
    }

    const setup *s_ = nullptr;
    float *dev_ = nullptr;
    std::vector<float> shadow_;
    view v_{};
    std::vector<size_t> mine_;
    std::vector<float> rec_;
};

}  // namespace

std::unique_ptr<device> make_sim_device() { return std::make_unique<sim_device>(); }

}  // namespace seismic
