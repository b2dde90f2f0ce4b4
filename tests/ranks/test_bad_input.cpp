// Bad input: every call rejects it with a clear status and message, and no byte is written
// anywhere (checked by a canary around the target on every rank).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

class BadInput : public testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(hgas_malloc(kSize, (void **)&buf_), HGAS_OK);
        std::memset(buf_, 0xAB, kSize);
        ASSERT_EQ(hgas_barrier(), HGAS_OK);
    }
    void TearDown() override {
        ASSERT_EQ(hgas_barrier(), HGAS_OK);
        for (size_t i = 0; i < kSize; ++i) ASSERT_EQ(buf_[i], 0xAB) << "byte " << i << " was written";
        ASSERT_EQ(hgas_free(buf_), HGAS_OK);
    }
    static constexpr size_t kSize = 4096;
    unsigned char *buf_ = nullptr;
};

void expect_message(const char *needle) {
    EXPECT_NE(std::strstr(hgas_last_error(), needle), nullptr) << "message: " << hgas_last_error();
}

TEST_F(BadInput, OutOfBoundsOffsetsAndLengths) {
    const int t = (me() + 1) % n();
    std::vector<unsigned char> src(1 << 20, 0x11);
    hgas_gptr_t g = gp(buf_, t);
    // past the end of the whole symmetric segment
    hgas_gptr_t far = g;
    far.offset = ~0ull - 4;
    EXPECT_EQ(hgas_put(far, src.data(), 8), HGAS_ERR_OUT_OF_BOUNDS);
    expect_message("leave segment");
    EXPECT_EQ(hgas_get(src.data(), far, 8), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(hgas_put_nbi(far, src.data(), 8), HGAS_ERR_OUT_OF_BOUNDS);
    hgas_handle_t h;
    EXPECT_EQ(hgas_put_nb(far, src.data(), 8, &h), HGAS_ERR_OUT_OF_BOUNDS);
    // a length that overflows offset + len
    EXPECT_EQ(hgas_put(g, src.data(), ~0ull), HGAS_ERR_OUT_OF_BOUNDS);
    // atomics and signals past the end
    int64_t v = 1, old;
    EXPECT_EQ(hgas_atomic_fetch_add64(far, v, &old), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(hgas_put_signal(g, src.data(), 8, far, 1, HGAS_SIGNAL_SET), HGAS_ERR_OUT_OF_BOUNDS);
}

TEST_F(BadInput, UnknownRanksSegmentsAndNullPointers) {
    std::vector<unsigned char> src(64, 0x22);
    hgas_gptr_t g = gp(buf_, 0);
    g.rank = n();  // one past the last rank
    EXPECT_EQ(hgas_put(g, src.data(), 8), HGAS_ERR_INVALID_ARG);
    expect_message("does not exist");
    g.rank = 0;
    g.segment = 77;  // a segment no rank has
    EXPECT_EQ(hgas_get(src.data(), g, 8), HGAS_ERR_INVALID_POINTER);
    EXPECT_EQ(hgas_put(hgas_gptr_null(), src.data(), 8), HGAS_ERR_INVALID_POINTER);
    hgas_gptr_t ok = gp(buf_, 0);
    EXPECT_EQ(hgas_put(ok, nullptr, 8), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_get(nullptr, ok, 8), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_put_nb(ok, src.data(), 8, nullptr), HGAS_ERR_INVALID_ARG);
    hgas_gptr_t out;
    EXPECT_EQ(hgas_ptr(buf_, -1, &out), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_ptr(buf_, n(), &out), HGAS_ERR_INVALID_ARG);
}

TEST_F(BadInput, ForeignPointers) {
    int on_stack = 0;
    hgas_gptr_t out;
    EXPECT_EQ(hgas_ptr(&on_stack, 0, &out), HGAS_ERR_INVALID_POINTER);
    expect_message("hgas_malloc");
    std::vector<uint64_t> heap_word(1);
    EXPECT_EQ(hgas_signal_wait_until(heap_word.data(), HGAS_CMP_EQ, 0, nullptr), HGAS_ERR_INVALID_POINTER);
    uint64_t v;
    EXPECT_EQ(hgas_signal_fetch(heap_word.data(), &v), HGAS_ERR_INVALID_POINTER);
    EXPECT_EQ(hgas_dealloc(hgas_gptr_null()), HGAS_ERR_INVALID_POINTER);
}

TEST_F(BadInput, MisalignedAtomicsAndSignals) {
    hgas_gptr_t g = gp(buf_ + 4, (me() + 1) % n());
    int64_t v = 1, old;
    EXPECT_EQ(hgas_atomic_fetch_add64(g, v, &old), HGAS_ERR_MISALIGNED);
    expect_message("not aligned");
    hgas_gptr_t g2 = gp(buf_ + 2, (me() + 1) % n());
    int32_t v32 = 1;
    EXPECT_EQ(hgas_atomic(g2, HGAS_AMO_ADD, HGAS_INT32, &v32, nullptr, nullptr), HGAS_ERR_MISALIGNED);
    EXPECT_EQ(hgas_put_signal(gp(buf_, 0), &v, 0, gp(buf_ + 4, 0), 1, HGAS_SIGNAL_SET), HGAS_ERR_MISALIGNED);
    EXPECT_EQ(hgas_signal_wait_until((const uint64_t *)(buf_ + 4), HGAS_CMP_EQ, 0, nullptr), HGAS_ERR_MISALIGNED);
}

TEST_F(BadInput, BadEnumsAndMissingOperands) {
    hgas_gptr_t g = gp(buf_, 0);
    int64_t v = 1, old;
    EXPECT_EQ(hgas_atomic(g, (hgas_amo_t)99, HGAS_INT64, &v, nullptr, &old), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_atomic(g, HGAS_AMO_ADD, HGAS_DOUBLE, &v, nullptr, nullptr), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_atomic(g, HGAS_AMO_ADD, HGAS_INT64, nullptr, nullptr, nullptr), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_atomic(g, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v, nullptr, nullptr), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_atomic(g, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &v, nullptr, &old), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_put_signal(g, &v, 8, g, 1, (hgas_signal_op_t)5), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_signal_wait_until((const uint64_t *)buf_, (hgas_cmp_t)42, 0, nullptr), HGAS_ERR_INVALID_ARG);
    hgas_gptr_t other = gp(buf_, n() > 1 ? 1 : 0);  // never on rank 0, where g is
    if (n() > 1) {
        EXPECT_EQ(hgas_put_signal(g, &v, 8, other, 1, HGAS_SIGNAL_SET), HGAS_ERR_INVALID_ARG);
    }
}

TEST_F(BadInput, DoubleFreeAndForeignFreeFailOnEveryRank) {
    void *p;
    ASSERT_EQ(hgas_malloc(256, &p), HGAS_OK);
    ASSERT_EQ(hgas_free(p), HGAS_OK);
    EXPECT_EQ(hgas_free(p), HGAS_ERR_INVALID_POINTER);  // double free
    expect_message("double free");
    int x;
    EXPECT_EQ(hgas_free(&x), HGAS_ERR_INVALID_POINTER);
    EXPECT_EQ(hgas_free(buf_ + 64), HGAS_ERR_INVALID_POINTER);  // inside, not the start
}

TEST_F(BadInput, MismatchedCollectiveAllocationSizes) {
    if (n() == 1) return;  // needs two ranks to disagree
    void *p = (void *)1;
    EXPECT_EQ(hgas_malloc(128 + 64 * me(), &p), HGAS_ERR_INVALID_ARG);
    expect_message("same collective allocations");
    EXPECT_EQ(p, (void *)1);
}

}  // namespace

// --- regression tests, named after the bugs ---------------------------------------------------
namespace {

// HGAS_CHECK as the library reads it: set in the environment, else on in debug builds.
bool checked_mode() {
    const char *e = std::getenv("HGAS_CHECK");
    if (e && *e) return std::strcmp(e, "0") != 0;
#ifdef NDEBUG
    return false;
#else
    return true;
#endif
}

// The heap offset of a symmetric address (same on every rank).
uint64_t sym_offset(const void *p) { return gp(p, me()).offset; }

TEST_F(BadInput, SecondAllFreeOfAnArrayIsRejectedAndLeavesTheRuntimeScratchAlone) {
    hgas_array_t a;
    ASSERT_EQ(hgas_all_alloc(4 * n(), 64, &a), HGAS_OK) << hgas_last_error();
    hgas_array_t copy = a;
    ASSERT_EQ(hgas_all_free(&a), HGAS_OK) << hgas_last_error();
    // The freed array is zeroed: it used to name offset 0 of the heap, hgas's own barrier
    // words, and the second free released them.
    EXPECT_EQ(hgas_all_free(&a), HGAS_ERR_INVALID_POINTER);
    expect_message("not allocated");
    EXPECT_EQ(hgas_all_free(&copy), HGAS_ERR_INVALID_POINTER);  // a copy of the freed array
    expect_message("double free");
    EXPECT_EQ(hgas_all_free(nullptr), HGAS_ERR_INVALID_ARG);
    // hgas's own objects cannot be freed as if they were an allocation.
    char *heap_start = reinterpret_cast<char *>(buf_) - sym_offset(buf_);
    EXPECT_EQ(hgas_free(heap_start), HGAS_ERR_INVALID_POINTER);
    // Collective allocations and collectives still work, and a new block is not placed over
    // hgas's objects.
    void *p = nullptr;
    ASSERT_EQ(hgas_malloc(256, &p), HGAS_OK) << hgas_last_error();
    EXPECT_GT(sym_offset(p), 0u);
    int64_t one = 1, sum = 0;
    ASSERT_EQ(hgas_allreduce(&sum, &one, 1, HGAS_INT64, HGAS_OP_SUM), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(sum, n());
    ASSERT_EQ(hgas_free(p), HGAS_OK) << hgas_last_error();
}

TEST_F(BadInput, FreeOfAPointerBadOnOneRankOnlyFailsOnEveryRank) {
    if (n() == 1) return;
    void *p;
    ASSERT_EQ(hgas_malloc(128, &p), HGAS_OK);
    EXPECT_EQ(hgas_free(me() == 0 ? static_cast<char *>(p) + 64 : p), HGAS_ERR_INVALID_POINTER);
    if (me() != 0) expect_message("another rank");
    ASSERT_EQ(hgas_free(p), HGAS_OK) << hgas_last_error();  // nothing was freed: the real free works
}

TEST_F(BadInput, AllAllocOfHugeSizesFailsInsteadOfDividingByZero) {
    hgas_array_t a{};
    a.nblocks = 77;
    // (nblocks + n - 1) / n used to wrap to 0 blocks per rank: the overflow check divided by
    // zero and the call returned OK with a 0-byte array.
    EXPECT_EQ(hgas_all_alloc(UINT64_MAX, 2, &a), HGAS_ERR_NO_MEMORY);
    EXPECT_EQ(a.nblocks, 77u);  // untouched
    EXPECT_EQ(hgas_all_alloc(UINT64_MAX, UINT64_MAX, &a), HGAS_ERR_NO_MEMORY);
    expect_message("overflow");
    EXPECT_EQ(hgas_all_alloc(UINT64_MAX / 2, 4, &a), HGAS_ERR_NO_MEMORY);
    void *p = (void *)1;
    EXPECT_EQ(hgas_malloc(SIZE_MAX, &p), HGAS_ERR_NO_MEMORY);
    EXPECT_EQ(hgas_calloc(SIZE_MAX / 2 + 1, 2, &p), HGAS_ERR_INVALID_ARG);
    expect_message("overflows");
    EXPECT_EQ(hgas_align(size_t{1} << 63, 64, &p), HGAS_ERR_NO_MEMORY);
    EXPECT_EQ(hgas_align(SIZE_MAX, 64, &p), HGAS_ERR_INVALID_ARG);  // not a power of two
    EXPECT_EQ(hgas_align(64, SIZE_MAX - 8, &p), HGAS_ERR_NO_MEMORY);
    EXPECT_EQ(p, (void *)1);
    hgas_array_t big{};
    big.nblocks = (uint64_t{1} << 62) + 1;  // 2^64 + 4 bytes in all
    big.block_bytes = 4;
    big.nranks = 1;
    hgas_gptr_t g;
    // nblocks * block_bytes wrapped to 4 in the bounds check of hgas_array_ptr.
    EXPECT_EQ(hgas_array_ptr(&big, 100, &g), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(g.offset, 100u);
}

TEST_F(BadInput, SecondWaitOnACompletedHandleReturnsAtOnce) {
    const int t = (me() + 1) % n();
    std::vector<unsigned char> src(256, 0xAB);  // the fixture's canary value: nothing changes
    hgas_handle_t h, h2;
    ASSERT_EQ(hgas_put_nb(gp(buf_, t), src.data(), src.size(), &h), HGAS_OK) << hgas_last_error();
    ASSERT_EQ(hgas_wait(h), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(hgas_wait(h), HGAS_OK) << hgas_last_error();  // used to crash over UCX (freed handle)
    int done = 0;
    EXPECT_EQ(hgas_test(h, &done), HGAS_OK);
    EXPECT_EQ(done, 1);
    // A new operation may take the completed one's place: the old handle stays consumed.
    ASSERT_EQ(hgas_get_nb(src.data(), gp(buf_, t), src.size(), &h2), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(hgas_wait(h), HGAS_OK);
    ASSERT_EQ(hgas_wait(h2), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(src[0], 0xAB);
    // A value that is no handle of this rank is refused, not dereferenced.
    EXPECT_EQ(hgas_wait(reinterpret_cast<hgas_handle_t>(uintptr_t{0x7777} << 32 | 0x5555)), HGAS_ERR_INVALID_ARG);
    expect_message("not a handle");
    EXPECT_EQ(hgas_test(reinterpret_cast<hgas_handle_t>(uintptr_t{0x12345}), &done), HGAS_ERR_INVALID_ARG);
}

TEST_F(BadInput, GlobalPointerWithReservedFlagBitsIsRejected) {
    const int t = (me() + 1) % n();
    hgas_gptr_t g = gp(buf_, t);
    g.flags = 0x8000;
    uint64_t v = 1;
    EXPECT_EQ(hgas_put(g, &v, 8), HGAS_ERR_INVALID_ARG);
    expect_message("reserved flag bits");
    EXPECT_EQ(hgas_get(&v, g, 8), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_put_nbi(g, &v, 8), HGAS_ERR_INVALID_ARG);
    hgas_handle_t h;
    EXPECT_EQ(hgas_put_nb(g, &v, 8, &h), HGAS_ERR_INVALID_ARG);
    int64_t old;
    EXPECT_EQ(hgas_atomic_fetch_add64(g, 1, &old), HGAS_ERR_INVALID_ARG);
    hgas_gptr_t ok = gp(buf_, t);
    EXPECT_EQ(hgas_put_signal(ok, &v, 8, g, 1, HGAS_SIGNAL_SET), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_local_addr(g), nullptr);
}

TEST_F(BadInput, BroadcastWithDifferentRootsFailsOnEveryRank) {
    if (n() == 1) return;
    std::vector<unsigned char> src(64, 0x5A);  // not the canary: no rank may write it anywhere
    // Every rank its own root: each finds that its children disagree.
    EXPECT_EQ(hgas_broadcast(buf_, src.data(), src.size(), me()), HGAS_ERR_INVALID_ARG);
    expect_message("hgas_broadcast");
    expect_message(checked_mode() ? "different roots" : "other arguments");
    if (checked_mode() && n() > 2) {
        // Only the last rank disagrees: in checked mode every rank fails all the same.
        EXPECT_EQ(hgas_broadcast(buf_, src.data(), src.size(), me() == n() - 1 ? 1 : 0), HGAS_ERR_INVALID_ARG);
        expect_message("different roots (from 0 to 1)");
    }
    // The collectives still work (nothing was left in flight).
    int64_t one = 1, sum = 0;
    ASSERT_EQ(hgas_allreduce(&sum, &one, 1, HGAS_INT64, HGAS_OP_SUM), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(sum, n());
}

TEST_F(BadInput, BroadcastWithNullSourceAtTheRootFailsEveryRankAtOnce) {
    if (n() == 1) return;
    std::vector<unsigned char> src(64, 0x5A);
    // Used to fail on the root only; the others waited for its data until HGAS_TIMEOUT.
    EXPECT_EQ(hgas_broadcast(buf_, me() == 0 ? nullptr : src.data(), src.size(), 0), HGAS_ERR_INVALID_ARG);
    if (me() == 0) expect_message("src is NULL");
    else expect_message(checked_mode() ? "another rank passed a bad argument" : "failed");
    // A larger broadcast (several chunks), bad destination on the last rank only.
    void *big;
    ASSERT_EQ(hgas_malloc(200000, &big), HGAS_OK);
    std::vector<unsigned char> bsrc(200000, 0xAB);
    int local = 0;
    const hgas_status_t st = hgas_broadcast(me() == n() - 1 ? (void *)&local : big, bsrc.data(), bsrc.size(), 0);
    if (me() == n() - 1 || checked_mode())
        EXPECT_EQ(st, me() == n() - 1 ? HGAS_ERR_INVALID_POINTER : HGAS_ERR_INVALID_ARG) << hgas_last_error();
    else  // unchecked: the ranks that wait for the bad one fail; others may complete (docs/model.md)
        EXPECT_TRUE(st == HGAS_OK || st == HGAS_ERR_INVALID_ARG) << hgas_last_error();
    int64_t one = 1, sum = 0;
    ASSERT_EQ(hgas_allreduce(&sum, &one, 1, HGAS_INT64, HGAS_OP_SUM), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(sum, n());
    ASSERT_EQ(hgas_free(big), HGAS_OK);
}

TEST_F(BadInput, PutBeforeTheFirstAllocationCannotReachTheRuntimesObjects) {
    const int t = (me() + 1) % n();
    // 16 bytes before the first allocation of the heap lie hgas's own objects (barrier and
    // collective words, scratch): a put there used to succeed and corrupt them.
    void *first;
    ASSERT_EQ(hgas_malloc(64, &first), HGAS_OK);
    hgas_gptr_t g = gp(buf_, t);
    g.offset = 0;  // the start of the heap
    uint64_t v[2] = {~0ull, ~0ull};
    EXPECT_EQ(hgas_put(g, v, sizeof v), HGAS_ERR_OUT_OF_BOUNDS);
    expect_message("hgas's own objects");
    int64_t old;
    EXPECT_EQ(hgas_atomic_fetch_add64(g, 1, &old), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(hgas_get(v, g, 8), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(hgas_local_addr(g), nullptr);
    // Nor by a collective's destination.
    char *heap_start = reinterpret_cast<char *>(buf_) - sym_offset(buf_);
    EXPECT_EQ(hgas_broadcast(heap_start, v, 8, 0), HGAS_ERR_INVALID_POINTER);
    // The barrier (whose words those are) still works.
    ASSERT_EQ(hgas_barrier(), HGAS_OK) << hgas_last_error();
    ASSERT_EQ(hgas_free(first), HGAS_OK);
}

TEST_F(BadInput, CheckedModeRejectsAPutPastTheEndOfAnAllocation) {
    if (!checked_mode()) return;
    const int t = (me() + 1) % n();
    unsigned char *small;
    ASSERT_EQ(hgas_malloc(64, (void **)&small), HGAS_OK);
    std::vector<unsigned char> src(512, 0x11);
    // 512 bytes into a 64-byte allocation: inside the heap, so it used to succeed.
    EXPECT_EQ(hgas_put(gp(small, t), src.data(), 512), HGAS_ERR_OUT_OF_BOUNDS);
    expect_message("run 448 bytes past the end of the allocation");
    expect_message("64 bytes at");
    EXPECT_EQ(hgas_get(src.data(), gp(small + 32, t), 64), HGAS_ERR_OUT_OF_BOUNDS);
    // Between allocations / in freed memory: the message names the nearest allocation.
    void *gone;
    ASSERT_EQ(hgas_malloc(4096, &gone), HGAS_OK);
    const hgas_gptr_t freed = gp(gone, t);
    ASSERT_EQ(hgas_free(gone), HGAS_OK);
    EXPECT_EQ(hgas_put(freed, src.data(), 8), HGAS_ERR_OUT_OF_BOUNDS);
    expect_message("not inside a live allocation");
    // A collective's destination too.
    EXPECT_EQ(hgas_broadcast(small, src.data(), 128, 0), HGAS_ERR_OUT_OF_BOUNDS);
    // Inside: fine.
    HGAS_EXPECT_OK(hgas_put(gp(small, t), src.data(), 64));
    HGAS_EXPECT_OK(hgas_barrier());
    ASSERT_EQ(hgas_free(small), HGAS_OK);
}

}  // namespace
