#include "comm.hpp"

#include <algorithm>
#include <string>

#include "util.hpp"

namespace mg {
namespace {

// The layer at index `at` along `axis` of box b: the interior of the dimensions below axis
// already exchanged is widened to their ghosts (NPB's order: i1, then i2, then i3).
region layer(const box &b, int axis, int at) {
    region g;
    for (int d = 0; d < 3; ++d) {
        g.lo[d] = d < axis ? 0 : 1;
        g.hi[d] = d < axis ? b.n(d) + 1 : b.n(d);
    }
    g.lo[axis] = g.hi[axis] = at;
    return g;
}

}  // namespace

const char *kind_name(kind k) { return k == kind::host ? "host" : k == kind::sim ? "sim" : "cuda"; }

exchange::exchange(backend &be, const decomp &d, kind k) : be_(be), d_(d), kind_(k) {
    int n[3];
    for (int a = 0; a < 3; ++a) n[a] = d.local(d.lt, a) + 2;
    face_ = size_t(std::max({n[0] * n[1], n[0] * n[2], n[1] * n[2]}));
    // On one rank every ghost layer is a local copy: no buffers (every rank decides alike).
    const size_t bytes = d.ranks > 1 ? 12 * face_ * sizeof(double) : 0;
    if (bytes == 0)
        recv_ = nullptr;
    else if (k == kind::host)
        nas::check(hgas_malloc(bytes, reinterpret_cast<void **>(&recv_)), "hgas_malloc (halo buffers)");
    else
        nas::check(hgas_malloc_kind(bytes, k == kind::sim ? HGAS_KIND_SIM : HGAS_KIND_CUDA,
                                    reinterpret_cast<void **>(&recv_)),
                   "hgas_malloc_kind (halo buffers)");
    if (k == kind::sim) staging_.resize(face_);
    nas::check(hgas_calloc(6 * 8, sizeof(uint64_t), reinterpret_cast<void **>(&sig_)), "hgas_calloc (signals)");
    if (bytes) send_ = be.alloc_scratch(2 * face_);
}

exchange::~exchange() {
    if (send_) be_.release_scratch(send_);
    if (gscratch_) be_.release_scratch(gscratch_);
    hgas_free(gather_);
    hgas_free(sig_);
    hgas_free(recv_);
}

double *exchange::recv_slot(int axis, int side, uint64_t seq) {
    return recv_ + ((size_t(axis) * 2 + side) * 2 + (seq & 1)) * face_;
}

void exchange::wait(int axis, int side, uint64_t value, phases &ph) {
    nas::phase_timer t(&ph.wait);
    if (hgas_signal_wait_until(&sig_[(axis * 2 + side) * 8], HGAS_CMP_GE, value, nullptr) == HGAS_OK) return;
    // Name the face that did not come (hgas's own message says why: timeout, dead peer).
    nas::die(std::string(nas::program()) + ": rank " + std::to_string(d_.me) + ": the i" + std::to_string(axis + 1) +
             " face from rank " + std::to_string(d_.neighbor(axis, side == 0 ? -1 : +1)) + " (exchange " +
             std::to_string(value) + ") did not arrive: " + hgas_last_error());
}

void exchange::periodic(box b) {
    for (int a = 0; a < 3; ++a) {
        be_.copy(b, layer(b, a, b.n(a)), layer(b, a, 0));
        be_.copy(b, layer(b, a, 1), layer(b, a, b.n(a) + 1));
    }
}

// Two slots per side, used by the parity of seq_: a neighbour can be at most one comm3 ahead
// of me on an axis (its next one needs my faces of this one, which I send after I have
// unpacked the previous one), so the slot it writes is never the one I am reading.
void exchange::comm3(box b, phases &ph) {
    const uint64_t seq = seq_++;
    for (int a = 0; a < 3; ++a) {
        const region lo = layer(b, a, 1), hi = layer(b, a, b.n(a));
        const region glo = layer(b, a, 0), ghi = layer(b, a, b.n(a) + 1);
        if (d_.p[a] == 1) {
            nas::phase_timer t(&ph.comm);
            be_.copy(b, hi, glo);
            be_.copy(b, lo, ghi);
            continue;
        }
        const size_t count = lo.count(), bytes = count * sizeof(double);
        {
            nas::phase_timer t(&ph.comm);
            be_.pack(b, lo, send_);
            be_.pack(b, hi, send_ + face_);
            be_.sync();  // the faces must be in memory before the puts read them
            // My first layer becomes the lower neighbour's upper ghost (its side 1), my last
            // the upper neighbour's lower ghost (side 0).
            const int down = d_.neighbor(a, -1), up = d_.neighbor(a, +1);
            hgas_gptr_t dst, sig;
            nas::check(hgas_ptr(recv_slot(a, 1, seq), down, &dst), "hgas_ptr");
            nas::check(hgas_ptr(&sig_[(a * 2 + 1) * 8], down, &sig), "hgas_ptr");
            nas::check(hgas_put_signal_nbi(dst, send_, bytes, sig, seq + 1, HGAS_SIGNAL_SET),
                       "hgas_put_signal_nbi (halo)");
            nas::check(hgas_ptr(recv_slot(a, 0, seq), up, &dst), "hgas_ptr");
            nas::check(hgas_ptr(&sig_[(a * 2 + 0) * 8], up, &sig), "hgas_ptr");
            nas::check(hgas_put_signal_nbi(dst, send_ + face_, bytes, sig, seq + 1, HGAS_SIGNAL_SET),
                       "hgas_put_signal_nbi (halo)");
        }
        for (int side = 0; side < 2; ++side) {
            wait(a, side, seq + 1, ph);
            nas::phase_timer t(&ph.comm);
            const double *src = recv_slot(a, side, seq);
            if (kind_ == kind::sim) {  // sim memory faults on a CPU load: read it through hgas
                hgas_gptr_t g;
                nas::check(hgas_ptr(const_cast<double *>(src), d_.me, &g), "hgas_ptr");
                nas::check(hgas_get(staging_.data(), g, bytes), "hgas_get (halo)");
                src = staging_.data();
            }
            be_.unpack(b, side == 0 ? glo : ghi, src);
        }
        nas::phase_timer t(&ph.comm);
        be_.sync();
        nas::check(hgas_quiet(), "hgas_quiet");  // send_ is packed again on the next axis
    }
}

void exchange::gather(box b, int k, box whole, phases &ph) {
    nas::phase_timer t(&ph.comm);
    const region mine{{1, 1, 1}, {b.n1, b.n2, b.n3}};
    const size_t count = mine.count();
    if (!gather_) {  // first use: every rank gathers the same level, so this is collective
        gather_count_ = count;
        nas::check(hgas_malloc(count * d_.ranks * sizeof(double), reinterpret_cast<void **>(&gather_)),
                   "hgas_malloc (gather)");
        block_.resize(count);
        gscratch_ = be_.alloc_scratch(count);
    }
    if (count != gather_count_)
        nas::die(std::string(nas::program()) + ": internal error: gather of blocks of different sizes");
    // The block goes through host memory: hgas_fcollect takes host buffers.
    be_.pack(b, mine, gscratch_);
    be_.download(block_.data(), gscratch_, count);
    nas::check(hgas_fcollect(gather_, block_.data(), count * sizeof(double)), "hgas_fcollect (gather)");
    for (int r = 0; r < d_.ranks; ++r) {
        const int c[3] = {r % d_.p[0], (r / d_.p[0]) % d_.p[1], r / (d_.p[0] * d_.p[1])};
        region g;
        for (int dd = 0; dd < 3; ++dd) {
            g.lo[dd] = c[dd] * b.n(dd) + 1;
            g.hi[dd] = g.lo[dd] + b.n(dd) - 1;
        }
        be_.upload(gscratch_, gather_ + size_t(r) * count, count);
        be_.unpack(whole, g, gscratch_);
    }
    periodic(whole);
}

}  // namespace mg
