// The trace recorder: each thread's spans in blocks of its own buffer (no lock, no allocation
// per span; times in the trace clock's ticks), written as trace-event JSON lines at stop().
#include "base/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "base/clock.hpp"

namespace hgas::trace {

std::atomic<bool> g_on{false};

// Each thread records into its own buffer (no lock per event); the buffers are listed once.
// Blocks never move, so that an open span's event stays where begin() put it.
struct thread_buffer {
    static constexpr size_t block = 4096;
    int tid;
    const char *current = nullptr;  // the innermost open span's name
    std::vector<std::unique_ptr<event[]>> blocks;
    std::atomic<size_t> used{0};  // events begun, over all blocks (stop() reads it)
    size_t written = 0;           // events an earlier stop() wrote
    event *cur = nullptr, *end = nullptr;
    event *next() {
        if (__builtin_expect(cur == end, 0)) grow();
        used.store(used.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        return cur++;
    }
    void grow() {
        blocks.emplace_back(new event[block]());
        cur = blocks.back().get();
        end = cur + block;
    }
    event &at(size_t i) { return blocks[i / block][i % block]; }
};

namespace {
// The trace clock: the TSC where the CPU says it is invariant (constant_tsc: the same rate in
// every P-state; nonstop_tsc: it runs in deep C-states), read in ~9 ns against ~21 ns for
// clock_gettime on the development machine; steady ns elsewhere. Ticks become ns at stop()
// through two readings of both clocks, at start() and at stop().
bool g_tsc = false;
struct clock_pair {
    uint64_t tsc = 0, ns = 0;
};
clock_pair g_cal0;
inline uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(g_tsc, 1)) return __rdtsc();
#endif
    return now_ns();
}
// A reading of both clocks at one moment: the TSC between two steady-clock reads, the pair
// whose reads lie closest together of 32 (a preempted one, hundreds of microseconds apart on a
// loaded machine, would shift every converted time by half that).
clock_pair read_pair() {
    clock_pair p;
#if defined(__x86_64__) || defined(__i386__)
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 32; i++) {
        const uint64_t a = now_ns(), t = __rdtsc(), b = now_ns();
        if (b - a < best) {
            best = b - a;
            p.tsc = t;
            p.ns = a + (b - a) / 2;
        }
    }
#endif
    return p;
}
bool tsc_invariant() {
#if defined(__x86_64__) || defined(__i386__)
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("flags", 0) == 0)
            return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
#endif
    return false;
}
thread_local thread_buffer *t_buf = nullptr;

struct state {
    std::mutex mu;
    std::vector<thread_buffer *> buffers;
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

namespace {
thread_buffer *my_buffer() {
    thread_buffer *b = t_buf;
    if (__builtin_expect(b != nullptr, 1)) return b;
    b = new thread_buffer;  // kept to the end of the process: stop() may read it late
    b->tid = tid();
    b->grow();
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    s.buffers.push_back(b);
    return t_buf = b;
}
}  // namespace

void span::begin(const char *name, const char *cat) {
    thread_buffer *b = my_buffer();
    event *e = b->next();
    e->name = name;
    e->cat = cat;
    e->t1 = 0;
    e->f = fields();
    outer_ = b->current;
    b->current = name;
    b_ = b;
    e_ = e;
    e->t0 = ticks();
}

void span::end() {
    e_->t1 = ticks();
    b_->current = outer_;
}

const char *current() {
    thread_buffer *b = t_buf;
    return b ? b->current : nullptr;
}

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
    g_tsc = tsc_invariant();
    if (g_tsc) g_cal0 = read_pair();
    g_on.store(true, std::memory_order_relaxed);
}

void thread_name(const char *name) {  // kept even before start(): threads start during init
    state &s = st();
    std::lock_guard<std::mutex> g(s.mu);
    s.threads.emplace_back(tid(), name);
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
    // Ticks to ns: the rate between the two readings (at least 10 ms apart: a short job spins
    // here for the rest, so that the readings' own error stays below a few parts per million).
    clock_pair c0 = g_cal0, c1;
    if (g_tsc) {
        do c1 = read_pair();
        while (c1.ns < c0.ns + 10'000'000);
    }
    const long double ns_per_tick =
        g_tsc && c1.tsc > c0.tsc ? static_cast<long double>(c1.ns - c0.ns) / static_cast<long double>(c1.tsc - c0.tsc) : 1;
    const auto to_ns = [&](uint64_t t) -> uint64_t {
        if (!g_tsc) return t;
        return c0.ns + static_cast<uint64_t>(static_cast<long double>(static_cast<int64_t>(t - c0.tsc)) * ns_per_tick);
    };
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
    for (thread_buffer *b : s.buffers) {
        const size_t n = b->used.load(std::memory_order_acquire);
        for (size_t i = b->written; i < n; i++) {
            event e = b->at(i);
            if (e.t1 == 0) continue;  // still open (another thread's call in flight): not written
            e.t0 = to_ns(e.t0);
            e.t1 = to_ns(e.t1);
            write_event(f, pid, b->tid, e, s.epoch);
        }
        b->written = n;
    }
    std::string err;
    if (std::fclose(f) != 0) err = "HGAS_TRACE: cannot write " + file + ": " + std::strerror(errno);
    return err;
}

}  // namespace hgas::trace
