// The world barrier (hgas_barrier) under each algorithm (HGAS_BARRIER: the test is registered
// with linear, dissemination and auto): no rank leaves barrier r before every rank has entered
// it, with the ranks arriving in a different order every round (one of them late), and
// back-to-back barriers without anything between them do not run into each other.
#include <unistd.h>

#include <cstdint>

#include "rank_test.hpp"

namespace {

int me() {
    return hgas_rank_me();
}
int n() {
    return hgas_rank_n();
}

hgas_gptr_t gp(void *p, int rank) {
    hgas_gptr_t g{};
    EXPECT_EQ(hgas_ptr(p, rank, &g), HGAS_OK) << hgas_last_error();
    return g;
}

// Before barrier r every rank adds 1 to a counter on every rank (so each rank reads its own):
// after it, the counter must hold at least r * n. Rank r % n arrives late (a short sleep),
// so rank 0 is sometimes the last to arrive, sometimes the first.
TEST(Barrier, NobodyLeavesBeforeEveryRankArrived) {
    uint64_t *count;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(uint64_t), (void **)&count));
    HGAS_OK_OR_FAIL(hgas_barrier());
    constexpr int rounds = 60;
    const uint64_t one = 1;
    for (int r = 1; r <= rounds; ++r) {
        if (me() == r % n()) usleep(200);
        for (int p = 0; p < n(); ++p)
            HGAS_OK_OR_FAIL(hgas_atomic(gp(count, p), HGAS_AMO_ADD, HGAS_UINT64, &one, nullptr, nullptr));
        HGAS_OK_OR_FAIL(hgas_barrier());
        uint64_t seen = 0;
        HGAS_OK_OR_FAIL(hgas_atomic(gp(count, me()), HGAS_AMO_FETCH, HGAS_UINT64, nullptr, nullptr, &seen));
        ASSERT_GE(seen, static_cast<uint64_t>(r) * static_cast<uint64_t>(n())) << "round " << r;
        ASSERT_LT(seen, static_cast<uint64_t>(r + 1) * static_cast<uint64_t>(n()) + 1) << "round " << r;
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(count));
}

// Many barriers back to back, then a put before each: a rank that left barrier k early (a
// count of an earlier barrier taken for this one) would read its left neighbour's old value.
TEST(Barrier, BackToBackBarriersKeepTheirCounts) {
    int *slot;
    HGAS_OK_OR_FAIL(hgas_calloc(2, sizeof(int), (void **)&slot));
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int i = 0; i < 200; ++i) HGAS_OK_OR_FAIL(hgas_barrier());
    const int right = (me() + 1) % n(), left = (me() + n() - 1) % n();
    for (int r = 1; r <= 100; ++r) {
        const int v = r * 1000 + me();
        HGAS_OK_OR_FAIL(
            hgas_put(hgas_gptr_add(gp(slot, right), static_cast<int64_t>((r % 2) * sizeof(int))), &v, sizeof v));
        HGAS_OK_OR_FAIL(hgas_barrier());
        ASSERT_EQ(slot[r % 2], r * 1000 + left) << "round " << r;
        HGAS_OK_OR_FAIL(hgas_barrier());  // the next round writes the other slot; reads first
    }
    HGAS_OK_OR_FAIL(hgas_free(slot));
}

}  // namespace
