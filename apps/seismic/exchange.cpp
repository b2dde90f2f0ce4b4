// The halo exchange. Which faces move (the staggered grid needs one plane of each field on
// one side only; README.md "Decomposition"):
//   before the stress update:   z: vx, vy down, vz up      y: vx, vz down, vy up
//   before the velocity update: z: szz down, sxz, syz up   y: syy down, sxy, syz up
// "down" = to the neighbour with the smaller coordinate, whose upper halo receives it.
// Every rank posts the receives of a phase before its sends, and all messages of a phase
// have distinct tags, so the phase completes whatever order the peers run in.
#include "exchange.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace seismic {
namespace {

void check(hgas_status_t st, const char *what, int peer) {
    if (st != HGAS_OK) {
        char m[200];
        std::snprintf(m, sizeof m, "seismic: halo exchange: %s with rank %d failed (status %d)", what, peer, (int)st);
        hgas_abort(1, m);
    }
}

// The pipelined loop polls; like every hgas wait it gives up after HGAS_TIMEOUT seconds.
double timeout_s() {
    const char *t = std::getenv("HGAS_TIMEOUT");
    const double v = t ? std::atof(t) : 0;
    return v > 0 ? v : 300;
}

}  // namespace

exchange::exchange(const setup &s, device &d) : s_(s), d_(d) {
    const size_t nx = s.opt.nx, py = s.nyl + 2, plane = nx * py;
    // z-faces are planes kl (rows jl = 1..nyl, contiguous); y-faces rows jl of every owned
    // plane, (nyl + 2) nx floats apart: strided.
    auto zface = [&](int kl) { return face{(kl * py + 1) * nx, static_cast<size_t>(s.nyl), nx}; };
    auto yface = [&](int jl) { return face{(plane + jl * nx), static_cast<size_t>(s.nzl), plane}; };
    struct spec { int field; int axis; bool down; };
    const spec specs[2][6] = {
        {{VX, 2, true}, {VY, 2, true}, {VZ, 2, false}, {VX, 1, true}, {VZ, 1, true}, {VY, 1, false}},
        {{SZZ, 2, true}, {SXZ, 2, false}, {SYZ, 2, false}, {SYY, 1, true}, {SXY, 1, false}, {SYZ, 1, false}}};
    for (int p = 0; p < 2; ++p)
        for (const spec &sp : specs[p]) {
            message m{};
            m.field = sp.field;
            m.tag = sp.field * 4 + (sp.axis == 2 ? 2 : 0) + (sp.down ? 1 : 0);
            if (sp.axis == 2) {
                m.send_to = sp.down ? s.zlo : s.zhi;
                m.recv_from = sp.down ? s.zhi : s.zlo;
                m.send = zface(sp.down ? 1 : s.nzl);
                m.recv = zface(sp.down ? s.nzl + 1 : 0);
            } else {
                m.send_to = sp.down ? s.ylo : s.yhi;
                m.recv_from = sp.down ? s.yhi : s.ylo;
                m.send = yface(sp.down ? 1 : s.nyl);
                m.recv = yface(sp.down ? s.nyl + 1 : 0);
            }
            if (m.send_to < 0 && m.recv_from < 0) continue;
            const size_t fb = nx * sizeof(float);
            if (s.opt.sty == style::integrated) {
                // Every face is a vector layout of its rows. A z-face's rows follow each other
                // (stride nx): one block, which hgas sends and receives as plain bytes of the
                // field, nothing packed; a y-face is strided and packed (a kernel on a GPU).
                auto vec = [&](const face &f, hgas_layout_t *l, int peer) {
                    check(hgas_layout_vector(f.rows, fb, f.stride * sizeof(float), l), "layout", peer);
                };
                vec(m.send, &m.send_layout, m.send_to);
                vec(m.recv, &m.recv_layout, m.recv_from);
            } else {
                m.sbuf = d.alloc_host(m.send.rows * fb);
                m.rbuf = d.alloc_host(m.recv.rows * fb);
                d.pinned_bytes += (m.send.rows + m.recv.rows) * fb;
            }
            if (m.send_to >= 0) bytes_ += m.send.rows * fb;
            phase_[p].push_back(m);
        }
    d.set_streams(4);
}

exchange::~exchange() {
    for (auto &ph : phase_)
        for (message &m : ph) {
            if (m.send_layout) hgas_layout_free(m.send_layout);
            if (m.recv_layout) hgas_layout_free(m.recv_layout);
            if (m.sbuf) d_.free_host(m.sbuf);
            if (m.rbuf) d_.free_host(m.rbuf);
        }
}

int exchange::stream_of(int peer) const {
    return peer == s_.zlo ? 0 : peer == s_.zhi ? 1 : peer == s_.ylo ? 2 : 3;
}

void exchange::run(phase p) {
    if (s_.opt.sty == style::basic) return basic(phase_[p]);
    start(p), finish();
}

void exchange::start(phase p) {
    if (s_.opt.sty == style::pipelined) pipelined_start(phase_[p]);
    else integrated_post(phase_[p]);
}

// Integrated: one test of the phase's handles: hgas progresses every message in flight while
// testing, and a handle that completed becomes HGAS_HANDLE_DONE (finish skips it).
// Pipelined: one round of sending the copied pieces and copying back the arrived ones.
void exchange::poll() {
    if (s_.opt.sty == style::pipelined) {
        if (pipe_.active) (void)pipelined_step();
        return;
    }
    if (hs_.empty()) return;
    int idx = -1, done = 0;
    check(hgas_test_any(hs_.data(), hs_.size(), &idx, &done), "hgas_test_any", -1);
}

void exchange::finish() {
    if (s_.opt.sty == style::pipelined) return pipelined_finish();
    check(hgas_wait_all(hs_.data(), hs_.size()), "hgas_wait_all", -1);
    hs_.clear();
}

// Style integrated: hgas sends and receives the faces where they are, device memory
// included, the layouts telling it which bytes; no copy in the application.
void exchange::integrated_post(std::vector<message> &ms) {
    hs_.clear();
    for (message &m : ms)
        if (m.recv_from >= 0) {
            hs_.push_back(nullptr);
            check(hgas_irecv_typed(d_.field(m.field) + m.recv.offset, m.recv_layout, m.recv_from, m.tag, nullptr,
                                   &hs_.back()), "hgas_irecv_typed", m.recv_from);
        }
    for (message &m : ms)
        if (m.send_to >= 0) {
            hs_.push_back(nullptr);
            check(hgas_isend_typed(d_.field(m.field) + m.send.offset, m.send_layout, m.send_to, m.tag, &hs_.back()),
                  "hgas_isend_typed", m.send_to);
        }
}

// Style basic: copy every face to a host buffer and wait, send and receive host buffers,
// copy every received face back and wait.
void exchange::basic(std::vector<message> &ms) {
    const size_t fb = s_.opt.nx * sizeof(float);
    for (message &m : ms)
        if (m.send_to >= 0) d_.to_host(m.sbuf, d_.field(m.field) + m.send.offset, m.send.rows, m.send.stride, 0);
    d_.sync(0);
    hs_.clear();
    for (message &m : ms)
        if (m.recv_from >= 0) {
            hs_.push_back(nullptr);
            check(hgas_irecv(m.rbuf, m.recv.rows * fb, m.recv_from, m.tag, nullptr, &hs_.back()), "hgas_irecv", m.recv_from);
        }
    for (message &m : ms)
        if (m.send_to >= 0) {
            hs_.push_back(nullptr);
            check(hgas_isend(m.sbuf, m.send.rows * fb, m.send_to, m.tag, &hs_.back()), "hgas_isend", m.send_to);
        }
    check(hgas_wait_all(hs_.data(), hs_.size()), "hgas_wait_all", -1);
    for (message &m : ms)
        if (m.recv_from >= 0) d_.to_dev(d_.field(m.field) + m.recv.offset, m.rbuf, m.recv.rows, m.recv.stride, 0);
    d_.sync(0);
}

// Style pipelined: every face in `chunks` pieces of rows; each piece is copied to the host
// on its peer's stream and sent as soon as its copy is done, each received piece copied back
// on the peer's stream as soon as it arrives, so copies and messages of different pieces
// and peers overlap (and, with --overlap, the interior update: poll() is one round of the
// loop). All by hand: the buffers, streams, events and the polling loop.
void exchange::pipelined_start(std::vector<message> &ms) {
    const size_t fb = s_.opt.nx * sizeof(float);
    const size_t nch = static_cast<size_t>(s_.opt.chunks);
    pipe &P = pipe_;
    P.sends.clear(), P.recvs.clear();
    for (message &m : ms)
        for (size_t c = 0; c < nch; ++c) {
            if (m.recv_from >= 0) {
                const size_t r0 = m.recv.rows * c / nch, r1 = m.recv.rows * (c + 1) / nch;
                if (r1 > r0) P.recvs.push_back({&m, r0, r1 - r0, -1});
            }
            if (m.send_to >= 0) {
                const size_t r0 = m.send.rows * c / nch, r1 = m.send.rows * (c + 1) / nch;
                if (r1 > r0) P.sends.push_back({&m, r0, r1 - r0, -1});
            }
        }
    // Receives first (chunks of a face share its tag and match in the order posted).
    P.rh.assign(P.recvs.size(), nullptr);
    P.sh.assign(P.sends.size(), HGAS_HANDLE_DONE);
    P.unpacked.assign(P.recvs.size(), 0);
    P.sent = P.received = 0;
    P.active = true;
    for (size_t r = 0; r < P.recvs.size(); ++r) {
        piece &p = P.recvs[r];
        check(hgas_irecv(static_cast<char *>(p.m->rbuf) + p.row0 * fb, p.rows * fb, p.m->recv_from, p.m->tag, nullptr,
                         &P.rh[r]), "hgas_irecv", p.m->recv_from);
    }
    for (piece &p : P.sends) {
        const int q = stream_of(p.m->send_to);
        d_.to_host(static_cast<char *>(p.m->sbuf) + p.row0 * fb, d_.field(p.m->field) + p.m->send.offset + p.row0 * p.m->send.stride,
                   p.rows, p.m->send.stride, q);
        p.ev = d_.record_event(q);
    }
}

bool exchange::pipelined_step() {
    const size_t fb = s_.opt.nx * sizeof(float);
    pipe &P = pipe_;
    const size_t before = P.sent + P.received;
    // pieces are sent in the order their copies were queued (per stream they finish in order)
    while (P.sent < P.sends.size() && d_.done(P.sends[P.sent].ev)) {
        piece &p = P.sends[P.sent];
        check(hgas_isend(static_cast<char *>(p.m->sbuf) + p.row0 * fb, p.rows * fb, p.m->send_to, p.m->tag, &P.sh[P.sent]),
              "hgas_isend", p.m->send_to);
        ++P.sent;
    }
    // A receive may complete inside hgas_irecv (its handle is HGAS_HANDLE_DONE at once) or
    // in hgas_test_any, which marks it done; either way it is copied back once.
    if (P.received < P.recvs.size()) {
        int idx = -1, done = 0;
        check(hgas_test_any(P.rh.data(), P.rh.size(), &idx, &done), "hgas_test_any", -1);
        for (size_t r = 0; r < P.recvs.size(); ++r)
            if (!P.unpacked[r] && P.rh[r] == HGAS_HANDLE_DONE) {
                piece &p = P.recvs[r];
                d_.to_dev(d_.field(p.m->field) + p.m->recv.offset + p.row0 * p.m->recv.stride,
                          static_cast<char *>(p.m->rbuf) + p.row0 * fb, p.rows, p.m->recv.stride,
                          stream_of(p.m->recv_from));
                P.unpacked[r] = 1;
                ++P.received;
            }
    } else {
        hgas_progress();
    }
    return P.sent + P.received != before;
}

void exchange::pipelined_finish() {
    pipe &P = pipe_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s());
    while (P.sent < P.sends.size() || P.received < P.recvs.size()) {
        if (!pipelined_step()) std::this_thread::yield();  // ranks may share cores
        if (std::chrono::steady_clock::now() > deadline) {
            char m[200];
            std::snprintf(m, sizeof m, "seismic: pipelined halo exchange: %zu of %zu pieces sent, %zu of %zu received "
                          "after HGAS_TIMEOUT (%g s)", P.sent, P.sends.size(), P.received, P.recvs.size(), timeout_s());
            hgas_abort(1, m);
        }
    }
    for (int q = 0; q < 4; ++q) d_.sync(q);
    check(hgas_wait_all(P.sh.data(), P.sh.size()), "hgas_wait_all", -1);
    P.active = false;
}

}  // namespace seismic
