// nas-ft on a 2-D process grid (grid2d.hpp): 1-D FFTW transforms along x, y and z, and the
// transposes as all-to-alls within the row and column teams made by hgas_team_split_2d.
// Packed Slabs on host memory: hgas_team_alltoall. Slabs (and any transpose into sim memory):
// one hgas_put_signal_nbi per team member of its block, then one signal wait. README.md
// ("2-D decomposition") has the data flow.
#include <fftw3.h>
#include <hgas/hgas.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "backend.hpp"
#include "classes.hpp"
#include "ft_run.hpp"
#include "grid2d.hpp"
#include "npb_random.hpp"
#include "team.hpp"
#include "util.hpp"

namespace ft {
namespace {

using nas::check;
constexpr size_t kC = sizeof(cplx);
fftw_complex *fc(cplx *p) { return reinterpret_cast<fftw_complex *>(p); }

// One direction of one team's transpose: the team, its size, this rank's number in it, the
// world rank of each member, the symmetric receive buffer (member k's block at k * block), the
// signal word counting its puts' arrivals, and how many exchanges it has made.
struct exchanger {
    hgas_team_t team = HGAS_TEAM_INVALID;
    int n = 1, me = 0;
    std::vector<int> world;
    size_t block = 0;
    cplx *recv = nullptr;   // symmetric, of the run's kind
    cplx *local = nullptr;  // kind sim: the host copy the CPU reads; else recv itself
    int word = 0;
    uint64_t epoch = 0;
};

class runner2d {
public:
    runner2d(const options &o, int threads)
        : o_(o), g_(o.prob.nx, o.prob.ny, o.prob.nz, o.p1, o.p2, hgas_rank_me()), team_(threads), threads_(threads) {
        hk_ = o.mem == kind::sim ? HGAS_KIND_SIM : HGAS_KIND_HOST;
        hgas_team_t row = HGAS_TEAM_INVALID, col = HGAS_TEAM_INVALID;
        check(hgas_team_split_2d(HGAS_TEAM_WORLD, g_.p2, &row, &col), "hgas_team_split_2d (nas-ft's process grid)");
        if (hgas_team_my_rank(row) != g_.j || hgas_team_my_rank(col) != g_.i)
            nas::die("nas-ft: hgas_team_split_2d numbered this rank differently from the grid");
        sig_ = static_cast<uint64_t *>(sym(4 * sizeof(uint64_t), HGAS_KIND_HOST));
        std::memset(sig_, 0, 4 * sizeof(uint64_t));
        setup(&rowx_, row, g_.p2, g_.j, g_.row_block(), 0, [&](int k) { return g_.i * g_.p2 + k; });
        setup(&colx_, col, g_.p1, g_.i, g_.col_block(), 1, [&](int k) { return k * g_.p2 + g_.j; });
        A_ = host(g_.a_elems());
        B_ = host(g_.b_elems());
        C_ = host(g_.c_elems());
        W_ = host(g_.c_elems());
        send_ = host(std::max(size_t(g_.p2) * g_.row_block(), size_t(g_.p1) * g_.col_block()));
        fx_.resize(g_.nx);
        fy_.resize(g_.ny);
        fz_.resize(g_.nz);
        twiddle_1d(g_.nx, fx_.data());
        twiddle_1d(g_.ny, fy_.data());
        twiddle_1d(g_.nz, fz_.data());
        plan();
        teams_[0] = row;
        teams_[1] = col;
        check(hgas_barrier(), "hgas_barrier");  // every rank's signal words are zero
    }

    ~runner2d() {
        {
            std::lock_guard<std::mutex> g(fftw_planner_lock());
            for (fftw_plan p : plans_) fftw_destroy_plan(p);
        }
        for (hgas_team_t t : teams_)
            if (t != HGAS_TEAM_INVALID) hgas_team_destroy(t);
        for (void *p : sym_) hgas_free(p);
        for (void *p : host_) fftw_free(p);
    }

    run_result run() {
        run_result r;
        r.threads = threads_;
        r.backend = std::string(fftw_version) + ", " + std::to_string(threads_) + " thread(s), grid " +
                    std::to_string(g_.p1) + "x" + std::to_string(g_.p2);
        init_field();  // the untimed warm-up, as NPB
        forward();
        ph_ = phases();
        fft_s_ = 0;
        check(hgas_barrier(), "hgas_barrier");
        const double t0 = nas::now(), c0 = nas::cpu_seconds();
        {
            nas::phase_timer t(&ph_.compute);
            init_field();
        }
        forward();
        for (int it = 0; it < o_.prob.niter; ++it) {
            inverse();
            r.sums.push_back(checksum());
        }
        const double t1 = nas::now();
        r.cpu_seconds = nas::cpu_seconds() - c0;
        double el = t1 - t0;
        check(hgas_allreduce(&r.seconds, &el, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
        r.ph = ph_;
        r.fft_seconds = fft_s_;
        return r;
    }

private:
    void *sym(size_t bytes, hgas_kind_t k) {
        void *p = nullptr;
        check(hgas_malloc_kind(bytes, k, &p), "hgas_malloc_kind (nas-ft's receive buffers; see README.md, \"Memory\")");
        sym_.push_back(p);
        return p;
    }
    cplx *host(size_t elems) {
        void *p = fftw_malloc(std::max<size_t>(elems, 1) * kC);
        if (!p) nas::die("nas-ft: out of host memory for " + std::to_string(elems * kC) + " bytes");
        host_.push_back(p);
        return static_cast<cplx *>(p);
    }
    template <class World>
    void setup(exchanger *x, hgas_team_t t, int n, int me, size_t block, int word, World world) {
        x->team = t;
        x->n = n;
        x->me = me;
        x->block = block;
        x->word = word;
        for (int k = 0; k < n; ++k) x->world.push_back(world(k));
        x->recv = static_cast<cplx *>(sym(size_t(n) * block * kC, hk_));
        x->local = o_.mem == kind::sim ? host(size_t(n) * block) : x->recv;
    }

    void plan() {
        const unsigned flags = o_.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
        std::lock_guard<std::mutex> lock(fftw_planner_lock());  // the whole planning: FFTW's planner is global
        fftw_init_threads();
        fftw_plan_with_nthreads(threads_);
        const int nx = g_.nx, ny = g_.ny, nz = g_.nz, xb = g_.xb(), zc = g_.zc(), ya = g_.ya(), yc = g_.yc();
        auto ok = [&](fftw_plan p, const char *what) {
            if (!p) nas::die(std::string("nas-ft: FFTW could not plan the ") + what);
            plans_.push_back(p);
            return p;
        };
        for (int d = 0; d < 2; ++d) {
            const int sign = d == 0 ? FFTW_FORWARD : FFTW_BACKWARD;
            int n[1] = {nx};
            px_[d] = ok(fftw_plan_many_dft(1, n, zc * ya, fc(A_), nullptr, 1, nx, fc(A_), nullptr, 1, nx, sign, flags),
                        "x transforms");
            fftw_iodim dim = {ny, xb, xb};
            fftw_iodim many[2] = {{zc, ny * xb, ny * xb}, {xb, 1, 1}};
            py_[d] = ok(fftw_plan_guru_dft(1, &dim, 2, many, fc(B_), fc(B_), sign, flags), "y transforms");
        }
        int n[1] = {nz};
        const int s = yc * xb;
        pz_fwd_ = ok(fftw_plan_many_dft(1, n, s, fc(C_), nullptr, s, 1, fc(C_), nullptr, s, 1, FFTW_FORWARD, flags),
                     "z transforms");
        pz_inv_ = ok(fftw_plan_many_dft(1, n, s, fc(C_), nullptr, s, 1, fc(W_), nullptr, s, 1, FFTW_BACKWARD,
                                        flags | FFTW_PRESERVE_INPUT),
                     "inverse z transforms");
    }

    void fft(fftw_plan p, cplx *in, cplx *out) {
        nas::phase_timer t(&ph_.compute), f(&fft_s_);
        fftw_execute_dft(p, fc(in), fc(out));
    }

    // NPB's initial field on A's rows: row (z, y) starts 2 nx ((z0 + z) ny + y0 + y) steps in.
    void init_field() {
        const uint64_t a = nas::to46(kMultiplier), seed = nas::to46(kSeed);
        const int nx = g_.nx, ya = g_.ya(), z0 = g_.zA0[g_.i], y0 = g_.yA0[g_.j];
        double *u = reinterpret_cast<double *>(A_);
        team_.parallel_for(0, int64_t(g_.zc()) * ya, [&](int64_t ra, int64_t rb) {
            for (int64_t r = ra; r < rb; ++r) {
                const uint64_t row = uint64_t(z0 + r / ya) * g_.ny + uint64_t(y0 + r % ya);
                uint64_t x = nas::mul46(seed, nas::pow46(a, 2 * uint64_t(nx) * row));
                double *p = u + 2 * size_t(nx) * size_t(r);
                for (int k = 0; k < 2 * nx; ++k) {
                    x = nas::mul46(a, x);
                    p[k] = double(x) * nas::kR46;
                }
            }
        });
        if (o_.perturb && z0 == 0 && y0 == 0) A_[0] += cplx(1e-6, 0);
    }

    // dst[r * dpitch + k] = src[r * spitch + k], k < width, r < rows (the team's threads).
    void copy2d(cplx *dst, size_t dpitch, const cplx *src, size_t spitch, size_t width, size_t rows) {
        nas::phase_timer t(&ph_.pack);
        if (rows == 1) {
            team_.parallel_for(0, int64_t(width), [&](int64_t a, int64_t b) {
                std::memcpy(dst + a, src + a, size_t(b - a) * kC);
            });
            return;
        }
        team_.parallel_for(0, int64_t(rows), [&](int64_t a, int64_t b) {
            for (int64_t r = a; r < b; ++r) std::memcpy(dst + r * dpitch, src + r * spitch, width * kC);
        });
    }

    // send_'s blocks (block k for member k, `elems(k)` used) into every member's x.recv; after
    // it x.local holds member k's block for this rank at k * x.block.
    template <class Elems>
    void exchange(exchanger &x, Elems elems) {
        if (o_.var == variant::packed && o_.mem == kind::host) {
            nas::phase_timer t(&ph_.comm);
            check(hgas_team_alltoall(x.team, x.recv, send_, x.block * kC), "hgas_team_alltoall (transpose)");
            return;
        }
        ++x.epoch;
        for (int s = 1; s <= x.n; ++s) {
            const int k = (x.me + s) % x.n;  // start with the next member: spread the load
            hgas_gptr_t dst, sig;
            check(hgas_ptr(x.recv, x.world[k], &dst), "hgas_ptr");
            check(hgas_ptr(sig_, x.world[k], &sig), "hgas_ptr");
            nas::phase_timer t(&ph_.comm);
            check(hgas_put_signal_nbi(hgas_gptr_add(dst, int64_t(size_t(x.me) * x.block * kC)), send_ + k * x.block,
                                      elems(k) * kC, hgas_gptr_add(sig, int64_t(x.word * sizeof(uint64_t))), 1,
                                      HGAS_SIGNAL_ADD),
                  "hgas_put_signal_nbi (transpose)");
        }
        {
            nas::phase_timer t(&ph_.wait);
            check(hgas_quiet(), "hgas_quiet");
            check(hgas_signal_wait_until(&sig_[x.word], HGAS_CMP_GE, x.epoch * x.n, nullptr),
                  "hgas_signal_wait_until (waiting for the transpose's data)");
        }
        if (o_.mem == kind::sim) {
            nas::phase_timer t(&ph_.pack);
            hgas_gptr_t src;
            check(hgas_ptr(x.recv, hgas_rank_me(), &src), "hgas_ptr");
            check(hgas_get(x.local, src, size_t(x.n) * x.block * kC), "hgas_get (sim landing buffer)");
        }
    }

    // A -> B (row team) -> C (column team), with the x, y and z transforms.
    void forward() {
        const int nx = g_.nx, ny = g_.ny, zc = g_.zc(), ya = g_.ya(), xb = g_.xb(), yc = g_.yc();
        fft(px_[0], A_, A_);
        for (int k = 0; k < g_.p2; ++k)  // member k gets my rows' columns xB0_k..
            copy2d(send_ + k * rowx_.block, g_.xB[k], A_ + g_.xB0[k], nx, g_.xB[k], size_t(zc) * ya);
        exchange(rowx_, [&](int k) { return size_t(zc) * ya * g_.xB[k]; });
        for (int k = 0; k < g_.p2; ++k)  // member k's block: [zc][yA_k][xb], rows yA0_k.. of each plane
            copy2d(B_ + size_t(g_.yA0[k]) * xb, size_t(ny) * xb, rowx_.local + k * rowx_.block, size_t(g_.yA[k]) * xb,
                   size_t(g_.yA[k]) * xb, zc);
        fft(py_[0], B_, B_);
        for (int k = 0; k < g_.p1; ++k)  // member k gets rows yC0_k.. of my planes
            copy2d(send_ + k * colx_.block, size_t(g_.yC[k]) * xb, B_ + size_t(g_.yC0[k]) * xb, size_t(ny) * xb,
                   size_t(g_.yC[k]) * xb, zc);
        exchange(colx_, [&](int k) { return size_t(zc) * g_.yC[k] * xb; });
        for (int k = 0; k < g_.p1; ++k)  // member k's planes zA0_k.., contiguous in C
            copy2d(C_ + size_t(g_.zA0[k]) * yc * xb, 0, colx_.local + k * colx_.block, 0,
                   size_t(g_.zA[k]) * yc * xb, 1);
        fft(pz_fwd_, C_, C_);
        // No rank may put the inverse transpose into a receive buffer still being read here.
        nas::phase_timer t(&ph_.wait);
        check(hgas_barrier(), "hgas_barrier");
    }

    // evolve C, inverse z into W; W -> B (column team), inverse y; B -> A (row team), inverse x.
    void inverse() {
        const int nx = g_.nx, ny = g_.ny, zc = g_.zc(), ya = g_.ya(), xb = g_.xb(), yc = g_.yc();
        {
            nas::phase_timer t(&ph_.compute);
            const int x0 = g_.xB0[g_.j], y0 = g_.yC0[g_.i];
            team_.parallel_for(0, int64_t(g_.nz) * yc, [&](int64_t a, int64_t b) {
                for (int64_t r = a; r < b; ++r) {
                    const int z = int(r / yc), yl = int(r % yc);
                    cplx *row = C_ + size_t(r) * xb;
                    const double fzy = fz_[z] * fy_[y0 + yl];
                    for (int x = 0; x < xb; ++x) row[x] *= fzy * fx_[x0 + x];
                }
            });
        }
        fft(pz_inv_, C_, W_);
        for (int k = 0; k < g_.p1; ++k)  // member k gets its planes zA0_k.. of my rows
            copy2d(send_ + k * colx_.block, 0, W_ + size_t(g_.zA0[k]) * yc * xb, 0, size_t(g_.zA[k]) * yc * xb, 1);
        exchange(colx_, [&](int k) { return size_t(g_.zA[k]) * yc * xb; });
        for (int k = 0; k < g_.p1; ++k)  // member k's block: [zc][yC_k][xb]
            copy2d(B_ + size_t(g_.yC0[k]) * xb, size_t(ny) * xb, colx_.local + k * colx_.block, size_t(g_.yC[k]) * xb,
                   size_t(g_.yC[k]) * xb, zc);
        fft(py_[1], B_, B_);
        for (int k = 0; k < g_.p2; ++k)  // member k gets rows yA0_k.. of my planes
            copy2d(send_ + k * rowx_.block, size_t(g_.yA[k]) * xb, B_ + size_t(g_.yA0[k]) * xb, size_t(ny) * xb,
                   size_t(g_.yA[k]) * xb, zc);
        exchange(rowx_, [&](int k) { return size_t(zc) * g_.yA[k] * xb; });
        for (int k = 0; k < g_.p2; ++k)  // member k's block: [zc][ya][xB_k], columns xB0_k.. of my rows
            copy2d(A_ + g_.xB0[k], nx, rowx_.local + k * rowx_.block, g_.xB[k], g_.xB[k], size_t(zc) * ya);
        fft(px_[1], A_, A_);
    }

    cplx checksum() {
        cplx c(0, 0);
        {
            nas::phase_timer t(&ph_.compute);
            const int z0 = g_.zA0[g_.i], y0 = g_.yA0[g_.j], zc = g_.zc(), ya = g_.ya();
            for (int j = 1; j <= 1024; ++j) {
                const int q = j % g_.nx, r = (3 * j) % g_.ny, s = (5 * j) % g_.nz;
                if (s >= z0 && s < z0 + zc && r >= y0 && r < y0 + ya) c += A_[(size_t(s - z0) * ya + r - y0) * g_.nx + q];
            }
        }
        double v[2] = {c.real(), c.imag()}, s[2];
        {
            // As in 1-D, the sum also orders iterations: nobody's next transpose lands in a
            // receive buffer its owner is still reading.
            nas::phase_timer t(&ph_.comm);
            check(hgas_allreduce(s, v, 2, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce (checksum)");
        }
        const double N = double(g_.nx) * g_.ny * g_.nz;
        return cplx(s[0] / N, s[1] / N);
    }

    const options &o_;
    grid2d g_;
    nas::team team_;
    int threads_;
    hgas_kind_t hk_;
    uint64_t *sig_ = nullptr;
    exchanger rowx_, colx_;
    hgas_team_t teams_[2] = {HGAS_TEAM_INVALID, HGAS_TEAM_INVALID};
    cplx *A_ = nullptr, *B_ = nullptr, *C_ = nullptr, *W_ = nullptr, *send_ = nullptr;
    std::vector<double> fx_, fy_, fz_;
    fftw_plan px_[2] = {}, py_[2] = {}, pz_fwd_ = nullptr, pz_inv_ = nullptr;
    std::vector<fftw_plan> plans_;
    std::vector<void *> sym_, host_;
    phases ph_;
    double fft_s_ = 0;
};

}  // namespace

run_result run_ft_2d(const options &o, int threads) {
    runner2d r(o, threads);
    return r.run();
}

}  // namespace ft
