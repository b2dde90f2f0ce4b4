// The bootstrap store: one thread, poll() over the listening socket, a wake-up eventfd and
// every client. All store state is touched only by that thread; other threads talk to it
// through a small queue (broadcast_abort) and read a few counters under a mutex.
//
// Strangers can connect (anyone who reaches a TCP port; any process of the user to the unix
// socket), so what a connection that has not said HELLO costs is bounded: it must say it within
// k_hello_deadline_s, at most k_max_unauthenticated of them are kept (a new one pushes out
// the oldest), running out of descriptors (EMFILE) drops the oldest or refuses the newcomer
// instead of spinning on a listener that stays readable, warnings about strangers are
// rate-limited, and the listener closes once every rank has joined (nothing connects later:
// ranks keep their one connection, and tools do not use the store).
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "boot/boot.hpp"
#include "boot/server.hpp"
#include "boot/wire.hpp"

namespace hgas::boot {
namespace {

using wire::message;
using wire::msg;

// A rank sends HELLO right after connecting; a connection silent for this long is not a rank.
constexpr double k_hello_deadline_s = 5.0;
// Ranks say HELLO within a round trip, so even all ranks of a large job connecting at once
// leave few unauthenticated at any moment; a rank pushed out by a flood reconnects.
constexpr size_t k_max_unauthenticated = 128;
// While descriptors are exhausted and nothing can be freed, the listener rests this long.
constexpr double k_listen_backoff_s = 0.1;

// At most one message a second per kind about strangers; the rest are counted and the count
// is reported with the next one, so a flood costs no log volume.
class log_limiter {
public:
    // True if a message may be written now; `suppressed` is how many were held back before it.
    bool allow(long &suppressed) {
        const double now = now_seconds();
        if (now < next_) {
            ++held_;
            return false;
        }
        next_ = now + 1.0;
        suppressed = held_;
        held_ = 0;
        return true;
    }

private:
    double next_ = 0;
    long held_ = 0;
};

class socket_server final : public store_server {
public:
    socket_server(std::string secret, int n) : secret_(std::move(secret)), n_(n) {
        conn_of_rank_.assign(n, -1);
        joined_.assign(n, 0);
        lost_.assign(n, 0);
    }
    ~socket_server() override { stop(); }

    status open(const std::string &addr) {
        HGAS_TRY(wire::parse_address(addr, addr_));
        HGAS_TRY(wire::listen_on(addr_, listen_fd_, bound_));
        wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (wake_fd_ < 0) return fail(status::bootstrap, "eventfd failed: %s", std::strerror(errno));
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        thread_ = std::thread([this] { run(); });
        return status::ok;
    }

    std::string address() const override { return bound_; }
    void on_rank_lost(std::function<void(int)> cb) override {
        std::lock_guard<std::mutex> lk(mu_);
        lost_cb_ = std::move(cb);
    }
    void broadcast_abort(const std::string &reason) override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            abort_queue_.push_back(reason);
        }
        wake();
    }
    bool all_joined() const override { return all_joined_.load(std::memory_order_acquire); }
    uint64_t frames_sent() const override { return frames_sent_.load(std::memory_order_relaxed); }
    bool exit_requested(int *rank, int *code) const override {
        std::lock_guard<std::mutex> lk(mu_);
        if (exit_rank_ < 0) return false;
        if (rank) *rank = exit_rank_;
        if (code) *code = exit_code_;
        return true;
    }
    bool aborted(std::string *reason, int *rank) const override {
        std::lock_guard<std::mutex> lk(mu_);
        if (!aborted_shared_) return false;
        if (reason) *reason = abort_reason_shared_;
        if (rank) *rank = abort_rank_;
        return true;
    }
    void stop() override;

    bool wait_drained(double timeout_s) {
        std::unique_lock<std::mutex> lk(mu_);
        return drained_cv_.wait_for(lk, std::chrono::duration<double>(timeout_s),
                                    [&] { return joined_count_ == n_ && active_ == 0; });
    }

private:
    struct conn {
        int fd = -1;
        int rank = -1;  // -1 until the hello is accepted
        double hello_by = 0;  // unauthenticated: closed if no HELLO by then
        wire::frame_reader in;
        std::string out;
        bool bye = false;
        bool closing = false;  // close once `out` is flushed (after a reject)
        bool dead = false;     // drop at the end of this poll round
    };

    void wake() {
        uint64_t one = 1;
        if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
    }
    void run();
    void accept_all();
    bool accept_one();
    // Frees the descriptor of the oldest connection that has not said HELLO; false if none.
    bool evict_oldest_stranger(const char *why);
    void close_listener();
    double next_timer() const;
    void expire_strangers();
    void serve(int id, conn &c);
    void handle(int id, conn &c, message &m);
    void send(conn &c, const message &m);
    void flush(conn &c);
    void drop(int id);
    // `code` >= 0: a job exit with that status requested by `rank`, not a failure.
    void abort_job(const std::string &reason, int rank = -1, int code = -1);
    void unlink_socket();
    message who(const message &q) const;
    message aborted_message() const {
        if (exit_field_.empty()) return {msg::aborted, {abort_reason_}};
        return {msg::aborted, {abort_reason_, exit_field_}};
    }

    const std::string secret_;
    const int n_;
    wire::address addr_;
    std::string bound_;
    int listen_fd_ = -1, wake_fd_ = -1;
    int reserve_fd_ = -1;           // a spare descriptor: freed to accept-and-close under EMFILE
    double listen_rest_until_ = 0;  // the listener is not polled before this (EMFILE, nothing to free)
    size_t strangers_ = 0;          // connections that have not said HELLO
    log_limiter accept_log_, stranger_log_;
    std::thread thread_;
    std::atomic<bool> stop_{false}, all_joined_{false};
    std::atomic<uint64_t> frames_sent_{0};
    bool unlinked_ = false;

    // server-thread state
    std::map<int, conn> conns_;
    int next_id_ = 0;
    std::vector<int> conn_of_rank_;
    std::vector<char> joined_, lost_;
    std::map<std::string, std::string> kv_;
    std::map<std::string, std::vector<int>> pending_get_;  // key -> waiting connection ids
    // GATHER requests waiting for keys: by prefix, how many keys (prefix0..prefix<count-1>),
    // how many of them exist, and who waits. A put under the prefix counts it up; the reply
    // goes out when the count is complete, one VALUES frame per waiter.
    struct gather_wait {
        long long count = 0, have = 0;
        std::vector<int> waiting;
    };
    std::map<std::string, gather_wait> pending_gather_;
    void answer_gather(const std::string &prefix, long long count, const std::vector<int> &to);
    std::map<std::string, std::set<int>> arrivals_;        // barrier name -> ranks arrived
    std::set<std::string> barriers_done_;
    bool aborted_ = false;
    std::string abort_reason_;
    std::string exit_field_;  // the exit code as sent in ABORTED, "" for a failure

    // shared with other threads
    mutable std::mutex mu_;
    std::condition_variable drained_cv_;
    std::function<void(int)> lost_cb_;
    std::vector<std::string> abort_queue_;
    int joined_count_ = 0, active_ = 0;
    int exit_rank_ = -1, exit_code_ = 0;  // set once, by a job exit
    bool aborted_shared_ = false;          // a copy of aborted_/abort_reason_ for other threads
    std::string abort_reason_shared_;
    int abort_rank_ = -1;                  // the rank that sent ABORT, -1 for broadcast_abort
};

void socket_server::stop() {
    if (thread_.joinable()) {
        stop_.store(true, std::memory_order_release);
        wake();
        thread_.join();
    }
    for (auto &[id, c] : conns_) close(c.fd);
    conns_.clear();
    if (listen_fd_ >= 0) close(listen_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
    if (reserve_fd_ >= 0) close(reserve_fd_);
    listen_fd_ = wake_fd_ = reserve_fd_ = -1;
    unlink_socket();
}

void socket_server::unlink_socket() {
    if (addr_.is_unix && !unlinked_ && !bound_.empty()) unlink(addr_.path.c_str());
    unlinked_ = true;
}

void socket_server::run() {
    std::vector<pollfd> fds;
    std::vector<int> ids;
    while (!stop_.load(std::memory_order_acquire)) {
        const bool resting = listen_rest_until_ > 0 && now_seconds() < listen_rest_until_;
        fds.assign({{wake_fd_, POLLIN, 0}, {resting ? -1 : listen_fd_, POLLIN, 0}});
        ids.clear();
        for (auto &[id, c] : conns_) {
            fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
            ids.push_back(id);
        }
        const double next = next_timer();
        const int ms = next < 0 ? -1 : static_cast<int>(std::max(0.0, next - now_seconds()) * 1000.0) + 1;
        if (poll(fds.data(), fds.size(), ms) < 0) {
            if (errno == EINTR) continue;
            HGASI_ERROR("boot", "bootstrap store: poll failed: %s; the store stops", std::strerror(errno));
            return;
        }
        if (fds[0].revents) {
            uint64_t v;
            (void)!read(wake_fd_, &v, sizeof v);
            std::vector<std::string> q;
            {
                std::lock_guard<std::mutex> lk(mu_);
                q.swap(abort_queue_);
            }
            for (const auto &r : q) abort_job(r);
        }
        if (fds[1].fd >= 0 && fds[1].revents) accept_all();
        for (size_t i = 0; i < ids.size(); ++i) {
            auto it = conns_.find(ids[i]);
            if (it == conns_.end()) continue;
            short rev = fds[i + 2].revents;
            if (rev & POLLOUT) flush(it->second);
            if (rev & (POLLIN | POLLHUP | POLLERR)) serve(ids[i], it->second);
        }
        expire_strangers();
        std::vector<int> doomed;
        for (auto &[id, c] : conns_)
            if (c.dead || (c.closing && c.out.empty())) doomed.push_back(id);
        for (int id : doomed) drop(id);
    }
}

double socket_server::next_timer() const {
    double t = -1;
    if (listen_rest_until_ > 0) t = listen_rest_until_;
    for (const auto &[id, c] : conns_)  // the oldest stranger has the earliest deadline
        if (c.rank < 0 && !c.dead) {
            if (t < 0 || c.hello_by < t) t = c.hello_by;
            break;
        }
    return t;
}

void socket_server::expire_strangers() {
    if (listen_rest_until_ > 0 && now_seconds() >= listen_rest_until_) listen_rest_until_ = 0;
    if (strangers_ == 0) return;
    const double now = now_seconds();
    long n = 0;
    for (auto &[id, c] : conns_)
        if (c.rank < 0 && !c.dead && now >= c.hello_by) {
            c.dead = true;
            ++n;
        }
    long held = 0;
    if (n && stranger_log_.allow(held))
        HGASI_WARN("boot", "bootstrap store: closed %ld connection(s) that sent no valid HELLO within %g s%s", n,
                   k_hello_deadline_s,
                   held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
}

bool socket_server::evict_oldest_stranger(const char *why) {
    for (auto &[id, c] : conns_)
        if (c.rank < 0 && !c.dead) {
            long held = 0;
            if (stranger_log_.allow(held))
                HGASI_WARN("boot", "bootstrap store: closing the oldest connection that has not said HELLO: %s%s", why,
                           held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
            const int victim = id;
            drop(victim);  // at once: the descriptor is what is needed
            return true;
        }
    return false;
}

void socket_server::close_listener() {
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
    // Nobody else may join, so a stranger still connected has nothing left to do here.
    for (auto &[id, c] : conns_)
        if (c.rank < 0) c.dead = true;
}

void socket_server::accept_all() {
    // One round takes what is pending, up to a bound, so that a flood of connections cannot
    // keep this thread from serving the ranks.
    for (int i = 0; i < 256 && listen_fd_ >= 0; ++i)
        if (!accept_one()) return;
}

// False when nothing more is to be accepted this round.
bool socket_server::accept_one() {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == EINTR || err == ECONNABORTED) return true;
        if (err == EAGAIN || err == EWOULDBLOCK) return false;
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
            // Out of descriptors: a stranger's is the one to free. With none, the spare one lets
            // the newcomer be accepted and closed at once (its connect then fails instead of
            // hanging in the backlog), and the listener rests a little so this never spins.
            if (evict_oldest_stranger("out of file descriptors")) return true;
            long held = 0;
            if (accept_log_.allow(held))
                HGASI_WARN("boot", "bootstrap store: cannot accept a connection: %s; refusing newcomers (raise the "
                                   "limit with ulimit -n)%s",
                           std::strerror(err),
                           held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
            if (reserve_fd_ >= 0) {
                close(reserve_fd_);
                reserve_fd_ = -1;
                int refused = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (refused >= 0) close(refused);
                reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            }
            listen_rest_until_ = now_seconds() + k_listen_backoff_s;
            return false;
        }
        long held = 0;
        if (accept_log_.allow(held))
            HGASI_WARN("boot", "bootstrap store: accept failed: %s%s", std::strerror(err),
                       held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
        listen_rest_until_ = now_seconds() + k_listen_backoff_s;
        return false;
    }
    if (strangers_ >= k_max_unauthenticated) evict_oldest_stranger("too many connections have not said HELLO");
    conn c;
    c.fd = fd;
    c.hello_by = now_seconds() + k_hello_deadline_s;
    conns_.emplace(next_id_++, std::move(c));
    ++strangers_;
    return true;
}

void socket_server::serve(int id, conn &c) {
    long n = wire::read_some(c.fd, c.in);
    message m;
    std::string err;
    // Frames are handled even when the same read ended in EOF: a BYE followed by close is the
    // normal goodbye and must not count as a lost rank.
    for (;;) {
        if (c.dead || c.closing) break;
        int got = c.in.next(m, err, c.rank < 0 ? wire::hello_frame_limit : wire::frame_limit);
        if (got == 0) break;
        if (got < 0) {
            long held = 0;
            if (c.rank >= 0 || stranger_log_.allow(held))
                HGASI_WARN("boot", "bootstrap store: dropping %s%s: malformed message (%s)%s",
                           c.rank < 0 ? "an unidentified client" : "rank ",
                           c.rank < 0 ? "" : std::to_string(c.rank).c_str(), err.c_str(),
                           held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
            c.dead = true;
            break;
        }
        handle(id, c, m);
    }
    if (n == 0 || n == -2) c.dead = true;
}

void socket_server::handle(int id, conn &c, message &m) {
    auto need = [&](size_t k) {
        if (m.fields.size() >= k) return true;
        HGASI_WARN("boot", "bootstrap store: %s from rank %d has %zu fields, expected %zu; dropping it",
                   wire::msg_name(m.type), c.rank, m.fields.size(), k);
        c.dead = true;
        return false;
    };
    if (c.rank < 0) {
        auto reject = [&](const std::string &why) {
            long held = 0;
            if (stranger_log_.allow(held))
                HGASI_WARN("boot", "bootstrap store: rejected a client: %s%s", why.c_str(),
                           held ? (" (" + std::to_string(held) + " similar messages suppressed)").c_str() : "");
            send(c, {msg::reject, {why}});
            c.closing = true;
        };
        if (m.type != msg::hello || m.fields.size() < 3) return reject("the first message was not a valid HELLO");
        long long r = -1, sz = -1;
        if (!wire::secret_equal(m.fields[0], secret_)) return reject("wrong job secret (HGAS_BOOT_SECRET)");
        if (!wire::parse_int(m.fields[1], r) || r < 0 || r >= n_)
            return reject("rank " + m.fields[1] + " is outside this job of " + std::to_string(n_) + " ranks");
        if (!wire::parse_int(m.fields[2], sz) || sz != n_)
            return reject("job size " + m.fields[2] + " differs from the store's " + std::to_string(n_));
        if (joined_[r]) return reject("rank " + std::to_string(r) + " already joined (two ranks with one number?)");
        c.rank = static_cast<int>(r);
        --strangers_;
        joined_[r] = 1;
        conn_of_rank_[r] = id;
        send(c, {msg::welcome, {}});
        if (aborted_) send(c, aborted_message());
        int count;
        {
            std::lock_guard<std::mutex> lk(mu_);
            count = ++joined_count_;
            ++active_;
        }
        if (count == n_) {
            // Nobody else may connect now, so the file can go (a job killed later leaves none)
            // and so can the listener: no stranger reaches the store from here on.
            unlink_socket();
            close_listener();
            all_joined_.store(true, std::memory_order_release);
        }
        return;
    }
    switch (m.type) {
    case msg::put: {
        if (!need(2)) return;
        auto waiting = pending_get_.find(m.fields[0]);
        if (waiting != pending_get_.end()) {
            for (int wid : waiting->second) {
                auto w = conns_.find(wid);
                if (w != conns_.end()) send(w->second, {msg::value, {m.fields[0], m.fields[1]}});
            }
            pending_get_.erase(waiting);
        }
        auto [slot, fresh] = kv_.insert_or_assign(m.fields[0], std::move(m.fields[1]));
        if (fresh && !pending_gather_.empty()) {
            const std::string &key = slot->first;
            const size_t cut = key.rfind('/');
            auto g = cut == std::string::npos ? pending_gather_.end() : pending_gather_.find(key.substr(0, cut + 1));
            long long idx = -1;
            if (g != pending_gather_.end() && wire::parse_int(key.substr(cut + 1), idx) && idx >= 0 &&
                idx < g->second.count && ++g->second.have == g->second.count) {
                gather_wait done = std::move(g->second);
                const std::string prefix = g->first;
                pending_gather_.erase(g);
                answer_gather(prefix, done.count, done.waiting);
            }
        }
        return;
    }
    case msg::gather: {
        if (!need(2)) return;
        long long count = 0;
        if (!wire::parse_int(m.fields[1], count) || count < 0 || count > n_) {
            HGASI_WARN("boot", "bootstrap store: GATHER of %s keys from rank %d; dropping it", m.fields[1].c_str(),
                       c.rank);
            c.dead = true;
            return;
        }
        const std::string &prefix = m.fields[0];
        auto g = pending_gather_.find(prefix);
        if (g != pending_gather_.end() && g->second.count == count) {  // others wait for it already
            g->second.waiting.push_back(id);
            return;
        }
        long long have = 0;
        for (long long r = 0; r < count; ++r) have += kv_.count(prefix + std::to_string(r));
        if (have == count) {
            answer_gather(prefix, count, {id});
            return;
        }
        gather_wait &w = pending_gather_[prefix];
        w.count = count;
        w.have = have;
        w.waiting.push_back(id);
        return;
    }
    case msg::get: {
        if (!need(1)) return;
        auto it = kv_.find(m.fields[0]);
        if (it != kv_.end()) send(c, {msg::value, {it->first, it->second}});
        else pending_get_[m.fields[0]].push_back(id);
        return;
    }
    case msg::barrier: {
        if (!need(1)) return;
        auto &arrived = arrivals_[m.fields[0]];
        arrived.insert(c.rank);
        if (static_cast<int>(arrived.size()) < n_) return;
        for (int r : arrived) {
            auto w = conns_.find(conn_of_rank_[r]);
            if (w != conns_.end()) send(w->second, {msg::barrier_done, {m.fields[0]}});
        }
        barriers_done_.insert(m.fields[0]);
        arrivals_.erase(m.fields[0]);
        return;
    }
    case msg::who:
        if (!need(2)) return;
        send(c, who(m));
        return;
    case msg::abort: {
        if (!need(1)) return;
        long long code = -1;
        if (m.fields.size() >= 2 && (!wire::parse_int(m.fields[1], code) || code < 0 || code > 255)) code = 1;
        if (code >= 0)
            abort_job("rank " + std::to_string(c.rank) + " ended the job with exit status " + std::to_string(code) +
                          ": " + m.fields[0],
                      c.rank, static_cast<int>(code));
        else
            abort_job("rank " + std::to_string(c.rank) + " aborted the job: " + m.fields[0], c.rank);
        return;
    }
    case msg::bye: c.bye = true; return;
    default:
        HGASI_WARN("boot", "bootstrap store: unexpected %s from rank %d; dropping it", wire::msg_name(m.type),
                   c.rank);
        c.dead = true;
    }
}

void socket_server::answer_gather(const std::string &prefix, long long count, const std::vector<int> &to) {
    message m{msg::values, {prefix}};
    m.fields.reserve(static_cast<size_t>(count) + 1);
    for (long long r = 0; r < count; ++r) m.fields.push_back(kv_[prefix + std::to_string(r)]);
    const std::string frame = wire::encode(m);  // encoded once for every waiter
    for (int wid : to) {
        auto w = conns_.find(wid);
        if (w == conns_.end() || w->second.dead) continue;
        w->second.out += frame;
        frames_sent_.fetch_add(1, std::memory_order_relaxed);
        flush(w->second);
    }
}

message socket_server::who(const message &q) const {
    const std::string &kind = q.fields[0], &name = q.fields[1];
    std::vector<int> missing, never, lost;
    const bool barrier = kind == "barrier";
    if (!barrier || !barriers_done_.count(name)) {
        auto arr = arrivals_.find(name);
        for (int r = 0; r < n_; ++r) {
            bool here = barrier ? (arr != arrivals_.end() && arr->second.count(r))
                                : kv_.count(name + std::to_string(r)) > 0;
            if (here) continue;
            missing.push_back(r);
            if (!joined_[r]) never.push_back(r);
            else if (lost_[r]) lost.push_back(r);
        }
    }
    return {msg::missing, {kind, name, wire::join_ranks(missing), wire::join_ranks(never), wire::join_ranks(lost)}};
}

void socket_server::abort_job(const std::string &reason, int rank, int code) {
    if (aborted_) return;  // the first reason is the cause; later ones are its consequences
    aborted_ = true;
    abort_reason_ = reason;
    {
        std::lock_guard<std::mutex> lk(mu_);
        aborted_shared_ = true;
        abort_reason_shared_ = reason;
        abort_rank_ = rank;
    }
    if (code >= 0) {
        exit_field_ = std::to_string(code);
        // Recorded before any rank hears of it: the requester exits only after its own
        // ABORTED arrives, so the launcher knows the code by the time it reaps that rank.
        std::lock_guard<std::mutex> lk(mu_);
        exit_rank_ = rank;
        exit_code_ = code;
    }
    const message m = aborted_message();
    for (auto &[id, c] : conns_)
        if (c.rank >= 0 && !c.dead) send(c, m);
}

void socket_server::send(conn &c, const message &m) {
    if (c.dead) return;
    c.out += wire::encode(m);
    frames_sent_.fetch_add(1, std::memory_order_relaxed);
    flush(c);
}

void socket_server::flush(conn &c) {
    while (!c.out.empty()) {
        ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
            c.out.erase(0, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // poll for POLLOUT
        c.dead = true;
        return;
    }
}

void socket_server::drop(int id) {
    auto it = conns_.find(id);
    conn &c = it->second;
    const int rank = c.rank;
    const bool lost = rank >= 0 && !c.bye;
    close(c.fd);
    conns_.erase(it);
    if (rank < 0) {
        --strangers_;
        return;
    }
    conn_of_rank_[rank] = -1;
    std::function<void(int)> cb;
    {
        std::lock_guard<std::mutex> lk(mu_);
        --active_;
        if (lost) cb = lost_cb_;
    }
    drained_cv_.notify_all();
    if (!lost) return;
    lost_[rank] = 1;
    HGASI_DEBUG("boot", "bootstrap store: rank %d closed its connection without a goodbye", rank);
    if (cb) cb(rank);  // outside the lock: the callback may call broadcast_abort
}

}  // namespace

result<std::unique_ptr<store_server>> store_server::start(const std::string &addr, const std::string &secret,
                                                          int nranks) {
    if (nranks < 1) return fail(status::invalid_arg, "store_server::start: %d ranks; need at least 1", nranks);
    if (secret.empty()) return fail(status::invalid_arg, "store_server::start: an empty secret admits anyone");
    auto s = std::make_unique<socket_server>(secret, nranks);
    HGAS_TRY(s->open(addr));
    return std::unique_ptr<store_server>(std::move(s));
}

bool store_wait_drained(store_server &s, double timeout_s) {
    auto *impl = dynamic_cast<socket_server *>(&s);
    return impl ? impl->wait_drained(timeout_s) : true;
}

}  // namespace hgas::boot
