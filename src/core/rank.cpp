#include "core/rank.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <thread>

#include "base/log.hpp"
#include "core/wire_codec.hpp"

namespace hgas::core {

namespace {
thread_local rank *tls_rank = nullptr;
// The rank of a process that hosts exactly one, so that threads other than the one that
// called hgas_init find it. A registry, not rank state: with several ranks per process
// every thread names its rank through set_current() instead.
std::atomic<rank *> g_sole_rank{nullptr};
}  // namespace

rank *current() {
    rank *r = tls_rank;
    return r ? r : g_sole_rank.load(std::memory_order_acquire);
}

void set_current(rank *r) {
    tls_rank = r;
    g_sole_rank.store(r, std::memory_order_release);
}

rank::~rank() {
    for (auto &[key, a] : attachments_)
        if (a.release) a.release(a.value);
    engine_.stop_helper();
    for (auto &t : transports_) t->shutdown();
}

result<std::unique_ptr<rank>> rank::create() {
    std::unique_ptr<rank> r(new rank());
    status s = r->init();
    if (s != status::ok) {
        // Tell the others why we are leaving, so they do not wait for us until a timeout.
        if (r->store_) (void)r->store_->abort("rank " + std::to_string(r->job_.rank) + " failed in hgas_init: " +
                                             last_error());
        return s;
    }
    return r;
}

status rank::init() {
    HGAS_TRY_ASSIGN(cfg_, settings::from_env());
    const std::string &lvl = cfg_.text(setting::log_level);
    log_configure(lvl == "error" ? log_level::error : lvl == "info" ? log_level::info
                                                    : lvl == "debug" ? log_level::debug : log_level::warn,
                  cfg_.text(setting::debug).c_str());
    timeout_ = cfg_.seconds(setting::timeout);
    HGAS_TRY_ASSIGN(job_, boot::detect(cfg_));
    log_set_rank(job_.rank);
    const double boot_timeout = cfg_.seconds(setting::boot_timeout);
    HGAS_TRY_ASSIGN(store_, boot::client::connect(job_, boot_timeout));

    // Node names decide who shares memory; host names decide who shares cores (they differ
    // when one machine pretends to be several nodes: hgasrun --nodes, HGAS_NODE_NAME).
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::vector<std::string> names;
    HGAS_TRY(store_->allgather("init.node", job_.node_name + '\n' + host, names, boot_timeout));
    std::vector<std::string> nodes(names.size());
    int same_machine = 0;
    for (size_t i = 0; i < names.size(); ++i) {
        const size_t nl = names[i].find('\n');
        nodes[i] = names[i].substr(0, nl);
        if (nl != std::string::npos && names[i].compare(nl + 1, std::string::npos, host) == 0) ++same_machine;
    }
    topo_ = boot::topology::from_node_names(nodes, job_.rank);
    oversubscribed_ = same_machine > static_cast<int>(std::thread::hardware_concurrency());
    HGASI_DEBUG("core", "rank %d of %d on node %d/%d (local %d/%d), launcher %s", job_.rank, job_.size,
                topo_.node_me, topo_.node_n, topo_.local_rank, topo_.local_n, job_.launcher.c_str());

    HGAS_TRY(create_transports());
    HGAS_TRY(create_segments());
    HGAS_TRY(create_static_segment());
    HGAS_TRY(exchange_segments());

    std::vector<transport::transport *> raw;
    for (auto &t : transports_) raw.push_back(t.get());
    HGAS_TRY(router_.build(raw, job_.size, job_.rank, topo_));
    // The fast path: peers a transport maps directly are reached by plain loads and stores.
    for (int p = 0; p < job_.size; ++p)
        for (uint16_t s = 0; s < mem::seg_count; ++s)
            peers_[p][s].direct = static_cast<char *>(router_.route(p)->peer_base(p, s));
    engine_.set_transports(raw);
    if (cfg_.flag(setting::progress_thread))
        engine_.start_helper(static_cast<unsigned>(cfg_.integer(setting::progress_interval_us)), job_.rank);

    // Internal symmetric objects: the same allocation sequence on every rank gives the same
    // offsets, before any user allocation.
    auto alloc = [&](uint64_t bytes, uint64_t &off) -> status {
        auto r = sym_heap_.allocate(bytes, 64);
        if (!r.ok())
            return fail(status::no_memory, "HGAS_HEAP_SIZE=%llu is too small for hgas's internal objects (%llu "
                        "bytes); raise it", (unsigned long long)sym_heap_.capacity(), (unsigned long long)bytes);
        off = *r;
        std::memset(own_base(mem::seg_symmetric) + off, 0, bytes);
        return status::ok;
    };
    HGAS_TRY(alloc(internal_objects::max_rounds * 64, internal_.barrier_flags));
    HGAS_TRY(alloc(64 * 64, internal_.coll_flags));
    internal_.coll_scratch_size = cfg_.bytes(setting::coll_scratch);
    if (internal_.coll_scratch_size < 4096) internal_.coll_scratch_size = 4096;
    HGAS_TRY(alloc(internal_.coll_scratch_size, internal_.coll_scratch));
    return store_->barrier("init.done", boot_timeout);
}

status rank::create_segments() {
    const uint64_t sizes[mem::seg_count] = {cfg_.bytes(setting::heap_size), cfg_.bytes(setting::local_heap_size)};
    // When UCX, not shm, carries this node's traffic (HGAS_TRANSPORTS without shm), the heaps
    // come from UCX: its shared-memory transports store directly only into memory it allocated.
    transport::transport *ucx_allocates = nullptr;
    if (!cfg_.list_has(setting::transports, "shm") && topo_.local_n > 1)
        for (auto &t : transports_)
            if (std::string(t->name()) == "ucx") ucx_allocates = t.get();
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        if (s == mem::seg_static) continue;  // the program's own memory: create_static_segment()
        if (sizes[s] < 64 * 1024)
            return fail(status::invalid_setting, "%s=%llu is too small: at least 64K",
                        s == 0 ? "HGAS_HEAP_SIZE" : "HGAS_LOCAL_HEAP_SIZE", (unsigned long long)sizes[s]);
        own_[s].size = sizes[s];
        if (ucx_allocates) {
            HGAS_TRY_ASSIGN(void *p, ucx_allocates->allocate_segment(s, sizes[s]));
            own_[s].base = static_cast<char *>(p);
        } else {
            HGAS_TRY_ASSIGN(own_[s].mapping,
                            mem::host_mapping::create(mem::shm_name(job_.job_id, job_.rank, s), sizes[s]));
            own_[s].base = static_cast<char *>(own_[s].mapping.base());
        }
    }
    sym_heap_ = mem::allocator(sizes[0]);
    local_heap_ = mem::allocator(sizes[1]);
    return status::ok;
}

status rank::create_transports() {
    const auto &wanted = cfg_.list(setting::transports);
    if (wanted.empty())
        return fail(status::invalid_setting, "HGAS_TRANSPORTS is empty: name at least one of self,shm,ucx");
    transport::setup su{&cfg_, &job_, &topo_, store_.get(), oversubscribed_};
    for (const auto &name : wanted) {
        std::unique_ptr<transport::transport> t;
        if (name == "self") t = transport::create_self();
        else if (name == "shm") t = transport::create_shm();
        else if (name == "ucx") {
            auto r = transport::create_ucx(cfg_);
            if (!r.ok()) {
                // Without UCX, a one-node job still runs on self and shm; say so once.
                if (r.error() == status::unsupported && wanted.size() > 1) {
                    HGASI_DEBUG("core", "%s", last_error().c_str());
                    continue;
                }
                return r.error();
            }
            t = std::move(*r);
        }
        HGAS_TRY(t->connect(su));
        transports_.push_back(std::move(t));
    }
    return status::ok;
}

status rank::exchange_segments() {
    // One allgather carries, for every segment, its size and each transport's blob.
    codec out;
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        out.u64(own_[s].size);
        transport::local_segment ls{s, own_[s].base, own_[s].size, own_[s].mapping.name()};
        for (auto &t : transports_) {
            std::string blob;
            HGAS_TRY(t->register_segment(ls, blob));
            out.str(blob);
        }
    }
    std::vector<std::string> all;
    HGAS_TRY(store_->allgather("init.segments", out.hex(), all, cfg_.seconds(setting::boot_timeout)));
    peers_.assign(job_.size, {});
    for (int p = 0; p < job_.size; ++p) {
        codec in;
        if (!in.from_hex(all[p])) return fail(status::bootstrap, "segment table of rank %d is corrupt", p);
        for (uint16_t s = 0; s < mem::seg_count; ++s) {
            uint64_t size = 0;
            if (!in.get_u64(size)) return fail(status::bootstrap, "segment table of rank %d is short", p);
            peers_[p][s].size = size;
            for (auto &t : transports_) {
                std::string blob;
                if (!in.get_str(blob)) return fail(status::bootstrap, "segment table of rank %d is short", p);
                if (t->can_reach(p)) HGAS_TRY(t->attach_segment(p, s, size, blob));
            }
        }
    }
    // Every peer has mapped our segments once all have passed this barrier: drop the names so
    // nothing is left in /dev/shm however the job ends from here on.
    HGAS_TRY(store_->barrier("init.attached", cfg_.seconds(setting::boot_timeout)));
    for (auto &t : transports_) t->segments_attached();
    for (auto &o : own_) o.mapping.unlink();
    return status::ok;
}

int rank::own_segment_of(const void *p, uint64_t len) const {
    const char *c = static_cast<const char *>(p);
    for (uint16_t s = 0; s < mem::seg_count; ++s) {
        const char *b = own_[s].base;
        if (b && c >= b && mem::in_bounds(static_cast<uint64_t>(c - b), len, own_[s].size)) return s;
    }
    return -1;
}

status rank::check_alive() {
    std::string why;
    if (store_->aborted(&why)) {
        // A job exit (shmem_global_exit on some rank) is not a failure to report: every rank
        // ends with the status it asked for, wherever it is waiting.
        int code = 0;
        if (store_->exit_requested(&code)) {
            HGASI_DEBUG("boot", "rank %d exits with status %d: %s", me(), code, why.c_str());
            std::fflush(nullptr);
            _exit(code);
        }
        return fail(status::peer_failed, "the job is ending: %s", why.c_str());
    }
    return status::ok;
}

status rank::poll() {
    HGAS_TRY(engine_.poll());
    const uint64_t now = now_ns();
    if (now - last_alive_check_ns_ > 1000000) {  // the store socket is checked once a millisecond
        last_alive_check_ns_ = now;
        HGAS_TRY(check_alive());
    }
    return status::ok;
}

status rank::finalize() {
    if (finalized_) return status::ok;
    finalized_ = true;
    status s = status::ok;
    for (auto &t : transports_) {
        status q = t->quiet();
        if (s == status::ok) s = q;
    }
    status b = store_->barrier("finalize", timeout_);
    if (s == status::ok) s = b;
    engine_.stop_helper();
    for (auto &t : transports_) t->shutdown();
    (void)store_->finalize();
    return s;
}

}  // namespace hgas::core
