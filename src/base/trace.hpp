// The timeline trace (HGAS_TRACE=path; docs/trace.md): spans of API calls, waits and copies,
// and flow arrows from a put_signal to the wait that saw its signal, written per rank at
// finalize as Chrome/Perfetto trace events and merged per job by hgasrun.
//
// Off (the default) every hook is one predictable branch on a global flag: nothing is
// allocated, timed or locked.
#pragma once
#include <atomic>
#include <cstdint>
#include <new>
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

// What a span carries besides its name and times: filled by the API call it records, written
// as the span's args at stop() (numbers here, text only then: recording allocates nothing).
struct fields {
    uint64_t bytes = 0, value = 0;  // value: the signal written or seen
    int32_t peer = -1;
    int8_t kind = -1;               // hgas_kind_t of the target
    int8_t path = -1;               // 0 load/store (mapped), 1 transport
    bool has_value = false;
    int8_t op = -1;                 // stream operations: an index into stream_op_names (else -1)
    uint64_t flow_out = 0, flow_in = 0;  // flow arrows bound to this span (0: none)
};

// What a stream ran (fields::op): written as the span's `op` argument.
enum stream_op : int8_t { op_copy, op_reduce, op_atomic, op_kernel, op_memop, op_pack };

// A span as it is recorded: in its thread's buffer from its start (times in the trace clock's
// ticks: the TSC where it is invariant, else steady ns; converted at stop()).
struct event {
    const char *name, *cat;
    uint64_t t0, t1;  // t1 0: still open (not written)
    fields f;
};
struct thread_buffer;

// Stream tracks: a GPU stream (or one of the sim device's streams) is a track of its own in
// its rank's process, named `name` (returns the track's id, never a Linux thread id); its spans
// carry the times the stream ran the operation, recorded from any thread (under a lock: only
// stream operations take it, and only when tracing is on).
int stream_track(const std::string &name);
void record_on(int track, const char *name, const char *cat, uint64_t t0, uint64_t t1, const fields &f);
// The name of the calling thread's innermost open span (the API call that enqueued a stream
// operation), or nullptr outside every span.
const char *current();
// Something stop() calls before it writes the events (a GPU's event timings to read back);
// `flush` must not call stop(). remove_flusher: before the object behind it goes away.
void add_flusher(void *key, void (*flush)(void *key));
void remove_flusher(void *key);

// The flow id that links a signal update to its observation: the signal word (rank, segment,
// offset) and the value written (SET) or seen.
uint64_t signal_flow(uint32_t rank, uint16_t segment, uint64_t offset, uint64_t value);

// A span over a scope, recorded straight into its thread's buffer (no copy, no lock, no
// allocation but a new block of events every few thousand spans).
class span {
public:
    // Off, the constructor stores one word and the destructor tests it: each a branch that is
    // never taken (marked so: the recording code sits out of the call's straight path).
    explicit span(const char *name, const char *cat = "api") : e_(nullptr) {
        if (__builtin_expect(on(), 0)) begin(name, cat);
    }
    ~span() {
        if (__builtin_expect(e_ != nullptr, 0)) end();
    }
    bool active() const { return e_ != nullptr; }
    fields &args() { return e_->f; }  // only when active()
    span(const span &) = delete;
    span &operator=(const span &) = delete;

private:
    __attribute__((noinline, cold)) void begin(const char *name, const char *cat);
    __attribute__((noinline, cold)) void end();
    event *e_;
    thread_buffer *b_;    // set by begin(): read only when e_ is
    const char *outer_;   // the enclosing span's name (current() again after this one)
};

}  // namespace hgas::trace
