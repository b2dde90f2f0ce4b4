// `shm`: peers on the same node. Each rank's host segments are POSIX shared memory; a peer
// maps them by name (the blob) and from then on puts and gets are memcpy and atomics are CPU
// atomics on the shared mapping, which are atomic across processes.
#include <map>

#include "base/log.hpp"
#include "mem/segment.hpp"
#include "transport/direct_base.hpp"

namespace hgas::transport {
namespace {

class shm_transport final : public direct_transport {
public:
    const char *name() const override { return "shm"; }
    caps capabilities() const override { return {true, false, 0.05, 20.0}; }
    status connect(const setup &s) override {
        me_ = s.job->rank;
        topo_ = s.topo;
        return status::ok;
    }
    bool can_reach(int peer) const override {
        return topo_ && peer >= 0 && static_cast<size_t>(peer) < topo_->node_of.size() &&
               topo_->node_of[peer] == topo_->node_me;
    }
    status register_segment(const local_segment &seg, std::string &blob) override {
        // Our own segment is reachable through shm too (a rank may prefer shm over self when
        // HGAS_TRANSPORTS lists no self).
        set_base(me_, seg.seg, seg.base);
        blob = seg.shm_name;
        return status::ok;
    }
    status attach_segment(int peer, uint16_t seg, uint64_t size, const std::string &blob) override {
        if (peer == me_ || !can_reach(peer) || size == 0) return status::ok;  // size 0: the peer has no such segment
        if (blob.empty())
            return fail(status::internal, "shm: rank %d announced segment %u without a shared-memory name", peer, seg);
        HGAS_TRY_ASSIGN(mem::host_mapping m, mem::host_mapping::attach(blob, size));
        set_base(peer, seg, m.base());
        HGASI_DEBUG("shm", "mapped segment %u of rank %d (%s, %llu bytes)", seg, peer, blob.c_str(),
                    (unsigned long long)size);
        maps_.emplace(std::make_pair(peer, seg), std::move(m));
        return status::ok;
    }
    void shutdown() override {
        maps_.clear();
        bases_.clear();
    }

private:
    int me_ = -1;
    const boot::topology *topo_ = nullptr;
    std::map<std::pair<int, uint16_t>, mem::host_mapping> maps_;
};

}  // namespace

std::unique_ptr<transport> create_shm() { return std::make_unique<shm_transport>(); }

}  // namespace hgas::transport
