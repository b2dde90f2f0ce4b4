// The timeline trace (HGAS_TRACE=path; docs/trace.md): spans of API calls, waits and copies,
// and flow arrows from a put_signal to the wait that saw its signal, written per rank at
// finalize as Chrome/Perfetto trace events and merged per job by hgasrun.
//
// Off (the default) every hook is one predictable branch on a global flag: nothing is
// allocated, timed or locked.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace hgas::trace {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

// Starts recording for `rank` of `nranks`; `epoch_ns` (steady clock) becomes time 0 of this
// rank's events: the caller takes it right after a barrier, so that every rank's zero is the
// same moment within the barrier's exit skew (the ranks' clocks need not agree).
void start(const std::string &path, int rank, int nranks, uint64_t epoch_ns);
// Writes this rank's events to `<path>.rank<N>` (one JSON event per line) and stops. The
// message says what failed; "" on success.
std::string stop();
// Names the calling thread's track ("api", "progress", "proxy", ...).
void thread_name(const char *name);

// One complete span [t0, t1] (steady ns) on the calling thread. `args` is a JSON object's
// members without braces (may be empty); `flow_out`/`flow_in` non-zero bind a flow arrow's
// start or end to this span.
void record(const char *name, const char *cat, uint64_t t0, uint64_t t1, std::string args, uint64_t flow_out = 0,
            uint64_t flow_in = 0);

// The flow id that links a signal update to its observation: the signal word (rank, segment,
// offset) and the value written (SET) or seen.
uint64_t signal_flow(uint32_t rank, uint16_t segment, uint64_t offset, uint64_t value);

// A span over a scope. Zero cost beyond a branch when tracing is off.
class span {
public:
    explicit span(const char *name, const char *cat = "api") : name_(name), cat_(cat), t0_(on() ? now() : 0) {}
    ~span() {
        if (t0_) record(name_, cat_, t0_, now(), std::move(args_), flow_out_, flow_in_);
    }
    bool active() const { return t0_ != 0; }
    void args(std::string a) { args_ = std::move(a); }
    void flow_out(uint64_t id) { flow_out_ = id; }
    void flow_in(uint64_t id) { flow_in_ = id; }
    span(const span &) = delete;
    span &operator=(const span &) = delete;

private:
    static uint64_t now();
    const char *name_, *cat_;
    uint64_t t0_;
    std::string args_;
    uint64_t flow_out_ = 0, flow_in_ = 0;
};

}  // namespace hgas::trace
