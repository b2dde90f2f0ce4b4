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
}  // namespace rank_test

inline hgas_gptr_t gp(const void *sym, int rank) {
    hgas_gptr_t g;
    EXPECT_EQ(hgas_ptr(sym, rank, &g), HGAS_OK) << hgas_last_error();
    return g;
}

// A deterministic byte pattern for (writer, target, index).
inline unsigned char pattern(int writer, int target, size_t i) {
    return static_cast<unsigned char>((writer * 131 + target * 31 + i * 7 + (i >> 8)) & 0xff);
}
