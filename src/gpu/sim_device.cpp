// The sim device: simulated device memory for machines without a GPU.
//
// Each sim segment is a POSIX shared-memory object mapped twice: once PROT_NONE, whose
// addresses are the "device pointers" users and the runtime pass around (a stray memcpy on
// one faults at once, which is how the tests prove no path touches device memory with the
// CPU), and once read-write as a private alias that only the copy engine uses. Same-node peers
// map the same object the same way (the analogue of CUDA IPC with peer access).
//
// The copy engine: streams of operations, each due `latency + bytes/bandwidth` after the
// previous one of its stream, so streams overlap each other the way a GPU's copy engines do.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "base/clock.hpp"
#include "base/shm.hpp"
#include "base/trace.hpp"
#include "gpu/fd_pass.hpp"
#include "gpu/gpu.hpp"
#include "gpu/reduce_cpu.hpp"

namespace hgas::gpu {

namespace {

struct range {
    char *dev;     // PROT_NONE view: the device address
    char *alias;   // read-write view, engine only
    size_t size;
    std::string name;  // shm name while linked (own segments; own user allocations until freed)
    bool own;
    bool user = false;     // a user allocation (alloc_user) or a peer's one mapped here (import_user)
    uint64_t id = 0;       // user allocations: the buffer id (never reused)
    // Own VMM-modelled user allocations (alloc_user_vmm): 1 exportable as an fd (then `fd`,
    // kept open until freed, is what the fd server hands out), 2 not exportable.
    int vmm = 0;
    int fd = -1;
};

struct op {
    enum { copy, atomic, reduce } what;
    char *dst;
    const char *src;
    size_t n;
    amo_op aop;
    unsigned width;
    uint64_t operand, compare;
    uint64_t *result;
    uint64_t seq;
    int type, rop;  // reduce: n elements of hgas_dtype_t type, hgas_op_t rop
    bool rev;
    // Tracing on: the API call that enqueued it (trace::current(), or the operation's name),
    // its bytes and the time the stream starts it (the previous operation's due time, or now).
    const char *tname;
    uint64_t tbytes, tstart;
};

uint64_t host_amo(void *addr, amo_op op, unsigned width, uint64_t v, uint64_t cmp);

// Carries out one operation of the engine on the aliases.
void run_op(const op &o) {
    if (o.what == op::atomic) *o.result = host_amo(o.dst, o.aop, o.width, o.operand, o.compare);
    else if (o.what == op::reduce) reduce_cpu(o.dst, o.src, o.n, o.type, o.rop, o.rev);
    else if (o.n) std::memmove(o.dst, o.src, o.n);  // a zero-length copy may name NULL
}

// One stream of the copy engine. Passive: an operation is due `latency + bytes/bandwidth`
// after the previous one on its stream is, and it is carried out by the first test() (of any
// stream of the device) that finds it due, in the order operations fall due. No thread of its own, so nothing competes for the cores of a
// small machine, and a path that never waits for its copy never sees the data.
class sim_stream {
public:
    sim_stream(int index, double latency_s, double bytes_per_s) : index_(index), lat_(latency_s), bw_(bytes_per_s) {}
    uint64_t submit(op o) {
        std::lock_guard<std::mutex> g(mu_);
        const uint64_t now = now_ns();
        const uint64_t cost = static_cast<uint64_t>((lat_ + (bw_ > 0 ? o.n / bw_ : 0)) * 1e9);
        o.tname = nullptr;
        if (__builtin_expect(trace::on(), 0) && (o.n || o.what != op::copy)) {  // not a mark (an empty copy)
            static const char *what[] = {"copy", "atomic", "reduce"};
            o.tname = trace::current() ? trace::current() : what[o.what];
            o.tstart = std::max(now, last_due_);
            if (o.what == op::copy) o.tbytes = o.n;
            else if (o.what == op::reduce) o.tbytes = o.n * reduce_dtype_size(o.type);
            else o.tbytes = o.width;
        }
        last_due_ = std::max(now, last_due_) + cost;
        o.seq = ++submitted_;
        q_.push_back({o, last_due_});
        return o.seq;
    }
    bool done(uint64_t seq) {
        std::lock_guard<std::mutex> g(mu_);
        const uint64_t now = now_ns();
        while (!q_.empty() && q_.front().second <= now) {
            run(q_.front());
            completed_ = q_.front().first.seq;
            q_.pop_front();
        }
        return completed_ >= seq;
    }
    // Due time of the oldest operation not carried out yet (UINT64_MAX: none).
    uint64_t front_due() {
        std::lock_guard<std::mutex> g(mu_);
        return q_.empty() ? UINT64_MAX : q_.front().second;
    }
    // Carries out the oldest operation if it is due by `now`.
    void run_front(uint64_t now) {
        std::lock_guard<std::mutex> g(mu_);
        if (q_.empty() || q_.front().second > now) return;
        run(q_.front());
        completed_ = q_.front().first.seq;
        q_.pop_front();
    }

private:
    // Carries out an operation; traced, a span on this stream's track from the time the stream
    // started it to its due time (the simulated engine's timeline, not the CPU's copy).
    void run(const std::pair<op, uint64_t> &q) {
        run_op(q.first);
        if (__builtin_expect(q.first.tname != nullptr, 0)) {
            if (track_ < 0) track_ = trace::stream_track("sim stream " + std::to_string(index_));
            trace::fields f;
            f.bytes = q.first.tbytes;
            f.path = 0;  // the engine copies between mapped views
            f.op = q.first.what == op::copy ? trace::op_copy : q.first.what == op::reduce ? trace::op_reduce
                                                                                          : trace::op_atomic;
            trace::record_on(track_, q.first.tname, "stream", q.first.tstart, q.second, f);
        }
    }
    int index_, track_ = -1;
    double lat_, bw_;
    std::mutex mu_;
    std::deque<std::pair<op, uint64_t>> q_;  // operation, due time
    uint64_t submitted_ = 0, completed_ = 0, last_due_ = 0;
};

template <class T>
T amo_t(T *p, amo_op op, T v, T cmp) {
    switch (op) {
    case amo_op::fetch: return __atomic_load_n(p, __ATOMIC_SEQ_CST);
    case amo_op::set: __atomic_store_n(p, v, __ATOMIC_SEQ_CST); return 0;
    case amo_op::add:
    case amo_op::fetch_add: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case amo_op::swap: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case amo_op::compare_swap:
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return cmp;
    case amo_op::and_:
    case amo_op::fetch_and: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case amo_op::or_:
    case amo_op::fetch_or: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    case amo_op::xor_:
    case amo_op::fetch_xor: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    }
    return 0;
}

uint64_t host_amo(void *addr, amo_op op, unsigned width, uint64_t v, uint64_t cmp) {
    if (width == 4)
        return amo_t<uint32_t>(static_cast<uint32_t *>(addr), op, static_cast<uint32_t>(v),
                               static_cast<uint32_t>(cmp));
    return amo_t<uint64_t>(static_cast<uint64_t *>(addr), op, v, cmp);
}

class sim_device final : public device {
public:
    explicit sim_device(const open_args &a)
        : job_(a.job_id), rank_(a.rank),
          latency_s_(a.cfg->integer(setting::sim_latency_us) * 1e-6),
          bw_(static_cast<double>(a.cfg->bytes(setting::sim_bandwidth))),
          peer_access_(a.cfg->flag(setting::sim_peer_access)), fd_timeout_(a.cfg->seconds(setting::boot_timeout)) {
        const int ns = static_cast<int>(a.cfg->integer(setting::gpu_streams));
        for (int i = 0; i < ns; ++i) streams_.push_back(std::make_unique<sim_stream>(i, latency_s_, bw_));
    }
    ~sim_device() override {
        streams_.clear();
        fd_server_.reset();  // before the fds it hands out are closed
        for (auto &r : ranges_) {
            if (r.fd >= 0) ::close(r.fd);
            munmap(r.dev, r.size);
            munmap(r.alias, r.size);
            if (r.own && !r.name.empty()) shm_unlink(r.name.c_str());
        }
    }

    kind which() const override { return kind::sim; }
    int ordinal() const override { return 0; }
    int streams() const override { return static_cast<int>(streams_.size()); }
    std::string describe() const override {
        char b[160];
        snprintf(b, sizeof b, "sim (latency %.0f us, %.1f GB/s, %d streams, peer access %s)", latency_s_ * 1e6,
                 bw_ / 1e9, streams(), peer_access_ ? "on" : "off");
        return b;
    }

    result<void *> alloc_segment(uint16_t seg, size_t n, std::string &blob) override {
        // A random part in the name (base/shm.hpp); peers learn it from the blob.
        std::string name;
        HGAS_TRY_ASSIGN(int fd, shm_create_unique("/hgas-" + job_ + "-" + std::to_string(rank_) + "-sim" +
                                                      std::to_string(seg),
                                                  name, "sim device"));
        int rc = posix_fallocate(fd, 0, static_cast<off_t>(n));
        if (rc != 0) {
            ::close(fd);
            shm_unlink(name.c_str());
            return fail(status::no_memory, "sim: cannot reserve %zu bytes for %s: %s; lower HGAS_SIM_HEAP_SIZE",
                        n, name.c_str(), std::strerror(rc));
        }
        auto r = map(fd, n, name, true);
        ::close(fd);
        if (!r.ok()) {
            shm_unlink(name.c_str());
            return r.error();
        }
        blob = name;
        return static_cast<void *>(*r);
    }

    result<void *> map_peer(int peer, const std::string &blob, size_t n) override {
        if (!peer_access_) return static_cast<void *>(nullptr);
        int fd = shm_open(blob.c_str(), O_RDWR, 0);
        if (fd < 0)
            return fail(status::bootstrap, "sim: cannot open rank %d's sim segment %s: %s", peer, blob.c_str(),
                        std::strerror(errno));
        auto r = map(fd, n, "", false);
        ::close(fd);
        if (!r.ok()) return r.error();
        return static_cast<void *>(*r);
    }

    void segments_attached() override {
        for (auto &r : ranges_)
            if (r.own && !r.name.empty()) {
                shm_unlink(r.name.c_str());
                r.name.clear();
            }
    }

    bool owns(const void *p, size_t n) override {
        std::lock_guard<std::mutex> g(ranges_mu_);
        return find(p, n) != nullptr;
    }

    // User allocations: the analogue of cudaMalloc'd memory exported by CUDA IPC. Each is a
    // shared-memory object of its own, mapped like a segment; its name stays linked until it
    // is freed, since a peer opens it whenever a message first comes from it. The buffer id
    // counts allocations, so one made again at a freed address has another id, as with CUDA.
    result<void *> alloc_user(size_t n, void *at) override {
        if (!n) n = 1;
        std::string name;
        HGAS_TRY_ASSIGN(int fd, shm_create_unique("/hgas-" + job_ + "-" + std::to_string(rank_) + "-su", name,
                                                  "sim device"));
        int rc = posix_fallocate(fd, 0, static_cast<off_t>(n));
        if (rc != 0) {
            ::close(fd);
            shm_unlink(name.c_str());
            return fail(status::no_memory, "sim: cannot reserve %zu bytes for a user allocation: %s", n,
                        std::strerror(rc));
        }
        auto r = map(fd, n, name, true, at, true);
        ::close(fd);
        if (!r.ok()) {
            shm_unlink(name.c_str());
            return r.error();
        }
        return static_cast<void *>(*r);
    }

    // The analogue of cuMemCreate + cuMemMap: an anonymous memory file (no name to open, only
    // its fd to pass, as a VMM allocation's shareable handle), exported through the fd server
    // when `exportable`, else not at all (a cuMemCreate without a shareable handle type).
    result<void *> alloc_user_vmm(size_t n, void *at, bool exportable) override {
        if (!n) n = 1;
        int fd = memfd_create("hgas-sim-vmm", MFD_CLOEXEC);
        if (fd < 0) return fail(status::no_memory, "sim: memfd_create for a VMM user allocation: %s", std::strerror(errno));
        int rc = posix_fallocate(fd, 0, static_cast<off_t>(n));
        if (rc != 0) {
            ::close(fd);
            return fail(status::no_memory, "sim: cannot reserve %zu bytes for a VMM user allocation: %s", n,
                        std::strerror(rc));
        }
        auto r = map(fd, n, "", true, at, true);
        if (!r.ok()) {
            ::close(fd);
            return r.error();
        }
        std::lock_guard<std::mutex> g(ranges_mu_);
        for (auto &own : ranges_)
            if (own.dev == *r) {
                own.vmm = exportable ? 1 : 2;
                if (exportable) own.fd = fd;
            }
        if (!exportable) ::close(fd);
        return static_cast<void *>(*r);
    }

    // The fd server's provider (its own thread): the fd of the exportable allocation `key`.
    int provide_fd(uint32_t key) {
        std::lock_guard<std::mutex> g(ranges_mu_);
        for (const auto &r : ranges_)
            if (r.own && r.user && r.vmm == 1 && static_cast<uint32_t>(r.id) == key) return r.fd;
        return -1;
    }

    status free_user(void *p) override {
        std::lock_guard<std::mutex> g(ranges_mu_);
        for (auto it = ranges_.begin(); it != ranges_.end(); ++it)
            if (it->dev == p && it->user && it->own) {
                munmap(it->dev, it->size);
                munmap(it->alias, it->size);
                if (!it->name.empty()) shm_unlink(it->name.c_str());
                if (it->fd >= 0) ::close(it->fd);
                ranges_.erase(it);
                return status::ok;
            }
        return fail(status::invalid_pointer, "sim: %p is not a user allocation of this rank", p);
    }

    bool export_user(const void *p, size_t n, user_export &e) override {
        std::lock_guard<std::mutex> g(ranges_mu_);
        const range *r = find(p, n);
        if (!r || !r->user || !r->own || r->vmm == 2 || r->name.size() >= sizeof e.handle) return false;
        vmm_handle vh;
        if (r->vmm == 1) {  // by fd, as cuda exports a VMM allocation
            if (!fd_server_) {
                auto srv = fdpass::server::start(fdpass::socket_name(job_, rank_, "sim-user", fd_tag_),
                                                 [this](uint32_t key) { return provide_fd(key); });
                if (!srv.ok()) return false;  // the caller takes another path
                fd_server_ = std::move(*srv);
            }
            vh.key = static_cast<uint32_t>(r->id);
            std::snprintf(vh.sock_tag, sizeof vh.sock_tag, "%s", fd_tag_.c_str());
        }
        e = user_export{};
        e.base = reinterpret_cast<uintptr_t>(r->dev);
        e.size = r->size;
        e.buffer_id = r->id;
        e.offset = static_cast<uint64_t>(static_cast<const char *>(p) - r->dev);
        e.kind = static_cast<uint8_t>(kind::sim);
        if (r->vmm == 1) {
            e.handle_len = sizeof vh;
            std::memcpy(e.handle, &vh, sizeof vh);
        } else {
            e.handle_len = static_cast<uint32_t>(r->name.size());
            std::memcpy(e.handle, r->name.data(), r->name.size());
        }
        return true;
    }

    result<void *> import_user(int peer, const user_export &e) override {
        if (!peer_access_) return static_cast<void *>(nullptr);
        vmm_handle vh;
        std::memcpy(&vh, e.handle, sizeof vh);
        if (vh.valid(e.handle_len)) {
            const std::string tag(vh.sock_tag, strnlen(vh.sock_tag, sizeof vh.sock_tag));
            HGAS_TRY_ASSIGN(int fd, fdpass::fetch(fdpass::socket_name(job_, peer, "sim-user", tag), vh.key, fd_timeout_));
            struct stat sb {};
            if (fstat(fd, &sb) != 0 || static_cast<uint64_t>(sb.st_size) < e.size) {
                ::close(fd);
                return fail(status::invalid_pointer, "sim: rank %d's VMM user allocation (key %u) is smaller than "
                            "announced", peer, vh.key);
            }
            auto r = map(fd, e.size, "", false, nullptr, true);
            ::close(fd);
            if (!r.ok()) return r.error();
            return static_cast<void *>(*r);
        }
        const std::string name(reinterpret_cast<const char *>(e.handle), std::min<size_t>(e.handle_len, sizeof e.handle));
        int fd = shm_open(name.c_str(), O_RDWR, 0);
        if (fd < 0)
            return fail(status::invalid_pointer, "sim: cannot open rank %d's user allocation %s: %s", peer, name.c_str(),
                        std::strerror(errno));
        struct stat sb {};
        if (fstat(fd, &sb) != 0 || static_cast<uint64_t>(sb.st_size) < e.size) {
            ::close(fd);
            return fail(status::invalid_pointer, "sim: rank %d's user allocation %s is smaller than announced", peer,
                        name.c_str());
        }
        auto r = map(fd, e.size, "", false, nullptr, true);
        ::close(fd);
        if (!r.ok()) return r.error();
        return static_cast<void *>(*r);
    }

    void close_user(void *p) override {
        std::lock_guard<std::mutex> g(ranges_mu_);
        for (auto it = ranges_.begin(); it != ranges_.end(); ++it)
            if (it->dev == p && it->user && !it->own) {
                munmap(it->dev, it->size);
                munmap(it->alias, it->size);
                ranges_.erase(it);
                return;
            }
    }

    result<ticket> mark(int stream) override {
        if (stream < 0 || stream >= streams()) stream = 0;
        op o{};
        o.what = op::copy;  // an empty copy: due when the stream's last operation is
        return ticket{stream, streams_[stream]->submit(o)};
    }

    result<ticket> copy_async(void *dst, const void *src, size_t n, int stream, bool) override {
        if (stream < 0 || stream >= streams()) stream = 0;
        std::lock_guard<std::mutex> g(ranges_mu_);
        op o{};
        o.what = op::copy;
        o.dst = translate(dst, n);
        o.src = translate(src, n);
        o.n = n;
        return ticket{stream, streams_[stream]->submit(o)};
    }

    // The combine runs on the engine, in stream order, on the aliases: the CPU never touches
    // the PROT_NONE device addresses (the tests' proof that no path bypasses the device).
    result<ticket> reduce(void *inout, const void *in, size_t count, int type, int rop, bool rev, int stream) override {
        if (stream < 0 || stream >= streams()) stream = 0;
        const size_t es = reduce_dtype_size(type);
        if (!es) return fail(status::invalid_arg, "sim: reduce: type %d is not an hgas_dtype_t", type);
        if (!find(inout, count * es))
            return fail(status::invalid_pointer, "sim: reduce: %p (+%zu) is not sim memory", inout, count * es);
        op o{};
        o.what = op::reduce;
        o.dst = translate(inout, count * es);
        o.src = translate(in, count * es);
        o.n = count;
        o.type = type;
        o.rop = rop;
        o.rev = rev;
        return ticket{stream, streams_[stream]->submit(o)};
    }

    result<bool> test(ticket t) override {
        if (t.seq == 0) return true;
        advance_all();
        return streams_[t.stream]->done(t.seq);
    }

    // Every stream's due operations, in the order they fall due: a GPU's copy engines finish
    // their work whether or not anybody looks, so a copy on one stream may overtake an older
    // copy on another (the hazard a real GPU shows), not only when its own stream is tested.
    void advance() override { advance_all(); }

    void advance_all() {
        const uint64_t now = now_ns();
        for (;;) {
            sim_stream *first = nullptr;
            uint64_t due = UINT64_MAX;
            for (auto &s : streams_) {
                const uint64_t d = s->front_due();
                if (d <= now && d < due) {
                    due = d;
                    first = s.get();
                }
            }
            if (!first) return;
            first->run_front(now);
        }
    }

    result<uint64_t> amo(void *p, amo_op aop, unsigned width, uint64_t operand, uint64_t compare) override {
        char *dst = nullptr;
        {
            std::lock_guard<std::mutex> g(ranges_mu_);
            if (const range *r = find(p, width)) dst = r->alias + (static_cast<const char *>(p) - r->dev);
        }
        if (!dst) return fail(status::invalid_pointer, "sim: %p is not sim memory", p);
        uint64_t result = 0;
        op o{};
        o.what = op::atomic;
        o.dst = dst;
        o.n = 0;
        o.aop = aop;
        o.width = width;
        o.operand = operand;
        o.compare = compare;
        o.result = &result;
        const uint64_t seq = streams_[0]->submit(o);
        while (!streams_[0]->done(seq)) sched_yield();  // bounded by the simulated latency
        return result;
    }

    result<void *> alloc_pinned(size_t n) override {
        void *p = nullptr;
        if (posix_memalign(&p, 4096, n) != 0) return fail(status::no_memory, "sim: no memory for %zu pinned bytes", n);
        return p;
    }
    void free_pinned(void *p) override { std::free(p); }
    status register_host(void *, size_t) override { return status::ok; }
    void unregister_host(void *) override {}

private:
    // `at`: the address wanted for the device view (taken only when free there), else anywhere.
    // `user`: a user allocation (own: it gets the next buffer id) or a peer's one imported.
    result<char *> map(int fd, size_t n, const std::string &name, bool own, void *at = nullptr, bool user = false) {
        void *dev = mmap(at, n, PROT_NONE, MAP_SHARED | (at ? MAP_FIXED_NOREPLACE : 0), fd, 0);
        if (dev == MAP_FAILED && at) dev = mmap(nullptr, n, PROT_NONE, MAP_SHARED, fd, 0);
        if (dev == MAP_FAILED) return fail(status::no_memory, "sim: cannot map %zu bytes: %s", n, std::strerror(errno));
        void *alias = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (alias == MAP_FAILED) {
            munmap(dev, n);
            return fail(status::no_memory, "sim: cannot map %zu bytes: %s", n, std::strerror(errno));
        }
        std::lock_guard<std::mutex> g(ranges_mu_);
        ranges_.push_back(range{static_cast<char *>(dev), static_cast<char *>(alias), n, name, own, user,
                                user && own ? ++next_user_id_ : 0});
        return static_cast<char *>(dev);
    }
    const range *find(const void *p, size_t n) const {
        const char *c = static_cast<const char *>(p);
        for (const auto &r : ranges_)
            if (c >= r.dev && c < r.dev + r.size && n <= static_cast<size_t>(r.dev + r.size - c)) return &r;
        return nullptr;
    }
    // Device addresses become their alias; anything else is host memory the caller vouched for.
    char *translate(const void *p, size_t n) const {
        const range *r = find(p, n);
        return r ? r->alias + (static_cast<const char *>(p) - r->dev) : const_cast<char *>(static_cast<const char *>(p));
    }

    std::string job_;
    int rank_;
    double latency_s_, bw_;
    bool peer_access_;
    // Under ranges_mu_: user allocations come and go while the progress helper copies.
    std::mutex ranges_mu_;
    std::vector<range> ranges_;
    uint64_t next_user_id_ = 0;
    double fd_timeout_;
    std::unique_ptr<fdpass::server> fd_server_;  // from the first export of a VMM user allocation
    const std::string fd_tag_ = random_tag();     // the random part of its socket name
    std::vector<std::unique_ptr<sim_stream>> streams_;
};

}  // namespace

result<std::unique_ptr<device>> open_sim(const open_args &a) {
    return std::unique_ptr<device>(new sim_device(a));
}

const char *kind_name(kind k) {
    switch (k) {
    case kind::host: return "host";
    case kind::cuda: return "cuda";
    case kind::sim: return "sim";
    }
    return "?";
}

}  // namespace hgas::gpu
