// The CPU stand-in for the CUDA runtime declared in cuda_runtime.h beside this file (read its
// header comment first): lazy streams, events, memory, and kernels run as fibers.
#include "cuda_runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace emu {

[[noreturn]] static void fatal(const char *what, const char *detail = "") {
    std::fprintf(stderr, "himeno-emu: %s%s\n", what, detail);
    std::fflush(stderr);
    std::abort();
}

// --- fibers: the threads of one block ------------------------------------------------------
#if defined(__x86_64__)
// Callee-saved registers on the fiber's own stack, then the stack pointer swapped: a switch
// costs nanoseconds (swapcontext makes a system call each time, which made tests minutes long).
extern "C" void emu_switch(void **save_sp, void *load_sp);
asm(R"(
    .text
    .globl emu_switch
    .type emu_switch,@function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch,.-emu_switch
    .section .note.GNU-stack,"",@progbits
    .text
)");
#endif

namespace {

constexpr size_t STACK = 64 * 1024;

struct fiber {
    dim3 tid;
    unsigned flat = 0;
    bool done = false;
    std::vector<char> stack;
#if defined(__x86_64__)
    void *sp = nullptr;
#else
    ucontext_t ctx;
#endif
};

struct block_run {
    std::vector<fiber> fibers;
    unsigned live = 0, current = 0;
    unsigned bar_arrived = 0, bar_gen = 0;  // __syncthreads
    std::vector<unsigned> warp_arrived, warp_gen, warp_live;
    void (*body)(void *) = nullptr;
    void *state = nullptr;
    const char *name = "";
    bool progress = false;
#if defined(__x86_64__)
    void *sched_sp = nullptr;
#else
    ucontext_t sched;
#endif
};

block_run g_run;

void to_scheduler() {
    fiber &f = g_run.fibers[g_run.current];
#if defined(__x86_64__)
    emu_switch(&f.sp, g_run.sched_sp);
#else
    swapcontext(&f.ctx, &g_run.sched);
#endif
}

void fiber_main() {
    fiber &f = g_run.fibers[g_run.current];
    g_run.body(g_run.state);
    f.done = true;
    --g_run.live;
    const unsigned w = f.flat / 32;
    --g_run.warp_live[w];
    // As on the GPU, a thread that has exited no longer holds up a barrier.
    if (g_run.bar_arrived > 0 && g_run.bar_arrived >= g_run.live) g_run.bar_arrived = 0, ++g_run.bar_gen;
    if (g_run.warp_arrived[w] > 0 && g_run.warp_arrived[w] >= g_run.warp_live[w])
        g_run.warp_arrived[w] = 0, ++g_run.warp_gen[w];
    g_run.progress = true;
    to_scheduler();
    fatal("a finished fiber was resumed");
}

#if defined(__x86_64__)
[[noreturn]] void fiber_entry() {
    fiber_main();
    std::abort();
}
#endif

// Runs every thread of the current block until all have returned.
void run_block(dim3 block) {
    const unsigned n = block.x * block.y * block.z;
    g_run.fibers.resize(n);
    g_run.live = n;
    g_run.bar_arrived = 0;
    g_run.warp_arrived.assign((n + 31) / 32, 0);
    g_run.warp_gen.assign((n + 31) / 32, 0);
    g_run.warp_live.assign((n + 31) / 32, 0);
    for (unsigned t = 0; t < n; ++t) {
        fiber &f = g_run.fibers[t];
        f.flat = t;
        f.tid = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
        f.done = false;
        f.stack.resize(STACK);
        ++g_run.warp_live[t / 32];
#if defined(__x86_64__)
        // ret into fiber_entry with the stack aligned as after a call; 6 registers to pop.
        auto top = reinterpret_cast<uintptr_t>(f.stack.data() + STACK) & ~uintptr_t(15);
        auto *w = reinterpret_cast<void **>(top);
        w[-1] = nullptr;
        w[-2] = reinterpret_cast<void *>(&fiber_entry);
        for (int r = 3; r <= 8; ++r) w[-r] = nullptr;
        f.sp = &w[-8];
#else
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data();
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, fiber_main, 0);
#endif
    }
    while (g_run.live > 0) {
        g_run.progress = false;
        for (unsigned t = 0; t < n; ++t) {
            if (g_run.fibers[t].done) continue;
            g_run.current = t;
#if defined(__x86_64__)
            emu_switch(&g_run.sched_sp, g_run.fibers[t].sp);
#else
            swapcontext(&g_run.sched, &g_run.fibers[t].ctx);
#endif
        }
        if (!g_run.progress && g_run.live > 0) fatal("threads wait at a barrier that can never complete, in ", g_run.name);
    }
}

// A barrier of `expected` live threads: arrive, then yield until the generation moves.
void barrier(unsigned &arrived, unsigned &gen, unsigned expected) {
    const unsigned g = gen;
    if (++arrived >= expected) {
        arrived = 0;
        ++gen;
        g_run.progress = true;
        return;
    }
    while (gen == g) to_scheduler();
}

uint64_t g_ops = 0;  // for the summary at exit (HIMENO_EMU_VERBOSE)

}  // namespace

dim3 g_block_idx, g_block_dim, g_grid_dim;
double g_xchg_d[1024];

const dim3 &thread_idx() { return g_run.fibers[g_run.current].tid; }
unsigned lane_exchange_slot() { return g_run.fibers[g_run.current].flat; }

void sync_block() { barrier(g_run.bar_arrived, g_run.bar_gen, g_run.live); }

void sync_warp() {
    const unsigned w = g_run.fibers[g_run.current].flat / 32;
    barrier(g_run.warp_arrived[w], g_run.warp_gen[w], g_run.warp_live[w]);
}

// --- streams and events ----------------------------------------------------------------------
struct stream {
    std::deque<std::function<void()>> ops;
    uint64_t queued = 0, done = 0;
    bool running = false;
};

struct event {
    stream *s = nullptr;
    uint64_t seq = 0;          // the record: complete when s->done >= seq
    bool asked = false;        // queried once since the record
    double t = 0;              // when the record point executed
    uint64_t timed_seq = 0;    // which record t belongs to
};

namespace {
std::vector<stream *> g_streams;
cudaError_t g_last = cudaSuccess;

double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void run_until(stream *s, uint64_t seq) {
    if (s->running && s->done < seq) fatal("a stream waits for itself (a cycle of stream waits)");
    s->running = true;
    while (s->done < seq) {
        std::function<void()> op = std::move(s->ops.front());
        s->ops.pop_front();
        op();
        ++s->done;
        ++g_ops;
    }
    s->running = false;
}

void drain_all() {
    for (stream *s : g_streams) run_until(s, s->queued);
}

// When queued work runs (HIMENO_EMU_SCHEDULE): "lazy" (default) only when something needs it;
// "eager:N" the N-th stream created at once, the others lazily; "random:SEED" each time at once
// or not, by a seeded coin. Work may run any time after what precedes it in its stream, so all
// are valid orders; a missing dependency between streams shows up as a wrong result in some.
struct schedule {
    int eager_stream = -1;
    bool random = false;
    unsigned seed = 1;
    schedule() {
        const char *v = std::getenv("HIMENO_EMU_SCHEDULE");
        if (!v || !std::strcmp(v, "lazy")) return;
        if (!std::strncmp(v, "eager:", 6)) eager_stream = std::atoi(v + 6);
        else if (!std::strncmp(v, "random:", 7)) random = true, seed = unsigned(std::strtoul(v + 7, nullptr, 10));
        else fatal("HIMENO_EMU_SCHEDULE is lazy, eager:N or random:SEED, not ", v);
    }
    bool now(const stream *s) {
        if (random) {
            seed = seed * 1103515245u + 12345u;
            return (seed >> 16) & 1;
        }
        return eager_stream >= 0 && size_t(eager_stream) < g_created.size() && g_created[eager_stream] == s;
    }
    std::vector<const stream *> g_created;
};
schedule &sched() {
    static schedule s;
    return s;
}

void enqueue(stream *s, std::function<void()> op) {
    if (!s) fatal("work queued on the legacy default stream (himeno uses its own streams only)");
    s->ops.push_back(std::move(op));
    ++s->queued;
    if (sched().now(s) && !s->running) run_until(s, s->queued);
}

void *poisoned(size_t n) {
    void *p = std::aligned_alloc(256, (n + 255) / 256 * 256);
    if (p) std::memset(p, 0xff, n);  // NaN floats and doubles
    return p;
}
}  // namespace

void enqueue_kernel(cudaStream_t s, dim3 grid, dim3 block, const char *name, void (*body)(void *), void *state,
                    void (*destroy)(void *)) {
    const unsigned threads = block.x * block.y * block.z;
    if (threads == 0 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 ||
        grid.z > 65535 || block.z > 64) {
        destroy(state);
        g_last = cudaErrorInvalidConfiguration;
        return;
    }
    enqueue(s, [=] {
        g_grid_dim = grid;
        g_block_dim = block;
        for (unsigned z = 0; z < grid.z; ++z)
            for (unsigned y = 0; y < grid.y; ++y)
                for (unsigned x = 0; x < grid.x; ++x) {
                    g_block_idx = dim3(x, y, z);
                    g_run.body = body;
                    g_run.state = state;
                    g_run.name = name;
                    run_block(block);
                }
        destroy(state);
    });
}

}  // namespace emu

using emu::g_streams;

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return "cudaSuccess";
        case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
        case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
        case cudaErrorNotReady: return "cudaErrorNotReady";
        default: return "cudaError(emulated)";
    }
}
const char *cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }

cudaError_t cudaGetLastError() {
    const cudaError_t e = emu::g_last;
    emu::g_last = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *n) {
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) {
    std::memset(p, 0, sizeof *p);
    std::snprintf(p->name, sizeof p->name, "emulated GPU (himeno-emu, CPU)");
    p->major = 9;
    p->multiProcessorCount = 1;
    p->totalGlobalMem = size_t(1) << 30;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int) {
    std::snprintf(bus, len, "0000:00:00.0");
    return cudaSuccess;
}
// No memory clock here: the report must cope with an unknown peak.
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) {
    *v = 0;
    return emu::g_last = cudaErrorInvalidValue;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
    *least = 0, *greatest = -5;
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned, int) {
    *s = new emu::stream;
    g_streams.push_back(*s);
    emu::sched().g_created.push_back(*s);
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    emu::run_until(s, s->queued);  // CUDA finishes a destroyed stream's work
    std::erase(g_streams, s);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
    if (!e->s) return cudaSuccess;  // never recorded: nothing to wait for
    emu::stream *es = e->s;
    const uint64_t seq = e->seq;
    emu::enqueue(s, [=] { emu::run_until(es, seq); });
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) {
    *e = new emu::event;
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    if (!s) emu::fatal("an event recorded on the legacy default stream");
    const uint64_t seq = s->queued + 1;
    emu::enqueue(s, [=] {
        e->t = emu::wall();
        e->timed_seq = seq;
    });
    e->s = s, e->seq = seq, e->asked = false;
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (!e->s || e->s->done >= e->seq) return cudaSuccess;
    if (!e->asked) {
        e->asked = true;
        return cudaErrorNotReady;
    }
    emu::run_until(e->s, e->seq);
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    if (!a->s || !b->s || a->s->done < a->seq || b->s->done < b->seq || a->timed_seq != a->seq ||
        b->timed_seq != b->seq)
        return cudaErrorNotReady;
    *ms = float((b->t - a->t) * 1e3);
    return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t n) {
    *p = emu::poisoned(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p) {
    emu::drain_all();  // cudaFree synchronizes
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b) {
    *free_b = *total_b = size_t(1) << 30;
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind) {
    emu::drain_all();  // the legacy stream: after everything queued (himeno calls it when idle)
    std::memcpy(dst, src, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind, cudaStream_t s) {
    emu::enqueue(s, [=] { std::memcpy(dst, src, n); });
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
    emu::enqueue(s, [=] { std::memset(p, v, n); });
    return cudaSuccess;
}
