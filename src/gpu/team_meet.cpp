// The host meeting of a team's rank threads at a collective (team_meet.hpp).
#include "gpu/team_meet.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
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
    int launcher = -1;  // the member that arrived last and issues the call
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

namespace {
// How long a waiting member sleeps between its rank's progress steps: short enough for the
// device proxy's requests (which may be what another member's stream needs before its call),
// long enough that a wait costs little CPU. The meeting's own events wake it at once.
constexpr auto slice = std::chrono::microseconds(200);

// Member `me` gives up a call still gathering: a late member then waits and fails in turn
// rather than running the call with this one's stale entry.
void withdraw(uint64_t key, team_meet::call *c, int me) {
    c->present[static_cast<size_t>(me)] = false;
    if (--c->arrived == 0) {
        delete c;
        calls().erase(key);
    }
}
}  // namespace

result<team_meet::outcome> team_meet::arrive(uint64_t key, int n, int me, const member &m, double timeout_s,
                                             const launcher &launch, const char *what, const progress_fn &progress) {
    if (n < 1 || me < 0 || me >= n) return fail(status::internal, "%s: member %d of %d: out of range", what, me, n);
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
        c->launcher = me;
        outcome o;
        for (int q = 0; q < n && o.broken < 0; ++q)
            if (c->members[static_cast<size_t>(q)].broken) o.broken = q;
        for (int q = 1; q < n && o.broken < 0 && o.mismatch < 0; ++q)
            if (!(c->members[static_cast<size_t>(q)].args == c->members[0].args)) o.mismatch = q;
        g.unlock();
        status st = status::ok;
        std::string msg;
        if (o.broken < 0 && o.mismatch < 0) {
            // Whatever happens in the launch, the others hear of it: an exception escaping here
            // would leave them waiting for an outcome that never comes.
            try {
                const std::vector<member> all = c->members;  // nobody writes them while launching
                result<void *> r = launch(all);
                if (r.ok()) {
                    o.done = *r;
                } else {
                    st = r.error();
                    msg = last_error();
                }
            } catch (const std::exception &e) {
                st = status::internal;
                msg = std::string(what) + ": issuing the call for the team failed: " + e.what();
            } catch (...) {
                st = status::internal;
                msg = std::string(what) + ": issuing the call for the team failed (an exception)";
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
    // Wait in slices, doing the rank's progress between them (without the meeting's lock).
    // The deadline starts again when the last member arrives: its launch gets HGAS_TIMEOUT of
    // its own, however long the gathering took.
    const auto budget =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
    auto end = std::chrono::steady_clock::now() + budget;
    bool launching = false;
    while (c->state != call::done) {
        if (cv.wait_for(g, slice, [c] { return c->state == call::done; })) break;
        if (c->state == call::launching && !launching) {
            launching = true;
            end = std::chrono::steady_clock::now() + budget;
        }
        status ps = status::ok;
        std::string pmsg;
        if (progress) {
            g.unlock();
            ps = progress();
            if (ps != status::ok) pmsg = last_error();
            g.lock();
            if (c->state == call::done) break;  // the call is issued: that outcome wins
            if (c->state == call::launching && !launching) {
                // The last member came while this one was away: its launch gets the whole budget.
                launching = true;
                end = std::chrono::steady_clock::now() + budget;
            }
        }
        const bool late = std::chrono::steady_clock::now() >= end;
        if (ps == status::ok && !late) continue;
        if (c->state == call::gathering) {
            // Those that never came to this call; where all came, those that gave up waiting
            // before the last did (each of them failed its own call with a timeout).
            std::string missing, gone;
            for (int q = 0; q < n; ++q) {
                const std::string num = std::to_string(q);
                if (!c->came[static_cast<size_t>(q)])
                    missing += (missing.empty() ? "" : ", ") + num;
                else if (!c->present[static_cast<size_t>(q)])
                    gone += (gone.empty() ? "" : ", ") + num;
            }
            withdraw(key, c, me);
            if (ps != status::ok) return fail(ps, "%s", pmsg.c_str());
            if (missing.empty())
                return fail(status::timeout,
                            "%s: member(s) %s of the team, rank threads of this process, gave up waiting for the "
                            "others (HGAS_TIMEOUT, %g s) before this member called the collective: is a thread "
                            "too slow to reach it?",
                            what, gone.c_str(), timeout_s);
            return fail(status::timeout,
                        "%s: member(s) %s of the team, rank threads of this process, did not call the "
                        "collective within HGAS_TIMEOUT (%g s): is a thread stuck, or not calling the matching "
                        "collective?",
                        what, missing.c_str(), timeout_s);
        }
        // Launching: the last member still uses the call's entries, so this one only counts
        // itself out (the last to leave deletes the call). Its stream does not wait for the call,
        // whose kernel, if the launch still succeeds, reads and writes this member's vectors
        // later: a timeout leaves the team unusable (docs/threads.md).
        const int last = c->launcher;
        ++c->left;
        if (ps != status::ok) return fail(ps, "%s", pmsg.c_str());
        return fail(status::timeout,
                    "%s: member %d of the team, which arrived last, has not finished issuing the collective "
                    "within HGAS_TIMEOUT (%g s): is its GPU's launch queue stalled?",
                    what, last, timeout_s);
    }
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
