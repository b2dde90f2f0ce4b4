// The automatic registration cache (HGAS_REG_CACHE=auto, src/gpu/reg_policy.hpp): user host
// buffers of at least HGAS_REG_CACHE_MIN bytes that are one end of a device copy are cached on
// first use; checked through the internal query (src/api/testing.h) and with every value.
//
// With kind sim the entries are recorded only; with kind cuda (the gpu-labelled variant) they
// are cudaHostRegister'ed and the invalidation test is the one that matters: a range unmapped
// and mapped again with new pages must be copied from the new pages.
//
// The configurations (tests/ranks/CMakeLists.txt) set HGAS_REG_CACHE, _MIN and _MAX; the tests
// read them to know what to expect. Without memory hooks (a build without UCX) the cache is
// off whatever the setting says, and the tests expect that.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/testing.h"
#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }

hgas_kind_t device_kind() {
    const char *e = std::getenv("HGAS_TEST_KIND");
    return e && std::strcmp(e, "cuda") == 0 ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
}

size_t env_bytes(const char *name, size_t def) {
    const char *e = std::getenv(name);
    if (!e || !*e) return def;
    char *end;
    size_t v = std::strtoull(e, &end, 10);
    if (*end == 'K') v <<= 10;
    if (*end == 'M') v <<= 20;
    if (*end == 'G') v <<= 30;
    return v;
}

const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
const size_t min_bytes = env_bytes("HGAS_REG_CACHE_MIN", 1 << 20);
const size_t reuse_min = env_bytes("HGAS_REG_CACHE_REUSE_MIN", 4 << 10);
const size_t reuse_count = env_bytes("HGAS_REG_CACHE_REUSE", 2);

hgasi_reg_info_t query(const void *p, size_t n) {
    hgasi_reg_info_t i{};
    EXPECT_EQ(hgasi_reg_cache_query(p, n, &i), HGAS_OK) << hgas_last_error();
    return i;
}

// Whether this job caches: auto (the default) where the build has memory hooks.
bool expect_active() {
    const char *m = std::getenv("HGAS_REG_CACHE");
    return query(nullptr, 0).active && !(m && std::strcmp(m, "off") == 0);
}

// Anonymous pages, page-aligned, so that the tests know the enclosing range exactly, between
// two inaccessible guard pages, so that the ranges of two tests never touch (touching cached
// entries merge). `at`: the address the usable pages must have (MAP_FIXED_NOREPLACE).
char *map_pages(size_t n, void *at = nullptr) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_FIXED_NOREPLACE
    if (at) flags |= MAP_FIXED_NOREPLACE;
#endif
    void *p = mmap(at ? static_cast<char *>(at) - page : nullptr, n + 2 * page, PROT_NONE, flags, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    char *b = static_cast<char *>(p) + page;
    if (mprotect(b, n, PROT_READ | PROT_WRITE) != 0) return nullptr;
    return b;
}
int unmap_pages(char *b, size_t n) { return munmap(b - page, n + 2 * page); }

void fill(char *p, size_t n, int salt) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(pattern(me(), salt, i));
}

// Puts [src, src+n) into this rank's device buffer `dev`, gets it back into `back`, compares.
void round_trip(const char *src, char *back, size_t n, void *dev, const char *what) {
    HGAS_OK_OR_FAIL(hgas_put(gp(dev, me()), src, n));
    std::memset(back, 0x5a, n);
    HGAS_OK_OR_FAIL(hgas_get(back, gp(dev, me()), n));
    ASSERT_EQ(std::memcmp(src, back, n), 0) << what;
}

class RegCache : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(hgas_kind_available(device_kind())) << "kind " << hgas_kind_name(device_kind()) << " is off";
        HGAS_OK_OR_FAIL(hgas_malloc_kind(cap, device_kind(), &dev));  // collective: every rank runs each test
        back = map_pages(cap);
        ASSERT_NE(back, nullptr);
    }
    void TearDown() override {
        if (dev) {
            EXPECT_EQ(hgas_free(dev), HGAS_OK) << hgas_last_error();
        }
        if (back) unmap_pages(back, cap);
    }
    static constexpr size_t cap = 3 << 20;
    void *dev = nullptr;
    char *back = nullptr;  // the gets' destination: cached too (it is a user buffer)
};

}  // namespace

TEST_F(RegCache, CachesUserBuffersAtLeastTheThreshold) {
    const size_t n = min_bytes + 13;
    char *buf = map_pages(n + page);
    ASSERT_NE(buf, nullptr);
    char *src = buf + 100;  // unaligned: the entry is the enclosing pages
    fill(src, n, 1);
    const hgasi_reg_info_t before = query(src, n);
    ASSERT_FALSE(before.found);
    round_trip(src, back, n, dev, "first use");
    hgasi_reg_info_t i = query(src, n);
    if (!expect_active()) {
        EXPECT_FALSE(i.found) << "HGAS_REG_CACHE=off (or no hooks) must cache nothing";
        EXPECT_EQ(i.cached_bytes, 0u);
        EXPECT_EQ(i.added, 0u);
    } else {
        ASSERT_TRUE(i.found);
        EXPECT_TRUE(i.cached);
        EXPECT_EQ(i.base, buf);
        EXPECT_EQ(i.size, (n + 100 + page - 1) / page * page);
        EXPECT_EQ(i.pinned, device_kind() == HGAS_KIND_CUDA ? 1 : 0);
        // Used again: a hit, no new entry.
        fill(src, n, 2);
        round_trip(src, back, n, dev, "second use");
        hgasi_reg_info_t j = query(src, n);
        EXPECT_GE(j.hits, i.hits + 1);
        EXPECT_EQ(j.added, i.added);
        // Below the threshold: not cached.
        char *small = map_pages(page * 2);
        ASSERT_NE(small, nullptr);
        if (min_bytes > 1) {
            fill(small, std::min(min_bytes - 1, page * 2), 3);
            round_trip(small, back, std::min(min_bytes - 1, page * 2), dev, "small");
            EXPECT_FALSE(query(small, 1).found);
        }
        unmap_pages(small, page * 2);
    }
    ASSERT_EQ(unmap_pages(buf, n + page), 0);
    EXPECT_FALSE(query(buf, n).found) << "unmapped pages must leave the cache";
}

// A buffer below HGAS_REG_CACHE_MIN but of HGAS_REG_CACHE_REUSE_MIN or more is registered at
// its HGAS_REG_CACHE_REUSE-th transfer, not before; one below HGAS_REG_CACHE_REUSE_MIN never.
// With the cache off (or no reuse range configured) nothing below HGAS_REG_CACHE_MIN is ever
// registered, however often it is used.
TEST_F(RegCache, SmallerBufferCachedWhenReused) {
    const bool reuse_on = expect_active() && reuse_count > 0 && reuse_min < min_bytes;
    const size_t uses = reuse_count > 0 ? reuse_count : 3;
    // Unaligned end: the entry is the enclosing pages.
    const size_t n = reuse_on ? std::max(reuse_min, page) + 5 : std::max(min_bytes / 2, page) + 5;
    ASSERT_LT(n, min_bytes);
    char *buf = map_pages(n + page);
    ASSERT_NE(buf, nullptr);
    const hgasi_reg_info_t before = query(nullptr, 0);
    for (size_t use = 1; use <= uses; ++use) {
        fill(buf, n, static_cast<int>(10 + use));
        round_trip(buf, back, n, dev, "reused buffer");
        const hgasi_reg_info_t i = query(buf, n);
        if (!reuse_on || use < reuse_count) {
            EXPECT_FALSE(i.found) << "registered at use " << use << (reuse_on ? "" : " with no reuse range");
        } else {
            ASSERT_TRUE(i.found) << "not registered at use " << use;
            EXPECT_TRUE(i.cached);
            EXPECT_EQ(i.base, buf);
            EXPECT_EQ(i.size, (n + page - 1) / page * page);
            EXPECT_EQ(i.pinned, device_kind() == HGAS_KIND_CUDA ? 1 : 0);
            EXPECT_GE(i.added, before.added + 1);
            // The gets' destination, the first n bytes of `back`, was used in turn with `buf`
            // as often: counted apart, it is registered too (a direct-mapped table of recent
            // ranges once let two such buffers evict each other's count at every use).
            EXPECT_TRUE(query(back, n).found) << "the get destination, used " << use << " times, is not registered";
        }
    }
    // One below HGAS_REG_CACHE_REUSE_MIN is never registered, however often it is used.
    if (reuse_min > 1) {
        const size_t tn = reuse_min - 1, tpages = (tn + page - 1) / page * page;
        char *tiny = map_pages(tpages);
        ASSERT_NE(tiny, nullptr);
        for (size_t use = 0; use < uses + 2; ++use) round_trip(tiny, back, tn, dev, "tiny buffer");
        EXPECT_FALSE(query(tiny, 1).found) << "a buffer of " << tn << " B was registered";
        unmap_pages(tiny, tpages);
    }
    unmap_pages(buf, n + page);
}

TEST_F(RegCache, UnmappedAndMappedAgainCopiesTheNewPages) {
    const size_t n = std::max(min_bytes, page * 4);
    char *a = map_pages(n);
    ASSERT_NE(a, nullptr);
    fill(a, n, 10);
    round_trip(a, back, n, dev, "old pages");
    const hgasi_reg_info_t old = query(a, n);
    EXPECT_EQ(old.found && old.cached, expect_active());
    ASSERT_EQ(unmap_pages(a, n), 0);
    // The entry is gone at once (an unmap is reported before it happens).
    EXPECT_FALSE(query(a, n).found);
    char *b = map_pages(n, a);
    if (b != a) {  // the kernel did not give the same range back: still a valid test of the rest
        if (b) munmap(b - page, n + 2 * page);  // wherever the kernel put it
        GTEST_SKIP() << "could not map the same address again";
    }
    fill(b, n, 11);  // different contents, same virtual range
    HGAS_OK_OR_FAIL(hgas_put(gp(dev, me()), b, n));
    std::memset(back, 0, n);
    HGAS_OK_OR_FAIL(hgas_get(back, gp(dev, me()), n));
    for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(back[i], static_cast<char>(pattern(me(), 11, i))) << "byte " << i << ": the old pages were copied";
    const hgasi_reg_info_t now = query(b, n);
    if (expect_active()) {
        EXPECT_GE(now.invalidated, old.invalidated + 1) << "the old entry was not unregistered";
        EXPECT_TRUE(now.found && now.cached) << "the new pages are cached again";
    }
    // madvise(DONTNEED) drops pages too (they read as zeros afterwards): the entry goes.
    ASSERT_EQ(madvise(b, page, MADV_DONTNEED), 0);
    EXPECT_FALSE(query(b, n).found);
    ASSERT_EQ(unmap_pages(b, n), 0);
}

TEST_F(RegCache, NeighboursMergeIntoOneEntry) {
    if (!expect_active()) GTEST_SKIP() << "the cache is off here (HGAS_REG_CACHE=off, or a build without UCX, whose memory hooks it needs)";
    const size_t half = (min_bytes + page - 1) / page * page;
    char *buf = map_pages(2 * half);
    ASSERT_NE(buf, nullptr);
    fill(buf, 2 * half, 20);
    round_trip(buf, back, half, dev, "first half");
    const hgasi_reg_info_t i = query(buf, half);
    round_trip(buf + half, back, half, dev, "second half (adjacent)");
    const hgasi_reg_info_t j = query(buf, 2 * half);
    ASSERT_TRUE(j.found);
    EXPECT_EQ(j.base, buf);
    EXPECT_EQ(j.size, 2 * half);
    EXPECT_EQ(j.merged, i.merged + 1);
    EXPECT_EQ(j.entries, i.entries) << "one entry replaced another";
    ASSERT_EQ(unmap_pages(buf, 2 * half), 0);
}

TEST_F(RegCache, ExplicitRegistrationWinsAndIsUntouched) {
    const size_t n = std::max(min_bytes, page * 4);
    char *buf = map_pages(2 * n);
    ASSERT_NE(buf, nullptr);
    fill(buf, 2 * n, 30);
    HGAS_OK_OR_FAIL(hgas_register(buf, n));
    const hgasi_reg_info_t i = query(buf, n);
    round_trip(buf, back, n, dev, "explicitly registered");
    hgasi_reg_info_t j = query(buf, n);
    ASSERT_TRUE(j.found);
    EXPECT_FALSE(j.cached);
    EXPECT_EQ(j.base, buf);  // the user's entry as it was (the cache added only `back`)
    EXPECT_EQ(j.size, n);
    // A transfer straddling the explicit entry: not cached (no merge into the user's entry), correct.
    round_trip(buf + n / 2, back, n, dev, "straddling");
    j = query(buf + n, n);
    EXPECT_FALSE(j.found);
    if (expect_active()) {
        EXPECT_GT(j.skipped, i.skipped);
    }
    // Explicit entries are the user's: an unmap inside it leaves it (hgas_deregister is theirs).
    ASSERT_EQ(madvise(buf, page, MADV_DONTNEED), 0);
    j = query(buf, n);
    EXPECT_TRUE(j.found && !j.cached);
    HGAS_OK_OR_FAIL(hgas_deregister(buf));
    ASSERT_EQ(unmap_pages(buf, 2 * n), 0);
}

// hgas_register of pages the cache holds: the cache's entry gives way (it was the cache's, not
// the user's), the user's entry is exact, and hgas_deregister refuses the cache's entries.
TEST_F(RegCache, ExplicitRegistrationReplacesCachedEntries) {
    if (!expect_active()) GTEST_SKIP() << "the cache is off here (HGAS_REG_CACHE=off, or a build without UCX, whose memory hooks it needs)";
    const size_t n = (std::max(min_bytes, page * 4) + page - 1) / page * page;
    char *buf = map_pages(n);
    ASSERT_NE(buf, nullptr);
    fill(buf, n, 50);
    round_trip(buf, back, n, dev, "cached first");
    hgasi_reg_info_t j = query(buf, n);
    ASSERT_TRUE(j.found && j.cached);
    EXPECT_EQ(hgas_deregister(buf), HGAS_ERR_INVALID_ARG) << "a cached entry is not the user's to deregister";
    HGAS_OK_OR_FAIL(hgas_register(buf + page, n - 2 * page));
    j = query(buf + page, n - 2 * page);
    ASSERT_TRUE(j.found);
    EXPECT_FALSE(j.cached);
    EXPECT_EQ(j.base, buf + page);
    EXPECT_EQ(j.size, n - 2 * page);
    fill(buf, n, 51);
    round_trip(buf + page, back, n - 2 * page, dev, "registered over the cached range");
    round_trip(buf, back, n, dev, "straddling the user's registration");
    HGAS_OK_OR_FAIL(hgas_deregister(buf + page));
    ASSERT_EQ(unmap_pages(buf, n), 0);
}

TEST_F(RegCache, EvictsLeastRecentlyUsedBeyondTheLimit) {
    if (!expect_active()) GTEST_SKIP() << "the cache is off here (HGAS_REG_CACHE=off, or a build without UCX, whose memory hooks it needs)";
    const size_t max = env_bytes("HGAS_REG_CACHE_MAX", size_t(4) << 30);
    const size_t n = (min_bytes + page - 1) / page * page;
    if (max >= 3 * n || max < n) GTEST_SKIP() << "HGAS_REG_CACHE_MAX must hold one buffer and less than three";
    char *bufs[3];
    for (int k = 0; k < 3; ++k) {
        bufs[k] = map_pages(n + page);  // a page of gap each: no merging
        ASSERT_NE(bufs[k], nullptr);
    }
    const hgasi_reg_info_t i = query(nullptr, 0);
    for (int k = 0; k < 3; ++k) {
        fill(bufs[k], n, 40 + k);
        HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dev, me()), bufs[k], n));  // in flight while others are evicted
        const hgasi_reg_info_t q = query(nullptr, 0);
        EXPECT_LE(q.cached_bytes, max);
    }
    HGAS_OK_OR_FAIL(hgas_quiet());
    const hgasi_reg_info_t j = query(nullptr, 0);
    EXPECT_GT(j.evicted, i.evicted);
    EXPECT_FALSE(query(bufs[0], n).found) << "the least recently used goes first";
    EXPECT_TRUE(query(bufs[2], n).found) << "the newest stays";
    HGAS_OK_OR_FAIL(hgas_get(back, gp(dev, me()), n));
    EXPECT_EQ(std::memcmp(back, bufs[2], n), 0);
    for (char *b : bufs) unmap_pages(b, n + page);
}
