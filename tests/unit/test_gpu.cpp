// The CPU-testable parts of the gpu layer: the registration cache (interval map with LRU
// eviction) and fd passing between processes (what the cuda device's VMM export uses to hand
// its POSIX fds to same-node ranks), checked with a memfd whose contents both sides see; and
// the agent gate, with threads that behave as the copy agents and their posters do.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "base/status.hpp"
#include "gpu/agent_gate.hpp"
#include "gpu/fd_pass.hpp"
#include "gpu/ipc_cache.hpp"
#include "gpu/reg_cache.hpp"
#include "gpu/sharing.hpp"

using namespace hgas;
using gpu::reg_cache;

namespace {

reg_cache::entry ent(uintptr_t base, size_t size, bool cached = false) {
    reg_cache::entry e;
    e.base = base;
    e.size = size;
    e.cached = cached;
    return e;
}
const void *at(uintptr_t a) { return reinterpret_cast<const void *>(a); }

}  // namespace

TEST(RegCache, InsertAndLookup) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x10000, 0x1000)));
    ASSERT_TRUE(c.insert(ent(0x20000, 0x100)));
    reg_cache::entry e;
    EXPECT_TRUE(c.find(at(0x10000), 0x1000, &e));
    EXPECT_EQ(e.base, 0x10000u);
    EXPECT_EQ(e.size, 0x1000u);
    EXPECT_TRUE(c.find(at(0x10800), 0x800));
    EXPECT_TRUE(c.find(at(0x10fff), 0));   // n 0 counts as one byte
    EXPECT_FALSE(c.find(at(0x10800), 0x801));  // runs past the end
    EXPECT_FALSE(c.find(at(0x11000), 1));      // just past
    EXPECT_FALSE(c.find(at(0xffff), 2));       // starts before
    EXPECT_FALSE(c.find(at(0x1ffff), 2));      // spans a gap into the next entry
    EXPECT_TRUE(c.find(at(0x200ff), 1));
    EXPECT_EQ(c.count(), 2u);
    EXPECT_EQ(c.explicit_bytes(), 0x1100u);
    EXPECT_EQ(c.cached_bytes(), 0u);
}

TEST(RegCache, OverlapsAreRefused) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x10000, 0x1000)));
    reg_cache::entry clash;
    EXPECT_FALSE(c.insert(ent(0x10fff, 0x10), &clash));  // tail
    EXPECT_EQ(clash.base, 0x10000u);
    EXPECT_FALSE(c.insert(ent(0xf000, 0x1001), &clash));  // head
    EXPECT_EQ(clash.base, 0x10000u);
    EXPECT_FALSE(c.insert(ent(0x10100, 0x10)));           // inside
    EXPECT_FALSE(c.insert(ent(0x8000, 0x10000)));         // around
    EXPECT_FALSE(c.insert(ent(0x10000, 0x1000)));         // the same
    EXPECT_FALSE(c.insert(ent(0x30000, 0)));              // empty
    EXPECT_TRUE(c.insert(ent(0xf000, 0x1000)));           // adjacent below
    EXPECT_TRUE(c.insert(ent(0x11000, 0x1000)));          // adjacent above
    EXPECT_TRUE(c.overlaps(at(0x10fff), 1));
    EXPECT_FALSE(c.overlaps(at(0x12000), 0x1000));
    EXPECT_TRUE(c.overlaps(at(0xe000), 0x1001, &clash));
    EXPECT_EQ(clash.base, 0xf000u);
    // Near the top of the address space: no wrap-around.
    EXPECT_TRUE(c.insert(ent(UINTPTR_MAX - 0xfff, 0x1000)));
    EXPECT_TRUE(c.find(at(UINTPTR_MAX - 1), 1));
    EXPECT_FALSE(c.insert(ent(UINTPTR_MAX - 0x10, 0x100)));
}

TEST(RegCache, RemoveByStartOnly) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x10000, 0x1000)));
    EXPECT_FALSE(c.remove(at(0x10800)));  // inside, not the start
    reg_cache::entry e;
    EXPECT_TRUE(c.remove(at(0x10000), &e));
    EXPECT_EQ(e.size, 0x1000u);
    EXPECT_FALSE(c.remove(at(0x10000)));  // twice
    EXPECT_FALSE(c.find(at(0x10000), 1));
    EXPECT_EQ(c.count(), 0u);
    EXPECT_EQ(c.explicit_bytes(), 0u);
    EXPECT_TRUE(c.insert(ent(0x10800, 0x1000)));  // the range is free again
}

TEST(RegCache, LruEvictionSparesExplicitEntries) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x100000, 0x1000)));         // explicit
    ASSERT_TRUE(c.insert(ent(0x200000, 0x1000, true)));   // cached, oldest
    ASSERT_TRUE(c.insert(ent(0x300000, 0x2000, true)));
    ASSERT_TRUE(c.insert(ent(0x400000, 0x1000, true)));
    EXPECT_EQ(c.cached_bytes(), 0x4000u);
    EXPECT_EQ(c.explicit_bytes(), 0x1000u);
    EXPECT_TRUE(c.find(at(0x200010), 8));  // the oldest becomes the newest
    EXPECT_TRUE(c.evict(0x4000).empty()); // within the limit: nothing
    auto out = c.evict(0x2000);           // 0x300000 (LRU, 0x2000) goes; that is enough
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].base, 0x300000u);
    EXPECT_EQ(c.cached_bytes(), 0x2000u);
    out = c.evict(0);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].base, 0x400000u);  // least recently used first
    EXPECT_EQ(out[1].base, 0x200000u);
    EXPECT_EQ(c.cached_bytes(), 0u);
    EXPECT_EQ(c.count(), 1u);  // the explicit one stays
    EXPECT_TRUE(c.find(at(0x100000), 0x1000));
    auto all = c.clear();
    EXPECT_EQ(all.size(), 1u);
    EXPECT_EQ(c.count(), 0u);
}

TEST(RegCache, ThreadsInsertFindRemove) {
    reg_cache c;
    constexpr int threads = 4, per = 2000;
    std::atomic<int> bad{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < per; ++i) {
                const uintptr_t b = (static_cast<uintptr_t>(t) << 32) + static_cast<uintptr_t>(i) * 0x2000;
                if (!c.insert(ent(b, 0x1000))) ++bad;
                if (!c.find(at(b + 0x10), 0x100)) ++bad;
                if (i % 2 && !c.remove(at(b))) ++bad;
            }
        });
    for (auto &t : ts) t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(c.count(), static_cast<size_t>(threads * per / 2));
}

// --- the automatic policy's parts: invalidation ring, merge plan ---------------------------

TEST(RegCache, UnmapsDropOverlappingCachedEntriesOnly) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x100000, 0x2000, true)));
    ASSERT_TRUE(c.insert(ent(0x200000, 0x2000, true)));
    ASSERT_TRUE(c.insert(ent(0x300000, 0x2000)));  // explicit: the user's, never invalidated
    c.invalidate(at(0x101fff), 1);                  // the last byte of the first
    c.invalidate(at(0x1ff000), 0x1000);             // touches the second, no overlap
    c.invalidate(at(0x300000), 0x2000);
    c.invalidate(at(0x900000), 0x1000);             // outside every entry (and the hull)
    EXPECT_FALSE(c.find(at(0x100000), 1)) << "find must apply the unmaps before it answers";
    EXPECT_TRUE(c.find(at(0x200000), 0x2000));
    EXPECT_TRUE(c.find(at(0x300000), 0x2000));
    EXPECT_EQ(c.invalidated(), 1u);
    auto gone = c.drain();  // what find removed, handed out once
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].base, 0x100000u);
    EXPECT_TRUE(c.drain().empty());
    EXPECT_EQ(c.cached_bytes(), 0x2000u);
    EXPECT_EQ(c.explicit_bytes(), 0x2000u);
}

TEST(RegCache, RingOverflowDropsEveryCachedEntry) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x100000, 0x1000, true)));
    ASSERT_TRUE(c.insert(ent(0x800000, 0x1000, true)));
    ASSERT_TRUE(c.insert(ent(0x900000, 0x1000)));
    // More unmaps inside the hull than the ring holds, none of them on an entry.
    for (size_t i = 0; i < reg_cache::ring_slots + 10; ++i) c.invalidate(at(0x400000 + i * 0x1000), 0x1000);
    auto gone = c.drain();
    EXPECT_EQ(gone.size(), 2u);
    EXPECT_EQ(c.count(), 1u);  // the explicit one
    // The ring works again afterwards.
    ASSERT_TRUE(c.insert(ent(0x100000, 0x1000, true)));
    c.invalidate(at(0x100000), 1);
    EXPECT_EQ(c.drain().size(), 1u);
}

TEST(RegCache, ThreadsInvalidateWhileTheOwnerDrains) {
    reg_cache c;
    constexpr int threads = 3, per = 5000;
    std::atomic<bool> stop{false};
    ASSERT_TRUE(c.insert(ent(0x1000, 0x1000, true)));  // a hull for the invalidations to hit
    ASSERT_TRUE(c.insert(ent(0x10000000, 0x1000, true)));
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < per; ++i) c.invalidate(at(0x100000 + (t * per + i) * 0x10), 0x10);
        });
    size_t drained = 0;
    std::thread owner([&] {
        while (!stop.load()) drained += c.drain().size();
    });
    for (auto &t : ts) t.join();
    stop = true;
    owner.join();
    drained += c.drain().size();
    EXPECT_EQ(c.count(), 2u - drained);  // none hit an entry, unless a full ring dropped them all
    EXPECT_TRUE(drained == 0 || drained == 2);
}

TEST(RegCache, PlanMergesTouchingCachedEntriesAndStopsAtExplicitOnes) {
    reg_cache c;
    ASSERT_TRUE(c.insert(ent(0x10000, 0x2000, true)));
    ASSERT_TRUE(c.insert(ent(0x14000, 0x1000, true)));
    ASSERT_TRUE(c.insert(ent(0x20000, 0x1000)));  // explicit
    // Inside a cached entry: a hit.
    auto p = c.plan_cached(0x10000, 0x1000);
    EXPECT_EQ(p.what, reg_cache::plan::hit);
    // Overlapping the first and touching the second: one registration of the union.
    p = c.plan_cached(0x11000, 0x3000);
    ASSERT_EQ(p.what, reg_cache::plan::add);
    EXPECT_EQ(p.base, 0x10000u);
    EXPECT_EQ(p.size, 0x5000u);
    ASSERT_EQ(p.merge.size(), 2u);
    // Alone: added as it is.
    p = c.plan_cached(0x30000, 0x1000);
    EXPECT_EQ(p.what, reg_cache::plan::add);
    EXPECT_TRUE(p.merge.empty());
    // Touching the explicit entry: fine, not merged; overlapping it: not cached.
    p = c.plan_cached(0x1f000, 0x1000);
    EXPECT_EQ(p.what, reg_cache::plan::add);
    EXPECT_EQ(p.size, 0x1000u);
    EXPECT_TRUE(p.merge.empty());
    p = c.plan_cached(0x1f000, 0x2000);
    EXPECT_EQ(p.what, reg_cache::plan::blocked);
    // An unmapped entry is not merged (it is gone before the plan).
    c.invalidate(at(0x14000), 0x1000);
    p = c.plan_cached(0x12000, 0x2000);  // touches both; the second is gone
    EXPECT_EQ(p.what, reg_cache::plan::add);
    EXPECT_EQ(p.base, 0x10000u);  // merges with the first only
    EXPECT_EQ(p.size, 0x4000u);
    EXPECT_EQ(p.merge.size(), 1u);
    EXPECT_EQ(c.drain().size(), 1u);
}

// --- fd passing ------------------------------------------------------------------------------

namespace {

std::string unique_name(const char *what) {
    return gpu::fdpass::socket_name("unit" + std::to_string(getpid()), 0, what);
}

int make_memfd(const char *text) {
    const int fd = memfd_create("hgas-test", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, 4096) != 0) return -1;
    if (pwrite(fd, text, std::strlen(text) + 1, 0) < 0) return -1;
    return fd;
}

}  // namespace

TEST(FdPass, MemfdBetweenTwoProcesses) {
    const int memfd = make_memfd("exported by the parent");
    ASSERT_GE(memfd, 0);
    auto srv = gpu::fdpass::server::start(unique_name("memfd"), [&](uint32_t key) { return key == 7 ? memfd : -1; });
    ASSERT_TRUE(srv.ok()) << last_error();
    const std::string name = (*srv)->name();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The importer: its fd is a different number for the same file; map it, check what
        // the parent wrote, and answer through the shared pages.
        auto fd = gpu::fdpass::fetch(name, 7, 10);
        if (!fd.ok()) _exit(10);
        void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
        if (p == MAP_FAILED) _exit(11);
        if (std::strcmp(static_cast<char *>(p), "exported by the parent") != 0) _exit(12);
        std::strcpy(static_cast<char *>(p) + 1024, "seen by the child");
        auto none = gpu::fdpass::fetch(name, 8, 10);  // a key the server does not know
        if (none.ok()) _exit(13);
        _exit(0);
    }
    int st = 0;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0) << "10: fetch failed, 11: mmap, 12: wrong contents, 13: unknown key answered";
    char buf[64] = {};
    ASSERT_GT(pread(memfd, buf, sizeof buf, 1024), 0);
    EXPECT_STREQ(buf, "seen by the child");
    EXPECT_EQ((*srv)->served(), 2u);
    srv->reset();
    close(memfd);
}

TEST(FdPass, ManyFetchesAndDistinctKeys) {
    const int a = make_memfd("segment a"), b = make_memfd("segment b");
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    auto srv = gpu::fdpass::server::start(unique_name("many"), [&](uint32_t key) { return key == 1 ? a : key == 2 ? b : -1; });
    ASSERT_TRUE(srv.ok()) << last_error();
    for (int i = 0; i < 50; ++i) {
        const uint32_t key = 1 + i % 2;
        auto fd = gpu::fdpass::fetch((*srv)->name(), key, 10);
        ASSERT_TRUE(fd.ok()) << last_error();
        EXPECT_NE(*fd, a);
        EXPECT_NE(*fd, b);
        char buf[16] = {};
        ASSERT_GT(pread(*fd, buf, sizeof buf, 0), 0);
        EXPECT_STREQ(buf, key == 1 ? "segment a" : "segment b");
        close(*fd);
    }
    close(a);
    close(b);
}

TEST(FdPass, ErrorsNameTheSocket) {
    // Nobody listens: a clear error once the deadline passes.
    const std::string name = unique_name("nobody");
    auto fd = gpu::fdpass::fetch(name, 1, 0.05);
    ASSERT_FALSE(fd.ok());
    EXPECT_NE(last_error().find("@" + name), std::string::npos) << last_error();
    // Unknown key.
    auto srv = gpu::fdpass::server::start(unique_name("unknown"), [](uint32_t) { return -1; });
    ASSERT_TRUE(srv.ok()) << last_error();
    fd = gpu::fdpass::fetch((*srv)->name(), 3, 5);
    ASSERT_FALSE(fd.ok());
    EXPECT_NE(last_error().find("no fd for key 3"), std::string::npos) << last_error();
    // The same name twice: the second server is refused, with the reason.
    auto again = gpu::fdpass::server::start((*srv)->name(), [](uint32_t) { return -1; });
    ASSERT_FALSE(again.ok());
    EXPECT_NE(last_error().find("cannot bind"), std::string::npos) << last_error();
}

TEST(FdPass, ServerStartedLateIsWaitedFor) {
    // An importer that asks before the exporter listens retries until it does.
    const int memfd = make_memfd("late");
    ASSERT_GE(memfd, 0);
    const std::string name = unique_name("late");
    std::unique_ptr<gpu::fdpass::server> srv;
    std::thread starter([&] {
        usleep(100000);
        auto s = gpu::fdpass::server::start(name, [&](uint32_t) { return memfd; });
        if (s.ok()) srv = std::move(*s);
    });
    auto fd = gpu::fdpass::fetch(name, 0, 10);
    starter.join();
    ASSERT_TRUE(fd.ok()) << last_error();
    char buf[8] = {};
    ASSERT_GT(pread(*fd, buf, sizeof buf, 0), 0);
    EXPECT_STREQ(buf, "late");
    close(*fd);
    close(memfd);
}

// The cache of peers' mapped user allocations (rendezvous by IPC): a hit needs the same peer,
// base, size and buffer id; an export overlapping an entry with another id (the peer freed the
// allocation and made another there) drops the entry, which would show the freed memory.
gpu::user_export exp_of(uint64_t base, uint64_t size, uint64_t id) {
    gpu::user_export e;
    e.base = base;
    e.size = size;
    e.buffer_id = id;
    e.kind = static_cast<uint8_t>(gpu::kind::sim);
    return e;
}

TEST(IpcCache, HitOnlyForTheSameAllocation) {
    gpu::ipc_cache c;
    std::vector<gpu::ipc_cache::entry> closed;
    int m1 = 0, m2 = 0, m3 = 0;
    EXPECT_EQ(c.find(1, exp_of(0x10000, 0x1000, 7), closed), nullptr);
    c.insert(1, exp_of(0x10000, 0x1000, 7), &m1, closed);
    EXPECT_EQ(c.find(1, exp_of(0x10000, 0x1000, 7), closed), &m1);
    EXPECT_EQ(c.find(2, exp_of(0x10000, 0x1000, 7), closed), nullptr) << "another peer's allocation";
    c.insert(2, exp_of(0x10000, 0x1000, 7), &m2, closed);
    EXPECT_TRUE(closed.empty());
    EXPECT_EQ(c.hits, 1u);
    // Peer 1 freed it and allocated again at the same address: another buffer id.
    EXPECT_EQ(c.find(1, exp_of(0x10000, 0x1000, 8), closed), nullptr);
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].mapped, &m1);
    EXPECT_EQ(c.invalidated, 1u);
    c.insert(1, exp_of(0x10000, 0x1000, 8), &m3, closed);
    EXPECT_EQ(c.find(1, exp_of(0x10000, 0x1000, 8), closed), &m3);
    EXPECT_EQ(c.find(2, exp_of(0x10000, 0x1000, 7), closed), &m2) << "peer 2's mapping is untouched";
    // A larger allocation that starts lower and covers the old one also invalidates it.
    closed.clear();
    EXPECT_EQ(c.find(1, exp_of(0xf000, 0x4000, 9), closed), nullptr);
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].mapped, &m3);
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(c.clear().size(), 1u);
}

TEST(IpcCache, EvictsLeastRecentlyUsed) {
    gpu::ipc_cache c(2);
    std::vector<gpu::ipc_cache::entry> closed;
    int m[3];
    c.insert(0, exp_of(0x1000, 0x100, 1), &m[0], closed);
    c.insert(0, exp_of(0x2000, 0x100, 2), &m[1], closed);
    EXPECT_EQ(c.find(0, exp_of(0x1000, 0x100, 1), closed), &m[0]);  // now the most recent
    c.insert(0, exp_of(0x3000, 0x100, 3), &m[2], closed);
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].mapped, &m[1]);
    EXPECT_EQ(c.evicted, 1u);
}

// --- the reduction combine on the CPU (gpu/reduce_cpu.hpp), which the sim device runs and the
// CUDA kernel matches bit for bit -------------------------------------------------------------
#include "gpu/reduce_cpu.hpp"

namespace {
uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
}  // namespace

TEST(ReduceCpu, HalfConversionRoundsToNearestEven) {
    using namespace hgas::gpu::cpu;
    EXPECT_EQ(float_to_half(1.0f), 0x3c00);
    EXPECT_EQ(float_to_half(-2.0f), 0xc000);
    EXPECT_EQ(float_to_half(65504.0f), 0x7bff);                // the largest half
    EXPECT_EQ(float_to_half(65519.0f), 0x7bff);                // below the halfway point to 65536
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00);                // halfway, odd mantissa: up to inf
    EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);      // halfway between 1 and 1+2^-10: even
    EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3c02);      // halfway, odd below: up
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);   // the smallest subnormal
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);   // halfway to it: even (zero)
    EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);   // 1.5 units: up to 2
    EXPECT_EQ(float_to_half(-0.0f), 0x8000);
    EXPECT_EQ(float_to_half(float_of(0x7fc00000u)) & 0x7e00, 0x7e00);  // a quiet nan stays a nan
    for (uint32_t h = 0; h < 0x7c00; ++h)  // every finite half round-trips
        ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
    EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
}

TEST(ReduceCpu, Bfloat16RoundsToNearestEven) {
    using namespace hgas::gpu::cpu;
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bf16(float_of(0x3f808000u)), 0x3f80);  // halfway, even below: down
    EXPECT_EQ(float_to_bf16(float_of(0x3f818000u)), 0x3f82);  // halfway, odd below: up
    EXPECT_EQ(float_to_bf16(float_of(0x3f808001u)), 0x3f81);  // past halfway: up
    EXPECT_EQ(bits_of(bf16_to_float(0x4049)), 0x40490000u);
}

TEST(ReduceCpu, EveryTypeAndOp) {
    using hgas::gpu::reduce_cpu;
    int8_t a8[2] = {100, -128}, b8[2] = {100, -1};
    ASSERT_TRUE(reduce_cpu(a8, b8, 2, HGAS_INT8, HGAS_OP_SUM, false));
    EXPECT_EQ(a8[0], static_cast<int8_t>(-56));  // wraps around
    EXPECT_EQ(a8[1], 127);
    uint16_t u16[2] = {3, 0xffff}, v16[2] = {0xfffe, 2};
    ASSERT_TRUE(reduce_cpu(u16, v16, 2, HGAS_UINT16, HGAS_OP_MIN, false));
    EXPECT_EQ(u16[0], 3);
    EXPECT_EQ(u16[1], 2);
    int16_t p16[1] = {300}, q16[1] = {300};
    ASSERT_TRUE(reduce_cpu(p16, q16, 1, HGAS_INT16, HGAS_OP_PROD, false));
    EXPECT_EQ(p16[0], static_cast<int16_t>(90000 & 0xffff));
    uint8_t x8[1] = {0xf0}, y8[1] = {0x3c};
    ASSERT_TRUE(reduce_cpu(x8, y8, 1, HGAS_UINT8, HGAS_OP_XOR, false));
    EXPECT_EQ(x8[0], 0xcc);
    // half: 2048 + 1 is not a half; the sum rounds to even (2048), and 1 + 2^-11 likewise.
    uint16_t h[2] = {0x6800 /* 2048 */, 0x3c00 /* 1 */}, g[2] = {0x3c00, 0x1000 /* 2^-11 */};
    ASSERT_TRUE(reduce_cpu(h, g, 2, HGAS_FLOAT16, HGAS_OP_SUM, false));
    EXPECT_EQ(h[0], 0x6800);
    EXPECT_EQ(h[1], 0x3c00);
    uint16_t bm[1] = {0x3f80 /* 1 */}, bn[1] = {0xc000 /* -2 */};
    ASSERT_TRUE(reduce_cpu(bm, bn, 1, HGAS_BFLOAT16, HGAS_OP_MAX, false));
    EXPECT_EQ(bm[0], 0x3f80);
    ASSERT_TRUE(reduce_cpu(bm, bn, 1, HGAS_BFLOAT16, HGAS_OP_PROD, true));
    EXPECT_EQ(bm[0], 0xc000);
    double d[1] = {1.5}, e[1] = {2.25};
    ASSERT_TRUE(reduce_cpu(d, e, 1, HGAS_DOUBLE, HGAS_OP_SUM, true));
    EXPECT_EQ(d[0], 3.75);
    EXPECT_FALSE(reduce_cpu(d, e, 1, 12, HGAS_OP_SUM, false));  // not an hgas_dtype_t
    EXPECT_EQ(hgas::gpu::reduce_dtype_size(HGAS_BFLOAT16), 2u);
    EXPECT_EQ(hgas::gpu::reduce_dtype_size(HGAS_INT8), 1u);
    EXPECT_EQ(hgas::gpu::reduce_dtype_size(99), 0u);
}

// The combine runs whole blocks as vector code and the rest element by element: every type,
// operator and order, counts around the block size, buffers off alignment, random bit patterns
// (NaNs of every payload among the floats, and some placed on purpose) -- the same bytes as
// combining each element on its own.
namespace {
template <class T>
void combine_one_by_one(unsigned char *io, const unsigned char *ip, size_t count, int op, bool rev) {
    for (size_t i = 0; i < count; ++i) {
        T a, b;
        std::memcpy(&a, io + i * sizeof(T), sizeof(T));
        std::memcpy(&b, ip + i * sizeof(T), sizeof(T));
        const T c = rev ? hgas::gpu::cpu::combine<T>(b, a, op) : hgas::gpu::cpu::combine<T>(a, b, op);
        std::memcpy(io + i * sizeof(T), &c, sizeof(T));
    }
}
void combine_reference(unsigned char *io, const unsigned char *ip, size_t count, int type, int op, bool rev) {
    using namespace hgas::gpu::cpu;
    switch (type) {
    case HGAS_INT8: return combine_one_by_one<int8_t>(io, ip, count, op, rev);
    case HGAS_INT16: return combine_one_by_one<int16_t>(io, ip, count, op, rev);
    case HGAS_INT32: return combine_one_by_one<int32_t>(io, ip, count, op, rev);
    case HGAS_INT64: return combine_one_by_one<int64_t>(io, ip, count, op, rev);
    case HGAS_UINT8: return combine_one_by_one<uint8_t>(io, ip, count, op, rev);
    case HGAS_UINT16: return combine_one_by_one<uint16_t>(io, ip, count, op, rev);
    case HGAS_UINT32: return combine_one_by_one<uint32_t>(io, ip, count, op, rev);
    case HGAS_UINT64: return combine_one_by_one<uint64_t>(io, ip, count, op, rev);
    case HGAS_FLOAT: return combine_one_by_one<float>(io, ip, count, op, rev);
    case HGAS_DOUBLE: return combine_one_by_one<double>(io, ip, count, op, rev);
    case HGAS_FLOAT16: return combine_one_by_one<half_t>(io, ip, count, op, rev);
    case HGAS_BFLOAT16: return combine_one_by_one<bf16_t>(io, ip, count, op, rev);
    }
}
}  // namespace

TEST(ReduceCpu, BlocksMatchElementByElement) {
    const int types[] = {HGAS_INT8,   HGAS_INT16,  HGAS_INT32, HGAS_INT64,  HGAS_UINT8,   HGAS_UINT16,
                         HGAS_UINT32, HGAS_UINT64, HGAS_FLOAT, HGAS_DOUBLE, HGAS_FLOAT16, HGAS_BFLOAT16};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        return seed;
    };
    for (int type : types) {
        const size_t es = hgas::gpu::reduce_dtype_size(type);
        const bool fp = hgas::gpu::reduce_dtype_is_float(type);
        const int nops = fp ? 4 : 7;  // SUM, MIN, MAX, PROD; the bitwise ops on integers
        for (int op = 0; op < nops; ++op)
            for (bool rev : {false, true})
                for (size_t count : {size_t{1}, size_t{15}, size_t{16}, size_t{63}, size_t{64}, size_t{65},
                                     size_t{129}, size_t{1000}})
                    for (size_t skew : {size_t{0}, size_t{1}, size_t{3}}) {
                        std::vector<unsigned char> a(count * es + 8), b(count * es + 8);
                        for (auto &x : a) x = static_cast<unsigned char>(next());
                        for (auto &x : b) x = static_cast<unsigned char>(next());
                        if (fp && count > 2) {  // NaNs with their own payloads, in both operands
                            std::memset(a.data() + skew + es, 0xff, es);
                            std::memset(b.data() + skew + 2 * es, 0x7f, es);
                            std::memset(a.data() + skew + 2 * es, 0xff, es);
                        }
                        std::vector<unsigned char> want = a;
                        combine_reference(want.data() + skew, b.data() + skew, count, type, op, rev);
                        ASSERT_TRUE(hgas::gpu::reduce_cpu(a.data() + skew, b.data() + skew, count, type, op, rev));
                        ASSERT_EQ(std::memcmp(a.data(), want.data(), a.size()), 0)
                            << "type " << type << " op " << op << " rev " << rev << " count " << count << " skew "
                            << skew;
                    }
    }
}

// When the copy agent stays off by default: only where rank processes time-slice a GPU.
TEST(GpuSharing, TimeSlicedOnlyWhereProcessesOutnumberGpusWithoutMps) {
    using hgas::gpu::gpu_share;
    using hgas::gpu::time_sliced;
    EXPECT_FALSE(time_sliced(gpu_share{1, 1, 1, false}));  // one rank, one GPU
    EXPECT_FALSE(time_sliced(gpu_share{2, 1, 2, false}));  // a GPU per rank
    EXPECT_TRUE(time_sliced(gpu_share{2, 1, 1, false}));   // two processes on one GPU
    EXPECT_FALSE(time_sliced(gpu_share{2, 1, 1, true}));   // ... under MPS
    EXPECT_FALSE(time_sliced(gpu_share{2, 2, 1, false}));  // two ranks as threads of one process
    EXPECT_TRUE(time_sliced(gpu_share{4, 2, 1, false}));   // two processes of two threads each
    EXPECT_FALSE(time_sliced(gpu_share{4, 2, 2, false}));  // ... with a GPU per process
    EXPECT_TRUE(time_sliced(gpu_share{3, 2, 1, false}));   // 3 ranks in 2 processes
    EXPECT_TRUE(time_sliced(gpu_share{16, 1, 8, false}));  // two processes per GPU of eight
    EXPECT_TRUE(time_sliced(gpu_share{4, 0, 1, false}));  // ranks_per_process 0 reads as 1
}

// --- the agent gate ---------------------------------------------------------------------------

// A copy agent as the kernel behaves: serves what is posted, exits a few hundred empty polls
// after its stop word is set (after one more look for work), and, when `idle_exit`, after many
// empty polls without it; a poster relaunches it when it has exited with work outstanding
// (cuda_device's agent_alive_check).
struct fake_agent {
    std::atomic<uint64_t> posted{0}, done{0};
    uint64_t stop = 0;
    std::atomic<bool> alive{false};
    bool idle_exit = false;
    std::thread t;
    ~fake_agent() {
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        if (t.joinable()) t.join();
    }
    void launch() {
        if (t.joinable()) t.join();
        alive = true;
        t = std::thread([this] {
            for (uint64_t idle = 0;;) {
                if (done.load() < posted.load()) {
                    done.fetch_add(1);
                    idle = 0;
                    continue;
                }
                if (++idle % 256 == 0 && (__atomic_load_n(&stop, __ATOMIC_ACQUIRE) || (idle_exit && idle > 100000)) &&
                    done.load() == posted.load())
                    break;
                std::this_thread::yield();  // the CI machine has two cores for all of these threads
            }
            alive = false;
        });
    }
    // One post and its completion, as a rank polling a signal word does back to back.
    void post_and_wait(gpu::agent_gate &g) {
        uint64_t s;
        {
            gpu::agent_gate::pass p(g);
            s = posted.fetch_add(1) + 1;
            if (!alive) launch();
        }
        while (done.load() < s) {
            gpu::agent_gate::pass p(g);
            if (!alive && done.load() < s) launch();
        }
    }
};

TEST(AgentGate, QuiescedStopsEveryAgentAndHoldsPostsUntilItReturns) {
    gpu::agent_gate g;
    std::vector<std::unique_ptr<fake_agent>> agents;
    for (int i = 0; i < 3; ++i) {
        agents.push_back(std::make_unique<fake_agent>());
        fake_agent *a = agents.back().get();
        g.add(a, &a->stop, [a] { return !a->alive.load(); });
    }
    std::atomic<bool> quit{false};
    std::vector<std::thread> posters;
    for (auto &a : agents)
        posters.emplace_back([&, a = a.get()] {
            while (!quit) a->post_and_wait(g);
        });
    // The agents exit only when told to (no idle exit); each quiesced call must find them all
    // exited and no post getting through while it runs.
    for (int k = 0; k < 20; ++k) {
        // Every poster is posting again (its agent relaunched) before the next call.
        std::vector<uint64_t> last;
        for (auto &a : agents) last.push_back(a->posted.load());
        for (size_t i = 0; i < agents.size(); ++i)
            while (agents[i]->posted.load() < last[i] + 2) std::this_thread::sleep_for(std::chrono::microseconds(100));
        g.quiesced(5.0, [&] {
            std::vector<uint64_t> before;
            for (auto &a : agents) {
                EXPECT_FALSE(a->alive) << "an agent still runs inside quiesced (round " << k << ")";
                EXPECT_EQ(a->done.load(), a->posted.load()) << "posted work was left undone";
                before.push_back(a->posted.load());
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            for (size_t i = 0; i < agents.size(); ++i)
                EXPECT_EQ(agents[i]->posted.load(), before[i]) << "a post passed the closed gate";
        });
    }
    quit = true;
    for (auto &t : posters) t.join();
    EXPECT_EQ(g.quiesces(), 20u);
    for (auto &a : agents) {
        EXPECT_EQ(a->done.load(), a->posted.load());
        EXPECT_EQ(__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE), 0u) << "the stop word was not lifted";
    }
    EXPECT_EQ(g.bypasses(), 0u);
    for (auto &a : agents) g.remove(a.get());
}

// A call that waits for something only a post brings (a kernel that needs a proxied signal):
// the post goes through after bypass_ms instead of waiting for the call, and the call ends.
TEST(AgentGate, APostDoesNotWaitForACallThatWaitsForIt) {
    gpu::agent_gate g;
    fake_agent a;
    g.add(&a, &a.stop, [&a] { return !a.alive.load(); });
    a.post_and_wait(g);
    std::atomic<bool> want{false};
    std::thread poster([&] {
        while (!want) std::this_thread::yield();
        a.post_and_wait(g);  // reaches the gate while the call below holds it closed
    });
    bool served = false;
    g.quiesced(5.0, [&] {
        want = true;
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (a.done.load() < 2 && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        served = a.done.load() >= 2;
    });
    poster.join();
    EXPECT_TRUE(served) << "the post waited for the call that waited for it";
    EXPECT_GE(g.bypasses(), 1u);
    g.remove(&a);
}

TEST(AgentGate, NestedOnOneThreadAndAStuckAgentDoNotHang) {
    gpu::agent_gate g;
    fake_agent a;
    g.add(&a, &a.stop, [&a] { return !a.alive.load(); });
    a.post_and_wait(g);
    int ran = 0;
    g.quiesced(5.0, [&] {
        EXPECT_FALSE(a.alive);
        g.quiesced(5.0, [&] { ++ran; });  // a free inside teardown's quiesced call
        EXPECT_EQ(__atomic_load_n(&a.stop, __ATOMIC_ACQUIRE), 1u) << "the inner call reopened the gate";
        ++ran;
    });
    EXPECT_EQ(ran, 2);
    EXPECT_EQ(__atomic_load_n(&a.stop, __ATOMIC_ACQUIRE), 0u);
    a.post_and_wait(g);  // relaunched after the call
    EXPECT_EQ(a.done.load(), 2u);
    // An agent that never stops (a stuck kernel): the call still runs, after the wait.
    bool stuck_ran = false;
    g.add(&stuck_ran, &a.stop, [] { return false; });
    const int r = g.quiesced(0.05, [&] {
        stuck_ran = true;
        return 7;
    });
    EXPECT_TRUE(stuck_ran);
    EXPECT_EQ(r, 7);
    g.remove(&stuck_ran);
    g.remove(&a);
    // The closing thread's own post inside its call goes through at once.
    g.quiesced(5.0, [&] { a.post_and_wait(g); });
    EXPECT_EQ(a.done.load(), 3u);
    EXPECT_EQ(g.bypasses(), 0u);
}

