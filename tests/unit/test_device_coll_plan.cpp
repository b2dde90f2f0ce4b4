// The arithmetic of the kernel-initiated collectives (include/hgas/impl/device_coll_plan.h),
// on the CPU: team membership, workspace layout and slots, the dissemination barrier's partners
// (every member hears from each partner it is signalled by, in every round), chunking, and the
// operators. The kernels themselves run in tests/gpu/test_device_coll.cu (label gpu).
#include <gtest/gtest.h>
#include <hgas/impl/device_coll_plan.h>

#include <cstdint>
#include <vector>

namespace cp = hgas::device::coll_plan;
using hgas::device::reduce_op;
using hgas::device::team;

TEST(DeviceCollPlan, TeamMembership) {
    const team t{1, 3, 4};  // ranks 1, 4, 7, 10
    EXPECT_TRUE(cp::valid(t, 11));
    EXPECT_FALSE(cp::valid(t, 10));  // rank 10 does not exist
    EXPECT_FALSE(cp::valid(team{0, 0, 2}, 4));
    EXPECT_FALSE(cp::valid(team{-1, 1, 2}, 4));
    EXPECT_FALSE(cp::valid(team{0, 1, 0}, 4));
    EXPECT_TRUE(cp::valid(team{3, 0, 1}, 4));  // a team of one ignores its stride
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(cp::rank_of(t, i), 1 + 3 * i);
        EXPECT_EQ(cp::index_of(t, cp::rank_of(t, i)), i);
    }
    for (int r : {0, 2, 3, 5, 13}) EXPECT_EQ(cp::index_of(t, r), -1) << r;
    EXPECT_EQ(cp::index_of(team{3, 0, 1}, 3), 0);
    EXPECT_EQ(cp::index_of(team{3, 0, 1}, 4), -1);
}

TEST(DeviceCollPlan, WorkspaceLayout) {
    // Words apart, within the header, and the slots after it.
    EXPECT_LT(cp::gather_off + cp::word_bytes, cp::header_bytes + 1);
    EXPECT_EQ(cp::barrier_off + cp::word_bytes * cp::max_rounds, cp::bcast_off);
    for (int m : {1, 2, 3, 8, 100}) {
        for (size_t chunk : {size_t{1}, size_t{256}, size_t{1000}, size_t{1} << 20}) {
            const size_t bytes = cp::workspace_bytes(m, chunk);
            const size_t slot = cp::slot_bytes(bytes, m);
            EXPECT_GE(slot, chunk) << m << " members, chunk " << chunk;
            EXPECT_EQ(slot % 256, 0u);
            EXPECT_LE(cp::header_bytes + slot * static_cast<size_t>(m), bytes);
        }
    }
    EXPECT_EQ(cp::slot_bytes(cp::header_bytes + 255, 1), 0u);  // too small for one slot
    EXPECT_EQ(cp::slot_bytes(100, 2), 0u);
    EXPECT_EQ(cp::chunk_elems(1024, 8), 128u);
    EXPECT_EQ(cp::chunk_elems(1024, 0), 0u);
}

// Every round k pairs "me signals to" with "to's from is me", so each member's round-k word
// gets exactly one signal per barrier, for every team size.
TEST(DeviceCollPlan, BarrierPartners) {
    for (int m = 1; m <= 33; ++m) {
        const int rounds = cp::barrier_rounds(m);
        if (m == 1) {
            EXPECT_EQ(rounds, 0);
        } else {
            EXPECT_LT(1 << (rounds - 1), m);
            EXPECT_GE(1 << rounds, m);
        }
        for (int k = 0; k < rounds; ++k) {
            std::vector<int> hits(static_cast<size_t>(m), 0);
            for (int me = 0; me < m; ++me) {
                const int to = cp::barrier_to(me, k, m);
                EXPECT_EQ(cp::barrier_from(to, k, m), me);
                ++hits[static_cast<size_t>(to)];
            }
            for (int h : hits) EXPECT_EQ(h, 1) << m << " members, round " << k;
        }
        // Knowledge spreads to everyone: after all rounds member 0 has (transitively) heard from all.
        std::vector<std::vector<bool>> know(static_cast<size_t>(m), std::vector<bool>(static_cast<size_t>(m)));
        for (size_t i = 0; i < know.size(); ++i) know[i][i] = true;
        for (int k = 0; k < rounds; ++k) {
            auto next = know;
            for (int me = 0; me < m; ++me)
                for (size_t j = 0; j < know.size(); ++j)
                    if (know[static_cast<size_t>(cp::barrier_from(me, k, m))][j]) next[static_cast<size_t>(me)][j] = true;
            know = next;
        }
        for (size_t i = 0; i < know.size(); ++i)
            for (size_t j = 0; j < know.size(); ++j) EXPECT_TRUE(know[i][j]) << m << " members: " << i << " never hears of " << j;
    }
}

TEST(DeviceCollPlan, Operators) {
    EXPECT_EQ(cp::apply(reduce_op::sum, 3, 4), 7);
    EXPECT_EQ(cp::apply(reduce_op::prod, 3, 4), 12);
    EXPECT_EQ(cp::apply(reduce_op::min, 3, -4), -4);
    EXPECT_EQ(cp::apply(reduce_op::max, 3, -4), 3);
    EXPECT_EQ(cp::apply(reduce_op::sum, UINT64_MAX, uint64_t{2}), 1u);  // wraps
    EXPECT_EQ(cp::apply(reduce_op::max, 1.5, 2.5), 2.5);
    EXPECT_EQ(cp::apply(reduce_op::min, 1.5f, 2.5f), 1.5f);
}
