// The host meeting of a team's rank threads at a collective (team_meet.hpp).
#include "gpu/team_meet.hpp"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace hgas::gpu {

struct team_meet::call {
    int n = 0;
    int arrived = 0;
    int left = 0;
    std::vector<member> members;
    std::vector<bool> present;  // arrived and not withdrawn
    std::vector<bool> came;     // arrived at some time (a message names those that never did)
    enum { gathering, launching, done } state = gathering;
    outcome out;
    status st = status::ok;
    std::string msg;  // why st is not ok, for every member's message
};

namespace {
std::mutex mu;
std::condition_variable cv;
std::map<uint64_t, team_meet::call *> &calls() {
    static std::map<uint64_t, team_meet::call *> m;
    return m;
}
}  // namespace

team_meet &team_meet::process() {
    static team_meet m;
    return m;
}

size_t team_meet::open_calls() {
    std::lock_guard<std::mutex> g(mu);
    return calls().size();
}

result<team_meet::outcome> team_meet::arrive(uint64_t key, int n, int me, const member &m, double timeout_s,
                                             const launcher &launch, const char *what) {
    std::unique_lock<std::mutex> g(mu);
    call *&c = calls()[key];
    if (!c) {
        c = new call;
        c->n = n;
        c->members.resize(static_cast<size_t>(n));
        c->present.assign(static_cast<size_t>(n), false);
        c->came.assign(static_cast<size_t>(n), false);
    }
    if (c->n != n || me < 0 || me >= n || c->present[static_cast<size_t>(me)] || c->state != call::gathering)
        return fail(status::internal,
                    "%s: member %d of %d met a call of %d members that it had joined or that had "
                    "begun (the members are out of step)",
                    what, me, n, c->n);
    c->members[static_cast<size_t>(me)] = m;
    c->present[static_cast<size_t>(me)] = true;
    c->came[static_cast<size_t>(me)] = true;
    if (++c->arrived == n) {
        // The last: the others wait on the condition until the call is issued (or not).
        c->state = call::launching;
        outcome o;
        for (int q = 0; q < n && o.broken < 0; ++q)
            if (c->members[static_cast<size_t>(q)].broken) o.broken = q;
        for (int q = 1; q < n && o.broken < 0 && o.mismatch < 0; ++q)
            if (c->members[static_cast<size_t>(q)].fp != c->members[0].fp) o.mismatch = q;
        const std::vector<member> all = c->members;
        g.unlock();
        status st = status::ok;
        std::string msg;
        if (o.broken < 0 && o.mismatch < 0) {
            result<void *> r = launch(all);
            if (r.ok()) {
                o.done = *r;
            } else {
                st = r.error();
                msg = last_error();
            }
        }
        g.lock();
        c->out = o;
        c->st = st;
        c->msg = msg;
        c->state = call::done;
        cv.notify_all();
        if (st != status::ok) {
            g.unlock();
            leave(key);
            return fail(st, "%s", msg.c_str());
        }
        o.last = true;
        return o;
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (c->state == call::gathering) {
        if (cv.wait_until(g, end) != std::cv_status::timeout || c->state != call::gathering) continue;
        // Nobody has come for the others' part: withdraw, so that a late member waits and fails
        // in turn rather than running the call with this one's stale entry.
        std::string missing;
        for (int q = 0; q < n; ++q)
            if (!c->came[static_cast<size_t>(q)]) missing += (missing.empty() ? "" : ", ") + std::to_string(q);
        c->present[static_cast<size_t>(me)] = false;
        if (--c->arrived == 0) {
            delete c;
            calls().erase(key);
        }
        return fail(status::timeout,
                    "%s: member(s) %s of the team, rank threads of this process, did not call the "
                    "collective within HGAS_TIMEOUT (%g s): is a thread stuck, or not calling the matching "
                    "collective?",
                    what, missing.c_str(), timeout_s);
    }
    // The last member is issuing the call (no wait of it is for another member): no deadline.
    cv.wait(g, [c] { return c->state == call::done; });
    if (c->st != status::ok) {
        const status st = c->st;
        const std::string msg = c->msg;
        g.unlock();
        leave(key);
        return fail(st, "%s", msg.c_str());
    }
    outcome o = c->out;
    o.last = false;
    return o;
}

bool team_meet::leave(uint64_t key) {
    std::lock_guard<std::mutex> g(mu);
    auto it = calls().find(key);
    if (it == calls().end()) return false;
    call *c = it->second;
    if (++c->left < c->n) return false;
    delete c;
    calls().erase(it);
    return true;
}

}  // namespace hgas::gpu
