// Static data through the C API: the program's globals are symmetric memory (segment
// HGAS_SEG_STATIC) for put/get, atomics, signals and collectives, and the segment is checked
// like every other one. With HGAS_STATIC_DATA=0 (test_static_off) they are not, and the
// message says why.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }
[[maybe_unused]] bool static_on() {
    const char *v = std::getenv("HGAS_STATIC_DATA");
    return !v || std::strcmp(v, "0") != 0;
}

// Globals of every storage kind; none is touched before hgas_init except `initialized`.
long initialized = 1234;
uint64_t words[512];           // bss, several pages when combined with the rest
char tail_bytes[1 << 16];
[[maybe_unused]] uint64_t signal_word;
const long read_only = 5;

#ifdef HGAS_RANK_THREADS
// Ranks as threads (hgasrun --threads T, docs/threads.md): the T ranks of a process share its
// globals, so one global cannot be a separate symmetric object of each rank; hgas reports
// static data as not symmetric for the job and refuses a global as an RMA or collective
// target with that reason. What a rank thread sees instead: one copy of every global per
// process (a write by one rank thread is read by the process's other rank threads), one copy
// of every thread_local per rank, and symmetric memory from hgas_malloc.
std::atomic<int> joined{0};
thread_local int my_rank = -1;

int threads_per_process() {
    const char *t = std::getenv("HGAS_THREADS");
    return t ? std::atoi(t) : 1;
}

TEST(StaticData, RankThreadsRefuseGlobalsWithTheReason) {
    hgas_gptr_t g;
    for (const void *global : {static_cast<const void *>(&initialized), static_cast<const void *>(words),
                               static_cast<const void *>(&tail_bytes[100])}) {
        EXPECT_EQ(hgas_ptr(global, (me() + 1) % n(), &g), HGAS_ERR_INVALID_POINTER);
        EXPECT_NE(std::strstr(hgas_last_error(), "global or static variable"), nullptr) << hgas_last_error();
        EXPECT_NE(std::strstr(hgas_last_error(), "HGAS_THREADS="), nullptr) << hgas_last_error();
        EXPECT_NE(std::strstr(hgas_last_error(), "use hgas_malloc"), nullptr) << hgas_last_error();
    }
    EXPECT_EQ(hgas_broadcast(words, words, 8, 0), HGAS_ERR_INVALID_POINTER);
    EXPECT_EQ(initialized, 1234) << "globals are the program's as they were: hgas moved nothing";
}

TEST(StaticData, RankThreadsShareGlobalsAndKeepThreadLocals) {
    my_rank = me();
    HGAS_OK_OR_FAIL(hgas_barrier());
    joined.fetch_add(1);  // one counter for the process: every rank thread of it adds
    HGAS_OK_OR_FAIL(hgas_barrier());
    EXPECT_EQ(joined.load(), threads_per_process()) << "a global is one variable for the process's rank threads";
    EXPECT_EQ(my_rank, me()) << "a thread_local is the rank's own";
    HGAS_OK_OR_FAIL(hgas_barrier());
    // Symmetric data comes from hgas_malloc: the same exchange the globals test does.
    uint64_t *w;
    HGAS_OK_OR_FAIL(hgas_malloc(sizeof(uint64_t) * n(), reinterpret_cast<void **>(&w)));
    const uint64_t mine = 1000u + static_cast<unsigned>(me());
    for (int t = 0; t < n(); ++t) HGAS_OK_OR_FAIL(hgas_put(gp(&w[me()], t), &mine, sizeof mine));
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int r = 0; r < n(); ++r) EXPECT_EQ(w[r], 1000u + static_cast<unsigned>(r)) << "from rank " << r;
    HGAS_OK_OR_FAIL(hgas_free(w));
}
#else
TEST(StaticData, GlobalsHaveTheStaticSegment) {
    if (!static_on()) GTEST_SKIP() << "HGAS_STATIC_DATA=0";
    hgas_gptr_t g = gp(&initialized, (me() + 1) % n());
    EXPECT_EQ(g.segment, HGAS_SEG_STATIC);
    EXPECT_EQ(initialized, 1234) << "the value before hgas_init survived the move to shared memory";
    hgas_gptr_t ro;
    EXPECT_EQ(hgas_ptr(&read_only, 0, &ro), HGAS_ERR_INVALID_POINTER);
    int on_stack = 0;
    EXPECT_EQ(hgas_ptr(&on_stack, 0, &ro), HGAS_ERR_INVALID_POINTER);
    // A rank reaches its own globals directly, and same-node peers' through shared memory.
    EXPECT_EQ(hgas_local_addr(gp(&initialized, me())), &initialized);
}

TEST(StaticData, PutGetAtomicsSignalsBetweenRanks) {
    if (!static_on()) GTEST_SKIP() << "HGAS_STATIC_DATA=0";
    const int right = (me() + 1) % n(), left = (me() + n() - 1) % n();
    std::memset(words, 0, sizeof words);
    std::memset(tail_bytes, 0, sizeof tail_bytes);
    signal_word = 0;
    HGAS_OK_OR_FAIL(hgas_barrier());
    uint64_t mine[512];
    for (int i = 0; i < 512; ++i) mine[i] = static_cast<uint64_t>(me()) << 32 | static_cast<uint64_t>(i);
    HGAS_OK_OR_FAIL(hgas_put(gp(words, right), mine, sizeof mine));
    const char last = static_cast<char>(me() + 7);
    HGAS_OK_OR_FAIL(hgas_put_signal(gp(&tail_bytes[sizeof tail_bytes - 1], right), &last, 1, gp(&signal_word, right),
                                    1, HGAS_SIGNAL_ADD));
    HGAS_OK_OR_FAIL(hgas_signal_wait_until(&signal_word, HGAS_CMP_EQ, 1, nullptr));
    EXPECT_EQ(tail_bytes[sizeof tail_bytes - 1], static_cast<char>(left + 7));
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int i = 0; i < 512; ++i)
        ASSERT_EQ(words[i], static_cast<uint64_t>(left) << 32 | static_cast<uint64_t>(i)) << "word " << i;
    uint64_t back[512];
    HGAS_OK_OR_FAIL(hgas_get(back, gp(words, left), sizeof back));
    EXPECT_EQ(back[5], static_cast<uint64_t>((left + n() - 1) % n()) << 32 | 5u);
    HGAS_OK_OR_FAIL(hgas_atomic_add64(gp(&initialized, 0), 1));
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() == 0) {
        EXPECT_EQ(initialized, 1234 + n());
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() == 0) initialized = 1234;
    HGAS_OK_OR_FAIL(hgas_barrier());
}

TEST(StaticData, BoundsAreTheSegments) {
    if (!static_on()) GTEST_SKIP() << "HGAS_STATIC_DATA=0";
    hgas_gptr_t g = gp(&tail_bytes[sizeof tail_bytes - 1], (me() + 1) % n());
    g.offset += 1 << 20;  // past the end of the program's bss pages
    char x = 1;
    EXPECT_EQ(hgas_put(g, &x, 1), HGAS_ERR_OUT_OF_BOUNDS);
}

TEST(StaticData, CollectivesIntoGlobals) {
    if (!static_on()) GTEST_SKIP() << "HGAS_STATIC_DATA=0";
    uint64_t src[4];
    for (int i = 0; i < 4; ++i) src[i] = 100u * static_cast<unsigned>(me()) + static_cast<unsigned>(i);
    HGAS_OK_OR_FAIL(hgas_broadcast(words, src, sizeof src, n() - 1));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(words[i], 100u * static_cast<unsigned>(n() - 1) + static_cast<unsigned>(i));
    HGAS_OK_OR_FAIL(hgas_fcollect(words, src, sizeof(uint64_t)));
    for (int r = 0; r < n(); ++r) EXPECT_EQ(words[r], 100u * static_cast<unsigned>(r));
    HGAS_OK_OR_FAIL(hgas_barrier());
}

TEST(StaticData, OffSaysWhy) {
    if (static_on()) GTEST_SKIP() << "static data is on";
    hgas_gptr_t g;
    EXPECT_EQ(hgas_ptr(&initialized, 0, &g), HGAS_ERR_INVALID_POINTER);
    EXPECT_NE(std::strstr(hgas_last_error(), "global or static variable"), nullptr) << hgas_last_error();
    EXPECT_NE(std::strstr(hgas_last_error(), "HGAS_STATIC_DATA=0"), nullptr) << hgas_last_error();
    EXPECT_EQ(hgas_broadcast(words, words, 8, 0), HGAS_ERR_INVALID_POINTER);
}
#endif

}  // namespace
