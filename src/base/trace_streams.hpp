// Stream tracks of a GPU (docs/trace.md): an event recorded on the stream before and after
// each operation that hgas enqueues, read back later (when a stream is synchronized, when many
// are pending, at the trace's end), never waited for per call. The events' times become host
// steady-clock times through one calibration: an event on a stream of its own, waited for once,
// whose completion is taken as the host time read right after.
//
// Only the trace code uses this, and only while tracing is on. CUDA stays behind `event_api`
// (function pointers), so that this file needs no CUDA header.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/trace.hpp"

namespace hgas::trace {

struct event_api {
    int (*create)(void **ev);  // an event with timing
    void (*destroy)(void *ev);
    int (*record)(void *ev, void *stream);
    int (*query)(void *ev);  // 0 completed, 1 not yet, else an error
    int (*elapsed_ms)(float *ms, void *from, void *to);
    // Records `ev` on a stream of its own and waits for it; *host_ns: the steady clock then.
    int (*calibrate)(void *ev, uint64_t *host_ns);
};

class stream_tracer {
public:
    // `label` names the tracks: "<label> 0x<stream>".
    stream_tracer(const event_api &api, std::string label);
    ~stream_tracer();
    stream_tracer(const stream_tracer &) = delete;
    stream_tracer &operator=(const stream_tracer &) = delete;

    // Around enqueuing one operation on `stream`: begin() records the event before it (nullptr
    // when it cannot: the operation goes untraced), end() the one after, and keeps the pair.
    void *begin(void *stream);
    void end(void *before, void *stream, const char *name, const fields &f);
    // The operation was not enqueued after all: its `before` event is reused.
    void drop(void *before);
    // Records the spans of every pair whose operation has completed; waits up to `wait_s`
    // for the others (then drops them: a stream that never ran them has no times to show).
    void collect(double wait_s);

private:
    struct pending {
        void *stream, *ev0, *ev1, *ref;  // ref: the calibration it is timed against
        uint64_t ref_ns;
        const char *name;
        fields f;
    };
    void *event();  // from the free list, or a new one (caller holds mu_)
    int track(void *stream);
    event_api api_;
    std::string label_;
    std::mutex mu_;
    std::vector<void *> free_;
    std::deque<pending> q_;
    std::map<void *, int> tracks_;
    // The calibration event and the host time at which it completed; renewed every few seconds
    // (event times are float milliseconds since it: their resolution shrinks as they grow).
    void *ref_ = nullptr;
    uint64_t ref_ns_ = 0;
    std::vector<void *> old_refs_;  // earlier calibrations, still named by pending pairs
    bool broken_ = false;  // calibration failed: nothing is traced
};

}  // namespace hgas::trace
