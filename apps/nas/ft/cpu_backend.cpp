// nas-ft's host compute: FFTW (its own threads inside each plan) and a thread team for the
// initial field, evolve and the copies of Packed Slabs.
#include <fftw3.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "classes.hpp"
#include "npb_random.hpp"
#include "team.hpp"
#include "util.hpp"

namespace ft {

void twiddle_1d(int n, double *out) {
    const double ap = -4.0 * kAlpha * kPi * kPi;
    for (int i = 0; i < n; ++i) {
        const int k = i < n / 2 ? i : i - n;  // NPB: mod(i + n/2, n) - n/2
        out[i] = std::exp(ap * double(k) * double(k));
    }
}

std::mutex &fftw_planner_lock() {
    static std::mutex planner;  // the process's, as FFTW's planner state is
    return planner;
}

namespace {

fftw_complex *fc(cplx *p) { return reinterpret_cast<fftw_complex *>(p); }

class cpu_backend final : public backend {
public:
    cpu_backend(const layout &l, const arrays &a, int threads, bool measure)
        : l_(l), a_(a), threads_(threads), flags_(measure ? FFTW_MEASURE : FFTW_ESTIMATE), team_(threads) {
        {
            std::lock_guard<std::mutex> g(fftw_planner_lock());
            fftw_init_threads();
        }
        fx_.resize(l.nx);
        fy_.resize(l.ny);
        fz_.resize(l.nz);
        twiddle_1d(l.nx, fx_.data());
        twiddle_1d(l.ny, fy_.data());
        twiddle_1d(l.nz, fz_.data());
        name_ = std::string(fftw_version) + ", " + std::to_string(threads_) + " thread(s)";
    }
    ~cpu_backend() override {
        std::lock_guard<std::mutex> g(fftw_planner_lock());
        for (auto &p : plans_) fftw_destroy_plan(p.second);
    }

    const char *name() const override { return name_.c_str(); }
    int threads() const override { return threads_; }

    void plan(const arrays &a, int group, int chunk) override {
        const int zc = l_.my_zc(), yc = l_.my_yc();
        for (int g : {group, zc % group, zc})
            if (g > 0)
                for (int dir : {-1, 1}) xy_plan(g, dir);
        for (int c : {chunk, yc % chunk, yc})
            if (c > 0) {
                z_plan(c, true);
                z_plan(c, false);
            }
        (void)a;
    }

    void init_field(bool perturb) override {
        const size_t plane = l_.plane();
        const int z0 = l_.z0[l_.me], zc = l_.my_zc();
        const uint64_t a = nas::to46(kMultiplier), seed = nas::to46(kSeed);
        double *u = reinterpret_cast<double *>(a_.slab);
        // Row r of the slab (nx points) starts 2*nx*r steps into the sequence (x fastest, then
        // y, then z; real then imaginary part), where NPB's single generator would be there.
        const int64_t row0 = int64_t(z0) * l_.ny;
        team_.parallel_for(0, int64_t(zc) * l_.ny, [&](int64_t ra, int64_t rb) {
            uint64_t x = nas::mul46(seed, nas::pow46(a, 2 * uint64_t(l_.nx) * uint64_t(row0 + ra)));
            double *p = u + 2 * size_t(l_.nx) * size_t(ra);
            for (size_t i = 0, e = 2 * size_t(l_.nx) * size_t(rb - ra); i < e; ++i) {
                x = nas::mul46(a, x);
                p[i] = double(x) * nas::kR46;
            }
        });
        (void)plane;
        if (perturb && z0 == 0) a_.slab[0] += cplx(1e-6, 0);
    }

    void fft_xy(int za, int zb, int dir) override {
        if (zb <= za) return;
        cplx *p = a_.slab + size_t(za) * l_.plane();
        fftw_execute_dft(xy_plan(zb - za, dir), fc(p), fc(p));
    }

    void fft_z_forward(int ya, int yb) override {
        if (yb <= ya) return;
        cplx *p = a_.pencil + size_t(ya) * l_.nx;
        fftw_execute_dft(z_plan(yb - ya, true), fc(p), fc(p));
    }

    void evolve_inverse_z(int ya, int yb) override {
        if (yb <= ya) return;
        const int nx = l_.nx, yc = l_.my_yc(), y0 = l_.y0[l_.me];
        const int rows = yb - ya;
        team_.parallel_for(0, int64_t(l_.nz) * rows, [&](int64_t a, int64_t b) {
            for (int64_t i = a; i < b; ++i) {
                const int z = int(i / rows), yl = ya + int(i % rows);
                cplx *row = a_.pencil + (size_t(z) * yc + yl) * nx;
                const double fzy = fz_[z] * fy_[y0 + yl];
                for (int x = 0; x < nx; ++x) row[x] *= fzy * fx_[x];
            }
        });
        const size_t off = size_t(ya) * nx;
        fftw_execute_dft(z_plan(yb - ya, false), fc(a_.pencil + off), fc(a_.work + off));
    }

    cplx checksum() override {
        const int nx = l_.nx, ny = l_.ny, nz = l_.nz, z0 = l_.z0[l_.me], zc = l_.my_zc();
        cplx chk(0, 0);
        for (int j = 1; j <= 1024; ++j) {
            const int q = j % nx, r = (3 * j) % ny, s = (5 * j) % nz;
            if (s >= z0 && s < z0 + zc) chk += a_.slab[(size_t(s - z0) * ny + r) * nx + q];
        }
        return chk;
    }

    void copy2d(cplx *dst, size_t dpitch, const cplx *src, size_t spitch, size_t width, size_t rows) override {
        if (rows == 1) {  // one block: split it
            team_.parallel_for(0, int64_t(width), [&](int64_t a, int64_t b) {
                std::memcpy(dst + a, src + a, size_t(b - a) * sizeof(cplx));
            });
            return;
        }
        team_.parallel_for(0, int64_t(rows), [&](int64_t a, int64_t b) {
            for (int64_t r = a; r < b; ++r)
                std::memcpy(dst + r * dpitch, src + r * spitch, width * sizeof(cplx));
        });
    }

    void sync() override {}

private:
    // 2-D transforms of g consecutive planes of the slab.
    fftw_plan xy_plan(int g, int dir) {
        const auto key = std::make_pair(g * 4 + (dir < 0 ? 0 : 1), 0);
        auto it = plans_.find(key);
        if (it != plans_.end()) return it->second;
        int n[2] = {l_.ny, l_.nx};
        const int dist = int(l_.plane());
        std::lock_guard<std::mutex> lock(fftw_planner_lock());
        fftw_plan_with_nthreads(threads_);
        fftw_plan p = fftw_plan_many_dft(2, n, g, fc(a_.slab), nullptr, 1, dist, fc(a_.slab), nullptr, 1, dist,
                                         dir < 0 ? FFTW_FORWARD : FFTW_BACKWARD, flags_);
        if (!p) nas::die("nas-ft: FFTW could not plan the x-y transforms of " + std::to_string(g) + " planes");
        return plans_[key] = p;
    }
    // z transforms of c consecutive rows (c * nx columns, stride yc * nx): forward in place on
    // the pencil, inverse from the pencil into work.
    fftw_plan z_plan(int c, bool forward) {
        const auto key = std::make_pair(c * 4 + (forward ? 2 : 3), 1);
        auto it = plans_.find(key);
        if (it != plans_.end()) return it->second;
        int n[1] = {l_.nz};
        const int stride = l_.my_yc() * l_.nx, howmany = c * l_.nx;
        fftw_complex *in = fc(a_.pencil), *out = forward ? fc(a_.pencil) : fc(a_.work);
        std::lock_guard<std::mutex> lock(fftw_planner_lock());
        fftw_plan_with_nthreads(threads_);
        fftw_plan p = fftw_plan_many_dft(1, n, howmany, in, nullptr, stride, 1, out, nullptr, stride, 1,
                                         forward ? FFTW_FORWARD : FFTW_BACKWARD,
                                         flags_ | (forward ? 0u : unsigned(FFTW_PRESERVE_INPUT)));
        if (!p) nas::die("nas-ft: FFTW could not plan the z transforms of " + std::to_string(c) + " rows");
        return plans_[key] = p;
    }

    const layout &l_;
    arrays a_;
    int threads_;
    unsigned flags_;
    std::vector<double> fx_, fy_, fz_;
    nas::team team_;
    std::map<std::pair<int, int>, fftw_plan> plans_;
    std::string name_;
};

}  // namespace

std::unique_ptr<backend> make_cpu_backend(const layout &l, const arrays &a, int threads, bool measure) {
    return std::make_unique<cpu_backend>(l, a, threads, measure);
}

}  // namespace ft
