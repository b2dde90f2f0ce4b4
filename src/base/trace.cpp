// The trace recorder: events in memory (under a mutex: recording is on only when asked for),
// written as trace-event JSON lines at stop().
#include "base/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/clock.hpp"

namespace hgas::trace {

std::atomic<bool> g_on{false};

namespace {
struct event {
    const char *name, *cat;
    uint64_t t0, t1;
    fields f;
};
// Each thread records into its own buffer (no lock per event); the buffers are listed once.
struct buffer {
    int tid;
    std::vector<event> events;
};
struct state {
    std::mutex mu;
    std::vector<buffer *> buffers;
    std::vector<std::pair<int, std::string>> threads;
    std::string path;
    int rank = 0, nranks = 0;
    uint64_t epoch = 0;
    std::vector<std::pair<void *, void (*)(void *)>> flushers;
    // Stream tracks and their spans (own lock: a flusher records while stop() holds mu).
    std::mutex smu;
    std::vector<std::pair<int, std::string>> tracks;
    std::vector<std::pair<int, event>> stream_events;
};
state &st() {
    static state *s = new state;  // outlives static destructors of threads still recording
    return *s;
}
int tid() {
    thread_local int t = static_cast<int>(syscall(SYS_gettid));
    return t;
}
std::string escape(const char *s) {
    std::string o;
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') o += '\\';
        if (static_cast<unsigned char>(*s) >= 0x20) o += *s;
    }
    return o;
}
}  // namespace

uint64_t span::now() { return now_ns(); }

namespace {
thread_local const char *t_current = nullptr;
}
const char *span::enter(const char *name) {
    const char *outer = t_current;
    t_current = name;
    return outer;
}
void span::leave(const char *outer) { t_current = outer; }
const char *current() { return t_current; }

int stream_track(const std::string &name) {
    state &s = st();
    std::lock_guard<std::mutex> g(s.smu);
    // Above every Linux thread id (at most 2^22), so a stream never shares a thread's track.
    const int id = (1 << 30) + static_cast<int>(s.tracks.size());
    s.tracks.emplace_back(id, name);
    return id;
}

void record_on(int track, const char *name, const char *cat, uint64_t t0, uint64_t t1, const fields &f) {
    state &s = st();
    std::lock_guard<std::mutex> g(s.smu);
    s.stream_events.emplace_back(track, event{name, cat, t0, t1, f});
}

void add_flusher(void *key, void (*flush)(void *key)) {
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    s.flushers.emplace_back(key, flush);
}

void remove_flusher(void *key) {
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    for (size_t i = 0; i < s.flushers.size(); i++)
        if (s.flushers[i].first == key) {
            s.flushers.erase(s.flushers.begin() + static_cast<long>(i));
            break;
        }
}

void start(const std::string &path, int rank, int nranks, uint64_t epoch_ns) {
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    s.path = path;
    s.rank = rank;
    s.nranks = nranks;
    s.epoch = epoch_ns;
    s.threads.emplace_back(tid(), "api");
    g_on.store(true, std::memory_order_relaxed);
}

void thread_name(const char *name) {  // kept even before start(): threads start during init
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    s.threads.emplace_back(tid(), name);
}

buffer &my_buffer() {
    thread_local buffer *b = [] {
        auto *nb = new buffer{tid(), {}};  // kept to the end of the process: stop() may read it late
        nb->events.reserve(1 << 14);
        state &s = st();
        std::lock_guard<std::mutex> g(s.mu);
        s.buffers.push_back(nb);
        return nb;
    }();
    return *b;
}

void record(const char *name, const char *cat, uint64_t t0, uint64_t t1, const fields &f) {
    my_buffer().events.push_back(event{name, cat, t0, t1, f});
}

uint64_t signal_flow(uint32_t rank, uint16_t segment, uint64_t offset, uint64_t value) {
    // FNV-1a over the four fields: equal on both sides without any message between them.
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) {
        for (int i = 0; i < 8; i++) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    mix(rank);
    mix(segment);
    mix(offset);
    mix(value);
    return h | 1;  // never 0 (0 is "no flow")
}

namespace {
// One span (and its flow events) as trace-event JSON lines; times in us since `epoch`.
void write_event(FILE *f, int pid, int tid, const event &e, uint64_t epoch) {
    auto us = [epoch](uint64_t t) { return t >= epoch ? (t - epoch) / 1e3 : -((epoch - t) / 1e3); };
    static const char *kinds[] = {"host", "cuda", "sim"};
    static const char *ops[] = {"copy", "reduce", "atomic", "kernel", "memop", "pack"};
    const fields &a = e.f;
    std::fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\",\"ts\":%.3f,"
                    "\"dur\":%.3f,\"args\":{", pid, tid, e.name, e.cat, us(e.t0), (e.t1 - e.t0) / 1e3);
    const char *sep = "";
    const char *path = a.path == 0 ? "load/store" : "transport";
    if (a.peer >= 0) {
        std::fprintf(f, "\"bytes\":%llu,\"peer\":%d,\"kind\":\"%s\",\"path\":\"%s\"",
                     static_cast<unsigned long long>(a.bytes), a.peer,
                     a.kind >= 0 && a.kind < 3 ? kinds[a.kind] : "?", path);
        sep = ",";
    } else if (a.op >= 0) {
        std::fprintf(f, "\"bytes\":%llu", static_cast<unsigned long long>(a.bytes));
        if (a.path >= 0) std::fprintf(f, ",\"path\":\"%s\"", path);
        sep = ",";
    }
    if (a.op >= 0 && a.op < 6) {
        std::fprintf(f, "%s\"op\":\"%s\"", sep, ops[a.op]);
        sep = ",";
    }
    if (a.has_value)
        std::fprintf(f, "%s\"%s\":%llu", sep, a.peer >= 0 ? "signal" : "value", static_cast<unsigned long long>(a.value));
    std::fprintf(f, "}},\n");
    // Flow arrows bind to the span that encloses their time stamp: the middle of this one.
    const double mid = us(e.t0 + (e.t1 - e.t0) / 2);
    if (a.flow_out)
        std::fprintf(f, "{\"ph\":\"s\",\"pid\":%d,\"tid\":%d,\"name\":\"signal\",\"cat\":\"flow\","
                        "\"id\":\"0x%llx\",\"ts\":%.3f},\n", pid, tid, static_cast<unsigned long long>(a.flow_out), mid);
    if (a.flow_in)
        std::fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":%d,\"tid\":%d,\"name\":\"signal\","
                        "\"cat\":\"flow\",\"id\":\"0x%llx\",\"ts\":%.3f},\n", pid, tid,
                     static_cast<unsigned long long>(a.flow_in), mid);
}
}  // namespace

std::string stop() {
    if (!on()) return "";
    state &s = st();
    {
        // GPU event timings are read back here, while tracing is still on (they record spans).
        std::vector<std::pair<void *, void (*)(void *)>> fl;
        {
            std::lock_guard<std::mutex> g(s.mu);
            fl = s.flushers;
        }
        for (auto &[key, flush] : fl) flush(key);
    }
    g_on.store(false, std::memory_order_relaxed);
    std::lock_guard<std::mutex> g(s.mu);
    std::string file = s.path + ".rank" + std::to_string(s.rank);
    FILE *f = std::fopen(file.c_str(), "w");
    if (!f) return "HGAS_TRACE: cannot write " + file + ": " + std::strerror(errno);
    const int pid = s.rank;
    std::fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"rank %d\"}},\n", pid,
                 pid);
    std::fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}},\n", pid,
                 pid);
    for (auto &[t, name] : s.threads)
        std::fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}},\n",
                     pid, t, escape(name.c_str()).c_str());
    {
        std::lock_guard<std::mutex> sg(s.smu);
        for (auto &[t, name] : s.tracks)
            std::fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}},\n",
                         pid, t, escape(name.c_str()).c_str());
        for (auto &[t, e] : s.stream_events) write_event(f, pid, t, e, s.epoch);
        s.stream_events.clear();
    }
    for (buffer *b : s.buffers) {
        for (const event &e : b->events) write_event(f, pid, b->tid, e, s.epoch);
        b->events.clear();
    }
    std::string err;
    if (std::fclose(f) != 0) err = "HGAS_TRACE: cannot write " + file + ": " + std::strerror(errno);
    return err;
}

}  // namespace hgas::trace
