// Helpers for multi-rank tests.
#pragma once
#include <gtest/gtest.h>
#include <hgas/hgas.h>

#define HGAS_OK_OR_FAIL(expr) ASSERT_EQ((expr), HGAS_OK) << #expr << ": " << hgas_last_error()
#define HGAS_EXPECT_OK(expr) EXPECT_EQ((expr), HGAS_OK) << #expr << ": " << hgas_last_error()

namespace rank_test {
// The thread level rank_main asks hgas_init_thread for: a test program that needs another
// sets it before main, from a static initializer.
int &thread_level();
// Ranks as threads (hgasrun --threads T): GoogleTest's RUN_ALL_TESTS is not re-entrant, so a
// test program built with HGAS_RANK_THREADS registers each TEST's body here instead, and
// rank_main runs every body on each of the process's T rank threads, in order. Assertions
// still go through GoogleTest (thread safe), so failures print and fail the job as before.
bool add(const char *name, void (*body)());
// Fatal failures and skips reported on the calling thread so far (a fixture's body does not
// run after a SetUp that failed fatally or skipped, as under RUN_ALL_TESTS).
int stops_on_this_thread();
// testing::Test's constructor and destructor save and restore GoogleTest's global flags: rank
// threads construct and destroy their fixtures one at a time, under this lock.
void lock_fixtures(bool lock);
template <class T>
void run_fixture() {
    lock_fixtures(true);
    T *t = new T;
    lock_fixtures(false);
    const int stops = stops_on_this_thread();
    t->rank_thread_setup();
    if (stops_on_this_thread() == stops) t->rank_thread_body();
    t->rank_thread_teardown();
    lock_fixtures(true);
    delete t;
    lock_fixtures(false);
}
}  // namespace rank_test

#ifdef HGAS_RANK_THREADS
#undef TEST
#define TEST(suite, name) HGASI_RANK_THREAD_TEST_(suite, name, suite##_##name##_body)
#define HGASI_RANK_THREAD_TEST_(suite, name, id)                                     \
    static void id();                                                               \
    [[maybe_unused]] static const bool id##_added = rank_test::add(#suite "." #name, id); \
    static void id()
// TEST_F: a class derived from the fixture, as GoogleTest's, run by rank_test::run_fixture
// (SetUp, the body unless SetUp stopped, TearDown) on every rank thread.
#undef TEST_F
#define TEST_F(fixture, name) HGASI_RANK_THREAD_TEST_F_(fixture, name, fixture##_##name##_RankThreadTest)
#define HGASI_RANK_THREAD_TEST_F_(fixture, name, cls)                                              \
    class cls : public fixture {                                                                   \
    public:                                                                                        \
        void rank_thread_setup() { this->SetUp(); }                                                \
        void rank_thread_body() { TestBody(); }                                                    \
        void rank_thread_teardown() { this->TearDown(); }                                          \
                                                                                                   \
    private:                                                                                       \
        void TestBody() override;                                                                  \
    };                                                                                             \
    [[maybe_unused]] static const bool cls##_added =                                               \
        rank_test::add(#fixture "." #name, [] { rank_test::run_fixture<cls>(); });                 \
    void cls::TestBody()
#endif

inline hgas_gptr_t gp(const void *sym, int rank) {
    hgas_gptr_t g;
    EXPECT_EQ(hgas_ptr(sym, rank, &g), HGAS_OK) << hgas_last_error();
    return g;
}

// A deterministic byte pattern for (writer, target, index).
inline unsigned char pattern(int writer, int target, size_t i) {
    return static_cast<unsigned char>((writer * 131 + target * 31 + i * 7 + (i >> 8)) & 0xff);
}
