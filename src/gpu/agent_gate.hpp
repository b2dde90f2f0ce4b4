// The process's copy agents (cuda_agent.hpp), stopped around the CUDA calls that wait for them.
//
// Some CUDA calls do not return while a kernel of the process's context runs: cudaHostUnregister
// (the registration cache drops an entry), cudaFree, cudaFreeHost; hgas also runs the unmapping
// of memory imported from a peer (cudaIpcCloseMemHandle, VMM unmaps) here. A rank's own agent is no
// obstacle (it exits HGAS_GPU_AGENT_IDLE_US after that rank's thread stops posting), but ranks
// that are threads of one process share the context, and another rank's agent runs for as long
// as that rank keeps posting. A rank polling a signal word in device memory posts a fetch every
// few microseconds, so when it waits for the rank that is inside cudaHostUnregister, neither
// moves until the poller's HGAS_TIMEOUT (seen: cudaHostUnregister returning after 30 s, two
// funneled rank threads on an H200; HGAS_REG_CACHE=off made it go away).
//
// So every post to an agent goes through this gate (`pass`), and those calls run `quiesced`:
// the gate closes (new posts wait), every agent of the process is told to stop, finishes what
// was posted and exits, the call runs, the stop is lifted and the gate opens. The next post
// relaunches an agent, as after an idle exit. It costs the call the agents' exit (a few
// hundred microseconds at most); posts pay two atomic operations.
//
// A post waits at the closed gate for `bypass_ms` at most, then goes through: a call that takes
// longer is waiting for some other kernel (a device-API kernel waiting for a signal that a proxy
// delivers through an agent, say), and holding the posts back would hold that kernel and the call
// until the kernel's own timeout. Such a post relaunches its agent, which still sees the stop
// word and exits once idle: the call then waits for posts as it did before the gate.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace hgas::gpu {

class agent_gate {
public:
    // The process's gate (one CUDA context per GPU per process: all of its agents).
    static agent_gate &process();

    // An agent: its ring's stop word, and whether it has exited (its stream has nothing left).
    void add(const void *key, uint64_t *stop, std::function<bool()> exited);
    void remove(const void *key);

    // Held while posting to an agent or relaunching one; waits while the gate is closed.
    class pass {
    public:
        explicit pass(agent_gate &g) : g_(g) { g_.enter(); }
        ~pass() { g_.leave(); }
        pass(const pass &) = delete;
        pass &operator=(const pass &) = delete;

    private:
        agent_gate &g_;
    };

    // Runs f with every agent of the process stopped and none relaunched until f returns. An
    // agent that has not exited within `wait_s` (a stuck kernel) is left running, with a
    // warning: f then waits for it as it would have without the gate.
    template <class F>
    auto quiesced(double wait_s, F &&f) -> decltype(f()) {
        close(wait_s);
        struct reopen {
            agent_gate &g;
            std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
            ~reopen() {
                g.slow_call(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
                g.open();
            }
        } r{*this};
        return f();
    }

    uint64_t quiesces() const { return quiesces_.load(std::memory_order_relaxed); }  // tests, hgas-info
    uint64_t bypasses() const { return bypasses_.load(std::memory_order_relaxed); }  // posts that did not wait it out

    static constexpr int bypass_ms = 50;
    // How long quiesced() waits for the agents to exit (they do within a millisecond; longer is
    // a stuck kernel).
    static constexpr double stop_wait_s = 5;
    // A closer waiting longer than this for another closer or for posts says so (and again).
    static constexpr int warn_every_s = 10;
    static constexpr double slow_call_s = 1;

private:
    void enter();
    void leave() { passing_.fetch_sub(1, std::memory_order_release); }
    void close(double wait_s);
    // Says when the call took long: with the agents stopped, it waited for some other kernel of
    // the process (another rank thread's collective or device-API kernel, say).
    void slow_call(double s);
    void open();

    struct member {
        const void *key;
        uint64_t *stop;
        std::function<bool()> exited;
    };
    std::mutex mu_;  // members_, closing and reopening
    std::condition_variable opened_;
    std::vector<member> members_;
    std::atomic<bool> closed_{false};
    std::atomic<int> passing_{0};
    std::atomic<uint64_t> quiesces_{0}, bypasses_{0};
    int depth_ = 0;  // quiesced() inside quiesced() on the closing thread (a free inside teardown)
    std::atomic<uint64_t> closer_{0};
};

}  // namespace hgas::gpu
