// GPU stream tracks from events (trace_streams.hpp).
#include "base/trace_streams.hpp"

#include <sched.h>

#include <cstdio>

#include "base/clock.hpp"

namespace hgas::trace {

namespace {
void flush_tracer(void *t) { static_cast<stream_tracer *>(t)->collect(5.0); }
}  // namespace

stream_tracer::stream_tracer(const event_api &api, std::string label) : api_(api), label_(std::move(label)) {
    add_flusher(this, flush_tracer);
}

stream_tracer::~stream_tracer() {
    remove_flusher(this);
    if (on()) collect(5.0);
    std::lock_guard<std::mutex> g(mu_);
    for (auto &p : q_) {
        api_.destroy(p.ev0);
        api_.destroy(p.ev1);
    }
    for (void *e : free_) api_.destroy(e);
    if (ref_) api_.destroy(ref_);
    for (void *e : old_refs_) api_.destroy(e);
}

void *stream_tracer::event() {
    if (!free_.empty()) {
        void *e = free_.back();
        free_.pop_back();
        return e;
    }
    void *e = nullptr;
    return api_.create(&e) == 0 ? e : nullptr;
}

int stream_tracer::track(void *stream) {
    auto it = tracks_.find(stream);
    if (it != tracks_.end()) return it->second;
    char name[96];
    if (stream) std::snprintf(name, sizeof name, "%s %p", label_.c_str(), stream);
    else std::snprintf(name, sizeof name, "%s (default)", label_.c_str());
    return tracks_[stream] = stream_track(name);
}

void *stream_tracer::begin(void *stream) {
    std::lock_guard<std::mutex> g(mu_);
    if (broken_) return nullptr;
    // The only waits for the GPU that tracing adds: one event on a stream of its own, every
    // 4 s at most (a float's 24 bits keep times since it to about half a microsecond).
    if (!ref_ || now_ns() - ref_ns_ > 4'000'000'000ull) {
        if (ref_) old_refs_.push_back(ref_);
        ref_ = nullptr;
        if (api_.create(&ref_) != 0 || api_.calibrate(ref_, &ref_ns_) != 0) {
            broken_ = true;
            std::fprintf(stderr, "hgas: HGAS_TRACE: cannot time the GPU's streams (events failed): no stream tracks\n");
            return nullptr;
        }
    }
    void *e = event();
    if (e && api_.record(e, stream) != 0) {
        free_.push_back(e);
        return nullptr;
    }
    return e;
}

void stream_tracer::end(void *before, void *stream, const char *name, const fields &f) {
    if (!before) return;
    bool many;
    {
        std::lock_guard<std::mutex> g(mu_);
        void *e = event();
        if (!e || api_.record(e, stream) != 0) {
            free_.push_back(before);
            if (e) free_.push_back(e);
            return;
        }
        q_.push_back(pending{stream, before, e, ref_, ref_ns_, name, f});
        many = q_.size() >= 512;
    }
    if (many) collect(0);  // the completed ones only: no wait
}

void stream_tracer::drop(void *before) {
    std::lock_guard<std::mutex> g(mu_);
    if (before) free_.push_back(before);
}

void stream_tracer::collect(double wait_s) {
    const uint64_t end = now_ns() + static_cast<uint64_t>(wait_s * 1e9);
    std::lock_guard<std::mutex> g(mu_);
    for (;;) {
        bool waiting = false;
        for (size_t i = 0; i < q_.size();) {
            pending &p = q_[i];
            const int q = api_.query(p.ev1);
            if (q == 1) {
                waiting = true;
                ++i;
                continue;
            }
            float a = 0, b = 0;
            if (q == 0 && api_.elapsed_ms(&a, p.ref, p.ev0) == 0 && api_.elapsed_ms(&b, p.ref, p.ev1) == 0) {
                const auto at = [&p](float ms) {
                    const double ns = static_cast<double>(p.ref_ns) + static_cast<double>(ms) * 1e6;
                    return static_cast<uint64_t>(ns > 0 ? ns : 0);
                };
                record_on(track(p.stream), p.name, "stream", at(a), at(b), p.f);
            }
            free_.push_back(p.ev0);
            free_.push_back(p.ev1);
            q_.erase(q_.begin() + static_cast<long>(i));
        }
        if (!waiting || now_ns() >= end) break;
        sched_yield();
    }
    // What the deadline left: dropped (its events are not reused: the stream still holds them).
    if (wait_s > 0) q_.clear();
}

}  // namespace hgas::trace
