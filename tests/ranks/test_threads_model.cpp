// Ranks as threads (hgasrun --threads T): what a rank thread sees. Built only with
// HGAS_RANK_THREADS (rank_main.cpp runs each body on every rank thread of the process).
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "rank_test.hpp"

namespace {
int g_shared_global = 0;  // one per process: shared by its rank threads
int threads_per_process() {
    const char *t = std::getenv("HGAS_THREADS");
    return t ? std::atoi(t) : 1;
}
}  // namespace

// Rank = process * T + order of hgas_init: ranks p*T .. p*T+T-1 share a process.
TEST(RanksAsThreads, RanksOfAProcessAreConsecutive) {
    const int me = hgas_rank_me(), n = hgas_rank_n(), t = threads_per_process();
    ASSERT_GT(t, 1);
    ASSERT_EQ(n % t, 0);
    int64_t *pids = nullptr;
    HGAS_OK_OR_FAIL(hgas_calloc(static_cast<size_t>(n), sizeof(int64_t), reinterpret_cast<void **>(&pids)));
    const int64_t mine = getpid();
    for (int r = 0; r < n; ++r) HGAS_EXPECT_OK(hgas_put(gp(&pids[me], r), &mine, sizeof mine));
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int r = 0; r < n; ++r) {
        EXPECT_EQ(pids[r] == mine, r / t == me / t) << "rank " << r << " seen from rank " << me;
        // Ranks of one process reach each other's heaps by plain loads and stores.
        if (r / t == me / t) {
            hgas_gptr_t g = gp(&pids[0], r);
            EXPECT_NE(hgas_local_addr(g), nullptr) << "rank " << r << " from " << me;
        }
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(pids));
}

// The process's globals are shared by its ranks, so they are not symmetric: hgas_ptr says so.
TEST(RanksAsThreads, GlobalsAreNotSymmetric) {
    hgas_gptr_t g;
    EXPECT_NE(hgas_ptr(&g_shared_global, hgas_rank_me(), &g), HGAS_OK);
    EXPECT_NE(std::string(hgas_last_error()).find("HGAS_THREADS"), std::string::npos) << hgas_last_error();
}

// A thread that did not call hgas_init has no rank (no process-wide default with threads), and
// a process's hgas_init calls beyond T fail naming HGAS_THREADS.
TEST(RanksAsThreads, OtherThreadsHaveNoRank) {
    int seen_rank = 0;
    hgas_status_t barrier = HGAS_OK, init = HGAS_OK;
    std::string why;
    std::thread other([&] {
        seen_rank = hgas_rank_me();
        barrier = hgas_barrier();
        init = hgas_init();
        why = hgas_last_error();
    });
    other.join();
    EXPECT_EQ(seen_rank, -1);
    EXPECT_EQ(barrier, HGAS_ERR_NOT_INITIALIZED);
    EXPECT_EQ(init, HGAS_ERR_INVALID_SETTING);
    EXPECT_NE(why.find("HGAS_THREADS"), std::string::npos) << why;
    EXPECT_EQ(hgas_init(), HGAS_ERR_ALREADY_INITIALIZED);
}
