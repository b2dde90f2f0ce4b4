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

// cxx_fetch_add_int_operand, cxx_allreduce_long_long: operands convert to the pointer's type,
// and every 32/64-bit integer type has its dtype (long and long long are distinct types).
TEST(Cxx, EveryIntegerTypeAndConvertingOperands) {
    const int n = hgas::rank_n();
    hgas::symmetric<long> counter(1);
    hgas::symmetric<unsigned> ucounter(1);
    ASSERT_TRUE(hgas::barrier());
    long old = -1;
    ASSERT_TRUE(hgas::fetch_add(counter.on(0), 2, &old)) << hgas_last_error();  // an int operand
    unsigned uold = 0;
    ASSERT_TRUE(hgas::fetch_add(ucounter.on(0), 1, &uold));
    ASSERT_TRUE(hgas::barrier());
    long long mine = 1LL << 40, sum = 0;
    ASSERT_TRUE(hgas::allreduce(&sum, &mine, 1, HGAS_OP_SUM));
    EXPECT_EQ(sum, n * (1LL << 40));
    unsigned long long umax = 0, me = static_cast<unsigned long long>(hgas::rank_me()) + (1ULL << 63);
    ASSERT_TRUE(hgas::allreduce(&umax, &me, 1, HGAS_OP_MAX));
    EXPECT_EQ(umax, (1ULL << 63) + n - 1);
    if (hgas::rank_me() == 0) {
        EXPECT_EQ(counter[0], 2L * n);
        EXPECT_EQ(ucounter[0], static_cast<unsigned>(n));
    }
    static_assert(hgas::detail::dtype_of<long long>() == HGAS_INT64);
    static_assert(hgas::detail::dtype_of<unsigned long>() == HGAS_UINT64);
    static_assert(hgas::detail::dtype_of<int>() == HGAS_INT32);
    static_assert(hgas::detail::dtype_of<unsigned>() == HGAS_UINT32);
    ASSERT_TRUE(hgas::barrier());
}

// cxx_every_call_needs_check: hgas::checked throws hgas::error and returns what it fetched.
TEST(Cxx, CheckedCallsThrowAndReturnValues) {
    namespace hx = hgas::checked;
    const int me = hgas::rank_me(), n = hgas::rank_n(), right = (me + 1) % n;
    hgas::symmetric<long> box(2);
    hgas::symmetric<uint64_t> sig(1);
    hx::barrier();
    hx::put_value(box.on(right), 100L + me);
    hx::quiet();
    long v = 7;
    hx::put_signal(box.on(right, 1), &v, 1, sig.on(right), 1);
    EXPECT_EQ(hx::signal_wait_until(sig.data(), HGAS_CMP_EQ, 1), 1u);
    hx::barrier();
    EXPECT_EQ(box[0], 100 + (me + n - 1) % n);
    EXPECT_EQ(hx::get(box.on(right)), 100 + me);
    const long old = hx::fetch_add(box.on(0, 1), 1);  // rank 0's box[1] is 7: the olds are 7..7+n-1
    hx::barrier();
    EXPECT_EQ(hx::allreduce(old, HGAS_OP_SUM), 7L * n + n * (n - 1L) / 2);
    EXPECT_EQ(hx::allreduce(1L, HGAS_OP_SUM), n);
    EXPECT_EQ(hx::allreduce(double(me), HGAS_OP_MAX), double(n - 1));
    try {
        hx::put_value(box.on(0) + (1 << 30), 1L);  // far past the heap
        FAIL() << "an out-of-bounds put did not throw";
    } catch (const hgas::error &e) {
        EXPECT_EQ(e.status(), HGAS_ERR_OUT_OF_BOUNDS);
        EXPECT_NE(std::strstr(e.what(), "HGAS_ERR_OUT_OF_BOUNDS"), nullptr) << e.what();
    }
    hx::barrier();
}

// The team overloads: a split team's reductions, broadcast and fcollect, in both styles.
TEST(Cxx, TeamOverloads) {
    namespace hx = hgas::checked;
    const int me = hgas::rank_me(), n = hgas::rank_n();
    hgas::symmetric<int> buf(2 * n);
    hgas_team_t id;
    ASSERT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 2, (n + 1) / 2, &id), HGAS_OK) << hgas_last_error();
    if (me % 2 == 0) {
        const hgas::team t{id};
        ASSERT_EQ(t.my_rank(), me / 2);
        ASSERT_EQ(t.n(), (n + 1) / 2);
        EXPECT_EQ(hx::allreduce(t, me, HGAS_OP_SUM), t.n() * (t.n() - 1));  // the even ranks
        long out = 0, mine = me;
        ASSERT_TRUE(hgas::allreduce(t, &out, &mine, 1, HGAS_OP_MAX));
        EXPECT_EQ(out, 2L * (t.n() - 1));
        const int v = 40 + me;
        hx::broadcast(t, buf.data(), &v, 1, t.n() - 1);
        EXPECT_EQ(buf[0], 40 + 2 * (t.n() - 1));
        hx::fcollect(t, buf.data(), &me, 1);
        for (int i = 0; i < t.n(); ++i) EXPECT_EQ(buf[i], 2 * i);
        hx::barrier(t);
        ASSERT_EQ(hgas_team_destroy(id), HGAS_OK);
    } else {
        EXPECT_EQ(id, HGAS_TEAM_INVALID);
    }
    hx::barrier();
}

// cxx_reduce_small_types: reductions on 8/16-bit integers and on hgas::half / hgas::bfloat16,
// with values. The 16-bit float sums are built so that exactly one step rounds whatever the
// algorithm's order: rank 0 brings 2048 (half) / 256 (bfloat16), rank 1 brings 1 or 3 (a tie
// at an ulp of 2) and the others 0, so the exact sums 2049 and 2051 round to even: 2048, 2052.
TEST(Cxx, SmallIntegersAndSixteenBitFloats) {
    namespace hx = hgas::checked;
    const int me = hgas::rank_me(), n = hgas::rank_n();
    // int8 wraps around as the C type does; uint8 max; int16 min; uint16 bitwise.
    int8_t i8 = 100, i8sum = 0;
    ASSERT_TRUE(hgas::allreduce(&i8sum, &i8, 1, HGAS_OP_SUM)) << hgas_last_error();
    EXPECT_EQ(i8sum, static_cast<int8_t>(static_cast<uint8_t>(100 * n)));
    EXPECT_EQ(hx::allreduce(static_cast<uint8_t>(200 + me), HGAS_OP_MAX), 200 + n - 1);
    EXPECT_EQ(hx::allreduce(static_cast<int16_t>(-30000 - me), HGAS_OP_MIN), -30000 - (n - 1));
    const uint16_t bit = static_cast<uint16_t>(1u << (me % 16)), all = static_cast<uint16_t>((1u << n) - 1);
    EXPECT_EQ(hx::allreduce(bit, HGAS_OP_OR), all);
    EXPECT_EQ(hx::allreduce(static_cast<uint16_t>(0xff00u | bit), HGAS_OP_AND), n == 1 ? (0xff00u | 1u) : 0xff00u);
    EXPECT_EQ(hx::allreduce(bit, HGAS_OP_XOR), all);
    int16_t at_root = 0, mine16 = static_cast<int16_t>(me + 1);
    ASSERT_TRUE(hgas::reduce(&at_root, &mine16, 1, HGAS_OP_PROD, n - 1));
    if (me == n - 1) {
        int16_t fact = 1;
        for (int i = 1; i <= n; ++i) fact = static_cast<int16_t>(fact * i);
        EXPECT_EQ(at_root, fact);
    }

    // half: 2048 + 1 rounds down to 2048 (0x6800), 2048 + 3 up to 2052 (0x6802); 0.5 each is exact;
    // MIN / MAX of -0.25 * rank.
    hgas::half h[4] = {hgas::half(me == 0 ? 2048.0f : me == 1 ? 1.0f : 0.0f),
                       hgas::half(me == 0 ? 2048.0f : me == 1 ? 3.0f : 0.0f), hgas::half(0.5f),
                       hgas::half(me == 0 ? 0.0f : -0.25f * static_cast<float>(me))};  // +0, not -0, on rank 0
    hgas::half hsum[4] = {};
    ASSERT_TRUE(hgas::allreduce(hsum, h, 4, HGAS_OP_SUM)) << hgas_last_error();
    EXPECT_EQ(hsum[0].bits, 0x6800);
    EXPECT_EQ(hsum[1].bits, n >= 2 ? 0x6802 : 0x6800);
    EXPECT_EQ(static_cast<float>(hsum[1]), n >= 2 ? 2052.0f : 2048.0f);
    EXPECT_EQ(static_cast<float>(hsum[2]), 0.5f * static_cast<float>(n));
    EXPECT_EQ(static_cast<float>(hx::allreduce(h[3], HGAS_OP_MIN)), -0.25f * static_cast<float>(n - 1));
    EXPECT_EQ(hx::allreduce(h[3], HGAS_OP_MAX).bits, 0x0000);  // rank 0's +0
    EXPECT_EQ(hgas::half(2049.0f).bits, 0x6800);  // the conversion rounds as the reduction does
    EXPECT_EQ(hgas::half::from_bits(0x3c00).bits, hgas::half(1.0f).bits);

    // bfloat16: 256 + 1 rounds down to 256 (0x4380), 256 + 3 up to 260 (0x4382).
    hgas::bfloat16 b[2] = {hgas::bfloat16(me == 0 ? 256.0f : me == 1 ? 1.0f : 0.0f),
                           hgas::bfloat16(me == 0 ? 256.0f : me == 1 ? 3.0f : 0.0f)};
    hgas::bfloat16 bsum[2] = {};
    ASSERT_TRUE(hgas::allreduce(hgas::team(), bsum, b, 2, HGAS_OP_SUM)) << hgas_last_error();
    EXPECT_EQ(bsum[0].bits, 0x4380);
    EXPECT_EQ(bsum[1].bits, n >= 2 ? 0x4382 : 0x4380);
    EXPECT_EQ(static_cast<float>(bsum[1]), n >= 2 ? 260.0f : 256.0f);

    // Broadcast moves the 16-bit values as bytes.
    hgas::symmetric<hgas::bfloat16> got(1);
    const hgas::bfloat16 sent(-1.5f);
    ASSERT_TRUE(hgas::broadcast(got.data(), &sent, 1, 0));
    EXPECT_EQ(static_cast<float>(got[0]), -1.5f);
    hx::barrier();
}

}  // namespace
