// The consumer of the device proxy's ring (include/hgas/impl/device_types.h has the layout and
// the protocol, impl/proxy_producer.h the producer): executes the requests kernels (or host
// test threads) post, in ticket order, over the rank's host paths (rma::put, ...), answers the
// ones that fetch, and advances `done` once what it issued is complete at its targets.
//
// Threading: drain() runs with the rank's API mutex held -- on the rank's proxy thread, or on
// the rank's own thread from inside any hgas call (the progress engine's poller) -- so it acts
// for the rank like any API call. pending() may be called without it.
#pragma once
#include <atomic>
#include <string>

#include <hgas/impl/device_types.h>

#include "core/rank.hpp"
#include "rma/rma.hpp"

namespace hgas::device {

class proxy {
public:
    proxy(core::rank &r, hgasi_proxy_ring_t *ring, uint32_t slots) : r_(r), ring_(ring), slots_(slots) {}

    // A published request is waiting.
    bool pending() const;
    // Executes up to `max` published requests, completes them and publishes `done`. Returns how
    // many it executed. A failed request is still completed (its fetch answered with 0) and
    // recorded in the ring as HGAS_DEVICE_ERR_PROXY_FAILED; failure() keeps its message.
    size_t drain(size_t max);

    uint64_t executed() const { return next_.load(std::memory_order_relaxed); }
    const std::string &failure() const { return failure_; }
    void clear_failure() { failure_.clear(); }

private:
    hgasi_proxy_slot_t *slot(uint64_t t) const;
    status execute(const hgasi_proxy_slot_t &q, uint64_t &result, bool &needs_quiet);
    rma::issuer issuer_of(const hgas_gptr_t &g) const;
    void record(uint64_t t, const hgasi_proxy_slot_t &q);

    core::rank &r_;
    hgasi_proxy_ring_t *ring_;
    uint32_t slots_;
    std::atomic<uint64_t> next_{0};  // the next ticket to execute
    std::string failure_;
};

}  // namespace hgas::device
