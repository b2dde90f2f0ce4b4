// Kind host: the arrays in the rank's host memory, updated by the CPU, one thread per rank.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "device.hpp"

namespace seismic {

void fill_medium(const setup &s, float *lam, float *mu, float *rho) {
    for (int kl = 0; kl < s.nzl + 2; ++kl) {
        const int k = std::clamp(s.k0 + kl - 1, 0, s.opt.nz - 1);
        const layer &l = s.layer_at(k);
        const double m = l.rho * l.cs * l.cs, la = l.rho * l.cp * l.cp - 2 * m;
        const size_t plane = static_cast<size_t>(s.opt.nx) * (s.nyl + 2), o = plane * kl;
        std::fill(lam + o, lam + o + plane, static_cast<float>(la));
        std::fill(mu + o, mu + o + plane, static_cast<float>(m));
        std::fill(rho + o, rho + o + plane, static_cast<float>(l.rho));
    }
}

view make_view(const setup &s, float *base, const float *px, const float *py, const float *pz) {
    view v{};
    for (int f = 0; f < NFIELDS; ++f) v.f[f] = base + static_cast<size_t>(f) * s.cells;
    v.px = px, v.py = py, v.pz = pz;
    v.nx = s.opt.nx, v.ny = s.opt.ny, v.nz = s.opt.nz;
    v.j0 = s.j0, v.k0 = s.k0, v.nyl = s.nyl, v.nzl = s.nzl;
    v.dt = static_cast<float>(s.opt.dt);
    v.idx = static_cast<float>(1 / s.opt.dx), v.idy = static_cast<float>(1 / s.opt.dy);
    v.idz = static_cast<float>(1 / s.opt.dz);
    return v;
}

std::vector<box> boxes(const setup &s, part p) {
    const int k0 = s.k0, k1 = s.k0 + s.nzl, j0 = s.j0, j1 = s.j0 + s.nyl;
    std::vector<box> b;
    if (p == part::all) b.push_back({k0, k1, j0, j1});
    else if (p == part::interior) b.push_back({k0 + 1, k1 - 1, j0 + 1, j1 - 1});
    else {
        b.push_back({k0, std::min(k0 + 1, k1), j0, j1});        // first plane
        b.push_back({std::max(k1 - 1, k0 + 1), k1, j0, j1});    // last plane (when not the first)
        b.push_back({k0 + 1, k1 - 1, j0, std::min(j0 + 1, j1)});  // first row of the planes between
        b.push_back({k0 + 1, k1 - 1, std::max(j1 - 1, j0 + 1), j1});  // last row (when not the first)
    }
    std::vector<box> out;
    for (const box &x : b)
        if (!x.empty()) out.push_back(x);
    return out;
}

void cpu_stress(const view &v, const box &b, const poll_fn &poll) {
    for (int k = b.k0; k < b.k1; ++k) {
        for (int j = b.j0; j < b.j1; ++j)
            for (int i = 0; i < v.nx; ++i) stress_cell(v, i, j, k);
        if (poll) poll();
    }
}

void cpu_velocity(const view &v, const box &b, const poll_fn &poll) {
    for (int k = b.k0; k < b.k1; ++k) {
        for (int j = b.j0; j < b.j1; ++j)
            for (int i = 0; i < v.nx; ++i) velocity_cell(v, i, j, k);
        if (poll) poll();
    }
}

energy_sum cpu_energy(const setup &s, const view &v) {
    energy_sum e;
    for (int k = v.k0; k < v.k0 + v.nzl; ++k)
        for (int j = v.j0; j < v.j0 + v.nyl; ++j)
            for (int i = 0; i < v.nx; ++i) {
                const size_t c = v.at(i, j, k);
                e.vmax = std::max({e.vmax, (double)std::fabs(v.f[VX][c]), (double)std::fabs(v.f[VY][c]),
                                   (double)std::fabs(v.f[VZ][c])});
                if (!s.in_pml(i, j, k)) e.energy += cell_energy(v, c);
            }
    return e;
}

namespace {

class host_device : public device {
public:
    std::string init(const setup &s) override {
        s_ = &s;
        mem_.assign(static_cast<size_t>(NFIELDS) * s.cells, 0.0f);
        fill_medium(s, field(LAM), field(MU), field(RHO));
        v_ = make_view(s, mem_.data(), s.prof_x.data(), s.prof_y.data(), s.prof_z.data());
        for (const receiver &r : s.recs)
            if (r.owner == s.rank) mine_.push_back(s.at(r.i, r.j, r.k));
        return "";
    }
    float *field(int f) override { return mem_.data() + static_cast<size_t>(f) * s_->cells; }
    void stress(double src, part p, const poll_fn &poll) override {
        for (const box &b : boxes(*s_, p)) cpu_stress(v_, b, poll);
        if (p != part::interior && src != 0 && s_->src_owner == s_->rank) {
            const size_t c = s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk);
            const float a = static_cast<float>(src);
            v_.f[SXX][c] += a, v_.f[SYY][c] += a, v_.f[SZZ][c] += a;
        }
    }
    void velocity(double src, int dir, part p, const poll_fn &poll) override {
        for (const box &b : boxes(*s_, p)) cpu_velocity(v_, b, poll);
        if (p != part::interior && src != 0 && s_->src_owner == s_->rank)
            v_.f[VX + dir][s_->at(s_->opt.si, s_->opt.sj, s_->opt.sk)] += static_cast<float>(src);
    }
    void record() override {
        for (size_t c : mine_)
            for (int f = VX; f <= VZ; ++f) rec_.push_back(v_.f[f][c]);
    }
    std::vector<float> records() override { return rec_; }
    energy_sum energy() override { return cpu_energy(*s_, v_); }
    void finish() override {}
    void to_host(void *dst, const float *src, size_t rows, size_t stride, int) override {
        const size_t nx = s_->opt.nx;
        float *d = static_cast<float *>(dst);
        for (size_t r = 0; r < rows; ++r) std::memcpy(d + r * nx, src + r * stride, nx * sizeof(float));
    }
    void to_dev(float *dst, const void *src, size_t rows, size_t stride, int) override {
        const size_t nx = s_->opt.nx;
        const float *h = static_cast<const float *>(src);
        for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * stride, h + r * nx, nx * sizeof(float));
    }
    void set_streams(int) override {}
    int record_event(int) override { return 0; }
    bool done(int) override { return true; }
    void sync(int) override {}
    void *alloc_host(size_t bytes) override { return std::calloc(1, bytes); }
    void free_host(void *p) override { std::free(p); }

private:
    const setup *s_ = nullptr;
    std::vector<float> mem_;
    view v_{};
    std::vector<size_t> mine_;
    std::vector<float> rec_;
};

}  // namespace

std::unique_ptr<device> make_host_device() { return std::make_unique<host_device>(); }

}  // namespace seismic
