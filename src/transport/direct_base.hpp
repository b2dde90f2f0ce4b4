// Shared implementation of the data calls for transports whose peers are mapped directly
// (self, shm): every operation is a copy or an atomic on the mapping, complete at return.
#pragma once
#include <cstring>
#include <vector>

#include "transport/transport.hpp"

namespace hgas::transport {

class direct_transport : public transport {
public:
    void *peer_base(int peer, uint16_t seg) const override {
        if (peer < 0 || static_cast<size_t>(peer) >= bases_.size() || seg >= bases_[peer].size()) return nullptr;
        return bases_[peer][seg];
    }
    status put(remote dst, const void *src, size_t n, bool) override {
        HGAS_TRY(mapped(dst));
        std::memcpy(addr(dst), src, n);
        return status::ok;
    }
    status get(void *dst, remote src, size_t n, bool) override {
        HGAS_TRY(mapped(src));
        std::memcpy(dst, addr(src), n);
        return status::ok;
    }
    status put_nb(remote dst, const void *src, size_t n, pending &p) override {
        p.req = nullptr;
        return put(dst, src, n, false);
    }
    status get_nb(void *dst, remote src, size_t n, pending &p) override {
        p.req = nullptr;
        return get(dst, src, n, false);
    }
    status test(pending &, bool &done) override {
        done = true;
        return status::ok;
    }
    status amo(remote t, amo_op op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *result) override {
        HGAS_TRY(mapped(t));
        uint64_t old = direct::amo(addr(t), op, width, operand, compare);
        if (result) *result = old;
        return status::ok;
    }
    status put_signal(remote dst, const void *src, size_t n, remote sig, signal_op op, uint64_t value,
                      bool) override {
        HGAS_TRY(mapped(dst));
        HGAS_TRY(mapped(sig));
        if (n) std::memcpy(addr(dst), src, n);  // src may be NULL for a signal alone
        direct::store_fence();
        direct::signal_update(addr(sig), op, value);
        return status::ok;
    }
    status fence() override {
        direct::store_fence();
        return status::ok;
    }
    status quiet() override {
        direct::store_fence();
        return status::ok;
    }
    status progress() override { return status::ok; }

protected:
    // The core reaches these calls only for peers it mapped (a peer mapped lazily that could
    // not be is an error before); this keeps a slip from being a crash.
    status mapped(remote r) const {
        if (peer_base(r.rank, r.seg)) return status::ok;
        return fail(status::internal, "%s: segment %u of rank %d is not mapped in this process", name(), r.seg, r.rank);
    }
    void *addr(remote r) const { return static_cast<char *>(bases_[r.rank][r.seg]) + r.offset; }
    void set_base(int peer, uint16_t seg, void *base) {
        if (bases_.size() <= static_cast<size_t>(peer)) bases_.resize(peer + 1);
        if (bases_[peer].size() <= seg) bases_[peer].resize(seg + 1, nullptr);
        bases_[peer][seg] = base;
    }
    std::vector<std::vector<void *>> bases_;  // [peer][seg] -> mapped base or nullptr
};

}  // namespace hgas::transport
