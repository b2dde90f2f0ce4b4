// The cache of peers' mapped user allocations (ipc_cache.hpp).
#include "gpu/ipc_cache.hpp"

namespace hgas::gpu {

void *ipc_cache::find(int peer, const user_export &e, std::vector<entry> &closed) {
    // Entries of this peer overlapping [base, base+size): at most those starting below the end.
    auto it = map_.lower_bound({peer, 0});
    while (it != map_.end() && it->first.first == peer && it->second.base < e.base + e.size) {
        entry &x = it->second;
        if (x.base + x.size <= e.base) {
            ++it;
            continue;
        }
        if (x.base == e.base && x.size == e.size && x.buffer_id == e.buffer_id &&
            x.k == static_cast<kind>(e.kind)) {
            x.last_use = ++tick_;
            ++hits;
            return x.mapped;
        }
        ++invalidated;  // freed at the peer, and the range reused by another allocation
        closed.push_back(x);
        it = map_.erase(it);
    }
    ++misses;
    return nullptr;
}

void ipc_cache::insert(int peer, const user_export &e, void *mapped, std::vector<entry> &closed) {
    entry x;
    x.peer = peer;
    x.base = e.base;
    x.size = e.size;
    x.buffer_id = e.buffer_id;
    x.k = static_cast<kind>(e.kind);
    x.mapped = mapped;
    x.last_use = ++tick_;
    map_[{peer, e.base}] = x;
    while (map_.size() > max_) {
        auto old = map_.begin();
        for (auto it = map_.begin(); it != map_.end(); ++it)
            if (it->second.last_use < old->second.last_use) old = it;
        ++evicted;
        closed.push_back(old->second);
        map_.erase(old);
    }
}

std::vector<ipc_cache::entry> ipc_cache::clear() {
    std::vector<entry> all;
    for (auto &[k, x] : map_) all.push_back(x);
    map_.clear();
    return all;
}

}  // namespace hgas::gpu
