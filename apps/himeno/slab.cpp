// Built with -ffp-contract=off: every float operation rounds as in the original (no FMA), so
// each point is bitwise the reference's, on any decomposition and any thread count.
#include "slab.hpp"

#include <algorithm>
#include <cstring>

namespace himeno {
namespace {

constexpr float k_omega = 0.8f;

// Member t's share [r0, r1) of `rows` rows, for a team of `n`.
void share(size_t rows, int t, int n, size_t *r0, size_t *r1) {
    *r0 = rows * t / n;
    *r1 = rows * (t + 1) / n;
}

}  // namespace

void split_planes(int mimax, int n, int r, int *lo, int *hi) {
    const int interior = mimax - 2, base = interior / n, extra = interior % n;
    *lo = 1 + r * base + std::min(r, extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

slab::slab(int mimax, int mjmax, int mkmax, int lo, int hi)
    : mi_(mimax), mj_(mjmax), mk_(mkmax), lo_(lo), n_(hi - lo), plane_(size_t(mjmax) * mkmax) {
    const size_t total = plane_ * (n_ + 2);
    for (auto *v : {&a_[0], &a_[1], &a_[2], &a_[3], &b_[0], &b_[1], &b_[2], &c_[0], &c_[1], &c_[2], &bnd_, &wrk1_,
                    &wrk2_, &p_})
        v->resize(total);
    rowsum_.resize(size_t(n_) * (mj_ - 2));
}

void slab::init() {
    const size_t total = plane_ * (n_ + 2);
    for (int q = 0; q < 3; ++q) {
        std::fill_n(a_[q].data(), total, 1.0f);
        std::fill_n(b_[q].data(), total, 0.0f);
        std::fill_n(c_[q].data(), total, 1.0f);
    }
    std::fill_n(a_[3].data(), total, 1.0f / 6.0f);
    std::fill_n(bnd_.data(), total, 1.0f);
    std::fill_n(wrk1_.data(), total, 0.0f);
    std::fill_n(wrk2_.data(), total, 0.0f);
    for (int l = 0; l < n_ + 2; ++l) {
        const int i = lo_ - 1 + l;
        const float v = float(i * i) / float((mi_ - 1) * (mi_ - 1));  // as the original: int → float
        std::fill_n(&p_[l * plane_], plane_, v);
    }
    std::fill(rowsum_.begin(), rowsum_.end(), 0.0);
}

// One row (i, j) of the original's loop nest, with its expression in the original's order.
// The float part is a separate loop from the double sum so that it vectorizes; the sum keeps
// the k order, so a row's gosa does not depend on how rows are shared out.
void slab::sweep_row(int l, int j, double *rowsum, float *ss) {
    const size_t P = plane_, R = mk_, x0 = l * P + j * R;
    const float *__restrict pc = &p_[x0], *__restrict pip = pc + P, *__restrict pim = pc - P;
    const float *__restrict pjp = pc + R, *__restrict pjm = pc - R;
    const float *__restrict pipjp = pip + R, *__restrict pipjm = pip - R;
    const float *__restrict pimjp = pim + R, *__restrict pimjm = pim - R;
    const float *__restrict a0 = &a_[0][x0], *__restrict a1 = &a_[1][x0], *__restrict a2 = &a_[2][x0],
                            *__restrict a3 = &a_[3][x0];
    const float *__restrict b0 = &b_[0][x0], *__restrict b1 = &b_[1][x0], *__restrict b2 = &b_[2][x0];
    const float *__restrict c0 = &c_[0][x0], *__restrict c1 = &c_[1][x0], *__restrict c2 = &c_[2][x0];
    const float *__restrict bnd = &bnd_[x0], *__restrict wrk1 = &wrk1_[x0];
    float *__restrict wrk2 = &wrk2_[x0];
    const int kmax = mk_ - 1;
    for (int k = 1; k < kmax; ++k) {
        const float s0 = a0[k] * pip[k] + a1[k] * pjp[k] + a2[k] * pc[k + 1] +
                         b0[k] * (pipjp[k] - pipjm[k] - pimjp[k] + pimjm[k]) +
                         b1[k] * (pjp[k + 1] - pjm[k + 1] - pjp[k - 1] + pjm[k - 1]) +
                         b2[k] * (pip[k + 1] - pim[k + 1] - pip[k - 1] + pim[k - 1]) + c0[k] * pim[k] +
                         c1[k] * pjm[k] + c2[k] * pc[k - 1] + wrk1[k];
        const float s = (s0 * a3[k] - pc[k]) * bnd[k];
        ss[k] = s;
        wrk2[k] = pc[k] + k_omega * s;
    }
    double g = 0.0;
    for (int k = 1; k < kmax; ++k) g += double(ss[k]) * double(ss[k]);
    *rowsum = g;
}

void slab::sweep(team &t, int l0, int l1, poller *poll) {
    const int nj = mj_ - 2;
    const size_t rows = size_t(l1 - l0) * nj;
    t.run([&](int me) {
        std::vector<float> ss(mk_);
        size_t r0, r1;
        share(rows, me, t.size(), &r0, &r1);
        for (size_t r = r0; r < r1; ++r) {
            const int l = l0 + int(r / nj), j = 1 + int(r % nj);
            sweep_row(l, j, &rowsum_[size_t(l - 1) * nj + (j - 1)], ss.data());
            if (me == 0 && poll) poll->tick();
        }
    });
}

void slab::commit(team &t) {
    const int nj = mj_ - 2;
    const size_t rows = size_t(n_) * nj, len = size_t(mk_ - 2) * sizeof(float);
    t.run([&](int me) {
        size_t r0, r1;
        share(rows, me, t.size(), &r0, &r1);
        for (size_t r = r0; r < r1; ++r) {
            const size_t x = (1 + r / nj) * plane_ + (1 + r % nj) * mk_ + 1;
            std::memcpy(&p_[x], &wrk2_[x], len);
        }
    });
}

void slab::set_halo(int l, const float *plane) {
    const size_t len = size_t(mk_ - 2) * sizeof(float);
    for (int j = 1; j < mj_ - 1; ++j) {
        const size_t x = size_t(j) * mk_ + 1;
        std::memcpy(&p_[l * plane_ + x], &plane[x], len);
    }
}

double slab::plane_gosa(int l) const {
    const int nj = mj_ - 2;
    double g = 0.0;
    for (int j = 0; j < nj; ++j) g += rowsum_[size_t(l - 1) * nj + j];
    return g;
}

}  // namespace himeno
