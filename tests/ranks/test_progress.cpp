// The helper thread serves peers while the rank computes: rank 1 spins in a loop that makes
// no hgas call, while rank 0 reads, writes and updates rank 1's memory through the
// active-message path (HGAS_UCX_MODE=am), which needs rank 1's CPU. Without the helper thread
// rank 0 could only finish after rank 1's loop; the test checks it finished during it. Rank 1
// loops until rank 0 says it is done (a word rank 0 puts, also through the helper) or 30 s
// pass: a fixed 4 s loop was too short for the 1,536 round trips on a loaded machine.
// As rank threads (test_progress_threads, hgasrun --threads T) the busy rank is rank T, the
// first of the second process, so that rank 0 reaches it through the transport, not through
// its process's memory; the other ranks only meet at the barriers.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "rank_test.hpp"

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The busy rank: 1, or with rank threads the first rank of another process.
int busy_rank() {
    const char *t = std::getenv("HGAS_THREADS");
    return t && std::atoi(t) > 1 ? std::atoi(t) : 1;
}

TEST(Progress, HelperThreadServesABusyRank) {
    const int busy = busy_rank();
    ASSERT_GT(hgas_rank_n(), busy) << "needs ranks 0 and " << busy << " (two processes)";
    const int me = hgas_rank_me();
    uint64_t *mem;
    double *times;  // [0] = when rank 0 finished its operations, [1] = when rank 1's loop ended
    HGAS_OK_OR_FAIL(hgas_calloc(1024, sizeof(uint64_t), (void **)&mem));
    HGAS_OK_OR_FAIL(hgas_calloc(2, sizeof(double), (void **)&times));
    const double busy_s = 30.0;
    uint64_t *done = &mem[1023];  // rank 0 puts 1 here when its operations are over
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me == busy) {
        const double end = now() + busy_s;
        volatile uint64_t sink = 0;
        // compute: no hgas call in here (reading our own word is a plain load)
        while (now() < end && !__atomic_load_n(done, __ATOMIC_ACQUIRE)) sink = sink + 1;
        times[1] = now();
    } else if (me == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the busy rank is in its loop
        for (uint64_t i = 0; i < 512; ++i) {
            uint64_t v = 0xC0DE0000 + i;
            HGAS_OK_OR_FAIL(hgas_put(gp(&mem[i], busy), &v, sizeof v));
            uint64_t back = 0;
            HGAS_OK_OR_FAIL(hgas_get(&back, gp(&mem[i], busy), sizeof back));
            ASSERT_EQ(back, v);
            int64_t old;
            HGAS_OK_OR_FAIL(hgas_atomic_fetch_add64(gp(&mem[512 + i % 8], busy), 1, &old));
        }
        times[0] = now();
        const uint64_t one = 1;
        HGAS_OK_OR_FAIL(hgas_put(gp(done, busy), &one, sizeof one));  // ends rank 1's loop
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me == busy) {
        for (uint64_t i = 0; i < 512; ++i) ASSERT_EQ(mem[i], 0xC0DE0000 + i);
        for (int k = 0; k < 8; ++k) EXPECT_EQ(mem[512 + k], 64u);
        double t0;
        HGAS_OK_OR_FAIL(hgas_get(&t0, gp(&times[0], 0), sizeof t0));
        EXPECT_LT(t0, times[1]) << "rank 0 finished " << (t0 - times[1])
                                << " s after rank " << busy << "'s loop ended: nobody served its memory while it computed";
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(times));
    HGAS_OK_OR_FAIL(hgas_free(mem));
}

}  // namespace
