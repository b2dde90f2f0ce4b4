// A rank's side of the store: a singleton stand-in for jobs of one rank, and the socket client.
//
// The socket client is a small state machine fed by pump(): every frame that arrives (a reply
// or a pushed ABORTED notice, in any order) updates the state, and each wait is a loop "until
// this piece of state appears, the job is aborted, the connection is lost, or the deadline
// passes". So a reply interleaved with an ABORTED notice needs no special case.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "base/log.hpp"
#include "boot/boot.hpp"
#include "boot/server.hpp"
#include "boot/wire.hpp"

namespace hgas::boot {
namespace {

using wire::message;
using wire::msg;

// ---- a job of one rank: no store, nobody to wait for --------------------------------------

class singleton_client final : public client {
public:
    status put(const std::string &key, const std::string &value) override {
        kv_[key] = value;
        return status::ok;
    }
    status get(const std::string &key, std::string &value, double) override {
        auto it = kv_.find(key);
        // Waiting would only delay the same answer: no other rank exists to put the key.
        if (it == kv_.end())
            return fail(status::timeout, "bootstrap get of key '%s': it was never put, and in a job of one rank "
                                         "nobody else can put it",
                        key.c_str());
        value = it->second;
        return status::ok;
    }
    status barrier(const std::string &, double) override { return status::ok; }
    status allgather(const std::string &, const std::string &mine, std::vector<std::string> &all,
                     double) override {
        all.assign(1, mine);
        return status::ok;
    }
    status abort(const std::string &) override { return status::ok; }
    status exit_job(int, const std::string &) override { return status::ok; }
    bool aborted(std::string *) override { return false; }
    bool exit_requested(int *) override { return false; }
    status finalize() override { return status::ok; }

private:
    std::map<std::string, std::string> kv_;
};

// ---- the socket client ------------------------------------------------------------------

class socket_client final : public client {
public:
    socket_client(job_info job, double timeout_s) : job_(std::move(job)), default_timeout_(timeout_s) {}
    ~socket_client() override {
        if (fd_ >= 0) close(fd_);
        if (server_) server_->stop();
    }

    status open(double timeout_s);

    status put(const std::string &key, const std::string &value) override {
        HGAS_TRY(usable());
        return send({msg::put, {key, value}});
    }
    status get(const std::string &key, std::string &value, double timeout_s) override;
    status barrier(const std::string &name, double timeout_s) override;
    status allgather(const std::string &name, const std::string &mine, std::vector<std::string> &all,
                     double timeout_s) override;
    status abort(const std::string &reason) override;
    status exit_job(int code, const std::string &reason) override;
    bool aborted(std::string *why) override;
    bool exit_requested(int *code) override;
    status finalize() override;

private:
    status send(const message &m) { return wire::write_all(fd_, wire::encode(m), deadline(default_timeout_)); }
    status usable();
    std::string lost_reason() const;
    status pump(double wait_s);
    void dispatch(message &m);
    template <class Pred>
    status wait_until(Pred done, const deadline &dl);
    // After a timeout: asks the store who is missing, for the error message. "" if it cannot say.
    std::string ask_missing(const std::string &kind, const std::string &name);

    job_info job_;
    double default_timeout_;
    int fd_ = -1;
    wire::frame_reader in_;
    std::unique_ptr<store_server> server_;  // rank 0 under srun/mpirun hosts the store
    std::map<std::string, std::string> values_;
    std::map<std::string, std::vector<std::string>> gathered_;  // VALUES by prefix
    std::set<std::string> barriers_done_;
    std::map<std::string, message> missing_;  // WHO replies by "kind/name"
    bool welcomed_ = false, rejected_ = false, lost_ = false, aborted_ = false, finalized_ = false;
    std::string reject_reason_, abort_reason_;
    int exit_code_ = -1;  // >= 0 once ABORTED carried a job exit status
};

status socket_client::usable() {
    if (finalized_) return fail(status::not_initialized, "bootstrap client used after finalize");
    if (aborted_) return fail(status::peer_failed, "%s", abort_reason_.c_str());
    if (lost_) return fail(status::peer_failed, "%s", lost_reason().c_str());
    return status::ok;
}

std::string socket_client::lost_reason() const {
    // Who serves the store is who is gone: the store closes no live rank's connection.
    if (job_.launcher == "hgasrun")
        return "bootstrap store connection lost (launcher died?): hgasrun, which serves the store, went away";
    if (job_.rank != 0)
        return "bootstrap store connection lost (rank 0 died?): rank 0, which serves the store, went away";
    return "bootstrap store connection lost";
}

void socket_client::dispatch(message &m) {
    auto has = [&](size_t k) { return m.fields.size() >= k; };
    switch (m.type) {
    case msg::welcome: welcomed_ = true; break;
    case msg::reject:
        rejected_ = true;
        reject_reason_ = has(1) ? m.fields[0] : "no reason given";
        break;
    case msg::value:
        if (has(2)) values_[m.fields[0]] = std::move(m.fields[1]);
        break;
    case msg::barrier_done:
        if (has(1)) barriers_done_.insert(m.fields[0]);
        break;
    case msg::values:
        if (has(1)) {
            std::string prefix = std::move(m.fields[0]);
            m.fields.erase(m.fields.begin());
            gathered_[prefix] = std::move(m.fields);
        }
        break;
    case msg::missing:
        if (has(5)) missing_[m.fields[0] + "/" + m.fields[1]] = std::move(m);
        break;
    case msg::aborted:
        if (!aborted_) {
            aborted_ = true;
            abort_reason_ = has(1) ? m.fields[0] : "the job was aborted";
            long long code = -1;
            if (has(2) && wire::parse_int(m.fields[1], code) && code >= 0 && code <= 255)
                exit_code_ = static_cast<int>(code);
        }
        break;
    default: HGASI_WARN("boot", "bootstrap client: ignoring unexpected %s from the store", wire::msg_name(m.type));
    }
}

status socket_client::pump(double wait_s) {
    if (lost_) return status::ok;
    int rev = wire::poll_one(fd_, POLLIN, wait_s);
    if (rev == 0) return status::ok;
    long n = wire::read_some(fd_, in_);
    message m;
    std::string err;
    int got;
    while ((got = in_.next(m, err)) == 1) dispatch(m);
    if (got < 0) {
        lost_ = true;
        return fail(status::bootstrap, "bootstrap store sent a malformed message (%s)", err.c_str());
    }
    if (n == 0 || n == -2) lost_ = true;
    return status::ok;
}

template <class Pred>
status socket_client::wait_until(Pred done, const deadline &dl) {
    for (;;) {
        if (done()) return status::ok;
        HGAS_TRY(usable());
        if (dl.expired()) return status::timeout;  // the caller words the message
        HGAS_TRY(pump(dl.remaining()));
    }
}

std::string socket_client::ask_missing(const std::string &kind, const std::string &name) {
    const std::string key = kind + "/" + name;
    missing_.erase(key);
    if (send({msg::who, {kind, name}}) != status::ok) return "";
    // The store answers at once; a short wait keeps a dead store from doubling the timeout.
    if (wait_until([&] { return missing_.count(key) > 0; }, deadline(2.0)) != status::ok) return "";
    const message &m = missing_[key];
    auto missing = wire::split_ranks(m.fields[2]), never = wire::split_ranks(m.fields[3]),
         lost = wire::split_ranks(m.fields[4]);
    std::string text = wire::describe_ranks(missing) + (missing.size() == 1 ? " has" : " have") + " not arrived";
    std::string why;
    if (!never.empty()) why += wire::describe_ranks(never) + " never connected to the store";
    if (!lost.empty())
        why += (why.empty() ? "" : "; ") + wire::describe_ranks(lost) + " lost the connection to it (died?)";
    return why.empty() ? text : text + " (" + why + ")";
}

status socket_client::open(double timeout_s) {
    wire::address a;
    HGAS_TRY(wire::parse_address(job_.addr, a));
    deadline dl(timeout_s);
    if (job_.launcher != "hgasrun" && job_.rank == 0) {
        if (!a.is_unix && a.port == "0")
            return fail(status::bootstrap,
                        "HGAS_BOOT_ADDR=%s has no fixed port, so ranks other than 0 cannot find the store that "
                        "rank 0 serves under %s: give a port (e.g. tcp:<host of rank 0>:29500)",
                        job_.addr.c_str(), job_.launcher.c_str());
        HGAS_TRY_ASSIGN(server_, store_server::start(job_.addr, job_.secret, job_.size));
        store_server *srv = server_.get();
        // With the store inside rank 0 there is no launcher watching processes, so a dropped
        // connection is the only sign of a dead rank: tell everyone instead of letting them wait.
        server_->on_rank_lost([srv](int r) {
            srv->broadcast_abort("rank " + std::to_string(r) + " lost its connection to the store (died?)");
        });
    }
    // Other ranks may start before rank 0 has bound the address: retry until the deadline. A
    // store under a flood of strangers' connections may close ours before reading our HELLO
    // (it keeps only so many unauthenticated ones): that is no refusal, so connect again.
    double backoff = 0.01;
    int closed = 0;  // connections the store closed before answering
    for (;;) {
        int err = 0;
        for (;;) {
            if (wire::connect_once(a, dl, fd_, err) == status::ok) break;
            const bool not_yet = err == ENOENT || err == ECONNREFUSED || err == EAGAIN || err == ETIMEDOUT ||
                                 err == EHOSTUNREACH || err == ENETUNREACH;
            if (!not_yet || dl.expired())
                return fail(status::bootstrap,
                            "rank %d could not reach the bootstrap store at %s within %g s (%s): %s", job_.rank,
                            job_.addr.c_str(), timeout_s, std::strerror(err),
                            job_.launcher == "hgasrun"
                                ? "is hgasrun still running?"
                                : "is rank 0 running, and is HGAS_BOOT_ADDR the same on every rank and reachable "
                                  "from this node? (raise HGAS_BOOT_TIMEOUT if rank 0 starts late)");
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(backoff, dl.remaining())));
            backoff = std::min(backoff * 2, 0.25);
        }
        status st = send({msg::hello, {job_.secret, std::to_string(job_.rank), std::to_string(job_.size)}});
        if (st == status::ok) st = wait_until([&] { return welcomed_ || rejected_; }, dl);
        if (rejected_)
            return fail(status::bootstrap, "the bootstrap store at %s rejected rank %d: %s", job_.addr.c_str(),
                        job_.rank, reject_reason_.c_str());
        if (welcomed_) return st;
        if (st == status::timeout || dl.expired())
            return fail(status::timeout,
                        "rank %d connected to the bootstrap store at %s but got no answer within %g s%s", job_.rank,
                        job_.addr.c_str(), timeout_s,
                        closed ? " (the store closed the connection before answering each time: overloaded by other "
                                 "connections? see the store's log)"
                               : "");
        if (aborted_) return st;
        // Closed before any answer: drop this connection and try a new one.
        ++closed;
        HGASI_DEBUG("boot", "rank %d: the bootstrap store closed the connection before answering HELLO; "
                            "connecting again", job_.rank);
        close(fd_);
        fd_ = -1;
        in_ = wire::frame_reader();
        lost_ = false;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(backoff, dl.remaining())));
        backoff = std::min(backoff * 2, 0.25);
    }
}

status socket_client::get(const std::string &key, std::string &value, double timeout_s) {
    HGAS_TRY(usable());
    // A value left by an earlier get of the same key may be stale; ask again.
    values_.erase(key);
    HGAS_TRY(send({msg::get, {key}}));
    status st = wait_until([&] { return values_.count(key) > 0; }, deadline(timeout_s));
    if (st == status::timeout)
        return fail(status::timeout, "bootstrap get of key '%s' timed out after %g s: no rank has put it",
                    key.c_str(), timeout_s);
    HGAS_TRY(st);
    auto it = values_.find(key);
    value = std::move(it->second);
    values_.erase(it);
    return status::ok;
}

status socket_client::barrier(const std::string &name, double timeout_s) {
    HGAS_TRY(usable());
    HGAS_TRY(send({msg::barrier, {name}}));
    status st = wait_until([&] { return barriers_done_.count(name) > 0; }, deadline(timeout_s));
    if (st == status::timeout) {
        std::string who = ask_missing("barrier", name);
        if (barriers_done_.erase(name)) return status::ok;  // completed while we asked
        HGAS_TRY(usable());
        return fail(status::timeout, "bootstrap barrier '%s' timed out after %g s on rank %d: %s", name.c_str(),
                    timeout_s, job_.rank, who.empty() ? "the store did not say who is missing" : who.c_str());
    }
    HGAS_TRY(st);
    barriers_done_.erase(name);
    return status::ok;
}

status socket_client::allgather(const std::string &name, const std::string &mine, std::vector<std::string> &all,
                                double timeout_s) {
    HGAS_TRY(usable());
    // One GATHER: the store answers with all n values in one frame once the last one is put
    // (n messages through the store per allgather, not n^2).
    const std::string prefix = name + "/";
    HGAS_TRY(send({msg::put, {prefix + std::to_string(job_.rank), mine}}));
    gathered_.erase(prefix);
    HGAS_TRY(send({msg::gather, {prefix, std::to_string(job_.size)}}));
    auto complete = [&] { return gathered_.count(prefix) > 0; };
    status st = wait_until(complete, deadline(timeout_s));
    if (st == status::timeout) {
        std::string who = ask_missing("keys", prefix);
        if (!complete()) {
            HGAS_TRY(usable());
            std::string text = who;
            if (auto p = text.find(" not arrived"); p != std::string::npos) text.replace(p, 12, " not contributed");
            return fail(status::timeout, "bootstrap allgather '%s' timed out after %g s on rank %d: %s",
                        name.c_str(), timeout_s, job_.rank,
                        text.empty() ? "the store did not say who is missing" : text.c_str());
        }
    } else {
        HGAS_TRY(st);
    }
    auto it = gathered_.find(prefix);
    if (static_cast<int>(it->second.size()) != job_.size) {
        const size_t got = it->second.size();
        gathered_.erase(it);
        return fail(status::bootstrap, "bootstrap allgather '%s': the store sent %zu values for %d ranks", name.c_str(),
                    got, job_.size);
    }
    all = std::move(it->second);
    gathered_.erase(it);
    return status::ok;
}

status socket_client::abort(const std::string &reason) {
    if (finalized_ || lost_) return status::ok;  // nobody left to tell
    HGAS_TRY(send({msg::abort, {reason}}));
    // As exit_job: until the store has announced it, or the launcher may see this rank's exit
    // first and tell the others only that it exited, not why.
    return wait_until([&] { return aborted_; }, deadline(std::min(default_timeout_, 5.0)));
}

status socket_client::exit_job(int code, const std::string &reason) {
    if (finalized_ || lost_) return status::ok;
    HGAS_TRY(send({msg::abort, {reason, std::to_string(code & 0xff)}}));
    // Until the store has announced it (to us last or not, it has then recorded the code):
    // exiting before would let the launcher see a plain exit instead of a job exit.
    return wait_until([&] { return aborted_; }, deadline(std::min(default_timeout_, 5.0)));
}

bool socket_client::aborted(std::string *why) {
    if (!aborted_ && !lost_ && !finalized_) (void)pump(0);
    if (aborted_ && why) *why = abort_reason_;
    if (aborted_) return true;
    // A store that went away before this rank's goodbye took the job with it: the ranks that
    // wait for each other would otherwise wait until HGAS_TIMEOUT.
    if (lost_ && !finalized_) {
        if (why) *why = lost_reason();
        return true;
    }
    return false;
}

bool socket_client::exit_requested(int *code) {
    if (!aborted(nullptr) || exit_code_ < 0) return false;
    if (code) *code = exit_code_;
    return true;
}

status socket_client::finalize() {
    if (finalized_) return status::ok;
    finalized_ = true;
    if (!lost_ && send({msg::bye, {}}) == status::ok) {
        // Half-close and read to the store's close: closing with unread data would reset the
        // connection, and the store could lose the BYE that says this is not a failure.
        shutdown(fd_, SHUT_WR);
        deadline dl(std::min(default_timeout_, 5.0));
        while (!lost_ && !dl.expired()) (void)pump(dl.remaining());
    }
    close(fd_);
    fd_ = -1;
    if (server_) {
        // The store lives in this process: keep it until the other ranks are done with it. In
        // a job that was aborted they have been told, and one that hangs would never say
        // goodbye: a short grace for the ABORTED notices to go out is enough then.
        const double drain_s = aborted_ ? std::min(default_timeout_, 2.0) : default_timeout_;
        if (!store_wait_drained(*server_, drain_s) && !aborted_)
            HGASI_WARN("boot", "rank 0 stops the bootstrap store although some ranks have not said goodbye "
                               "within %g s", drain_s);
        server_->stop();
        server_.reset();
    }
    return status::ok;
}

}  // namespace

result<std::unique_ptr<client>> client::connect(const job_info &job, double timeout_s) {
    if (job.addr.empty()) {
        if (job.size != 1)
            return fail(status::bootstrap, "rank %d of %d has no bootstrap store address (HGAS_BOOT_ADDR): start "
                                           "the job with hgasrun",
                        job.rank, job.size);
        return std::unique_ptr<client>(std::make_unique<singleton_client>());
    }
    auto c = std::make_unique<socket_client>(job, timeout_s);
    HGAS_TRY(c->open(timeout_s));
    return std::unique_ptr<client>(std::move(c));
}

}  // namespace hgas::boot
