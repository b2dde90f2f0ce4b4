// MG's operators on the CPU: NPB's loops, each row of i1 with the partial sums of NPB's
// resid/psinv/rprj3 (u1, u2, ...) kept in row buffers, so every point is summed in NPB's order.
// The planes (i3) are shared out over a thread team; every point's value and the norm's order
// of summation do not depend on the number of threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "backend.hpp"
#include "team.hpp"

namespace mg {
namespace {

inline size_t at(const box &b, int i1, int i2, int i3) {
    return size_t(i1) + size_t(b.n1 + 2) * (size_t(i2) + size_t(b.n2 + 2) * size_t(i3));
}

class host_backend final : public backend {
public:
    explicit host_backend(int threads) : team_(threads) {}
    const char *name() const override { return "host"; }
    int threads() const override { return team_.size(); }
    double *alloc(size_t count) override { return new double[count](); }
    void release(double *p) override { delete[] p; }
    double *alloc_scratch(size_t count) override { return new double[count](); }
    void release_scratch(double *p) override { delete[] p; }

    void zero(box b) override { std::fill(b.p, b.p + b.count(), 0.0); }

    void resid(box u, box v, box r, const double a[4]) override {
        planes(u.n3, [&](int i3a, int i3b) {
        const int w = u.n1 + 2;
        std::vector<double> row1(w), row2(w);
        double *u1 = row1.data(), *u2 = row2.data();
        for (int i3 = i3a; i3 < i3b; ++i3)
            for (int i2 = 1; i2 <= u.n2; ++i2) {
                const double *c = &u.p[at(u, 0, i2, i3)];
                const double *ym = &u.p[at(u, 0, i2 - 1, i3)], *yp = &u.p[at(u, 0, i2 + 1, i3)];
                const double *zm = &u.p[at(u, 0, i2, i3 - 1)], *zp = &u.p[at(u, 0, i2, i3 + 1)];
                const double *mm = &u.p[at(u, 0, i2 - 1, i3 - 1)], *pm = &u.p[at(u, 0, i2 + 1, i3 - 1)];
                const double *mp = &u.p[at(u, 0, i2 - 1, i3 + 1)], *pp = &u.p[at(u, 0, i2 + 1, i3 + 1)];
                for (int i1 = 0; i1 < w; ++i1) {
                    u1[i1] = ym[i1] + yp[i1] + zm[i1] + zp[i1];
                    u2[i1] = mm[i1] + pm[i1] + mp[i1] + pp[i1];
                }
                const double *vv = &v.p[at(v, 0, i2, i3)];
                double *rr = &r.p[at(r, 0, i2, i3)];
                for (int i1 = 1; i1 <= u.n1; ++i1)
                    rr[i1] = vv[i1] - a[0] * c[i1] - a[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) -
                             a[3] * (u2[i1 - 1] + u2[i1 + 1]);
            }
        });
    }

    void psinv(box r, box u, const double c[4]) override {
        planes(r.n3, [&](int i3a, int i3b) {
        const int w = r.n1 + 2;
        std::vector<double> row1(w), row2(w);
        double *r1 = row1.data(), *r2 = row2.data();
        for (int i3 = i3a; i3 < i3b; ++i3)
            for (int i2 = 1; i2 <= r.n2; ++i2) {
                const double *rc = &r.p[at(r, 0, i2, i3)];
                const double *ym = &r.p[at(r, 0, i2 - 1, i3)], *yp = &r.p[at(r, 0, i2 + 1, i3)];
                const double *zm = &r.p[at(r, 0, i2, i3 - 1)], *zp = &r.p[at(r, 0, i2, i3 + 1)];
                const double *mm = &r.p[at(r, 0, i2 - 1, i3 - 1)], *pm = &r.p[at(r, 0, i2 + 1, i3 - 1)];
                const double *mp = &r.p[at(r, 0, i2 - 1, i3 + 1)], *pp = &r.p[at(r, 0, i2 + 1, i3 + 1)];
                for (int i1 = 0; i1 < w; ++i1) {
                    r1[i1] = ym[i1] + yp[i1] + zm[i1] + zp[i1];
                    r2[i1] = mm[i1] + pm[i1] + mp[i1] + pp[i1];
                }
                double *uu = &u.p[at(u, 0, i2, i3)];
                for (int i1 = 1; i1 <= r.n1; ++i1)
                    uu[i1] = uu[i1] + c[0] * rc[i1] + c[1] * (rc[i1 - 1] + rc[i1 + 1] + r1[i1]) +
                             c[2] * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
            }
        });
    }

    void rprj3(box f, box s) override {
        planes(s.n3, [&](int j3a, int j3b) {
        const int w = f.n1 + 2;
        std::vector<double> row1(w), row2(w);
        double *x1 = row1.data(), *y1 = row2.data();
        for (int j3 = j3a; j3 < j3b; ++j3)
            for (int j2 = 1; j2 <= s.n2; ++j2) {
                const int i3 = 2 * j3, i2 = 2 * j2;
                const double *rc = &f.p[at(f, 0, i2, i3)];
                const double *ym = &f.p[at(f, 0, i2 - 1, i3)], *yp = &f.p[at(f, 0, i2 + 1, i3)];
                const double *zm = &f.p[at(f, 0, i2, i3 - 1)], *zp = &f.p[at(f, 0, i2, i3 + 1)];
                const double *mm = &f.p[at(f, 0, i2 - 1, i3 - 1)], *mp = &f.p[at(f, 0, i2 - 1, i3 + 1)];
                const double *pm = &f.p[at(f, 0, i2 + 1, i3 - 1)], *pp = &f.p[at(f, 0, i2 + 1, i3 + 1)];
                for (int i1 = 1; i1 < w; ++i1) {
                    x1[i1] = ym[i1] + yp[i1] + zm[i1] + zp[i1];
                    y1[i1] = mm[i1] + mp[i1] + pm[i1] + pp[i1];
                }
                double *ss = &s.p[at(s, 0, j2, j3)];
                for (int j1 = 1; j1 <= s.n1; ++j1) {
                    const int i1 = 2 * j1;
                    const double y2 = mm[i1] + mp[i1] + pm[i1] + pp[i1];
                    const double x2 = ym[i1] + yp[i1] + zm[i1] + zp[i1];
                    ss[j1] = 0.5 * rc[i1] + 0.25 * (rc[i1 - 1] + rc[i1 + 1] + x2) +
                             0.125 * (x1[i1 - 1] + x1[i1 + 1] + y2) + 0.0625 * (y1[i1 - 1] + y1[i1 + 1]);
                }
            }
        });
    }

    void interp(box z, box u, const int coff[3]) override {
        auto Z = [&](int a, int b, int c) { return z.p[at(z, a, b, c)]; };
        team_.parallel_for(0, u.n3 + 2, [&](int64_t l3a, int64_t l3b) {
        for (int l3 = int(l3a); l3 < int(l3b); ++l3)
            for (int l2 = 0; l2 <= u.n2 + 1; ++l2) {
                const int c3 = (l3 >> 1) + coff[2], c2 = (l2 >> 1) + coff[1];
                const int o = (l2 & 1) | ((l3 & 1) << 1);
                double *uu = &u.p[at(u, 0, l2, l3)];
                for (int l1 = 0; l1 <= u.n1 + 1; ++l1) {
                    const int c1 = (l1 >> 1) + coff[0];
                    const bool mid = l1 & 1;
                    double val;
                    switch (o) {
                    case 0:
                        val = mid ? 0.5 * (Z(c1 + 1, c2, c3) + Z(c1, c2, c3)) : Z(c1, c2, c3);
                        break;
                    case 1: {  // between along i2
                        const double a = Z(c1, c2 + 1, c3) + Z(c1, c2, c3);
                        val = mid ? 0.25 * (a + (Z(c1 + 1, c2 + 1, c3) + Z(c1 + 1, c2, c3))) : 0.5 * a;
                        break;
                    }
                    case 2: {  // between along i3
                        const double a = Z(c1, c2, c3 + 1) + Z(c1, c2, c3);
                        val = mid ? 0.25 * (a + (Z(c1 + 1, c2, c3 + 1) + Z(c1 + 1, c2, c3))) : 0.5 * a;
                        break;
                    }
                    default: {  // between along i2 and i3
                        const double a = Z(c1, c2 + 1, c3 + 1) + Z(c1, c2, c3 + 1) + (Z(c1, c2 + 1, c3) + Z(c1, c2, c3));
                        val = mid ? 0.125 * (a + (Z(c1 + 1, c2 + 1, c3 + 1) + Z(c1 + 1, c2, c3 + 1) +
                                                  (Z(c1 + 1, c2 + 1, c3) + Z(c1 + 1, c2, c3))))
                                  : 0.25 * a;
                        break;
                    }
                    }
                    uu[l1] = uu[l1] + val;
                }
            }
        });
    }

    // Each row's squares summed along i1, the rows of a plane in order, the planes in order:
    // the order ops_cuda.cu's norm uses too, so both give the same bits.
    void norm2(box r, double *sum, double *max) override {
        plane_sum_.assign(r.n3, 0.0);
        plane_max_.assign(r.n3, 0.0);
        planes(r.n3, [&](int i3a, int i3b) {
            for (int i3 = i3a; i3 < i3b; ++i3) {
                double plane = 0, m = 0;
                for (int i2 = 1; i2 <= r.n2; ++i2) {
                    const double *rr = &r.p[at(r, 0, i2, i3)];
                    double row = 0;
                    for (int i1 = 1; i1 <= r.n1; ++i1) {
                        row += rr[i1] * rr[i1];
                        m = std::max(m, std::fabs(rr[i1]));
                    }
                    plane += row;
                }
                plane_sum_[i3 - 1] = plane;
                plane_max_[i3 - 1] = m;
            }
        });
        double s = 0, m = 0;
        for (int p = 0; p < r.n3; ++p) {
            s += plane_sum_[p];
            m = std::max(m, plane_max_[p]);
        }
        *sum = s;
        *max = m;
    }

    void pack(box b, const region &g, double *buf) override {
        const int len = g.hi[0] - g.lo[0] + 1;
        for (int i3 = g.lo[2]; i3 <= g.hi[2]; ++i3)
            for (int i2 = g.lo[1]; i2 <= g.hi[1]; ++i2, buf += len)
                std::memcpy(buf, &b.p[at(b, g.lo[0], i2, i3)], len * sizeof(double));
    }

    void unpack(box b, const region &g, const double *buf) override {
        const int len = g.hi[0] - g.lo[0] + 1;
        for (int i3 = g.lo[2]; i3 <= g.hi[2]; ++i3)
            for (int i2 = g.lo[1]; i2 <= g.hi[1]; ++i2, buf += len)
                std::memcpy(&b.p[at(b, g.lo[0], i2, i3)], buf, len * sizeof(double));
    }

    void copy(box b, const region &from, const region &to) override {
        const int len = from.hi[0] - from.lo[0] + 1;
        for (int k = 0; k <= from.hi[2] - from.lo[2]; ++k)
            for (int j = 0; j <= from.hi[1] - from.lo[1]; ++j)
                std::memmove(&b.p[at(b, to.lo[0], to.lo[1] + j, to.lo[2] + k)],
                             &b.p[at(b, from.lo[0], from.lo[1] + j, from.lo[2] + k)], len * sizeof(double));
    }

    void upload(double *dst, const double *host, size_t count) override {
        std::memcpy(dst, host, count * sizeof(double));
    }
    void download(double *host, const double *src, size_t count) override {
        std::memcpy(host, src, count * sizeof(double));
    }
    void sync() override {}

private:
    // Runs body(first, end) over the planes 1..n of a box, split over the team.
    template <class F>
    void planes(int n, F &&body) {
        team_.parallel_for(1, int64_t(n) + 1, [&](int64_t a, int64_t b) { body(int(a), int(b)); });
    }

    nas::team team_;
    std::vector<double> plane_sum_, plane_max_;
};

}  // namespace

std::unique_ptr<backend> make_host_backend(int threads) { return std::make_unique<host_backend>(threads); }

}  // namespace mg
