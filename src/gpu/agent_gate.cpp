#include "gpu/agent_gate.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/log.hpp"

namespace hgas::gpu {
namespace {
uint64_t this_thread_id() {
    static thread_local char marker;
    return reinterpret_cast<uint64_t>(&marker);
}
}  // namespace

agent_gate &agent_gate::process() {
    static agent_gate &g = *new agent_gate;  // never destroyed: a device may go in a later exit handler
    return g;
}

void agent_gate::add(const void *key, uint64_t *stop, std::function<bool()> exited) {
    std::lock_guard<std::mutex> g(mu_);
    members_.push_back({key, stop, std::move(exited)});
}

void agent_gate::remove(const void *key) {
    std::lock_guard<std::mutex> g(mu_);
    members_.erase(std::remove_if(members_.begin(), members_.end(), [&](const member &m) { return m.key == key; }),
                   members_.end());
}

// Dekker-style with the closer: a poster announces itself, then looks at the gate; the closer
// shuts the gate, then waits for the announced posters to leave. Both sides sequentially
// consistent, so at least one of them sees the other.
void agent_gate::enter() {
    for (;;) {
        passing_.fetch_add(1, std::memory_order_seq_cst);
        if (!closed_.load(std::memory_order_seq_cst)) return;
        // The closing thread itself (a post from inside its call) would wait for itself.
        if (closer_.load(std::memory_order_relaxed) == this_thread_id()) return;
        passing_.fetch_sub(1, std::memory_order_seq_cst);
        std::unique_lock<std::mutex> lk(mu_);
        if (!opened_.wait_for(lk, std::chrono::milliseconds(bypass_ms),
                              [&] { return !closed_.load(std::memory_order_seq_cst); })) {
            passing_.fetch_add(1, std::memory_order_seq_cst);  // the call waits for something else: go through
            bypasses_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
}

void agent_gate::close(double wait_s) {
    std::unique_lock<std::mutex> lk(mu_);
    if (closer_.load(std::memory_order_relaxed) == this_thread_id()) {  // already closed by this thread
        ++depth_;
        return;
    }
    // One closer at a time. The other closer's call returns once the kernels it waits for end;
    // it never waits for us as long as no call inside the gate takes a lock that a closer may
    // hold while closing (closers hold their device's user_mu_ or stream_mu_, which no call
    // inside the gate takes; the process's pin table is taken only inside it). Said after a
    // while, so that a wait that does not end is not silent.
    for (int waited_s = 0; !opened_.wait_for(lk, std::chrono::seconds(1),
                                             [&] { return !closed_.load(std::memory_order_seq_cst); });) {
        if (++waited_s % warn_every_s == 0)
            HGASI_WARN("gpu", "waiting %d s for another thread's CUDA call that waits for the process's kernels "
                       "(cudaHostUnregister, cudaFree) before this thread's own", waited_s);
    }
    closed_.store(true, std::memory_order_seq_cst);
    closer_.store(this_thread_id(), std::memory_order_relaxed);
    depth_ = 1;
    quiesces_.fetch_add(1, std::memory_order_relaxed);
    // Posts in flight finish (a post waits for a free ring slot at most; it never waits for us).
    const auto posts_since = std::chrono::steady_clock::now();
    for (int warned_s = 0; passing_.load(std::memory_order_seq_cst) != 0;) {
        std::this_thread::yield();
        const auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - posts_since);
        if (s.count() >= warned_s + warn_every_s) {
            warned_s = static_cast<int>(s.count());
            HGASI_WARN("gpu", "waiting %d s for %d post(s) to the copy agents to finish (a post waits for a free "
                       "ring slot at most 30 s)", warned_s, passing_.load());
        }
    }
    for (member &m : members_) __atomic_store_n(m.stop, 1, __ATOMIC_RELEASE);
    // Each agent runs what was posted, then sees the stop word within a few hundred polls.
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    for (member &m : members_) {
        while (!m.exited()) {
            if (std::chrono::steady_clock::now() > end) {
                HGASI_WARN("gpu", "a copy agent did not stop within %g s; the CUDA call that waits for the "
                           "process's kernels (cudaHostUnregister, cudaFree) may wait for it", wait_s);
                break;
            }
            std::this_thread::yield();
        }
    }
}

void agent_gate::slow_call(double s) {
    if (s >= slow_call_s && depth_ == 1)
        HGASI_WARN("gpu", "a CUDA call that waits for every kernel of the process (cudaHostUnregister, cudaFree, "
                   "cudaFreeHost, an unmap) took %.1f s with the copy agents stopped: it waited for another kernel "
                   "(a collective or device-API kernel of another rank thread that waits for this thread?)", s);
}

void agent_gate::open() {
    std::lock_guard<std::mutex> g(mu_);
    if (--depth_ > 0) return;
    for (member &m : members_) __atomic_store_n(m.stop, 0, __ATOMIC_RELEASE);
    closer_.store(0, std::memory_order_relaxed);
    closed_.store(false, std::memory_order_seq_cst);
    opened_.notify_all();
}

}  // namespace hgas::gpu
