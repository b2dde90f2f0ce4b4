// The RMA / signal / atomic matrix with device memory on either side, with value checks.
// The device kind under test is HGAS_TEST_KIND (sim, the default, or cuda). Device memory is
// never touched by the CPU here: it is filled and read back through hgas calls, so every
// check also exercises the own-memory device copies.
//
// Run by ctest (tests/ranks/CMakeLists.txt) over: sim with peer mapping, sim staged
// (HGAS_PATH=staged), sim without peer access, sim over UCX and across two pretend nodes;
// and, on a GPU machine (label gpu), cuda on one GPU and on two.
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

hgas_kind_t device_kind() {
    const char *e = std::getenv("HGAS_TEST_KIND");
    return e && std::strcmp(e, "cuda") == 0 ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
}

#define REQUIRE_KIND()                                                                        \
    do {                                                                                      \
        ASSERT_TRUE(hgas_kind_available(device_kind()))                                       \
            << "kind " << hgas_kind_name(device_kind()) << " is not available on rank " << me(); \
    } while (0)

// Any-kind symmetric memory of this rank, written and read through hgas.
void write_own(void *sym, const void *src, size_t bytes) { HGAS_OK_OR_FAIL(hgas_put(gp(sym, me()), src, bytes)); }
std::vector<unsigned char> read_own(const void *sym, size_t bytes) {
    std::vector<unsigned char> v(bytes);
    EXPECT_EQ(hgas_get(v.data(), gp(sym, me()), bytes), HGAS_OK) << hgas_last_error();
    return v;
}

unsigned char pat(int w, int t, size_t i, int salt) { return pattern(w, t, i + salt * 977); }

TEST(Kinds, PutGetEveryKindPairEverySize) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    const size_t sizes[] = {1, 8, 4097, (1 << 20) + 13};
    const size_t maxsz = (1 << 20) + 64;
    void *dst[2], *local_d;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxsz * n(), HGAS_KIND_HOST, &dst[0]));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxsz * n(), D, &dst[1]));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxsz, D, &local_d));  // a device source/destination buffer
    std::vector<unsigned char> src(maxsz);
    for (int tk = 0; tk < 2; ++tk) {
        for (int sk = 0; sk < 2; ++sk) {
            for (size_t sz : sizes) {
                const int salt = tk * 4 + sk * 2 + static_cast<int>(sz % 5);
                for (int t = 0; t < n(); ++t) {
                    for (size_t i = 0; i < sz; ++i) src[i] = pat(me(), t, i, salt);
                    const void *from = src.data();
                    if (sk) {
                        write_own(local_d, src.data(), sz);
                        from = local_d;
                    }
                    HGAS_OK_OR_FAIL(hgas_put(gp(static_cast<char *>(dst[tk]) + maxsz * me(), t), from, sz));
                }
                HGAS_OK_OR_FAIL(hgas_barrier());
                auto got = read_own(dst[tk], maxsz * n());
                for (int w = 0; w < n(); ++w)
                    for (size_t i = 0; i < sz; ++i)
                        ASSERT_EQ(got[maxsz * w + i], pat(w, me(), i, salt))
                            << "target kind " << tk << " source kind " << sk << " size " << sz << " from rank " << w
                            << " byte " << i;
                // And back, from every target, into a buffer of either kind.
                for (int t = 0; t < n(); ++t) {
                    std::vector<unsigned char> back(sz);
                    hgas_gptr_t from = gp(static_cast<char *>(dst[tk]) + maxsz * me(), t);
                    if (sk) {
                        HGAS_OK_OR_FAIL(hgas_get(local_d, from, sz));
                        back = read_own(local_d, sz);
                    } else {
                        HGAS_OK_OR_FAIL(hgas_get(back.data(), from, sz));
                    }
                    for (size_t i = 0; i < sz; ++i)
                        ASSERT_EQ(back[i], pat(me(), t, i, salt)) << "get size " << sz << " from " << t << " at " << i;
                }
                HGAS_OK_OR_FAIL(hgas_barrier());
            }
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(local_d));
    HGAS_OK_OR_FAIL(hgas_free(dst[1]));
    HGAS_OK_OR_FAIL(hgas_free(dst[0]));
}

// Small puts from pageable host memory into device memory, every length up to 24 and four
// destination alignments: on cuda these travel in the copy agent's descriptor (up to 16 bytes)
// or its payload slot, and the bytes around each one must stay untouched.
TEST(Kinds, SmallPutsFromPageableMemoryEveryLengthAndAlignment) {
    REQUIRE_KIND();
    const size_t slot = 32, lens = 24, offs = 4, region = slot * lens * offs;
    char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(region * n(), device_kind(), (void **)&dst));
    write_own(dst, std::vector<unsigned char>(region * n(), 0).data(), region * n());
    HGAS_OK_OR_FAIL(hgas_barrier());
    std::vector<unsigned char> src(lens);  // a heap buffer: pageable
    for (int t = 0; t < n(); ++t)
        for (size_t len = 1; len <= lens; ++len)
            for (size_t off = 0; off < offs; ++off) {
                for (size_t i = 0; i < len; ++i) src[i] = pat(me(), t, i, static_cast<int>(len * offs + off));
                char *at = dst + region * me() + ((len - 1) * offs + off) * slot + off;
                HGAS_OK_OR_FAIL(hgas_put(gp(at, t), src.data(), len));
            }
    HGAS_OK_OR_FAIL(hgas_barrier());
    const auto got = read_own(dst, region * n());
    for (int w = 0; w < n(); ++w)
        for (size_t len = 1; len <= lens; ++len)
            for (size_t off = 0; off < offs; ++off) {
                const unsigned char *s = got.data() + region * w + ((len - 1) * offs + off) * slot;
                for (size_t i = 0; i < slot; ++i) {
                    const bool in = i >= off && i < off + len;
                    const unsigned char want = in ? pat(w, me(), i - off, static_cast<int>(len * offs + off)) : 0;
                    ASSERT_EQ(s[i], want) << "from rank " << w << " length " << len << " offset " << off << " byte " << i
                                          << (in ? "" : " (outside the put)");
                }
            }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(Kinds, NonBlockingFormsComplete) {
    REQUIRE_KIND();
    const size_t count = 2048;
    uint64_t *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * sizeof(uint64_t) * n(), device_kind(), (void **)&dst));
    std::vector<uint64_t> src(count);
    for (size_t i = 0; i < count; ++i) src[i] = (uint64_t)me() << 32 | i;
    for (int t = 0; t < n(); ++t) {
        // half through _nbi + quiet, half through a handle
        HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dst + count * me(), t), src.data(), count / 2 * sizeof(uint64_t)));
        hgas_handle_t h;
        HGAS_OK_OR_FAIL(hgas_put_nb(gp(dst + count * me() + count / 2, t), &src[count / 2], count / 2 * sizeof(uint64_t), &h));
        HGAS_OK_OR_FAIL(hgas_wait(h));
    }
    HGAS_OK_OR_FAIL(hgas_quiet());
    HGAS_OK_OR_FAIL(hgas_barrier());
    auto got = read_own(dst, count * sizeof(uint64_t) * n());
    const uint64_t *g = reinterpret_cast<const uint64_t *>(got.data());
    for (int w = 0; w < n(); ++w)
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(g[count * w + i], (uint64_t)w << 32 | i);
    std::vector<uint64_t> back(count);
    const int t = (me() + 1) % n();
    HGAS_OK_OR_FAIL(hgas_get_nbi(back.data(), gp(dst + count * me(), t), count * sizeof(uint64_t)));
    HGAS_OK_OR_FAIL(hgas_quiet());
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(back[i], (uint64_t)me() << 32 | i);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// An nbi put from device memory arrives while its initiator only waits (no quiet): a staged
// nbi put leaves its chunks to be published as their copies finish, and the initiator's
// progress must do that. Each rank puts to the next, watches its own buffer until the previous
// rank's data is complete, then tells that rank; nobody calls quiet before the signal.
TEST(Kinds, NonBlockingPutArrivesWithoutQuiet) {
    REQUIRE_KIND();
    if (n() < 2) GTEST_SKIP() << "needs two ranks";
    const size_t bytes = 200000;  // several staging chunks
    unsigned char *src, *dst;
    uint64_t *sig;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, device_kind(), (void **)&src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, device_kind(), (void **)&dst));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_HOST, (void **)&sig));
    *sig = 0;
    const int to = (me() + 1) % n(), from = (me() + n() - 1) % n();
    std::vector<unsigned char> v(bytes), want(bytes);
    for (size_t i = 0; i < bytes; ++i) v[i] = pat(me(), to, i, 7);
    for (size_t i = 0; i < bytes; ++i) want[i] = pat(from, me(), i, 7);
    write_own(src, v.data(), bytes);
    std::vector<unsigned char> poison(bytes, 0xEE);
    write_own(dst, poison.data(), bytes);
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dst, to), src, bytes));
    bool arrived = false;
    for (int i = 0; i < 20000 && !arrived; ++i) {  // 20 s at most
        HGAS_OK_OR_FAIL(hgas_progress());
        arrived = read_own(dst, bytes) == want;
        if (!arrived) usleep(1000);
    }
    ASSERT_TRUE(arrived) << "rank " << from << "'s nbi put never arrived without a quiet";
    HGAS_OK_OR_FAIL(hgas_put_signal(gp(sig, from), nullptr, 0, gp(sig, from), 1, HGAS_SIGNAL_ADD));
    uint64_t seen = 0;
    HGAS_OK_OR_FAIL(hgas_signal_wait_until(sig, HGAS_CMP_GE, 1, &seen));
    HGAS_OK_OR_FAIL(hgas_quiet());
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(sig));
    HGAS_OK_OR_FAIL(hgas_free(dst));
    HGAS_OK_OR_FAIL(hgas_free(src));
}

// The same while the initiator computes: it makes no hgas call after the nbi put (with
// HGAS_PROGRESS_THREAD its helper publishes the chunks; without, it calls hgas_progress).
TEST(Kinds, NonBlockingPutArrivesWhileTheInitiatorComputes) {
    REQUIRE_KIND();
    if (n() < 2) GTEST_SKIP() << "needs two ranks";
    const char *pt = std::getenv("HGAS_PROGRESS_THREAD");
    const bool helper = pt && std::strcmp(pt, "1") == 0;
    const size_t bytes = 200000;
    unsigned char *src, *dst;
    volatile uint64_t *flag;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, device_kind(), (void **)&src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, device_kind(), (void **)&dst));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, HGAS_KIND_HOST, (void **)&flag));
    *flag = 0;
    const int to = (me() + 1) % n(), from = (me() + n() - 1) % n();
    std::vector<unsigned char> v(bytes), want(bytes);
    for (size_t i = 0; i < bytes; ++i) v[i] = pat(me(), to, i, 9);
    for (size_t i = 0; i < bytes; ++i) want[i] = pat(from, me(), i, 9);
    write_own(src, v.data(), bytes);
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() == 0) {  // the initiator: one nbi put, then only its own memory until rank 1 answers
        HGAS_OK_OR_FAIL(hgas_put_nbi(gp(dst, to), src, bytes));
        bool answered = false;
        for (int i = 0; i < 20000 && !answered; ++i) {  // 20 s at most
            answered = *flag == 1;
            if (!answered && !helper) HGAS_OK_OR_FAIL(hgas_progress());
            if (!answered) usleep(1000);
        }
        ASSERT_TRUE(answered) << "rank 0's nbi put never reached rank " << to << " while rank 0 computed";
        HGAS_OK_OR_FAIL(hgas_quiet());
    } else if (me() == 1) {  // watches its buffer, then answers rank 0 with a host store
        // The target applies staged chunks in its progress: a get of its own memory that the
        // GPU finishes at once waits for nothing and so polls nothing, hence hgas_progress.
        bool arrived = false;
        for (int i = 0; i < 20000 && !arrived; ++i) {
            HGAS_OK_OR_FAIL(hgas_progress());
            arrived = read_own(dst, bytes) == want;
            if (!arrived) usleep(1000);
        }
        ASSERT_TRUE(arrived) << "rank 0's nbi put never arrived";
        const uint64_t one = 1;
        HGAS_OK_OR_FAIL(hgas_put(gp(const_cast<uint64_t *>(flag), 0), &one, 8));
        HGAS_OK_OR_FAIL(hgas_quiet());
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(const_cast<uint64_t *>(flag)));
    HGAS_OK_OR_FAIL(hgas_free(dst));
    HGAS_OK_OR_FAIL(hgas_free(src));
}

// A get after a put to the same place of a peer's device memory, with no quiet between them,
// reads what the put wrote: staged messages of one rank to another are applied in order, and
// the get's copy out of device memory must not overtake the put's copy into it.
TEST(Kinds, GetAfterPutSeesThePut) {
    REQUIRE_KIND();
    const size_t bytes = 200000;  // several staging chunks
    unsigned char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, device_kind(), (void **)&dst));
    const int t = (me() + 1) % n();
    std::vector<unsigned char> v(bytes), back(bytes);
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (int round = 1; round <= 4; ++round) {
        for (size_t i = 0; i < bytes; ++i) v[i] = pat(me(), t, i, 20 + round);
        // A small get of the end of a large chunk first: with a slow engine (the _order
        // config) its copy out would finish long before that chunk's copy in.
        const size_t at = 3 * 65536 - 8;
        HGAS_OK_OR_FAIL(hgas_put(gp(dst, t), v.data(), bytes));
        uint64_t w = 0;
        HGAS_OK_OR_FAIL(hgas_get(&w, gp(dst + at, t), 8));
        ASSERT_EQ(std::memcmp(&w, v.data() + at, 8), 0) << "round " << round << ": the small get missed the put";
        HGAS_OK_OR_FAIL(hgas_put(gp(dst, t), v.data(), bytes));
        HGAS_OK_OR_FAIL(hgas_get(back.data(), gp(dst, t), bytes));
        ASSERT_EQ(std::memcmp(back.data(), v.data(), bytes), 0) << "round " << round << ": the get missed the put";
        HGAS_OK_OR_FAIL(hgas_barrier());  // the ranks run the rounds in step (n 1: one rank, target itself)
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// put_signal with the data and the signal word each in host or device memory: the data is
// complete when the signal shows, in every combination.
TEST(Kinds, PutSignalDataBeforeSignal) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    const size_t bytes = 300000;  // several staging chunks
    const int rounds = 3;
    for (int combo = 0; combo < 3; ++combo) {
        const hgas_kind_t dk = combo == 1 ? HGAS_KIND_HOST : D;  // 0: D/host, 1: host/D, 2: D/D
        const hgas_kind_t sk = combo == 0 ? HGAS_KIND_HOST : D;
        char *data;
        uint64_t *sig;
        HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes, dk, (void **)&data));
        HGAS_OK_OR_FAIL(hgas_malloc_kind(64, sk, (void **)&sig));
        uint64_t zero = 0;
        write_own(sig, &zero, 8);
        HGAS_OK_OR_FAIL(hgas_barrier());
        const int to = (me() + 1) % n(), from = (me() + n() - 1) % n();
        std::vector<unsigned char> src(bytes);
        for (int round = 1; round <= rounds; ++round) {
            SCOPED_TRACE("combo " + std::to_string(combo) + " round " + std::to_string(round));
            for (size_t i = 0; i < bytes; ++i) src[i] = pat(me(), to, i, round + combo * 10);
            HGAS_OK_OR_FAIL(hgas_put_signal(gp(data, to), src.data(), bytes, gp(sig, to), 1, HGAS_SIGNAL_ADD));
            uint64_t seen = 0;
            HGAS_OK_OR_FAIL(hgas_signal_wait_until(sig, HGAS_CMP_GE, (uint64_t)round, &seen));
            ASSERT_EQ(seen, (uint64_t)round);
            auto got = read_own(data, bytes);
            for (size_t i = 0; i < bytes; ++i)
                ASSERT_EQ(got[i], pat(from, me(), i, round + combo * 10)) << "combo " << combo << " round " << round;
            HGAS_OK_OR_FAIL(hgas_barrier());  // nobody overwrites before everyone has checked
        }
        uint64_t v = 0;
        HGAS_OK_OR_FAIL(hgas_signal_fetch(sig, &v));
        EXPECT_EQ(v, (uint64_t)rounds);
        int ok = 0;
        HGAS_OK_OR_FAIL(hgas_signal_test(sig, HGAS_CMP_EQ, (uint64_t)rounds, &ok));
        EXPECT_TRUE(ok);
        HGAS_OK_OR_FAIL(hgas_barrier());
        HGAS_OK_OR_FAIL(hgas_free(sig));
        HGAS_OK_OR_FAIL(hgas_free(data));
    }
}

TEST(Kinds, AtomicsOnDeviceMemory) {
    REQUIRE_KIND();
    int64_t *counter;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64 * (n() + 1), device_kind(), (void **)&counter));
    std::vector<int64_t> zeros(8 * (n() + 1), 0);
    write_own(counter, zeros.data(), zeros.size() * 8);
    HGAS_OK_OR_FAIL(hgas_barrier());
    // Everyone adds to rank 0's counter; the fetched values are all different.
    const int iters = 50;
    int64_t sum_old = 0;
    for (int i = 0; i < iters; ++i) {
        int64_t old;
        HGAS_OK_OR_FAIL(hgas_atomic_fetch_add64(gp(counter, 0), 1, &old));
        sum_old += old;
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    int64_t total;
    HGAS_OK_OR_FAIL(hgas_atomic_fetch64(gp(counter, 0), &total));
    EXPECT_EQ(total, (int64_t)iters * n());
    int64_t all_old = 0;
    HGAS_OK_OR_FAIL(hgas_allreduce(&all_old, &sum_old, 1, HGAS_INT64, HGAS_OP_SUM));
    const int64_t N = (int64_t)iters * n();
    EXPECT_EQ(all_old, N * (N - 1) / 2) << "fetched values are not 0..N-1 once each";
    // Every operation, 64- and 32-bit, on this rank's own word at the next rank.
    const int t = (me() + 1) % n();
    hgas_gptr_t w = gp(counter + 8 * (me() + 1), t);
    int64_t v, old, cmp;
    v = 5; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_SET, HGAS_INT64, &v, 0, 0));
    v = 3; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_ADD, HGAS_INT64, &v, 0, 0));
    v = 2; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH_ADD, HGAS_INT64, &v, 0, &old)); EXPECT_EQ(old, 8);
    HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH_INC, HGAS_INT64, 0, 0, &old)); EXPECT_EQ(old, 10);
    v = 7; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_SWAP, HGAS_INT64, &v, 0, &old)); EXPECT_EQ(old, 11);
    v = 9; cmp = 7; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &v, &cmp, &old)); EXPECT_EQ(old, 7);
    v = 1; cmp = 7; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_COMPARE_SWAP, HGAS_INT64, &v, &cmp, &old)); EXPECT_EQ(old, 9);
    v = 12; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH_AND, HGAS_INT64, &v, 0, &old)); EXPECT_EQ(old, 9);
    v = 1; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH_OR, HGAS_INT64, &v, 0, &old)); EXPECT_EQ(old, 8);
    v = 3; HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH_XOR, HGAS_INT64, &v, 0, &old)); EXPECT_EQ(old, 9);
    HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH, HGAS_INT64, 0, 0, &old)); EXPECT_EQ(old, 10);
    // 32-bit, in the upper half of the word: the lower half must not change.
    hgas_gptr_t w32 = hgas_gptr_add(w, 4);
    int32_t a = 40, o32 = 0, c32 = 40;
    HGAS_OK_OR_FAIL(hgas_atomic(w32, HGAS_AMO_SET, HGAS_INT32, &a, 0, 0));
    a = 2; HGAS_OK_OR_FAIL(hgas_atomic(w32, HGAS_AMO_FETCH_ADD, HGAS_INT32, &a, 0, &o32)); EXPECT_EQ(o32, 40);
    a = 50; c32 = 42; HGAS_OK_OR_FAIL(hgas_atomic(w32, HGAS_AMO_COMPARE_SWAP, HGAS_INT32, &a, &c32, &o32)); EXPECT_EQ(o32, 42);
    HGAS_OK_OR_FAIL(hgas_atomic(w, HGAS_AMO_FETCH, HGAS_INT64, 0, 0, &old));
    EXPECT_EQ(old, (int64_t)((uint64_t)50 << 32 | 10));
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(counter));
}

TEST(Kinds, ScopedDefaultArraysAndLocalAllocations) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    EXPECT_EQ(hgas_default_kind(), HGAS_KIND_HOST);
    EXPECT_EQ(hgas_set_default_kind(D), HGAS_KIND_HOST);  // the seeds' upc_on_device()
    void *p;
    HGAS_OK_OR_FAIL(hgas_malloc(4096, &p));
    EXPECT_EQ(hgas_ptr_kind(p), D);
    EXPECT_EQ(hgas_gptr_kind(gp(p, 0)), D);
    hgas_array_t arr;
    const uint64_t nblocks = 3 * n() + 1, bb = 1000;
    HGAS_OK_OR_FAIL(hgas_all_alloc(nblocks, bb, &arr));
    EXPECT_EQ(hgas_set_default_kind(HGAS_KIND_HOST), D);  // upc_off_device()
    // Every rank writes its blocks' bytes through the array; rank 0 reads the whole array.
    for (uint64_t b = me(); b < nblocks; b += n()) {
        std::vector<unsigned char> blk(bb);
        for (size_t i = 0; i < bb; ++i) blk[i] = static_cast<unsigned char>(b * 13 + i);
        hgas_gptr_t g;
        HGAS_OK_OR_FAIL(hgas_array_ptr(&arr, b * bb, &g));
        EXPECT_EQ(hgas_gptr_kind(g), D);
        HGAS_OK_OR_FAIL(hgas_put(g, blk.data(), bb));
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    for (uint64_t b = 0; b < nblocks; ++b) {
        hgas_gptr_t g;
        HGAS_OK_OR_FAIL(hgas_array_ptr(&arr, b * bb, &g));
        std::vector<unsigned char> blk(bb);
        HGAS_OK_OR_FAIL(hgas_get(blk.data(), g, bb));
        for (size_t i = 0; i < bb; ++i) ASSERT_EQ(blk[i], static_cast<unsigned char>(b * 13 + i)) << "block " << b;
    }
    // A non-collective device allocation on rank 0, written by everyone.
    uint64_t *slot;  // host: rank 0 publishes its global pointer here
    HGAS_OK_OR_FAIL(hgas_calloc(1, sizeof(hgas_gptr_t), (void **)&slot));
    hgas_gptr_t mine = hgas_gptr_null();
    if (me() == 0) {
        HGAS_OK_OR_FAIL(hgas_alloc_kind(8 * n(), D, &mine));
        EXPECT_EQ(hgas_gptr_kind(mine), D);
    }
    HGAS_OK_OR_FAIL(hgas_broadcast(slot, &mine, sizeof mine, 0));
    hgas_gptr_t g0;
    std::memcpy(&g0, slot, sizeof g0);
    const uint64_t val = 1000 + me();
    HGAS_OK_OR_FAIL(hgas_put(hgas_gptr_add(g0, 8 * me()), &val, 8));
    HGAS_OK_OR_FAIL(hgas_barrier());
    if (me() == 0) {
        std::vector<uint64_t> all(n());
        HGAS_OK_OR_FAIL(hgas_get(all.data(), g0, 8 * n()));
        for (int r = 0; r < n(); ++r) EXPECT_EQ(all[r], (uint64_t)(1000 + r));
        HGAS_OK_OR_FAIL(hgas_dealloc(g0));
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(slot));
    HGAS_OK_OR_FAIL(hgas_all_free(&arr));
    HGAS_OK_OR_FAIL(hgas_free(p));
}

// Thread-local: with ranks as threads (HGAS_RANK_THREADS) a fault jumps back in its own thread.
thread_local sigjmp_buf fault_jmp;
void on_fault(int) { siglongjmp(fault_jmp, 1); }

TEST(Kinds, BadInputGetsClearErrors) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    void *p = nullptr;
    EXPECT_EQ(hgas_malloc_kind(64, (hgas_kind_t)7, &p), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::strstr(hgas_last_error(), "hgas_kind_t"), nullptr) << hgas_last_error();
    if (!hgas_kind_available(HGAS_KIND_CUDA)) {
        EXPECT_EQ(hgas_malloc_kind(64, HGAS_KIND_CUDA, &p), HGAS_ERR_UNSUPPORTED);
        EXPECT_NE(std::strstr(hgas_last_error(), "cuda"), nullptr) << hgas_last_error();
        EXPECT_EQ(hgas_set_default_kind(HGAS_KIND_CUDA), HGAS_KIND_DEFAULT);
        EXPECT_EQ(hgas_default_kind(), HGAS_KIND_HOST);
    }
    char *d;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(4096, D, (void **)&d));
    // Collectives take device memory too (test_coll_kinds checks their values); a device
    // destination must be symmetric like a host one: a NULL one is named.
    EXPECT_EQ(hgas_broadcast(d, d, 64, 0), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(hgas_allreduce(nullptr, d, 4, HGAS_INT32, HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::strstr(hgas_last_error(), "dst is NULL"), nullptr) << hgas_last_error();
    // Out of the device segment's bounds.
    hgas_gptr_t g = gp(d, 0);
    g.offset = UINT64_MAX - 8;
    char buf[16];
    EXPECT_EQ(hgas_put(g, buf, 16), HGAS_ERR_OUT_OF_BOUNDS);
    // Misaligned device atomic.
    int64_t one = 1;
    EXPECT_EQ(hgas_atomic(hgas_gptr_add(gp(d, 0), 4), HGAS_AMO_ADD, HGAS_INT64, &one, 0, 0), HGAS_ERR_MISALIGNED);
    // A symmetric device pointer is not an hgas_alloc allocation.
    EXPECT_EQ(hgas_dealloc(gp(d, me())), HGAS_ERR_INVALID_POINTER);
    // Signal handlers are the process's: with ranks as threads only the first rank of each
    // process swaps them to probe the fault (the others would race it for the handler).
    const char *threads = std::getenv("HGAS_THREADS");
    const int per_process = threads ? std::atoi(threads) : 1;
    if (D == HGAS_KIND_SIM) EXPECT_EQ(hgas_local_addr(gp(d, me())), nullptr);
    if (D == HGAS_KIND_SIM && (per_process <= 1 || me() % per_process == 0)) {
        // sim memory is reachable only through hgas: no local address, and a CPU load faults.
        struct sigaction sa {}, old_segv {}, old_bus {};
        sa.sa_handler = on_fault;
        sigaction(SIGSEGV, &sa, &old_segv);
        sigaction(SIGBUS, &sa, &old_bus);
        volatile bool faulted = false;
        if (sigsetjmp(fault_jmp, 1) == 0) {
            volatile char c = *(volatile char *)d;
            (void)c;
        } else {
            faulted = true;
        }
        sigaction(SIGSEGV, &old_segv, nullptr);
        sigaction(SIGBUS, &old_bus, nullptr);
        EXPECT_TRUE(faulted) << "a CPU load of sim memory must fault";
    }
    HGAS_OK_OR_FAIL(hgas_free(d));
    // Freed twice: every rank gets the error.
    EXPECT_EQ(hgas_free(d), HGAS_ERR_INVALID_POINTER);
    HGAS_OK_OR_FAIL(hgas_barrier());
}

}  // namespace
