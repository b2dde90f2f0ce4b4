// `shm`: peers on the same node. Each rank's host segments are POSIX shared memory; a peer
// maps them (the blob says how) and from then on puts and gets are memcpy and atomics are CPU
// atomics on the shared mapping, which are atomic across processes.
//
// Peer attach (HGAS_PEER_ATTACH): 'eager' maps every peer's segments at init by name, before
// the owners drop the names. 'lazy' (the default) maps a peer at its first use, which may come
// long after the names are gone: the owner keeps each segment's descriptor open, and a peer
// opens /proc/<owner pid>/fd/<fd>, checking it is the announced file (device and inode). So
// start-up costs no mapping per pair of ranks, and a job maps only the peers it talks to.
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <map>

#include "base/log.hpp"
#include "mem/segment.hpp"
#include "transport/direct_base.hpp"

namespace hgas::transport {
namespace {

// The PID namespace of this process: a peer in another one cannot be found by pid.
uint64_t pid_namespace() {
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

class shm_transport final : public direct_transport {
public:
    const char *name() const override { return "shm"; }
    caps capabilities() const override { return {true, false, 0.05, 20.0}; }
    status connect(const setup &s) override {
        me_ = s.job->rank;
        topo_ = s.topo;
        lazy_ = !s.cfg || s.cfg->text(setting::peer_attach) != "eager";  // lazy unless told
        pidns_ = pid_namespace();
        // Sized once: lazy attaches fill entries while other threads read other peers' bases.
        bases_.assign(static_cast<size_t>(s.job->size), std::vector<void *>(mem::seg_count, nullptr));
        return status::ok;
    }
    bool can_reach(int peer) const override {
        return topo_ && peer >= 0 && static_cast<size_t>(peer) < topo_->node_of.size() &&
               topo_->node_of[peer] == topo_->node_me;
    }
    bool attaches_lazily() const override { return lazy_; }
    status register_segment(const local_segment &seg, std::string &blob) override {
        // Our own segment is reachable through shm too (a rank may prefer shm over self when
        // HGAS_TRANSPORTS lists no self).
        set_base(me_, seg.seg, seg.base);
        // "name pid fd dev ino pidns": the name for eager attach, the rest for lazy attach.
        struct stat st {};
        if (seg.fd < 0 || fstat(seg.fd, &st) != 0) st = {};
        char tail[160];
        std::snprintf(tail, sizeof tail, " %ld %d %" PRIu64 " %" PRIu64 " %" PRIu64, static_cast<long>(getpid()),
                      seg.fd, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), pidns_);
        blob = seg.shm_name.empty() ? std::string() : seg.shm_name + tail;
        return status::ok;
    }
    status attach_segment(int peer, uint16_t seg, uint64_t size, const std::string &blob) override {
        if (peer == me_ || !can_reach(peer) || size == 0) return status::ok;  // size 0: the peer has no such segment
        if (maps_.count({peer, seg})) return status::ok;  // a retried lazy attach: this one is mapped already
        if (blob.empty())
            return fail(status::internal, "shm: rank %d announced segment %u without a shared-memory name", peer, seg);
        const size_t sp = blob.find(' ');
        const std::string name = blob.substr(0, sp);
        long pid = 0;
        int fd = -1;
        uint64_t dev = 0, ino = 0, ns = 0;
        const bool has_fd = sp != std::string::npos &&
                            std::sscanf(blob.c_str() + sp, " %ld %d %" SCNu64 " %" SCNu64 " %" SCNu64, &pid, &fd, &dev,
                                        &ino, &ns) == 5 && fd >= 0;
        mem::host_mapping m;
        if (!lazy_ || !has_fd) {  // a blob with a name alone: the name is still there (tests)
            HGAS_TRY_ASSIGN(m, mem::host_mapping::attach(name, size));
        } else if (ns != pidns_) {
            return fail(status::unsupported, "shm: rank %d runs in another PID namespace on this node, so its shared "
                        "memory cannot be mapped on first use: set HGAS_PEER_ATTACH=eager", peer);
        } else {
            HGAS_TRY_ASSIGN(m, mem::host_mapping::attach_fd(pid, fd, dev, ino, name, size));
        }
        set_base(peer, seg, m.base());
        HGASI_DEBUG("shm", "mapped segment %u of rank %d (%s, %llu bytes)", seg, peer, name.c_str(),
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
    bool lazy_ = false;
    uint64_t pidns_ = 0;
    std::map<std::pair<int, uint16_t>, mem::host_mapping> maps_;
};

}  // namespace

std::unique_ptr<transport> create_shm() { return std::make_unique<shm_transport>(); }

}  // namespace hgas::transport
