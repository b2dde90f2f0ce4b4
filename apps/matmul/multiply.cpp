// The distributed product. Tile (I, J) of each matrix is block I * nb + J of its hgas_array,
// owned by rank (I * nb + J) % P. Rank r computes the C tiles it owns, each as the sum over K
// of A(I, K)·B(K, J): one step per (C tile, K). A step's A and B tiles are read in place when
// the rank owns them (kinds host and cuda) and fetched with hgas_get_nb otherwise (always for
// kind sim, whose memory the CPU cannot load). The fetches of step s + 1 go out before the
// product of step s runs (CPU) or right after it is queued (GPU), into the other of two
// staging slots, so that communication overlaps computation.
#include <chrono>
#include <cstring>
#include <vector>

#include "multiply.hpp"

namespace matmul {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string failed(const char *what) { return std::string(what) + ": " + hgas_last_error(); }

struct step {
    uint64_t ta, tb, tc;  // tiles of A, B, C (block indices)
    bool first, last;     // K == 0, K == nb - 1
};

// the tile's address in this rank's part of the array, when it may be read in place
double *in_place(const hgas_array_t &a, uint64_t t, uint64_t tile_elems, hgas_kind_t kind) {
    if (kind == HGAS_KIND_SIM || static_cast<int>(t % a.nranks) != hgas_rank_me()) return nullptr;
    return static_cast<double *>(hgas_array_local(&a)) + (t / a.nranks) * tile_elems;
}

}  // namespace

std::string setup(const options &o, engine &e, arrays &m) {
    m.n = o.n;
    m.b_order = o.block;
    m.nb = o.n / o.block;
    m.kind = o.kind;
    const uint64_t tiles = m.nb * m.nb, bytes = o.block * o.block * sizeof(double);
    for (hgas_array_t *a : {&m.a, &m.b, &m.c})
        if (hgas_all_alloc_kind(tiles, bytes, o.kind, a) != HGAS_OK) return failed("hgas_all_alloc_kind");
    const int me = hgas_rank_me(), p = hgas_rank_n();
    const uint64_t elems = o.block * o.block;
    for (uint64_t t = static_cast<uint64_t>(me); t < tiles; t += static_cast<uint64_t>(p)) {
        const uint64_t I = t / m.nb, J = t % m.nb;
        for (int id : {MAT_A, MAT_B}) {
            const hgas_array_t &a = id == MAT_A ? m.a : m.b;
            if (o.kind != HGAS_KIND_SIM) {
                e.fill(static_cast<double *>(hgas_array_local(&a)) + (t / p) * elems, id, m.n, I, J);
            } else {  // sim memory is written through hgas only
                double *tmp = e.buffer(0, 0);
                e.fill(tmp, id, m.n, I, J);
                hgas_gptr_t g;
                if (hgas_array_ptr(&a, t * bytes, &g) != HGAS_OK || hgas_put(g, tmp, bytes) != HGAS_OK)
                    return failed("filling a sim tile");
            }
        }
    }
    if (hgas_quiet() != HGAS_OK || hgas_barrier() != HGAS_OK) return failed("setup");
    return "";
}

void release(arrays &m) {
    hgas_all_free(&m.c);
    hgas_all_free(&m.b);
    hgas_all_free(&m.a);
}

std::string multiply(engine &e, const arrays &m, step_stats &st) {
    const int me = hgas_rank_me(), p = hgas_rank_n();
    const uint64_t elems = m.b_order * m.b_order, bytes = elems * sizeof(double);
    std::vector<step> steps;
    for (uint64_t t = static_cast<uint64_t>(me); t < m.nb * m.nb; t += static_cast<uint64_t>(p)) {
        const uint64_t I = t / m.nb, J = t % m.nb;
        for (uint64_t K = 0; K < m.nb; ++K) steps.push_back({I * m.nb + K, K * m.nb + J, t, K == 0, K + 1 == m.nb});
    }
    // per slot: where the step's A and B tiles are, and the gets filling them
    const double *src[2][2] = {};
    hgas_handle_t h[2][2] = {{HGAS_HANDLE_DONE, HGAS_HANDLE_DONE}, {HGAS_HANDLE_DONE, HGAS_HANDLE_DONE}};
    auto issue = [&](size_t s) -> std::string {
        const int slot = static_cast<int>(s % 2);
        const uint64_t t[2] = {steps[s].ta, steps[s].tb};
        const hgas_array_t *arr[2] = {&m.a, &m.b};
        for (int w = 0; w < 2; ++w) {
            if (double *local = in_place(*arr[w], t[w], elems, m.kind)) {
                src[slot][w] = local;
                continue;
            }
            hgas_gptr_t g;
            if (hgas_array_ptr(arr[w], t[w] * bytes, &g) != HGAS_OK) return failed("hgas_array_ptr");
            if (hgas_get_nb(e.buffer(slot, w), g, bytes, &h[slot][w]) != HGAS_OK) return failed("hgas_get_nb");
            src[slot][w] = e.buffer(slot, w);
            (static_cast<int>(g.rank) == me ? st.local_bytes : st.fetched_bytes) += bytes;
        }
        return "";
    };
    auto complete = [&](int slot) -> std::string {
        const double t0 = now();
        for (int w = 0; w < 2; ++w) {
            if (hgas_wait(h[slot][w]) != HGAS_OK) return failed("hgas_wait");
            h[slot][w] = HGAS_HANDLE_DONE;
        }
        st.wait_s += now() - t0;
        return "";
    };
    std::string err;
    if (!steps.empty()) err = issue(0);
    for (size_t s = 0; s < steps.size() && err.empty(); ++s) {
        const int slot = static_cast<int>(s % 2);
        if (!(err = complete(slot)).empty()) break;
        const step &k = steps[s];
        double *c = m.kind == HGAS_KIND_SIM ? e.buffer(0, 2) : in_place(m.c, k.tc, elems, m.kind);
        const bool more = s + 1 < steps.size();
        if (e.async()) {  // GPU: queue this product, then refill the slot the previous one read
            e.gemm(src[slot][0], src[slot][1], c, !k.first);
            e.mark(slot);
            if (more) {
                e.wait(1 - slot);
                err = issue(s + 1);
            }
        } else {  // CPU: the gets of the next step are out before this product starts
            if (more) err = issue(s + 1);
            e.gemm(src[slot][0], src[slot][1], c, !k.first);
        }
        if (k.last && m.kind == HGAS_KIND_SIM) {  // the finished C tile back to its sim memory
            hgas_gptr_t g;
            if (hgas_array_ptr(&m.c, k.tc * bytes, &g) != HGAS_OK || hgas_put(g, c, bytes) != HGAS_OK)
                err = failed("writing a C tile");
        }
    }
    // a failure leaves no get in flight into buffers that are about to be reused
    for (auto &slot : h)
        for (hgas_handle_t &x : slot) hgas_wait(x);
    e.finish();
    return err;
}

}  // namespace matmul
