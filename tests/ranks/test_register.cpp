// hgas_register / hgas_deregister: user host buffers (malloc'd, on the stack of a test, a
// global) registered and used as sources and destinations of every put/get form against
// device memory of every rank (HGAS_TEST_KIND: sim by default, cuda on a GPU machine), with
// value checks; and the bad inputs, each with its message.
//
// With kind sim the registration is recorded only (nothing to pin); with kind cuda it is a
// cudaHostRegister and the copies run from page-locked memory.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

hgas_kind_t device_kind() {
    const char *e = std::getenv("HGAS_TEST_KIND");
    return e && std::strcmp(e, "cuda") == 0 ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
}

unsigned char pat(int w, int t, size_t i, int salt) { return pattern(w, t, i + salt * 977); }

// A global: the program's static data may be registered too. Ranks that are threads of one
// process (hgasrun --threads T) share the process's globals, so each rank thread takes its own
// block of the array (ranks of a process are numbered consecutively: rank % T differs); with
// one block for all of them, rank threads wrote their patterns over each other's and read
// wrong bytes back (and the rank that failed left its peers waiting in a barrier).
constexpr size_t kStaticBlock = 1 << 16;
constexpr int kMaxRankThreads = 8;
unsigned char g_static_bufs[kMaxRankThreads][kStaticBlock];

int rank_threads() {
    const char *t = std::getenv("HGAS_THREADS");
    return t && std::atoi(t) > 1 ? std::atoi(t) : 1;
}

unsigned char (&my_static_buf())[kStaticBlock] {
    EXPECT_LE(rank_threads(), kMaxRankThreads) << "raise kMaxRankThreads";
    return g_static_bufs[me() % std::min(rank_threads(), kMaxRankThreads)];
}

// One range that every rank thread of a process registers (and its content, written before
// main, so that it is never written while ranks read it).
std::vector<unsigned char> &g_shared_src() {
    static std::vector<unsigned char> v = [] {
        std::vector<unsigned char> b(256 << 10);
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 13 + (i >> 9));
        return b;
    }();
    return v;
}
[[maybe_unused]] const bool g_shared_src_ready = !g_shared_src().empty();

bool has(const char *text) { return std::strstr(hgas_last_error(), text) != nullptr; }

void check_put_get(unsigned char *src, unsigned char *back, size_t maxsz, const char *what) {
    const hgas_kind_t D = device_kind();
    const size_t sizes[] = {8, 4097, maxsz};
    void *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxsz * n(), D, &dst));
    int salt = 0;
    for (size_t sz : sizes) {
        for (int form = 0; form < 2; ++form, ++salt) {  // 0: blocking, 1: _nbi + quiet
            for (int t = 0; t < n(); ++t) {
                for (size_t i = 0; i < sz; ++i) src[i] = pat(me(), t, i, salt);
                hgas_gptr_t g = gp(static_cast<char *>(dst) + maxsz * me(), t);
                if (form) {
                    HGAS_OK_OR_FAIL(hgas_put_nbi(g, src, sz));
                    HGAS_OK_OR_FAIL(hgas_quiet());  // src is rewritten for the next target
                } else {
                    HGAS_OK_OR_FAIL(hgas_put(g, src, sz));
                }
            }
            HGAS_OK_OR_FAIL(hgas_barrier());
            // Every writer's block, read back from this rank's device memory into `back`.
            for (int w = 0; w < n(); ++w) {
                hgas_gptr_t g = gp(static_cast<char *>(dst) + maxsz * w, me());
                std::memset(back, 0xee, sz);
                if (form) {
                    HGAS_OK_OR_FAIL(hgas_get_nbi(back, g, sz));
                    HGAS_OK_OR_FAIL(hgas_quiet());
                } else {
                    HGAS_OK_OR_FAIL(hgas_get(back, g, sz));
                }
                for (size_t i = 0; i < sz; ++i)
                    ASSERT_EQ(back[i], pat(w, me(), i, salt))
                        << what << ": size " << sz << " form " << form << " writer " << w << " byte " << i;
            }
            // And from every other rank's memory (remote get into the registered buffer).
            const int t = (me() + 1) % n();
            hgas_gptr_t g = gp(static_cast<char *>(dst) + maxsz * me(), t);
            std::memset(back, 0, sz);
            HGAS_OK_OR_FAIL(hgas_get(back, g, sz));
            for (size_t i = 0; i < sz; ++i)
                ASSERT_EQ(back[i], pat(me(), t, i, salt)) << what << ": remote get from rank " << t << " byte " << i;
            HGAS_OK_OR_FAIL(hgas_barrier());
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

}  // namespace

TEST(Register, PutGetWithRegisteredHeapBuffers) {
    ASSERT_TRUE(hgas_kind_available(device_kind())) << "kind " << hgas_kind_name(device_kind()) << " is off";
    const size_t maxsz = (1 << 20) + 13;
    std::vector<unsigned char> src(maxsz), back(maxsz);
    HGAS_OK_OR_FAIL(hgas_register(src.data(), src.size()));
    HGAS_OK_OR_FAIL(hgas_register(back.data(), back.size()));
    check_put_get(src.data(), back.data(), maxsz, "malloc'd buffers");
    // A part of a registered range is registered too: offsets into both buffers.
    check_put_get(src.data() + 4099, back.data() + 1, maxsz - 4099, "inner parts");
    HGAS_OK_OR_FAIL(hgas_deregister(src.data()));
    HGAS_OK_OR_FAIL(hgas_deregister(back.data()));
    // Unregistered again: the same transfers still work (pageable copies).
    check_put_get(src.data(), back.data(), maxsz, "after deregistering");
}

// A host buffer that starts in a registered page and runs into one that is not, or the other
// way round. The GPU's copy agent reaches host memory through its registration, and taking the
// first byte's registration for the whole range made it read an unmapped page: an illegal memory
// access that ended the context (a 128-byte put from a vector whose page the registration
// cache held, on an H200). The pages are fresh (mmap), so no earlier registration covers the
// neighbours of the registered one. Each range is put into the next rank's device memory and
// got back, by that rank, from its own into the same straddling range; the bytes around the
// range must stay as they were. (On one GPU that several rank processes share, the agent does
// not serve host memory: there the 1-rank run is the one that reaches the agent.)
TEST(Register, RangesRunningPastTheEdgeOfARegistration) {
    const hgas_kind_t D = device_kind();
    ASSERT_TRUE(hgas_kind_available(D));
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *m = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    unsigned char *b = static_cast<unsigned char *>(m);
    HGAS_OK_OR_FAIL(hgas_register(b + page, page));  // the second page only
    void *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(4 * page, D, &dst));
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int t = (me() + 1) % n(), from = (me() + n() - 1) % n();
    // {offset, length}: across the registration's end, across its start, inside it, around it,
    // one byte past each edge.
    const std::pair<size_t, size_t> cases[] = {{2 * page - 64, 128}, {page - 64, 128}, {page + 100, 200},
                                               {page - 8, page + 16}, {2 * page - 1, 2}, {page - 1, 2}};
    int salt = 0;
    // EXPECT, not ASSERT: a failure still reaches every barrier and the cleanup, so no peer waits.
    for (auto [off, len] : cases) {
        SCOPED_TRACE("offset " + std::to_string(off) + " length " + std::to_string(len));
        ++salt;
        for (size_t i = 0; i < 4 * page; ++i) b[i] = pat(me(), t, i, salt);
        EXPECT_EQ(hgas_put(gp(dst, t), b + off, len), HGAS_OK) << hgas_last_error();
        EXPECT_EQ(hgas_barrier(), HGAS_OK) << hgas_last_error();
        std::memset(b, 0xee, 4 * page);
        EXPECT_EQ(hgas_get(b + off, gp(dst, me()), len), HGAS_OK) << hgas_last_error();
        size_t wrong = 0, first = 0;
        for (size_t i = 0; i < 4 * page; ++i) {
            const unsigned char want = i >= off && i < off + len ? pat(from, me(), i, salt) : 0xee;
            if (b[i] != want && !wrong++) first = i;
        }
        EXPECT_EQ(wrong, 0u) << "first wrong byte " << first << (first >= off && first < off + len
                                                                    ? " (put by rank " : " (outside the range; rank ")
                             << from << ")";
        EXPECT_EQ(hgas_barrier(), HGAS_OK) << hgas_last_error();
    }
    EXPECT_EQ(hgas_deregister(b + page), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(hgas_free(dst), HGAS_OK) << hgas_last_error();
    munmap(m, 4 * page);
}

TEST(Register, GlobalsAndHostTargets) {
    ASSERT_TRUE(hgas_kind_available(device_kind()));
    // The program's static data (its own segment in hgas) may be registered.
    unsigned char(&g_static_buf)[kStaticBlock] = my_static_buf();
    HGAS_OK_OR_FAIL(hgas_register(g_static_buf, sizeof g_static_buf));
    std::vector<unsigned char> back(sizeof g_static_buf);
    check_put_get(g_static_buf, back.data(), sizeof g_static_buf, "a registered global");
    // A registered buffer against host memory of every rank (the host-only paths).
    void *host;
    HGAS_OK_OR_FAIL(hgas_malloc(sizeof g_static_buf * n(), &host));
    for (int t = 0; t < n(); ++t) {
        for (size_t i = 0; i < sizeof g_static_buf; ++i) g_static_buf[i] = pat(me(), t, i, 99);
        HGAS_OK_OR_FAIL(hgas_put(gp(static_cast<char *>(host) + sizeof g_static_buf * me(), t), g_static_buf,
                                 sizeof g_static_buf));
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int w = (me() + n() - 1) % n();
    HGAS_OK_OR_FAIL(hgas_get(g_static_buf, gp(static_cast<char *>(host) + sizeof g_static_buf * w, me()),
                             sizeof g_static_buf));
    for (size_t i = 0; i < sizeof g_static_buf; ++i) ASSERT_EQ(g_static_buf[i], pat(w, me(), i, 99)) << i;
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(host));
    HGAS_OK_OR_FAIL(hgas_deregister(g_static_buf));
}

TEST(Register, BadInputGetsClearErrors) {
    const hgas_kind_t D = device_kind();
    // Page-aligned, so that the adjacent registrations below share no page (the GPU pins
    // whole pages: cudaHostRegister refuses a page that is registered already).
    std::unique_ptr<char, decltype(&std::free)> buf(static_cast<char *>(std::aligned_alloc(4096, 1 << 16)), &std::free);
    ASSERT_NE(buf, nullptr);
    char *b = buf.get();
    EXPECT_EQ(hgas_register(nullptr, 64), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("NULL")) << hgas_last_error();
    EXPECT_EQ(hgas_register(b, 0), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("size 0")) << hgas_last_error();
    EXPECT_EQ(hgas_register(b, SIZE_MAX), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("wraps")) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_register(b + 4096, 8192));
    // Overlaps: inside, straddling either end, around, the same range again.
    for (auto [off, len] : {std::pair<size_t, size_t>{5000, 10}, {0, 4097}, {12287, 100}, {0, 1 << 16}, {4096, 8192}}) {
        EXPECT_EQ(hgas_register(b + off, len), HGAS_ERR_INVALID_ARG) << off << "+" << len;
        EXPECT_TRUE(has("overlaps the registered range")) << hgas_last_error();
    }
    // Adjacent ranges are fine.
    HGAS_OK_OR_FAIL(hgas_register(b, 4096));
    HGAS_OK_OR_FAIL(hgas_register(b + 12288, 4096));
    // Deregistering: not the start, not registered, NULL, twice.
    EXPECT_EQ(hgas_deregister(b + 5000), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("is not its start")) << hgas_last_error();
    EXPECT_EQ(hgas_deregister(b + 20000), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("is not registered")) << hgas_last_error();
    EXPECT_EQ(hgas_deregister(nullptr), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("NULL")) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_deregister(b + 4096));
    EXPECT_EQ(hgas_deregister(b + 4096), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("is not registered")) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_deregister(b));
    HGAS_OK_OR_FAIL(hgas_deregister(b + 12288));
    // hgas's own memory: the host heaps (registered already) and device memory (needs none).
    void *heap;
    HGAS_OK_OR_FAIL(hgas_malloc(4096, &heap));
    EXPECT_EQ(hgas_register(heap, 4096), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("host heap")) << hgas_last_error();
    hgas_gptr_t local;
    HGAS_OK_OR_FAIL(hgas_alloc(256, &local));
    EXPECT_EQ(hgas_register(hgas_local_addr(local), 256), HGAS_ERR_INVALID_ARG);
    EXPECT_TRUE(has("host heap")) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_dealloc(local));
    if (hgas_kind_available(D)) {
        void *dev;
        HGAS_OK_OR_FAIL(hgas_malloc_kind(4096, D, &dev));
        EXPECT_EQ(hgas_register(dev, 4096), HGAS_ERR_INVALID_ARG);
        EXPECT_TRUE(has(hgas_kind_name(D))) << hgas_last_error();
        HGAS_OK_OR_FAIL(hgas_free(dev));
    }
    HGAS_OK_OR_FAIL(hgas_free(heap));
}

// Registrations are the rank's, and so are their releases: when ranks are threads of one
// process, each may register the same range, and one rank's hgas_deregister leaves the range
// registered for the others (a GPU pins pages per process: the pages stay page-locked until
// the last rank that registered them lets go). Every rank then copies from the range into the
// device memory of the next rank, and the values are checked.
TEST(Register, SameRangeOnEveryRankAndOneDeregisters) {
    ASSERT_TRUE(hgas_kind_available(device_kind()));
    std::vector<unsigned char> &src = g_shared_src();
    const size_t sz = src.size();
    HGAS_OK_OR_FAIL(hgas_register(src.data(), sz));
    void *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(sz, device_kind(), &dst));
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() % 2) {
        HGAS_OK_OR_FAIL(hgas_deregister(src.data()));  // still registered for the even ranks
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int t = (me() + 1) % n();
    HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dst, t), src.data(), sz));
    HGAS_OK_OR_FAIL(hgas_quiet());
    HGAS_OK_OR_FAIL(hgas_barrier());
    std::vector<unsigned char> back(sz, 0xee);
    HGAS_OK_OR_FAIL(hgas_get(back.data(), gp(dst, me()), sz));
    for (size_t i = 0; i < sz; ++i) ASSERT_EQ(back[i], src[i]) << "byte " << i << " (put by rank " << (me() + n() - 1) % n() << ")";
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() % 2 == 0) {
        HGAS_OK_OR_FAIL(hgas_deregister(src.data()));
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(Register, LeftRegisteredAtFinalize) {
    // Released by hgas_finalize (rank_main's), which must not fail because of it. Static: the
    // buffer outlives the registration.
    static std::vector<char> kept(1 << 20);
    HGAS_OK_OR_FAIL(hgas_register(kept.data(), kept.size()));
}
