// Staging rings at 32 and 64 ranks in the default 64 MiB host heap (regression: the rings took
// ranks x 8 slots x 256 KiB, so a job with a device kind failed hgas_init from 32 ranks on
// unless HGAS_STAGING_CHUNK was lowered by hand). Run with kind sim and HGAS_PATH=staged, so
// every transfer to another rank goes through the rings, in chunks of the shrunken slots.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

TEST(StagingScale, DefaultHeapStartsAndStagedTransfersArriveIntact) {
    ASSERT_EQ(std::getenv("HGAS_HEAP_SIZE"), nullptr) << "this test is about the default heap";
    ASSERT_STREQ(std::getenv("HGAS_PATH"), "staged");
    // Larger than a ring's slots together, so the credits go round.
    const size_t bytes = 300 * 1024 + 8;
    void *d;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, HGAS_KIND_SIM, &d));
    std::vector<unsigned char> src(bytes), back(bytes);
    const int right = (me() + 1) % n(), left = (me() + n() - 1) % n();
    for (size_t i = 0; i < bytes; ++i) src[i] = pattern(me(), right, i);
    HGAS_OK_OR_FAIL(hgas_put(gp(d, right), src.data(), bytes));  // staged put into the right's sim heap
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_get(back.data(), gp(d, me()), bytes));  // what the left neighbour put here
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(back[i], pattern(left, me(), i)) << "from rank " << left << " at " << i;
    std::fill(back.begin(), back.end(), 0);
    HGAS_OK_OR_FAIL(hgas_get(back.data(), gp(d, right), bytes));  // staged get back from the right
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(back[i], src[i]) << "get from rank " << right << " at " << i;
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(d));
}

}  // namespace
