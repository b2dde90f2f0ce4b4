// The C++ API: RAII symmetric arrays, typed global pointers, handles, atomics, collectives,
// and hgas::error for resource failures.
#include <hgas/hgas.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "rank_test.hpp"

namespace {

TEST(Cxx, GlobalPointerKnowsWhereAndLocal) {
    hgas::symmetric<int> a(16);
    const int me = hgas::rank_me(), n = hgas::rank_n();
    hgas::global_ptr<int> mine = a.on(me, 3);
    EXPECT_EQ(mine.where(), me);
    EXPECT_TRUE(mine.is_local());
    EXPECT_EQ(mine.local(), &a[3]);
    hgas::global_ptr<int> right = a.on((me + 1) % n);
    EXPECT_EQ(right.where(), (me + 1) % n);
    EXPECT_EQ((right + 5).raw().offset, right.raw().offset + 5 * sizeof(int));
    EXPECT_TRUE(hgas::global_ptr<int>().is_null());
    static_assert(std::is_trivially_copyable_v<hgas::global_ptr<double>>);
}

TEST(Cxx, PutGetHandlesAndAtomics) {
    const int me = hgas::rank_me(), n = hgas::rank_n();
    hgas::symmetric<double> buf(256);
    hgas::symmetric<int64_t> counter(1);
    std::vector<double> src(256);
    std::iota(src.begin(), src.end(), me * 1000.0);
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    {
        hgas::code c;
        hgas::handle h = hgas::put_nb(buf.on(right), src.data(), src.size(), &c);
        ASSERT_TRUE(c) << hgas_last_error();
        ASSERT_TRUE(h.wait()) << hgas_last_error();
    }
    ASSERT_TRUE(hgas::barrier());
    for (int i = 0; i < 256; ++i) ASSERT_EQ(buf[i], left * 1000.0 + i);
    std::vector<double> back(256);
    ASSERT_TRUE(hgas::get(back.data(), buf.on(right), 256));
    EXPECT_EQ(back[255], me * 1000.0 + 255);
    int64_t old;
    ASSERT_TRUE(hgas::fetch_add(counter.on(0), int64_t(1), &old));
    ASSERT_TRUE(hgas::barrier());
    if (me == 0) {
        EXPECT_EQ(counter[0], n);
    }
    ASSERT_TRUE(hgas::barrier());  // rank 0 has read it before anyone swaps
    int64_t seen = -1;
    ASSERT_TRUE(hgas::compare_swap(counter.on(0), int64_t(n), int64_t(-7), &seen));
    ASSERT_TRUE(hgas::barrier());
    // exactly one rank saw n and swapped; the others saw -7
    int64_t swapped = seen == n ? 1 : 0, total = 0;
    ASSERT_TRUE(hgas::allreduce(&total, &swapped, 1, HGAS_OP_SUM));
    EXPECT_EQ(total, 1);
    ASSERT_TRUE(hgas::barrier());
}

TEST(Cxx, ErrorsAreCodesOnTheHotPathAndExceptionsForResources) {
    hgas::symmetric<int> a(4);
    hgas::global_ptr<int> bad = a.on(0) + (1 << 30);  // far past the heap
    int v = 1;
    hgas::code c = hgas::put_value(bad, v);
    EXPECT_FALSE(c);
    EXPECT_EQ(c.value(), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_STREQ(c.name(), "HGAS_ERR_OUT_OF_BOUNDS");
    try {
        hgas::symmetric<char> huge(size_t(1) << 40);
        FAIL() << "a 1 TiB symmetric array was allocated";
    } catch (const hgas::error &e) {
        EXPECT_EQ(e.status(), HGAS_ERR_NO_MEMORY);
        EXPECT_NE(std::strstr(e.what(), "HGAS_HEAP_SIZE"), nullptr) << e.what();
    }
    int x = 0;
    EXPECT_THROW(hgas::global_ptr<int>::on(&x, 0), hgas::error);
}

}  // namespace
