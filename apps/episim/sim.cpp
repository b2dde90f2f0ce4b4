#include "sim.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace episim {
namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr int TAG_VISITS = 10, TAG_INFECTIONS = 20;
}  // namespace

Sim::Sim(const Options &o, Device &dev, hgas_msg_ctx_t ctx)
    : o_(o), c_(o.c), dev_(dev), part_(o.c, hgas_rank_n()), me_(hgas_rank_me()), n_(hgas_rank_n()) {
    p0_ = part_.person_begin[me_];
    p1_ = part_.person_begin[me_ + 1];
    sched_ = make_schedules(c_, p0_, p1_);
    state_.assign(p1_ - p0_, S);
    until_.assign(p1_ - p0_, 0);
    for (uint64_t p = p0_; p < p1_; ++p) {
        const bool inf = c_.scen == scenario::one_location ? p < c_.infectious : initially_infectious(c_, p);
        if (inf) state_[p - p0_] = I, until_[p - p0_] = dwell(c_, P_INFECTIOUS, p, 0) - 1;
    }
    // The most visits a rank can receive in a day (every person S or I): the device arrays'
    // size, the same on every rank (sim memory is symmetric).
    std::vector<uint64_t> mine(n_, 0), all(n_, 0);
    for (const Visit &v : sched_.visits) ++mine[part_.loc_owner(v.loc)];
    check(hgas_allreduce(all.data(), mine.data(), n_, HGAS_UINT64, HGAS_OP_SUM), "sizing the location arrays");
    cap_ = std::max<uint64_t>(1, *std::max_element(all.begin(), all.end()));
    dvis_ = static_cast<Visit *>(dev_.alloc(cap_ * sizeof(Visit)));
    dinf_ = static_cast<Infection *>(dev_.alloc(cap_ * sizeof(Infection)));
    out_.resize(sched_.visits.size());
    if (sched_.visits.size() > UINT32_MAX) throw error("more than 2^32 visits on one rank: use more ranks");
    route_off_.assign(n_ + 1, 0);
    for (const Visit &v : sched_.visits) ++route_off_[part_.loc_owner(v.loc) + 1];
    for (int q = 0; q < n_; ++q) route_off_[q + 1] += route_off_[q];
    route_.resize(sched_.visits.size());
    std::vector<uint64_t> fill(route_off_.begin(), route_off_.end() - 1);
    for (size_t j = 0; j < sched_.visits.size(); ++j)
        route_[fill[part_.loc_owner(sched_.visits[j].loc)]++] = uint32_t(j);
    // Where the fragments live is the difference between the styles on the receiving side:
    // device memory (integrated: hgas receives straight into it), pinned host memory per peer
    // (pipelined: copied to the device fragment by fragment), or ordinary host memory
    // (basic: the whole day staged, then one copy). Infections always arrive in host memory,
    // where the persons are.
    const memory vm = o.st == style::integrated ? memory::device
                      : o.st == style::pipelined ? memory::pinned
                                                 : memory::host;
    if (o.st == style::integrated) {
        // Fragments received in place: a day's worth of slots, all posted for any rank, so
        // that a fragment seldom arrives before a receive is posted for it (an unexpected one
        // waits in the message layer's host memory and is copied again when matched). A day
        // takes at most the most visits' bytes / fragment slots, plus one per rank for the
        // shorter end marker.
        const size_t slots = (cap_ * sizeof(Visit) + o.fragment - 1) / o.fragment + size_t(n_);
        visit_rx_ =
            std::make_unique<Receiver>(Receiver::in_place, dev_, ctx, TAG_VISITS, o.fragment, slots, vm, o.timeout);
    } else {
        visit_rx_ = std::make_unique<Receiver>(dev_, ctx, TAG_VISITS, o.fragment, o.per_peer, vm, o.timeout);
    }
    inf_rx_ = std::make_unique<Receiver>(dev_, ctx, TAG_INFECTIONS, o.fragment, o.per_peer, memory::host, o.timeout);
    visit_tx_ = std::make_unique<Sender>(dev_, ctx, TAG_VISITS, o.fragment);
    inf_tx_ = std::make_unique<Sender>(dev_, ctx, TAG_INFECTIONS, o.fragment);
}

Sim::~Sim() {
    visit_rx_.reset();
    inf_rx_.reset();
    dev_.release(dinf_);
    dev_.release(dvis_);
}

void Sim::close() {
    visit_rx_->close(*visit_tx_);
    inf_rx_->close(*inf_tx_);
}

DayCounts Sim::count(uint64_t new_inf) {
    uint64_t c[5] = {new_inf, 0, 0, 0, 0}, all[5];
    for (uint8_t s : state_) ++c[1 + s];
    check(hgas_allreduce(all, c, 5, HGAS_UINT64, HGAS_OP_SUM), "counting states");
    return DayCounts{all[0], all[1], all[2], all[3], all[4]};
}

DayCounts Sim::initial_counts() { return count(0); }

// runs_ holds the starts of the sorted runs of visits [runs_[0], end), in order. Merges the
// last two while the last is at least as long as the one before it (all: down to one run).
void Sim::merge_runs(uint64_t end, bool all) {
    while (runs_.size() >= 2) {
        const uint64_t b = runs_[runs_.size() - 1], a = runs_[runs_.size() - 2];
        if (!all && end - b < b - a) break;
        dev_.merge_runs(dvis_, a, b, end, 0);
        runs_.pop_back();
    }
}

DayCounts Sim::day(uint32_t d) {
    // computeVisits: each S or I person's visits, grouped by the rank owning the location, and
    // sent as they are made: a fragment goes as soon as it is full (the receives are posted
    // first), so that the messages travel, and the receiver moves them on, while this rank
    // makes the rest. Every style alike; they differ in where the fragments are received.
    // Peers in turn from the next rank on, this rank last: not all ranks at rank 0 first.
    double t = now();
    visit_rx_->start();
    const size_t per_frag = o_.fragment / sizeof(Visit);
    uint64_t w = 0;  // visits written to out_
    for (int i = 1; i <= n_; ++i) {
        const int q = (me_ + i) % n_;
        uint64_t sent = w;
        for (uint64_t k = route_off_[q]; k < route_off_[q + 1]; ++k) {
            Visit v = sched_.visits[route_[k]];
            const uint8_t st = state_[v.person - p0_];
            if (st != S && st != I) continue;
            v.state = st;
            out_[w++] = v;
            if (w - sent == per_frag) {
                visit_tx_->fragment(q, out_.data() + sent, per_frag * sizeof(Visit));
                sent = w;
            }
        }
        visit_tx_->fragment(q, out_.data() + sent, (w - sent) * sizeof(Visit));  // the shorter end marker
    }
    visits_sent += w;
    phases.visits += now() - t;

    // The rest of the visit messages' travel: received into fragments and moved to the device.
    t = now();
    uint64_t off = 0;  // bytes of visits received so far
    const uint64_t cap = cap_ * sizeof(Visit);
    auto room = [&](int q, size_t bytes) {
        if (off + bytes > cap)
            throw error("rank " + std::to_string(me_) + ": rank " + std::to_string(q) + " sent more visits than " +
                        "any schedule has (" + std::to_string((off + bytes) / sizeof(Visit)) + " > " +
                        std::to_string(cap_) + ")");
    };
    char *dv = reinterpret_cast<char *>(dvis_);
    bool sorted = false;
    if (o_.st == style::integrated) {
        // The fragments are in device memory already, in consecutive slots of the receiver's
        // ring. Without the sort on arrival, they move into the day's array in runs: full
        // fragments in neighbouring slots are one copy, so a day is a copy per rank (each
        // stream's shorter end marker ends a run) and one where the ring wraps, queued as
        // each run ends. With it, each fragment is moved into the day's array and sorted as
        // a run while the next fragments arrive; neighbouring runs of equal size are merged
        // at once (a binary counter of runs: each visit takes part in log2(runs) merges,
        // most of them before the last fragment is in), so that the sort left after the
        // last fragment is a few merges. Everything on one stream: in order.
        runs_.clear();
        const char *run = nullptr;  // the run of slots not yet copied, and its bytes
        size_t run_bytes = 0;
        auto flush = [&] {
            if (run_bytes) dev_.d2d(dv + off - run_bytes, run, run_bytes, 0);
            run = nullptr, run_bytes = 0;
        };
        visit_rx_->day([&](int q, const void *frag, size_t bytes) -> uint64_t {
            room(q, bytes);
            const uint64_t lo = off / sizeof(Visit), hi = (off + bytes) / sizeof(Visit);
            if (!o_.sort_on_arrival) {
                const char *f = static_cast<const char *>(frag);
                if (run && (f != run + run_bytes || run_bytes % o_.fragment)) flush();
                if (!run) run = f;
                run_bytes += bytes;
                off += bytes;
                return 0;
            }
            off += bytes;
            if (hi == lo) return 0;
            const uint64_t ev = dev_.sort_run(dvis_, lo, hi, frag, 0);
            runs_.push_back(lo);
            merge_runs(hi, false);
            return ev;
        });
        flush();
        merge_runs(off / sizeof(Visit), true);
        dev_.sync();  // the slots are posted again at the next day's start
        sorted = o_.sort_on_arrival;
    } else if (o_.st == style::pipelined) {  // per-peer pinned fragment -> device, on a stream
        // With the sort on arrival, by hand what integrated gets from fragments in device
        // memory: each copy and its run's sort on one stream (the merges need them in order),
        // the pinned buffer free once its copy is done; without, one stream per peer.
        runs_.clear();
        visit_rx_->day([&](int q, const void *frag, size_t bytes) -> uint64_t {
            room(q, bytes);
            const uint64_t lo = off / sizeof(Visit), hi = (off + bytes) / sizeof(Visit);
            const int s = o_.sort_on_arrival ? 0 : q % dev_.streams();
            dev_.h2d(dv + off, frag, bytes, s);
            off += bytes;
            const uint64_t ev = dev_.record(s);
            if (o_.sort_on_arrival && hi > lo) {
                (void)dev_.sort_run(dvis_, lo, hi, dv + lo * sizeof(Visit), 0);  // in place
                runs_.push_back(lo);
                merge_runs(hi, false);
            }
            return ev;
        });
        merge_runs(off / sizeof(Visit), true);
        sorted = o_.sort_on_arrival;
    } else {  // basic: the whole day into host memory, then one copy to the device
        hstage_.resize(cap);
        visit_rx_->day([&](int q, const void *frag, size_t bytes) -> uint64_t {
            room(q, bytes);
            std::memcpy(hstage_.data() + off, frag, bytes);
            off += bytes;
            return 0;
        });
        dev_.h2d(dv, hstage_.data(), off, 0);
        dev_.sync();
    }
    visit_tx_->wait();
    phases.visit_comm += now() - t;

    // computeInteractions on the device.
    t = now();
    std::vector<uint64_t> first;
    const uint64_t m = dev_.interactions(dvis_, off / sizeof(Visit), dinf_, c_.p, d, part_.person_begin, first, sorted);
    infections_sent += m;
    phases.interact += now() - t;

    // Infection messages back to the persons' owners.
    t = now();
    inf_rx_->start();
    got_.clear();
    if (o_.st == style::integrated) {  // straight from device memory
        for (int q = 0; q < n_; ++q)
            inf_tx_->send(q, dinf_ + first[q], (first[q + 1] - first[q]) * sizeof(Infection));
    } else if (o_.st == style::pipelined) {  // by hand: chunks through per-peer pinned buffers
        for (int q = 0; q < n_; ++q)
            inf_tx_->send_staged(q, dinf_ + first[q], (first[q + 1] - first[q]) * sizeof(Infection), o_.per_peer);
    } else {  // basic: all of it to the host, then host sends
        hstage_.resize(std::max<size_t>(hstage_.size(), m * sizeof(Infection)));
        dev_.d2h(hstage_.data(), dinf_, m * sizeof(Infection), 0);
        dev_.sync();
        const Infection *h = reinterpret_cast<const Infection *>(hstage_.data());
        for (int q = 0; q < n_; ++q) inf_tx_->send(q, h + first[q], (first[q + 1] - first[q]) * sizeof(Infection));
    }
    inf_rx_->day([&](int, const void *frag, size_t bytes) -> uint64_t {
        const Infection *f = static_cast<const Infection *>(frag);
        got_.insert(got_.end(), f, f + bytes / sizeof(Infection));
        return 0;
    });
    inf_tx_->wait();
    phases.inf_comm += now() - t;

    // The SEIR update: dwell times run out, then the day's infections (one per person).
    t = now();
    for (uint64_t p = p0_; p < p1_; ++p) {
        uint8_t &st = state_[p - p0_];
        if (st == E && until_[p - p0_] == d) st = I, until_[p - p0_] = d + dwell(c_, P_INFECTIOUS, p, d);
        else if (st == I && until_[p - p0_] == d) st = R;
    }
    std::sort(got_.begin(), got_.end(), [](const Infection &a, const Infection &b) { return infection_less(a, b); });
    uint64_t new_inf = 0;
    for (size_t j = 0; j < got_.size(); ++j) {
        const uint64_t p = got_[j].person;
        if (p < p0_ || p >= p1_)
            throw error("rank " + std::to_string(me_) + " received an infection of person " + std::to_string(p) +
                        ", whom it does not own");
        if ((j > 0 && got_[j - 1].person == p) || state_[p - p0_] != S) continue;
        state_[p - p0_] = E;
        until_[p - p0_] = d + dwell(c_, P_LATENT, p, d);
        ++new_inf;
    }
    DayCounts dc = count(new_inf);
    phases.update += now() - t;
    return dc;
}

}  // namespace episim
