#include "vcycle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "npb_random.hpp"
#include "util.hpp"

namespace mg {
namespace {

// An extremum of the random field: value and global 0-based linear index i1 + n*(i2 + n*i3).
struct extremum {
    double value, index;
};

// Keeps the m largest (sign +1) or smallest (sign -1) values seen, best first.
void offer(std::vector<extremum> &best, double sign, double v, double idx, size_t m) {
    if (best.size() == m && !(sign * v > sign * best.back().value)) return;
    auto pos = std::find_if(best.begin(), best.end(), [&](const extremum &e) { return sign * v > sign * e.value; });
    best.insert(pos, extremum{v, idx});
    if (best.size() > m) best.pop_back();
}

constexpr int kExtrema = 10;  // NPB's mm

}  // namespace

solver::solver(backend &be, const decomp &d, kind k, const double a[4], const double c[4])
    : be_(be), d_(d), ex_(be, d, k) {
    std::copy(a, a + 4, a_);
    std::copy(c, c + 4, c_);
    u_.resize(d.lt + 1);
    r_.resize(d.lt + 1);
    for (int l = 1; l <= d.lt; ++l) {
        u_[l] = make_box(l, !d.split(l));
        r_[l] = make_box(l, !d.split(l));
    }
    v_ = make_box(d.lt, false);
    if (d.kd > 1) whole_ = make_box(d.kd, true);
    for (int l = 1; l <= d.lt; ++l) {
        be_.zero(u_[l]);
        be_.zero(r_[l]);
    }
    be_.zero(v_);
    if (whole_.p) be_.zero(whole_);
    be_.sync();
}

solver::~solver() {
    if (whole_.p) be_.release(whole_.p);
    be_.release(v_.p);
    for (int l = d_.lt; l >= 1; --l) {
        be_.release(r_[l].p);
        be_.release(u_[l].p);
    }
}

box solver::make_box(int k, bool whole) {
    box b;
    b.n1 = whole ? 1 << k : d_.local(k, 0);
    b.n2 = whole ? 1 << k : d_.local(k, 1);
    b.n3 = whole ? 1 << k : d_.local(k, 2);
    b.p = be_.alloc(b.count());
    return b;
}

void solver::comm(int k, box b, phases &ph) {
    if (d_.split(k)) {
        ex_.comm3(b, ph);
    } else {
        nas::phase_timer t(&ph.comm);
        ex_.periodic(b);
        be_.sync();
    }
}

void solver::init_rhs(phases &ph) {
    const box &v = v_;
    const int n = 1 << d_.lt;
    const int o1 = d_.offset(d_.lt, 0), o2 = d_.offset(d_.lt, 1), o3 = d_.offset(d_.lt, 2);
    const uint64_t seed = 314159265, a = 1220703125;  // NPB's seed and a = 5^13
    std::vector<double> z(v.count(), 0.0);
    std::vector<extremum> big, small;
    auto at = [&](int i1, int i2, int i3) {
        return size_t(i1) + size_t(v.n1 + 2) * (size_t(i2) + size_t(v.n2 + 2) * size_t(i3));
    };
    // Point (g1, g2, g3) of the grid gets number g1 + n*g2 + n*n*g3 + 1 of the sequence, as in
    // NPB's zran3, where one generator runs through the whole grid in that order.
    for (int i3 = 1; i3 <= v.n3; ++i3)
        for (int i2 = 1; i2 <= v.n2; ++i2) {
            const uint64_t g = uint64_t(o1) + uint64_t(n) * (uint64_t(o2 + i2 - 1) + uint64_t(n) * uint64_t(o3 + i3 - 1));
            double x = double(nas::mul46(nas::pow46(a, g), seed));
            double *row = &z[at(1, i2, i3)];
            nas::vranlc(v.n1, &x, double(a), row);
            for (int i1 = 0; i1 < v.n1; ++i1) {
                const double idx = double(g + uint64_t(i1));
                offer(big, +1, row[i1], idx, kExtrema);
                offer(small, -1, row[i1], idx, kExtrema);
            }
        }
    // Every rank's candidates to every rank; each picks the same global 10 and 10.
    std::vector<double> mine(4 * kExtrema);
    for (int i = 0; i < kExtrema; ++i) {
        const bool hb = i < int(big.size()), hs = i < int(small.size());
        mine[2 * i] = hb ? big[i].value : -std::numeric_limits<double>::infinity();
        mine[2 * i + 1] = hb ? big[i].index : -1;
        mine[2 * (kExtrema + i)] = hs ? small[i].value : std::numeric_limits<double>::infinity();
        mine[2 * (kExtrema + i) + 1] = hs ? small[i].index : -1;
    }
    double *all = nullptr;
    nas::check(hgas_malloc(mine.size() * d_.ranks * sizeof(double), reinterpret_cast<void **>(&all)), "hgas_malloc");
    nas::check(hgas_fcollect(all, mine.data(), mine.size() * sizeof(double)), "hgas_fcollect (extrema)");
    big.clear();
    small.clear();
    for (int r = 0; r < d_.ranks; ++r)
        for (int i = 0; i < kExtrema; ++i) {
            const double *e = all + size_t(r) * mine.size();
            if (e[2 * i + 1] >= 0) offer(big, +1, e[2 * i], e[2 * i + 1], kExtrema);
            if (e[2 * (kExtrema + i) + 1] >= 0)
                offer(small, -1, e[2 * (kExtrema + i)], e[2 * (kExtrema + i) + 1], kExtrema);
        }
    nas::check(hgas_free(all), "hgas_free");
    std::fill(z.begin(), z.end(), 0.0);
    auto mark = [&](const std::vector<extremum> &list, double value) {
        for (const extremum &e : list) {
            const uint64_t g = uint64_t(e.index);
            const int g1 = int(g % n), g2 = int((g / n) % n), g3 = int(g / (uint64_t(n) * n));
            const int l1 = g1 - o1 + 1, l2 = g2 - o2 + 1, l3 = g3 - o3 + 1;
            if (l1 >= 1 && l1 <= v.n1 && l2 >= 1 && l2 <= v.n2 && l3 >= 1 && l3 <= v.n3) z[at(l1, l2, l3)] = value;
        }
    };
    mark(small, -1.0);
    mark(big, +1.0);
    be_.upload(v_.p, z.data(), z.size());
    comm(d_.lt, v_, ph);
    zero_u();
}

void solver::zero_u() {
    be_.zero(u_[d_.lt]);
    be_.sync();
}

void solver::residual(phases &ph) {
    {
        nas::phase_timer t(&ph.compute);
        be_.resid(u_[d_.lt], v_, r_[d_.lt], a_);
        be_.sync();
    }
    comm(d_.lt, r_[d_.lt], ph);
}

void solver::vcycle(phases &ph) {
    const int lt = d_.lt;
    auto compute = [&](auto &&op) {
        nas::phase_timer t(&ph.compute);
        op();
        be_.sync();
    };
    // Down: restrict the residual to the coarsest level (2 points per dimension).
    for (int k = lt; k >= 2; --k) {
        const int j = k - 1;
        if (d_.split(j)) {
            compute([&] { be_.rprj3(r_[k], r_[j]); });
        } else if (d_.split(k)) {  // k == kd: the levels below are replicated on every rank
            ex_.gather(r_[k], k, whole_, ph);
            compute([&] { be_.rprj3(whole_, r_[j]); });
        } else {
            compute([&] { be_.rprj3(r_[k], r_[j]); });
        }
        comm(j, r_[j], ph);
    }
    // Coarsest level: one smoothing step from u = 0.
    compute([&] {
        be_.zero(u_[1]);
        be_.psinv(r_[1], u_[1], c_);
    });
    comm(1, u_[1], ph);
    // Up: interpolate, take the residual, smooth.
    for (int k = 2; k <= lt; ++k) {
        int coff[3] = {0, 0, 0};
        if (d_.split(k) && !d_.split(k - 1))  // the coarse level is the whole grid
            for (int dd = 0; dd < 3; ++dd) coff[dd] = d_.offset(k, dd) / 2;
        compute([&] {
            if (k < lt) be_.zero(u_[k]);
            be_.interp(u_[k - 1], u_[k], coff);
            be_.resid(u_[k], k < lt ? r_[k] : v_, r_[k], a_);
        });
        comm(k, r_[k], ph);
        compute([&] { be_.psinv(r_[k], u_[k], c_); });
        comm(k, u_[k], ph);
    }
}

double solver::norm2(double *rnmu, phases &ph) {
    double s = 0, m = 0;
    {
        nas::phase_timer t(&ph.compute);
        be_.norm2(r_[d_.lt], &s, &m);
    }
    nas::phase_timer t(&ph.comm);
    nas::check(hgas_allreduce(&s, &s, 1, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce (norm)");
    nas::check(hgas_allreduce(&m, &m, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce (norm)");
    const double n = double(1 << d_.lt);
    *rnmu = m;
    return std::sqrt(s / (n * n * n));
}

}  // namespace mg
