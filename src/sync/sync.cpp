#include "sync/sync.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "rma/rma.hpp"

namespace hgas::sync {

bool compare(uint64_t v, hgas_cmp_t cmp, uint64_t value) {
    switch (cmp) {
    case HGAS_CMP_EQ: return v == value;
    case HGAS_CMP_NE: return v != value;
    case HGAS_CMP_GT: return v > value;
    case HGAS_CMP_GE: return v >= value;
    case HGAS_CMP_LT: return v < value;
    case HGAS_CMP_LE: return v <= value;
    }
    return false;
}

namespace {
const char *cmp_name(hgas_cmp_t cmp) {
    switch (cmp) {
    case HGAS_CMP_EQ: return "==";
    case HGAS_CMP_NE: return "!=";
    case HGAS_CMP_GT: return ">";
    case HGAS_CMP_GE: return ">=";
    case HGAS_CMP_LT: return "<";
    case HGAS_CMP_LE: return "<=";
    }
    return "?";
}
status check_sig(core::rank &r, const char *op, const uint64_t *sig, int cmp) {
    if (!sig) return fail(status::invalid_arg, "%s: the signal pointer is NULL", op);
    if (cmp < HGAS_CMP_EQ || cmp > HGAS_CMP_LE)
        return fail(status::invalid_arg, "%s: comparison %d is not an hgas_cmp_t", op, cmp);
    if (reinterpret_cast<uintptr_t>(sig) % 8)
        return fail(status::misaligned, "%s: the signal word %p is not 8-byte aligned", op, (const void *)sig);
    if (r.own_segment_of(sig, 8) < 0)
        return fail(status::invalid_pointer, "%s: %p is not in this rank's hgas memory; signals must be allocated "
                    "with hgas_malloc or hgas_alloc so that peers can update them", op, (const void *)sig);
    return status::ok;
}
// Acquire: a rank that sees the signal's new value must see the data put before it.
inline uint64_t load(const uint64_t *sig) { return __atomic_load_n(sig, __ATOMIC_ACQUIRE); }
std::string format_seconds(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", s);
    return b;
}

// A signal word in device memory is read with a device atomic (the CPU cannot load it); the
// data put before the signal is complete in device memory once the signal shows.
class sig_reader {
public:
    sig_reader(core::rank &r, const uint64_t *sig) : sig_(sig) {
        const int seg = r.own_segment_of(sig, 8);
        kind_ = seg < 0 ? mem::kind::host : mem::segment_kind(static_cast<uint16_t>(seg));
        if (kind_ != mem::kind::host) dev_ = r.device(kind_);
    }
    uint64_t operator()() {
        if (!dev_) return load(sig_);
        auto v = dev_->amo(const_cast<uint64_t *>(sig_), amo_op::fetch, 8, 0, 0);
        if (!v.ok()) {
            err_ = v.error();
            return 0;
        }
        return *v;
    }
    status error() const { return err_; }

private:
    const uint64_t *sig_;
    mem::kind kind_ = mem::kind::host;
    gpu::device *dev_ = nullptr;
    status err_ = status::ok;
};
}  // namespace

status signal_wait_until(core::rank &r, const uint64_t *sig, int cmp_arg, uint64_t value, uint64_t *observed) {
    HGAS_TRY(check_sig(r, "hgas_signal_wait_until", sig, cmp_arg));
    const auto cmp = static_cast<hgas_cmp_t>(cmp_arg);
    sig_reader rd(r, sig);
    uint64_t v = 0;
    core::safe_point sp(r);  // e.g. a local kernel's proxied put_signal may be what we wait for
    const status s = r.wait("hgas_signal_wait_until", [&] { return compare(v = rd(), cmp, value) || rd.error() != status::ok; });
    if (s == status::timeout) {  // what the word held says whether an update was lost or never sent
        const std::string why = last_error();
        return fail(s, "%s; the signal word at %p last read %llu (waiting for %s %llu)", why.c_str(), (const void *)sig,
                    (unsigned long long)v, cmp_name(cmp), (unsigned long long)value);
    }
    HGAS_TRY(s);
    HGAS_TRY(rd.error());
    if (observed) *observed = v;
    return status::ok;
}

status signal_test(core::rank &r, const uint64_t *sig, int cmp_arg, uint64_t value, int *satisfied) {
    HGAS_TRY(check_sig(r, "hgas_signal_test", sig, cmp_arg));
    const auto cmp = static_cast<hgas_cmp_t>(cmp_arg);
    if (!satisfied) return fail(status::invalid_arg, "hgas_signal_test: the result pointer is NULL");
    sig_reader rd(r, sig);
    bool ok = compare(rd(), cmp, value);
    if (!ok) {
        HGAS_TRY(r.poll());
        ok = compare(rd(), cmp, value);
    }
    HGAS_TRY(rd.error());
    *satisfied = ok;
    return status::ok;
}

status signal_fetch(core::rank &r, const uint64_t *sig, uint64_t *value) {
    HGAS_TRY(check_sig(r, "hgas_signal_fetch", sig, HGAS_CMP_EQ));
    if (!value) return fail(status::invalid_arg, "hgas_signal_fetch: the result pointer is NULL");
    sig_reader rd(r, sig);
    *value = rd();
    return rd.error();
}

namespace {
// How long a rank whose barrier timed out waits for the others' reports through the store.
// Ranks that entered the same barrier time out within about the spread of their arrivals.
constexpr double k_report_window_s = 2.0;

// After a barrier timed out: which ranks have not entered barrier `epoch`? Each rank records
// the last barrier it entered in a symmetric word (a local store per barrier); only now are the
// peers' words read: directly where mapped, with a get where the transport needs no help from
// the target's CPU (a hung rank would not give it). The rest (routes through UCX's active
// messages, which need the target's CPU) are asked through the bootstrap store: every rank
// whose barrier timed out reports there which barrier it is in, and a rank that has not
// reported within k_report_window_s is named as not arrived. "" if nobody could be asked.
std::string who_has_not_arrived(core::rank &r, uint64_t epoch) {
    const uint64_t off = r.internal().barrier_entered;
    std::vector<int> missing, ask_store;
    std::string detail;
    int unknown = 0;
    for (int p = 0; p < r.n(); ++p) {
        if (p == r.me()) continue;
        uint64_t at = 0;
        const core::peer_segment *ps = r.segment(p, mem::seg_symmetric);
        if (ps && ps->direct) {
            at = load(reinterpret_cast<const uint64_t *>(ps->direct + off));
        } else if (transport::transport *t = r.route(p); t && !t->capabilities().needs_target_progress) {
            if (rma::get(r, &at, mem::make_gptr(p, mem::seg_symmetric, off), sizeof at, false) != status::ok) {
                ask_store.push_back(p);
                continue;
            }
        } else {
            ask_store.push_back(p);
            continue;
        }
        if (at >= epoch) continue;
        missing.push_back(p);
        if (missing.size() <= 4)
            detail += (detail.empty() ? "" : "; ") + std::string("rank ") + std::to_string(p) + " is at barrier #" +
                      std::to_string(at);
    }
    // Every rank whose barrier timed out reports, whether or not it needs the others' reports:
    // a peer may reach it only through the store.
    const std::string key = "hgas-barrier-timeout-" + std::to_string(epoch) + "-";
    (void)r.store().put(key + std::to_string(r.me()), std::to_string(epoch));
    if (!ask_store.empty()) {
        // A report already in the store answers within a round trip, so once the window has
        // passed, each remaining rank still gets a short ask (ranks are asked in order, and a
        // hung one ahead of it used the window up); the whole search ends 2 s after the window.
        const deadline until(k_report_window_s), hard(k_report_window_s + 2.0);
        for (int p : ask_store) {
            if (hard.expired()) {
                ++unknown;
                continue;
            }
            std::string v;
            const double wait_s = std::max(until.remaining(), std::min(0.25, hard.remaining()));
            const status s = r.store().get(key + std::to_string(p), v, wait_s);
            if (s == status::ok) continue;  // it is in this barrier too, and timed out in it
            if (s != status::timeout) {      // the store is gone or the job ended: nothing to learn
                ++unknown;
                continue;
            }
            missing.push_back(p);
            if (missing.size() <= 4)
                detail += (detail.empty() ? "" : "; ") + std::string("rank ") + std::to_string(p) +
                          " did not report being in it";
        }
    }
    if (missing.empty() && unknown == r.n() - 1) return "";
    std::string text;
    if (missing.empty()) {
        text = "every rank that could be asked has arrived";
    } else {
        text = missing.size() == 1 ? "rank " + std::to_string(missing[0]) + " has not arrived" : "ranks ";
        if (missing.size() > 1) {
            for (size_t i = 0; i < missing.size() && i < 16; ++i) text += (i ? ", " : "") + std::to_string(missing[i]);
            if (missing.size() > 16) text += ", ...";
            text += " have not arrived";
        }
        text += " (" + detail + (missing.size() > 4 ? "; ..." : "") + ": hung, or not calling hgas_barrier?)";
    }
    if (unknown) text += "; " + std::to_string(unknown) + " rank(s) could not be asked";
    return text;
}
}  // namespace

namespace {
// Waits in round k of barrier `epoch` until our word k has reached `target`; a timeout names the
// ranks that have not arrived and ends the job (the barrier's counters are out of step then, so
// no later barrier could succeed, and the launcher should blame the rank that is missing rather
// than the first one to give up).
status barrier_wait(core::rank &r, uint64_t off, uint64_t epoch, uint64_t target) {
    const uint64_t *mine = reinterpret_cast<const uint64_t *>(r.own_base(mem::seg_symmetric) + off);
    core::safe_point sp(r);
    status s = r.wait("hgas_barrier", [&] { return load(mine) >= target; });
    if (s == status::timeout) {
        const std::string who = who_has_not_arrived(r, epoch);
        const std::string why = "hgas_barrier #" + std::to_string(epoch) +
                                " did not complete within HGAS_TIMEOUT=" + format_seconds(r.timeout()) + " s on rank " +
                                std::to_string(r.me()) +
                                (who.empty() ? " (a rank stuck or not calling hgas_barrier?)" : ": " + who);
        (void)r.store().abort(why);
        return fail(status::timeout, "%s", why.c_str());
    }
    return s;
}

// Whether the world barrier gathers at rank 0 and releases from there (HGAS_BARRIER): auto on
// one node with 3 to 8 ranks that outnumber its cores. Rank 0 leaves first, the others when its
// release reaches them, so a root-0 collective right after the barrier (OSU's loops) finds the
// root's data already sent: with the dissemination every rank leaves at about the same time, and
// where ranks share cores the non-roots then wait for a root that is not running (OSU's
// broadcast at 4 PEs on 2 cores: 3 us against 0.2-0.4). The price is rank 0's wake-up on the
// barrier's own path: OSU's barrier there, median of 8 runs, 6.0 us against 4.9. Two ranks keep
// the dissemination (one hop, where linear takes two); so do ranks with a core each, where nobody
// waits for a root that is not running. Every rank decides alike (node count, n and the
// machine's rank and core counts are the job's).
constexpr int k_linear_min_ranks = 3, k_linear_max_ranks = 8;
bool barrier_linear(core::rank &r) {
    const std::string &choice = r.cfg().text(setting::barrier);
    if (choice == "linear") return true;
    if (choice == "dissemination") return false;
    return r.n() >= k_linear_min_ranks && r.n() <= k_linear_max_ranks && r.topo().node_n == 1 && r.oversubscribed();
}
}  // namespace

status barrier(core::rank &r) {
    HGAS_TRY(rma::quiet(r));
    const int n = r.n(), me = r.me();
    auto &in = r.internal();
    const uint64_t epoch = ++in.barrier_epoch;
    __atomic_store_n(reinterpret_cast<uint64_t *>(r.own_base(mem::seg_symmetric) + in.barrier_entered), epoch,
                     __ATOMIC_RELEASE);
    if (n == 1) return status::ok;
    if (barrier_linear(r)) {
        // Word 0 of rank 0 counts the others' arrivals (n - 1 per barrier), word 0 of every
        // other rank rank 0's releases (1 per barrier). Rank 0 leaves first, as soon as the last
        // rank arrives: a root-0 broadcast after the barrier finds the others still leaving it.
        const uint64_t off = in.barrier_flags;
        if (me == 0) {
            HGAS_TRY(barrier_wait(r, off, epoch, epoch * static_cast<uint64_t>(n - 1)));
            for (int p = 1; p < n; ++p)
                HGAS_TRY(rma::signal_update(r, mem::make_gptr(p, mem::seg_symmetric, off), HGAS_SIGNAL_ADD, 1,
                                            rma::issuer::runtime));
            return status::ok;
        }
        HGAS_TRY(rma::signal_update(r, mem::make_gptr(0, mem::seg_symmetric, off), HGAS_SIGNAL_ADD, 1,
                                    rma::issuer::runtime));
        return barrier_wait(r, off, epoch, epoch);
    }
    for (int k = 0, dist = 1; dist < n; ++k, dist <<= 1) {
        const uint64_t off = in.barrier_flags + 64 * static_cast<uint64_t>(k);
        hgas_gptr_t peer = mem::make_gptr((me + dist) % n, mem::seg_symmetric, off);
        HGAS_TRY(rma::signal_update(r, peer, HGAS_SIGNAL_ADD, 1, rma::issuer::runtime));
        // Each barrier adds exactly one per round from one peer, so after `epoch` barriers the
        // word holds at least `epoch` (a faster peer may already be one ahead).
        HGAS_TRY(barrier_wait(r, off, epoch, epoch));
    }
    return status::ok;
}

}  // namespace hgas::sync
