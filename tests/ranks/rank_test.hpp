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
}  // namespace rank_test

#ifdef HGAS_RANK_THREADS
#undef TEST
#define TEST(suite, name) HGASI_RANK_THREAD_TEST_(suite, name, suite##_##name##_body)
#define HGASI_RANK_THREAD_TEST_(suite, name, id)                                     \
    static void id();                                                               \
    [[maybe_unused]] static const bool id##_added = rank_test::add(#suite "." #name, id); \
    static void id()
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
