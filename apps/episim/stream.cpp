#include "stream.hpp"

#include <sched.h>

#include <chrono>
#include <string>

namespace episim {
namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr int CLOSE_TAG_OFFSET = 1;  // the close counts travel with tag + 1
}  // namespace

// The one block of every fragment (bytes_ of them), in the memory the styles differ by.
char *Receiver::alloc_block() {
    if (where_ == memory::device) block_ = dev_.alloc(bytes_);
    if (where_ == memory::pinned) block_ = dev_.pinned(bytes_);
    if (where_ == memory::host) block_ = ::operator new(bytes_);
    return static_cast<char *>(block_);
}

Receiver::Receiver(Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes, int per_peer, memory where,
                   double timeout_s)
    : dev_(dev), ctx_(ctx), tag_(tag), n_(hgas_rank_n()), per_peer_(per_peer), frag_(frag_bytes), where_(where),
      timeout_(timeout_s), slots_(n_, std::vector<Slot>(per_peer)), queue_(n_) {
    bytes_ = size_t(n_) * per_peer * frag_;
    char *base = alloc_block();
    for (int q = 0; q < n_; ++q)
        for (int k = 0; k < per_peer; ++k) {
            Slot &s = slots_[q][k];
            s.buf = base + (size_t(q) * per_peer + k) * frag_;
            check(hgas_recv_init(ctx_, s.buf, frag_, q, tag_, &s.info, &s.req), "posting a fragment receive");
        }
}

Receiver::Receiver(in_place_t, Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes, size_t slots, memory where,
                   double timeout_s)
    : dev_(dev),
      ctx_(ctx),
      tag_(tag),
      n_(hgas_rank_n()),
      per_peer_(0),
      frag_(frag_bytes),
      where_(where),
      timeout_(timeout_s),
      slots_(1, std::vector<Slot>(slots)),
      queue_(n_),
      in_place_(true) {
    bytes_ = slots * frag_;
    char *base = alloc_block();
    for (size_t k = 0; k < slots; ++k) {
        Slot &s = slots_[0][k];
        s.buf = base + k * frag_;
        check(hgas_recv_init(ctx_, s.buf, frag_, HGAS_ANY_RANK, tag_, &s.info, &s.req), "posting a fragment receive");
    }
}

Receiver::~Receiver() {
    for (auto &row : slots_)
        for (auto &s : row)
            if (s.req && !s.posted) hgas_msg_req_free(s.req);
    if (where_ == memory::device) dev_.release(block_);
    if (where_ == memory::pinned) dev_.unpin(block_);
    if (where_ == memory::host) ::operator delete(block_);
}

void Receiver::post(int q, int k) {
    Slot &s = slots_[q][k];
    check(hgas_start(s.req, &s.h), "reposting a fragment receive");
    s.posted = true;
    queue_[q].push_back(k);
}

void Receiver::start() {
    if (in_place_) {  // the slots the last day used, after the ones still posted: the ring's order
        std::vector<Slot> &ring = slots_[0];
        for (; posted_ < ring.size(); ++posted_) {
            Slot &s = ring[(head_ + posted_) % ring.size()];
            check(hgas_start(s.req, &s.h), "reposting a fragment receive");
            s.posted = true;
        }
        return;
    }
    for (int q = 0; q < n_; ++q)
        for (int k = 0; k < per_peer_; ++k)
            if (!slots_[q][k].posted) post(q, k);
}

[[noreturn]] void Receiver::timed_out(const std::vector<char> &ended) const {
    std::string who;
    for (int q = 0; q < n_; ++q)
        if (!ended[q]) who += (who.empty() ? "" : ", ") + std::to_string(q);
    throw error("rank " + std::to_string(hgas_rank_me()) + ": no fragment (tag " + std::to_string(tag_) +
                ") from rank(s) " + who + " in " + std::to_string(int(timeout_)) +
                " s; their streams did not end (--timeout)");
}

// In place: the slots complete in the order they were posted (the order messages are
// matched), so the day is the slots from head_ on, until every rank's end marker is in.
uint64_t Receiver::day_in_place(const sink_t &sink) {
    start();
    std::vector<Slot> &ring = slots_[0];
    std::vector<char> ended(n_, 0);
    int left = n_;
    uint64_t got = 0;
    double last = now();
    while (left > 0) {
        if (posted_ == 0)
            throw error("rank " + std::to_string(hgas_rank_me()) + ": more fragments (tag " + std::to_string(tag_) +
                        ") in a day than the " + std::to_string(ring.size()) + " slots posted for it");
        Slot &s = ring[head_];
        int done = s.h == HGAS_HANDLE_DONE;
        if (!done) check(hgas_test(s.h, &done), "receiving a fragment");
        if (!done) {
            if (now() - last > timeout_) timed_out(ended);
            sched_yield();
            continue;
        }
        last = now();
        s.h = HGAS_HANDLE_DONE;
        s.posted = false;
        head_ = (head_ + 1) % ring.size();
        --posted_;
        const int q = s.info.source;
        const size_t bytes = s.info.bytes;
        if (q < 0 || q >= n_ || ended[q])
            throw error("rank " + std::to_string(hgas_rank_me()) + ": a fragment (tag " + std::to_string(tag_) +
                        ") from rank " + std::to_string(q) + (q >= 0 && q < n_ ? " after its stream ended" : ""));
        got += bytes;
        (void)sink(q, s.buf, bytes);
        if (bytes < frag_) ended[q] = 1, --left;  // the end marker
    }
    return got;
}

uint64_t Receiver::day(const sink_t &sink) {
    if (in_place_) return day_in_place(sink);
    start();
    struct Pending {
        int q, k;
        uint64_t ev;
    };
    std::vector<Pending> reposts;  // fragments whose bytes the device is still moving
    std::vector<char> ended(n_, 0);
    std::vector<hgas_handle_t> fronts(n_);
    int left = n_;
    uint64_t got = 0;
    double last = now();
    auto give_up_after_timeout = [&] {
        if (now() - last > timeout_) timed_out(ended);
    };
    while (left > 0) {
        for (size_t i = 0; i < reposts.size();)
            if (dev_.done(reposts[i].ev)) {
                post(reposts[i].q, reposts[i].k);
                reposts[i] = reposts.back();
                reposts.pop_back();
            } else {
                ++i;
            }
        // A receive whose message had arrived completes at its start: its handle is already
        // HGAS_HANDLE_DONE, which hgas_test_any would skip.
        int ready = -1;
        bool waiting = false;  // some peer's next fragment has a buffer posted
        for (int q = 0; q < n_ && ready < 0; ++q) {
            fronts[q] = ended[q] || queue_[q].empty() ? HGAS_HANDLE_DONE : slots_[q][queue_[q].front()].h;
            if (!ended[q] && !queue_[q].empty() && fronts[q] == HGAS_HANDLE_DONE) ready = q;
            waiting |= fronts[q] != HGAS_HANDLE_DONE;
        }
        if (ready < 0 && !waiting) {  // every buffer of the peers still sending is being emptied
            dev_.sync();
            give_up_after_timeout();
            continue;
        }
        int idx = -1, flag = 0;
        if (ready < 0) check(hgas_test_any(fronts.data(), fronts.size(), &idx, &flag), "receiving a fragment");
        if (ready < 0 && flag && idx >= 0) ready = idx;
        if (ready < 0) {
            give_up_after_timeout();
            sched_yield();
            continue;
        }
        last = now();
        const int q = ready, k = queue_[q].front();
        queue_[q].pop_front();
        Slot &s = slots_[q][k];
        s.h = HGAS_HANDLE_DONE;
        s.posted = false;
        const size_t bytes = s.info.bytes;
        got += bytes;
        const uint64_t ev = sink(q, s.buf, bytes);
        if (bytes < frag_) {  // the end marker: this buffer is posted again tomorrow
            ended[q] = 1;
            --left;
        } else {
            reposts.push_back({q, k, ev});
        }
    }
    dev_.sync();
    for (auto &p : reposts) post(p.q, p.k);
    return got;
}

void Receiver::close(Sender &mine) {
    std::vector<uint64_t> counts(n_);
    std::vector<hgas_handle_t> hs(n_);
    if (in_place_) {  // posted for any rank: this rank's own Sender completes them all
        queue_[hgas_rank_me()].clear();
        for (size_t i = 0; i < posted_; ++i) queue_[hgas_rank_me()].push_back(int((head_ + i) % slots_[0].size()));
        posted_ = 0;
    }
    for (int q = 0; q < n_; ++q) {
        counts[q] = queue_[q].size();
        check(hgas_isend_ctx(ctx_, &counts[q], sizeof(uint64_t), q, tag_ + CLOSE_TAG_OFFSET, &hs[q]),
              "ending a stream");
    }
    mine.close();
    check(hgas_wait_all(hs.data(), hs.size()), "ending a stream");
    for (int q = 0; q < n_; ++q)
        for (int k : queue_[q]) {
            Slot &s = in_place_ ? slots_[0][k] : slots_[q][k];
            check(hgas_wait(s.h), "ending a stream");
            s.h = HGAS_HANDLE_DONE;
            s.posted = false;
        }
    for (auto &row : slots_)
        for (auto &s : row) {
            hgas_msg_req_free(s.req);
            s.req = nullptr;
        }
}

Sender::Sender(Device &dev, hgas_msg_ctx_t ctx, int tag, size_t frag_bytes)
    : dev_(dev), ctx_(ctx), tag_(tag), frag_(frag_bytes), staging_(hgas_rank_n()), staging_h_(hgas_rank_n()) {}

void Sender::send(int q, const void *data, size_t bytes) {
    const char *p = static_cast<const char *>(data);
    for (size_t off = 0;; off += frag_) {  // full fragments, then the shorter end marker
        const size_t len = bytes - off < frag_ ? bytes - off : frag_;
        hs_.push_back(HGAS_HANDLE_DONE);
        check(hgas_isend_ctx(ctx_, len ? p + off : nullptr, len, q, tag_, &hs_.back()), "sending a fragment");
        if (len < frag_) break;
    }
}

void Sender::fragment(int q, const void *data, size_t bytes) {
    if (bytes > frag_) throw error("a fragment of " + std::to_string(bytes) + " B: more than " + std::to_string(frag_));
    hs_.push_back(HGAS_HANDLE_DONE);
    check(hgas_isend_ctx(ctx_, bytes ? data : nullptr, bytes, q, tag_, &hs_.back()), "sending a fragment");
    check(hgas_progress(), "sending a fragment");
}

void Sender::send_staged(int q, const void *dev_data, size_t bytes, int per_peer) {
    auto &st = staging_[q];
    auto &sh = staging_h_[q];
    if (st.empty()) {  // this peer's pinned fragments: the footprint that grows with peers
        for (int k = 0; k < per_peer; ++k) st.push_back(static_cast<char *>(dev_.pinned(frag_)));
        sh.assign(per_peer, HGAS_HANDLE_DONE);
    }
    const char *src = static_cast<const char *>(dev_data);
    const size_t nf = bytes / frag_ + 1, K = st.size();
    const int stream = q % dev_.streams();
    std::vector<uint64_t> ev(K, 0);
    auto len = [&](size_t j) { return j + 1 < nf ? frag_ : bytes - j * frag_; };
    size_t issued = 0;
    for (size_t sent = 0; sent < nf; ++sent) {
        for (; issued < nf && issued < sent + K; ++issued) {  // copies of up to K fragments ahead
            const size_t k = issued % K;
            check(hgas_wait(sh[k]), "sending a staged fragment");  // its previous send is done
            sh[k] = HGAS_HANDLE_DONE;
            dev_.d2h(st[k], src + issued * frag_, len(issued), stream);
            ev[k] = dev_.record(stream);
        }
        const size_t k = sent % K;
        while (!dev_.done(ev[k])) hgas_progress();
        check(hgas_isend_ctx(ctx_, st[k], len(sent), q, tag_, &sh[k]), "sending a staged fragment");
    }
}

void Sender::wait() {
    check(hgas_wait_all(hs_.data(), hs_.size()), "completing the day's sends");
    hs_.clear();
    for (auto &sh : staging_h_) check(hgas_wait_all(sh.data(), sh.size()), "completing the day's sends");
}

void Sender::close() {
    const int n = hgas_rank_n();
    for (int q = 0; q < n; ++q) {
        uint64_t count = 0;
        hgas_handle_t h;
        check(hgas_irecv_ctx(ctx_, &count, sizeof count, q, tag_ + CLOSE_TAG_OFFSET, nullptr, &h), "ending a stream");
        check(hgas_wait(h), "ending a stream");
        for (uint64_t i = 0; i < count; ++i) {
            hs_.push_back(HGAS_HANDLE_DONE);
            check(hgas_isend_ctx(ctx_, nullptr, 0, q, tag_, &hs_.back()), "ending a stream");
        }
    }
    wait();
}

}  // namespace episim
