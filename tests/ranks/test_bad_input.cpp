// Bad input: every call rejects it with a clear status and message, and no byte is written
// anywhere (checked by a canary around the target on every rank).
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
