// The run's setup from the options: decomposition, layers, C-PML profiles, receivers. Every
// rank computes the same setup; only the slab bounds and neighbours are its own.
#include <cmath>
#include <cstdio>
#include <string>

#include "setup.hpp"

namespace seismic {
namespace {

std::string fmt(const char *f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}

// The 1-D C-PML profile of an axis of n points spaced h (the reference's formulas):
// d(x) = d0 (x/L)^NPOWER, K = 1 + (K_MAX - 1)(x/L)^NPOWER, alpha = ALPHA_MAX (1 - x/L),
// b = exp(-(d/K + alpha) dt), a = d (b - 1) / (K (d + K alpha)); x is the depth into the
// layer of thickness L = npml h, at the grid points and at the half points (+h/2).
std::vector<float> cpml_profile(int n, double h, const options &o, double cp) {
    std::vector<float> p(static_cast<size_t>(NPROFILES) * n);
    const double L = o.npml * h;
    const double d0 = L > 0 ? -(o.npower + 1) * cp * std::log(o.rcoef) / (2.0 * L) : 0.0;
    const double alpha_max = o.alpha_max >= 0 ? o.alpha_max : M_PI * o.f0;
    for (int i = 0; i < n; ++i)
        for (int half = 0; half < 2; ++half) {
            const double x = h * i + (half ? h / 2 : 0.0);
            double d = 0, K = 1, alpha = 0;
            if (L > 0) {
                double depth = -1;
                if (L - x >= 0) depth = L - x;                          // low face
                if (x - ((n - 1) * h - L) >= 0) depth = x - ((n - 1) * h - L);  // high face
                if (depth >= 0) {
                    const double r = depth / L, rp = std::pow(r, o.npower);
                    d = d0 * rp;
                    K = 1 + (o.k_max - 1) * rp;
                    alpha = alpha_max * (1 - r);
                    if (alpha < 0) alpha = 0;
                }
            }
            const double b = std::exp(-(d / K + alpha) * o.dt);
            const double a = std::fabs(d) > 1e-6 ? d * (b - 1) / (K * (d + K * alpha)) : 0.0;
            p[static_cast<size_t>(half ? P_AH : P_A) * n + i] = static_cast<float>(a);
            p[static_cast<size_t>(half ? P_BH : P_B) * n + i] = static_cast<float>(b);
            p[static_cast<size_t>(half ? P_KH : P_K) * n + i] = static_cast<float>(K);
        }
    return p;
}

// n cells over p parts, the first ones one more: start and size of part c.
void split(int n, int p, int c, int *start, int *size) {
    const int base = n / p, extra = n % p;
    *size = base + (c < extra ? 1 : 0);
    *start = c * base + (c < extra ? c : extra);
}

}  // namespace

bool setup::in_pml(int i, int j, int k) const {
    const int n = opt.npml;
    return i < n || i > opt.nx - 1 - n || j < n || j > opt.ny - 1 - n || k < n || k > opt.nz - 1 - n;
}

const layer &setup::layer_at(int k) const {
    const double z = k * opt.dz;
    size_t l = 0;
    while (l + 1 < opt.layers.size() && opt.layers[l + 1].z_top <= z) ++l;
    return opt.layers[l];
}

double setup::ricker(int it) const {
    const double tau = it * opt.dt - opt.t0, a = M_PI * M_PI * opt.f0 * opt.f0;
    return opt.factor * (1 - 2 * a * tau * tau) * std::exp(-a * tau * tau) * opt.dt;
}

std::string make_setup(const options &in, int rank, int nranks, setup &s) {
    s.opt = in;
    options &o = s.opt;
    s.rank = rank, s.nranks = nranks;
    if (o.t0 < 0) o.t0 = 1.2 / o.f0;
    if (o.layers.empty()) {
        if (o.model == "layered") {  // three layers, slower on top (README.md)
            const double depth = o.nz * o.dz;
            o.layers = {{0, 2000, 1155, 2000}, {depth / 3, 2800, 1617, 2500}, {2 * depth / 3, 3300, 1905, 2800}};
        } else {
            o.layers = {{0, 3300, 3300 / 1.732, 2800}};
        }
    }
    if (o.layers[0].z_top != 0) return fmt("--layer: the first layer starts at depth %g m; it must start at 0", o.layers[0].z_top);
    for (const layer &l : o.layers) s.cp_max = std::max(s.cp_max, l.cp);
    s.courant = s.cp_max * o.dt * std::sqrt(1 / (o.dx * o.dx) + 1 / (o.dy * o.dy) + 1 / (o.dz * o.dz));
    if (s.courant > 1)
        return fmt("Courant number cp dt sqrt(1/dx2 + 1/dy2 + 1/dz2) = %.4f > 1 (cp %g m/s, dt %g s): the scheme "
                   "is unstable; use a smaller --dt (at most %.4g s)",
                   s.courant, s.cp_max, o.dt, o.dt / s.courant);
    if (2 * o.npml + 2 > std::min(o.nx, std::min(o.ny, o.nz)))
        return fmt("--pml %g: the grid (%g x %g x %g) needs more than twice the PML points on every axis",
                   o.npml, o.nx, o.ny, o.nz);
    // decomposition
    if (o.pz == 0) {
        if (nranks % o.py) return fmt("--decomp %gx?: %g ranks are not a multiple of %g ranks along y", o.py, nranks, o.py);
        o.pz = nranks / o.py;
    }
    if (o.py * o.pz != nranks)
        return fmt("--decomp %gx%g is %g ranks but the job has %g; give PY x PZ = the rank count", o.py, o.pz,
                   o.py * o.pz, nranks);
    if (o.pz > o.nz || o.py > o.ny)
        return fmt("--decomp %gx%g: more ranks than planes (%g along y, %g along z); every rank needs one", o.py,
                   o.pz, o.ny, o.nz);
    s.cy = rank % o.py, s.cz = rank / o.py;
    split(o.ny, o.py, s.cy, &s.j0, &s.nyl);
    split(o.nz, o.pz, s.cz, &s.k0, &s.nzl);
    s.ylo = s.cy > 0 ? rank - 1 : -1;
    s.yhi = s.cy + 1 < o.py ? rank + 1 : -1;
    s.zlo = s.cz > 0 ? rank - o.py : -1;
    s.zhi = s.cz + 1 < o.pz ? rank + o.py : -1;
    s.cells = static_cast<size_t>(o.nx) * (s.nyl + 2) * (s.nzl + 2);
    // profiles (d0 from the fastest P velocity, as the reference does with its one cp)
    s.prof_x = cpml_profile(o.nx, o.dx, o, s.cp_max);
    s.prof_y = cpml_profile(o.ny, o.dy, o, s.cp_max);
    s.prof_z = cpml_profile(o.nz, o.dz, o, s.cp_max);
    // source and receivers
    if (o.si < 0) o.si = o.nx / 2, o.sj = o.ny / 2, o.sk = o.nz / 2;
    if (o.si >= o.nx || o.sj >= o.ny || o.sk >= o.nz)
        return fmt("--src %g,%g,%g lies outside the grid", o.si, o.sj, o.sk) + fmt(" (%g x %g x %g)", o.nx, o.ny, o.nz);
    auto owner = [&](int j, int k) {
        int cy = 0, cz = 0, st, sz;
        for (int c = 0; c < o.py; ++c) { split(o.ny, o.py, c, &st, &sz); if (j >= st && j < st + sz) cy = c; }
        for (int c = 0; c < o.pz; ++c) { split(o.nz, o.pz, c, &st, &sz); if (k >= st && k < st + sz) cz = c; }
        return cz * o.py + cy;
    };
    s.src_owner = owner(o.sj, o.sk);
    if (o.rec_offsets.empty() && o.recs.empty())
        for (int d = 10; o.si + d < o.nx - o.npml; d += 10) o.rec_offsets.push_back(d);
    for (int d : o.rec_offsets) {
        if (o.si + d < 0 || o.si + d >= o.nx)
            return fmt("--rec-offsets %g: the receiver at i = %g lies outside the grid (0..%g)", d, o.si + d, o.nx - 1);
        s.recs.push_back({o.si + d, o.sj, o.sk, owner(o.sj, o.sk)});
    }
    for (const auto &r : o.recs) {
        if (r[0] >= o.nx || r[1] >= o.ny || r[2] >= o.nz)
            return fmt("--rec %g,%g,%g lies outside the grid", r[0], r[1], r[2]);
        s.recs.push_back({r[0], r[1], r[2], owner(r[1], r[2])});
    }
    return "";
}

}  // namespace seismic
