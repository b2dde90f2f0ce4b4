// Every RMA, signal and atomic operation between every pair of ranks, with value checks.
// Run by ctest over {shm, ucx rma, ucx am} x {1, 2, 4, 8} ranks (tests/ranks/CMakeLists.txt).
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "api/testing.h"
#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

// First in the file: no test has reached every peer yet. On one node with shm, a peer's
// segments are mapped at the first use (HGAS_PEER_ATTACH=lazy): init and the barriers so far
// reach at most log2(n) peers each (where the barrier is linear, rank 0 every rank and the others
// rank 0), and hgas_local_addr maps a peer it is asked about.
TEST(Rma, PeersAreMappedAtFirstUseAndLocalAddrMapsThem) {
    uint64_t *box;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(uint64_t), (void **)&box));
    *box = 1000 + static_cast<uint64_t>(me());
    HGAS_OK_OR_FAIL(hgas_barrier());
    const char *tr = std::getenv("HGAS_TRANSPORTS");
    const bool all_shm = tr && !std::strcmp(tr, "self,shm");
    int unmapped = 0;
    for (int p = 0; p < n(); ++p) unmapped += hgasi_peer_attached(p) == 0;
    EXPECT_EQ(hgasi_peer_attached(me()), 1);
    EXPECT_EQ(hgasi_peer_attached(n()), -1);
    // Rank 0 of the linear barrier (HGAS_BARRIER=auto: one node, 3 to 8 ranks outnumbering its
    // cores) releases every rank, so it has mapped them all; the others have reached only it.
    if (all_shm && n() >= 8 && me() != 0) EXPECT_GE(unmapped, 1) << "every peer was mapped before its first use";
    for (int p = 0; p < n(); ++p) {
        auto *there = static_cast<uint64_t *>(hgas_local_addr(gp(box, p)));
        if (all_shm) {
            ASSERT_NE(there, nullptr) << "rank " << p << ": " << hgas_last_error();
            EXPECT_EQ(*there, 1000u + static_cast<uint64_t>(p));
            EXPECT_EQ(hgasi_peer_attached(p), 1);
        }
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(box));
}

TEST(Rma, PutGetEverySizeToEveryRank) {
    const size_t sizes[] = {1, 8, 63, 4097, 1 << 20};
    const size_t maxsz = 1 << 20;
    unsigned char *buf;  // n slots of maxsz: slot w is written by rank w
    HGAS_OK_OR_FAIL(hgas_malloc(maxsz * n(), (void **)&buf));
    std::vector<unsigned char> src(maxsz), back(maxsz);
    for (size_t sz : sizes) {
        for (int t = 0; t < n(); ++t) {
            for (size_t i = 0; i < sz; ++i) src[i] = pattern(me(), t, i + sz);
            HGAS_OK_OR_FAIL(hgas_put(gp(buf + maxsz * me(), t), src.data(), sz));
        }
        HGAS_OK_OR_FAIL(hgas_barrier());
        for (int w = 0; w < n(); ++w)
            for (size_t i = 0; i < sz; ++i)
                ASSERT_EQ(buf[maxsz * w + i], pattern(w, me(), i + sz)) << "size " << sz << " from " << w << " at " << i;
        // get it back from every target
        for (int t = 0; t < n(); ++t) {
            HGAS_OK_OR_FAIL(hgas_get(back.data(), gp(buf + maxsz * me(), t), sz));
            for (size_t i = 0; i < sz; ++i) ASSERT_EQ(back[i], pattern(me(), t, i + sz));
        }
        HGAS_OK_OR_FAIL(hgas_barrier());
    }
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

TEST(Rma, NbiCompletesAtQuiet) {
    const size_t count = 4096;
    uint64_t *dst;
    HGAS_OK_OR_FAIL(hgas_calloc(count * n(), sizeof(uint64_t), (void **)&dst));
    std::vector<uint64_t> src(count);
    for (size_t i = 0; i < count; ++i) src[i] = (uint64_t)me() << 32 | i;
    for (int t = 0; t < n(); ++t)
        for (size_t i = 0; i < count; i += 512)  // many small nbi puts in flight at once
            HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dst + count * me() + i, t), &src[i], 512 * sizeof(uint64_t)));
    HGAS_OK_OR_FAIL(hgas_quiet());
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int w = 0; w < n(); ++w)
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(dst[count * w + i], (uint64_t)w << 32 | i);
    std::vector<uint64_t> got(count * n());
    for (int t = 0; t < n(); ++t)
        HGAS_OK_OR_FAIL(hgas_get_nbi(&got[count * t], gp(dst + count * me(), t), count * sizeof(uint64_t)));
    HGAS_OK_OR_FAIL(hgas_quiet());
    for (int t = 0; t < n(); ++t)
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[count * t + i], (uint64_t)me() << 32 | i);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(Rma, HandlesWaitAndTest) {
    const size_t count = 1000;
    int32_t *dst;
    HGAS_OK_OR_FAIL(hgas_calloc(count * n(), sizeof(int32_t), (void **)&dst));
    std::vector<int32_t> src(count);
    for (size_t i = 0; i < count; ++i) src[i] = me() * 100000 + (int)i;
    std::vector<hgas_handle_t> hs(n());
    for (int t = 0; t < n(); ++t)
        HGAS_OK_OR_FAIL(hgas_put_nb(gp(dst + count * me(), t), src.data(), count * sizeof(int32_t), &hs[t]));
    for (int t = 0; t < n(); ++t) {
        if (t % 2) {
            HGAS_OK_OR_FAIL(hgas_wait(hs[t]));
        } else {
            int done = 0;
            for (int spins = 0; !done; ++spins) {
                HGAS_OK_OR_FAIL(hgas_test(hs[t], &done));
                ASSERT_LT(spins, 50000000) << "hgas_test never reported completion";
            }
        }
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int w = 0; w < n(); ++w)
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(dst[count * w + i], w * 100000 + (int)i);
    std::vector<int32_t> got(count);
    hgas_handle_t h;
    HGAS_OK_OR_FAIL(hgas_get_nb(got.data(), gp(dst + count * me(), (me() + 1) % n()), count * sizeof(int32_t), &h));
    HGAS_OK_OR_FAIL(hgas_wait(h));
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[i], src[i]);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Data must be visible when the signal is: the receiver checks every byte right after the
// signal changes, for sizes that use non-temporal stores on the direct path.
TEST(Signal, DataVisibleBeforeSignalSetAndAdd) {
    const size_t sz = 4 << 20;
    unsigned char *buf;
    uint64_t *sig;
    HGAS_OK_OR_FAIL(hgas_malloc(sz, (void **)&buf));
    HGAS_OK_OR_FAIL(hgas_calloc(2, sizeof(uint64_t), (void **)&sig));
    const int right = (me() + 1) % n(), left = (me() + n() - 1) % n();
    std::vector<unsigned char> src(sz);
    for (int round = 1; round <= 3; ++round) {
        for (size_t i = 0; i < sz; ++i) src[i] = pattern(me(), round, i);
        HGAS_OK_OR_FAIL(hgas_put_signal(gp(buf, right), src.data(), sz, gp(&sig[0], right), round, HGAS_SIGNAL_SET));
        uint64_t seen = 0;
        HGAS_OK_OR_FAIL(hgas_signal_wait_until(&sig[0], HGAS_CMP_EQ, round, &seen));
        EXPECT_EQ(seen, (uint64_t)round);
        for (size_t i = 0; i < sz; i += 997) ASSERT_EQ(buf[i], pattern(left, round, i)) << "round " << round;
        ASSERT_EQ(buf[sz - 1], pattern(left, round, sz - 1));
        HGAS_OK_OR_FAIL(hgas_barrier());  // the buffer is reused next round
    }
    // ADD: every rank adds (rank+1) to rank 0's counter signal, nbi then quiet.
    uint64_t one = 7;
    HGAS_OK_OR_FAIL(hgas_put_signal_nbi(gp(&sig[1] /*no data*/, 0), &one, 0, gp(&sig[1], 0), me() + 1, HGAS_SIGNAL_ADD));
    HGAS_OK_OR_FAIL(hgas_quiet());
    if (me() == 0) {
        const uint64_t expect = (uint64_t)n() * (n() + 1) / 2;
        HGAS_OK_OR_FAIL(hgas_signal_wait_until(&sig[1], HGAS_CMP_GE, expect, nullptr));
        uint64_t v;
        HGAS_OK_OR_FAIL(hgas_signal_fetch(&sig[1], &v));
        EXPECT_EQ(v, expect);
        int sat = 0;
        HGAS_OK_OR_FAIL(hgas_signal_test(&sig[1], HGAS_CMP_GT, expect, &sat));
        EXPECT_EQ(sat, 0);
        HGAS_OK_OR_FAIL(hgas_signal_test(&sig[1], HGAS_CMP_LE, expect, &sat));
        EXPECT_EQ(sat, 1);
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(sig));
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

// fence: data put before the fence is delivered before the flag put after it.
TEST(Ordering, FenceOrdersPutsToOneTarget) {
    const size_t count = 1 << 16;
    uint64_t *data, *flag;
    HGAS_OK_OR_FAIL(hgas_calloc(count, sizeof(uint64_t), (void **)&data));
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(uint64_t), (void **)&flag));
    const int right = (me() + 1) % n();
    std::vector<uint64_t> src(count);
    for (int iter = 1; iter <= 20; ++iter) {
        for (size_t i = 0; i < count; ++i) src[i] = (uint64_t)iter * 1000003u + i;
        HGAS_OK_OR_FAIL(hgas_put_nbi(gp(data, right), src.data(), count * sizeof(uint64_t)));
        HGAS_OK_OR_FAIL(hgas_fence());
        uint64_t f = iter;
        HGAS_OK_OR_FAIL(hgas_put_nbi(gp(flag, right), &f, sizeof f));
        HGAS_OK_OR_FAIL(hgas_quiet());
        HGAS_OK_OR_FAIL(hgas_signal_wait_until(flag, HGAS_CMP_EQ, iter, nullptr));
        for (size_t i = 0; i < count; i += 61) ASSERT_EQ(data[i], (uint64_t)iter * 1000003u + i) << "iter " << iter;
        ASSERT_EQ(data[count - 1], (uint64_t)iter * 1000003u + count - 1);
        HGAS_OK_OR_FAIL(hgas_barrier());
    }
    HGAS_OK_OR_FAIL(hgas_free(flag));
    HGAS_OK_OR_FAIL(hgas_free(data));
}

template <class T>
void check_all_amos(hgas_dtype_t type) {
    T *w;  // one word per rank, on every rank
    HGAS_OK_OR_FAIL(hgas_calloc(n(), sizeof(T), (void **)&w));
    const int t = (me() + 1) % n();
    hgas_gptr_t mine = gp(&w[me()], t);  // word only this rank touches, on its right neighbour
    T v, old, cmp;
    v = (T)0x0f0f;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_SET, type, &v, nullptr, nullptr));
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH, type, nullptr, nullptr, &old));
    EXPECT_EQ(old, (T)0x0f0f);
    v = 5;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_ADD, type, &v, nullptr, nullptr));
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH_ADD, type, &v, nullptr, &old));
    EXPECT_EQ(old, (T)(0x0f0f + 5));
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_INC, type, nullptr, nullptr, nullptr));
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH_INC, type, nullptr, nullptr, &old));
    EXPECT_EQ(old, (T)(0x0f0f + 11));
    v = (T)0x00ff;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_SWAP, type, &v, nullptr, &old));
    EXPECT_EQ(old, (T)(0x0f0f + 12));
    v = 77;
    cmp = 1;  // does not match: no change
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_COMPARE_SWAP, type, &v, &cmp, &old));
    EXPECT_EQ(old, (T)0x00ff);
    cmp = (T)0x00ff;  // matches
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_COMPARE_SWAP, type, &v, &cmp, &old));
    EXPECT_EQ(old, (T)0x00ff);
    v = (T)0x0f;  // 77 = 0b1001101
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_AND, type, &v, nullptr, nullptr));  // 77 & 15 = 13
    v = (T)0x30;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_OR, type, &v, nullptr, nullptr));  // 13 | 48 = 61
    v = (T)0x05;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_XOR, type, &v, nullptr, nullptr));  // 61 ^ 5 = 56
    v = (T)0x18;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH_AND, type, &v, nullptr, &old));  // 56 & 24 = 24
    EXPECT_EQ(old, (T)56);
    v = (T)0x101;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH_OR, type, &v, nullptr, &old));  // 24 | 257 = 281
    EXPECT_EQ(old, (T)24);
    v = (T)0x1;
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH_XOR, type, &v, nullptr, &old));  // 281 ^ 1 = 280
    EXPECT_EQ(old, (T)281);
    // the high half of 64-bit words and the sign of negative values survive the transport
    v = (T)(sizeof(T) == 8 ? (T)0x8000000000000001ull : (T)0x80000001u);
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_SWAP, type, &v, nullptr, &old));
    EXPECT_EQ(old, (T)280);
    HGAS_OK_OR_FAIL(hgas_atomic(mine, HGAS_AMO_FETCH, type, nullptr, nullptr, &old));
    EXPECT_EQ(old, v);
    HGAS_OK_OR_FAIL(hgas_barrier());
    const int left = (me() + n() - 1) % n();
    EXPECT_EQ(w[left], v);  // the neighbour's word as seen by its owner
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(w));
}

TEST(Atomics, EveryOp32And64) {
    check_all_amos<int32_t>(HGAS_INT32);
    check_all_amos<uint32_t>(HGAS_UINT32);
    check_all_amos<int64_t>(HGAS_INT64);
    check_all_amos<uint64_t>(HGAS_UINT64);
}

// The exact-sum check: every rank adds 100,000 times to one word on rank 0.
TEST(Atomics, ManyRanksFetchAddExactSum) {
    int64_t *counter;
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(int64_t), (void **)&counter));
    // 100,000 per rank; the ucx-am configuration lowers it (HGAS_TEST_FADD_ITERS) because
    // every one is a round trip through the target's CPU, and CI has 2 cores for 8 ranks.
    const char *env = std::getenv("HGAS_TEST_FADD_ITERS");
    const int iters = env ? std::atoi(env) : 100000;
    hgas_gptr_t c0 = gp(counter, 0);
    int64_t prev = -1;
    for (int i = 0; i < iters; ++i) {
        int64_t old;
        ASSERT_EQ(hgas_atomic_fetch_add64(c0, 1, &old), HGAS_OK) << hgas_last_error();
        ASSERT_GT(old, prev);  // this rank's view of the counter only grows
        prev = old;
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() == 0) {
        EXPECT_EQ(*counter, (int64_t)iters * n());
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(counter));
}

// Randomized mix of puts, gets and atomics; each rank owns a disjoint stripe on every target
// and keeps a shadow copy, so nothing lost and nothing corrupted shows as equal checksums.
TEST(Stress, RandomMixChecksums) {
    const size_t words = 2048;
    uint64_t *heap, *counters;
    HGAS_OK_OR_FAIL(hgas_calloc(words * n(), sizeof(uint64_t), (void **)&heap));
    HGAS_OK_OR_FAIL(hgas_calloc(n(), sizeof(uint64_t), (void **)&counters));
    std::vector<std::vector<uint64_t>> shadow(n(), std::vector<uint64_t>(words, 0));
    std::vector<uint64_t> adds(n(), 0);
    std::mt19937_64 rng(1234 + me());
    std::vector<uint64_t> tmp(64);
    for (int op = 0; op < 3000; ++op) {
        const int t = static_cast<int>(rng() % n());
        const size_t at = rng() % words, len = 1 + rng() % std::min<size_t>(64, words - at);
        switch (rng() % 4) {
        case 0:  // put
            for (size_t i = 0; i < len; ++i) tmp[i] = shadow[t][at + i] = rng();
            HGAS_OK_OR_FAIL(hgas_put(gp(heap + words * me() + at, t), tmp.data(), len * 8));
            break;
        case 1:  // nbi put then get it back after quiet
            for (size_t i = 0; i < len; ++i) tmp[i] = shadow[t][at + i] = rng();
            HGAS_OK_OR_FAIL(hgas_put_nbi(gp(heap + words * me() + at, t), tmp.data(), len * 8));
            HGAS_OK_OR_FAIL(hgas_quiet());
            [[fallthrough]];
        case 2: {  // get and compare
            std::vector<uint64_t> got(len);
            HGAS_OK_OR_FAIL(hgas_get(got.data(), gp(heap + words * me() + at, t), len * 8));
            for (size_t i = 0; i < len; ++i) ASSERT_EQ(got[i], shadow[t][at + i]) << "op " << op;
            break;
        }
        default: {  // shared counter on t: everyone adds
            uint64_t v = 1 + rng() % 1000;
            adds[t] += v;
            HGAS_OK_OR_FAIL(hgas_atomic(gp(&counters[0], t), HGAS_AMO_ADD, HGAS_UINT64, &v,
                                        nullptr, nullptr));
        }
        }
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    // my stripes on every target match my shadow
    for (int t = 0; t < n(); ++t) {
        std::vector<uint64_t> got(words);
        HGAS_OK_OR_FAIL(hgas_get(got.data(), gp(heap + words * me(), t), words * 8));
        uint64_t a = 0, b = 0;
        for (size_t i = 0; i < words; ++i) a += got[i] * (i + 1), b += shadow[t][i] * (i + 1);
        EXPECT_EQ(a, b) << "stripe of rank " << me() << " on rank " << t;
    }
    std::vector<uint64_t> total(n());
    HGAS_OK_OR_FAIL(hgas_allreduce(total.data(), adds.data(), n(), HGAS_UINT64, HGAS_OP_SUM));
    EXPECT_EQ(counters[0], total[me()]);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(counters));
    HGAS_OK_OR_FAIL(hgas_free(heap));
}

TEST(Memory, NonCollectiveAllocHasCallersAffinity) {
    hgas_gptr_t mine;
    HGAS_OK_OR_FAIL(hgas_alloc(1024, &mine));
    EXPECT_EQ(hgas_where(mine), me());
    EXPECT_NE(hgas_local_addr(mine), nullptr);
    // publish every rank's pointer, then each rank writes its id into the next one's block
    hgas_gptr_t *all;
    HGAS_OK_OR_FAIL(hgas_malloc(sizeof(hgas_gptr_t) * n(), (void **)&all));
    HGAS_OK_OR_FAIL(hgas_fcollect(all, &mine, sizeof mine));
    const int t = (me() + 1) % n();
    EXPECT_EQ(hgas_where(all[t]), t);
    int v = 4242 + me();
    HGAS_OK_OR_FAIL(hgas_put(hgas_gptr_add(all[t], 8), &v, sizeof v));
    HGAS_OK_OR_FAIL(hgas_barrier());
    int got;
    std::memcpy(&got, (char *)hgas_local_addr(mine) + 8, sizeof got);
    EXPECT_EQ(got, 4242 + (me() + n() - 1) % n());
    HGAS_OK_OR_FAIL(hgas_barrier());
    // only the owner frees
    if (n() > 1) {
        EXPECT_EQ(hgas_dealloc(all[t]), HGAS_ERR_INVALID_POINTER);
    }
    HGAS_OK_OR_FAIL(hgas_dealloc(mine));
    EXPECT_EQ(hgas_dealloc(mine), HGAS_ERR_INVALID_POINTER);  // double free
    HGAS_OK_OR_FAIL(hgas_free(all));
}

TEST(Memory, DistributedArrayBlockCyclic) {
    const uint64_t nblocks = 3 * n() + 1, bb = 24;
    hgas_array_t a;
    HGAS_OK_OR_FAIL(hgas_all_alloc(nblocks, bb, &a));
    for (uint64_t b = 0; b < nblocks; ++b) EXPECT_EQ(hgas_array_where(&a, b), (int)(b % n()));
    EXPECT_EQ(hgas_array_where(&a, nblocks), -1);
    // rank 0 writes every byte of the array through global pointers
    if (me() == 0)
        for (uint64_t i = 0; i < nblocks * bb; ++i) {
            hgas_gptr_t p;
            HGAS_OK_OR_FAIL(hgas_array_ptr(&a, i, &p));
            ASSERT_EQ(hgas_where(p), (int)((i / bb) % n()));
            unsigned char c = static_cast<unsigned char>(i * 13);
            HGAS_OK_OR_FAIL(hgas_put(p, &c, 1));
        }
    HGAS_OK_OR_FAIL(hgas_barrier());
    const unsigned char *local = static_cast<const unsigned char *>(hgas_array_local(&a));
    for (uint64_t b = me(), k = 0; b < nblocks; b += n(), ++k)
        for (uint64_t j = 0; j < bb; ++j)
            ASSERT_EQ(local[k * bb + j], static_cast<unsigned char>((b * bb + j) * 13)) << "block " << b;
    hgas_gptr_t p;
    EXPECT_EQ(hgas_array_ptr(&a, nblocks * bb, &p), HGAS_ERR_OUT_OF_BOUNDS);
    HGAS_OK_OR_FAIL(hgas_all_free(&a));
}

TEST(Memory, SymmetricOffsetsAgreeAndHeapExhaustionIsClean) {
    void *p;
    HGAS_OK_OR_FAIL(hgas_align(4096, 100, &p));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
    hgas_gptr_t g = gp(p, 0);
    uint64_t *offs;
    HGAS_OK_OR_FAIL(hgas_malloc(sizeof(uint64_t) * n(), (void **)&offs));
    HGAS_OK_OR_FAIL(hgas_fcollect(offs, &g.offset, sizeof g.offset));
    for (int r = 0; r < n(); ++r) EXPECT_EQ(offs[r], g.offset) << "rank " << r;
    void *huge = (void *)1;
    EXPECT_EQ(hgas_malloc((size_t)1 << 40, &huge), HGAS_ERR_NO_MEMORY);
    EXPECT_NE(std::strstr(hgas_last_error(), "HGAS_HEAP_SIZE"), nullptr) << hgas_last_error();
    EXPECT_EQ(huge, (void *)1);  // output untouched on failure
    HGAS_OK_OR_FAIL(hgas_free(offs));
    HGAS_OK_OR_FAIL(hgas_free(p));
    void *z = (void *)1;
    HGAS_OK_OR_FAIL(hgas_malloc(0, &z));
    EXPECT_EQ(z, nullptr);
}

// hgas_put_sym/get_sym/atomic_sym (hgas_ptr + the operation in one call) and the fast path of
// small puts, gets and atomics: a peer whose heap is mapped here (self; shm peers once attached)
// takes a direct store, any other (UCX, another node, a peer not attached yet) the transport.
// Every rank writes to every rank both ways, so both paths are value-checked in each config.
TEST(Rma, SmallOpsFastPathAndTransportPathAgree) {
    const int N = n();
    uint64_t *w8;       // N words: w8[q] is written by rank q
    uint32_t *w4;       // N words: w4[q] is written by rank q
    uint64_t *counter;  // fetch-added by every rank
    HGAS_OK_OR_FAIL(hgas_calloc(static_cast<size_t>(N), 8, (void **)&w8));
    HGAS_OK_OR_FAIL(hgas_calloc(static_cast<size_t>(N), 4, (void **)&w4));
    HGAS_OK_OR_FAIL(hgas_calloc(1, 8, (void **)&counter));
    HGAS_OK_OR_FAIL(hgas_barrier());
    const char *tr = std::getenv("HGAS_TRANSPORTS");
    const bool all_shm = tr && !std::strcmp(tr, "self,shm") && hgas_node_n() == 1;
    for (int p = 0; p < N; ++p) {
        const int t = (me() + p) % N;  // every rank starts with a different target
        const uint64_t v8 = (static_cast<uint64_t>(me() + 1) << 32) | static_cast<uint64_t>(t);
        const uint32_t v4 = 0x40000000u + static_cast<uint32_t>(me() * 1000 + t);
        // The first operation may attach the peer (the full path); the later ones find it mapped.
        HGAS_OK_OR_FAIL(hgas_put_sym(&w8[me()], &v8, 8, t));
        HGAS_OK_OR_FAIL(hgas_put(gp(&w4[me()], t), &v4, 4));
        uint64_t back8 = 0;
        uint32_t back4 = 0;
        HGAS_OK_OR_FAIL(hgas_get_sym(&back8, &w8[me()], 8, t));
        HGAS_OK_OR_FAIL(hgas_get(&back4, gp(&w4[me()], t), 4));
        EXPECT_EQ(back8, v8) << "rank " << t;
        EXPECT_EQ(back4, v4) << "rank " << t;
        int64_t old = -1;
        HGAS_OK_OR_FAIL(hgas_atomic_sym(counter, t, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v8, nullptr, &old));
        EXPECT_GE(old, 0);
        // Mapped peers are the ones the fast path serves: all of them on one node over shm.
        if (all_shm) {
            EXPECT_NE(hgas_local_addr(gp(&w8[me()], t)), nullptr) << "rank " << t;
        }
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    uint64_t sum = 0;
    for (int q = 0; q < N; ++q) {
        EXPECT_EQ(w8[q], (static_cast<uint64_t>(q + 1) << 32) | static_cast<uint64_t>(me())) << "from rank " << q;
        EXPECT_EQ(w4[q], 0x40000000u + static_cast<uint32_t>(q * 1000 + me())) << "from rank " << q;
        sum += (static_cast<uint64_t>(q + 1) << 32) | static_cast<uint64_t>(me());
    }
    EXPECT_EQ(*counter, sum);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(counter));
    HGAS_OK_OR_FAIL(hgas_free(w4));
    HGAS_OK_OR_FAIL(hgas_free(w8));
}

// Bad input to the small-op calls gets the full path's errors (the fast path only ever
// succeeds), and nothing moves.
TEST(Rma, SmallOpsBadInputFallsToTheCheckedPath) {
    const int N = n(), t = (me() + 1) % N;
    uint64_t *w;
    HGAS_OK_OR_FAIL(hgas_calloc(2, 8, (void **)&w));
    HGAS_OK_OR_FAIL(hgas_barrier());
    const uint64_t v = 7;
    uint64_t stack_word = 0;
    EXPECT_EQ(hgas_put_sym(&stack_word, &v, 8, t), HGAS_ERR_INVALID_POINTER);
    EXPECT_NE(std::strstr(hgas_last_error(), "hgas_put_sym: "), nullptr) << hgas_last_error();
    EXPECT_NE(std::strstr(hgas_last_error(), "is not in this rank's symmetric or local heap"), nullptr);
    EXPECT_EQ(hgas_get_sym(&stack_word, w, 8, N), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::strstr(hgas_last_error(), "hgas_get_sym: rank"), nullptr) << hgas_last_error();
    EXPECT_EQ(hgas_put_sym(w, nullptr, 8, t), HGAS_ERR_INVALID_ARG);  // NULL source
    EXPECT_NE(std::strstr(hgas_last_error(), "hgas_put: source buffer is NULL"), nullptr) << hgas_last_error();
    EXPECT_EQ(hgas_get_sym(nullptr, w, 8, t), HGAS_ERR_INVALID_ARG);  // NULL destination
    hgas_gptr_t g = gp(w, t);
    EXPECT_EQ(hgas_put(hgas_gptr_add(g, int64_t(1) << 40), &v, 8), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_NE(std::strstr(hgas_last_error(), "leave segment"), nullptr) << hgas_last_error();
    hgas_gptr_t low = g;
    low.offset = 0;  // hgas's own objects
    EXPECT_EQ(hgas_put(low, &v, 8), HGAS_ERR_OUT_OF_BOUNDS);
    EXPECT_NE(std::strstr(hgas_last_error(), "hgas's own objects"), nullptr) << hgas_last_error();
    hgas_gptr_t flagged = g;
    flagged.flags = 1;
    EXPECT_EQ(hgas_get(&stack_word, flagged, 8), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::strstr(hgas_last_error(), "reserved flag bits"), nullptr) << hgas_last_error();
    int64_t old = 0;
    EXPECT_EQ(hgas_atomic_sym(reinterpret_cast<char *>(w) + 4, t, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v, nullptr, &old),
              HGAS_ERR_MISALIGNED);
    EXPECT_EQ(hgas_atomic_sym(w, t, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v, nullptr, nullptr), HGAS_ERR_INVALID_ARG);
    HGAS_OK_OR_FAIL(hgas_barrier());
    EXPECT_EQ(w[0], 0u);  // nothing of the failed calls arrived
    EXPECT_EQ(w[1], 0u);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(w));
}

TEST(Runtime, Queries) {
    EXPECT_EQ(hgas_initialized(), 1);
    EXPECT_GE(me(), 0);
    EXPECT_LT(me(), n());
    EXPECT_GE(hgas_node_n(), 1);
    EXPECT_LT(hgas_local_rank(), hgas_local_n());
    EXPECT_EQ(hgas_node_of(me()), hgas_node_me());
    EXPECT_EQ(hgas_node_of(n()), -1);
    EXPECT_EQ(hgas_init(), HGAS_ERR_ALREADY_INITIALIZED);
    int counts[2] = {1, hgas_node_me() == hgas_node_of(0) ? 1 : 0}, sums[2];
    HGAS_OK_OR_FAIL(hgas_allreduce(sums, counts, 2, HGAS_INT32, HGAS_OP_SUM));
    EXPECT_EQ(sums[0], n());
    if (hgas_node_me() == hgas_node_of(0)) {
        EXPECT_EQ(sums[1], hgas_local_n());
    }
}

}  // namespace
