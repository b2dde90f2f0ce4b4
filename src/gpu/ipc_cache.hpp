// The cache of peers' user device allocations mapped into this process (gpu::user_export,
// import_user), used by the rendezvous of large tagged messages (msg, README "Rendezvous by
// IPC"): opening a CUDA IPC handle costs far more than a copy of a few MiB, so each peer
// allocation is opened once and kept.
//
// Keyed by peer and allocation base; an entry is current only while size and buffer id match
// the export. An export from the same peer that overlaps an entry with another id or size
// means the peer freed that allocation and made another one there: the old mapping is stale
// (it still shows the freed memory, so a copy from it would deliver the wrong bytes) and is
// removed. Least recently used entries beyond `max` are evicted.
//
// Pure bookkeeping, no device calls (the caller closes what comes out), so that it is tested
// on the CPU (tests/unit/test_gpu.cpp). One thread: the rank's message progress.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "gpu/gpu.hpp"

namespace hgas::gpu {

class ipc_cache {
public:
    struct entry {
        int peer = 0;
        uint64_t base = 0, size = 0, buffer_id = 0;
        kind k = kind::host;
        void *mapped = nullptr;  // this process's address of the allocation's base
        uint64_t last_use = 0;
    };
    explicit ipc_cache(size_t max = 256) : max_(max) {}

    // The current mapping of `e` from `peer` (hit), or nullptr (miss). Stale entries of that
    // peer overlapping e's allocation are removed and appended to `closed`.
    void *find(int peer, const user_export &e, std::vector<entry> &closed);
    // Adds the mapping of `e` just made (after a miss); evicts beyond `max` into `closed`.
    void insert(int peer, const user_export &e, void *mapped, std::vector<entry> &closed);
    // Removes everything (finalize).
    std::vector<entry> clear();

    size_t size() const { return map_.size(); }
    uint64_t hits = 0, misses = 0, invalidated = 0, evicted = 0;

private:
    size_t max_;
    uint64_t tick_ = 0;
    std::map<std::pair<int, uint64_t>, entry> map_;  // by (peer, base)
};

}  // namespace hgas::gpu
