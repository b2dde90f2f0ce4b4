// World-team collectives: values of every collective x dtype x op x size x root, back-to-back
// calls with no barrier between them, and bad input. Sizes include 0, 1, odd, and more than the
// collective scratch (HGAS_COLL_SCRATCH, default 1M) so that reductions run in chunks; run it
// also with HGAS_COLL_SCRATCH=4096 to force many chunks at small sizes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

// HGAS_COLL_SCRATCH as the runtime reads it (bytes with an optional K/M/G suffix).
size_t scratch_bytes() {
    const char *e = std::getenv("HGAS_COLL_SCRATCH");
    if (!e || !*e) return 1u << 20;
    char *end;
    size_t v = std::strtoull(e, &end, 10);
    switch (*end) {
    case 'K': case 'k': v <<= 10; break;
    case 'M': case 'm': v <<= 20; break;
    case 'G': case 'g': v <<= 30; break;
    }
    return v;
}
// More bytes than twice the scratch: forces several chunks in every reduction.
const size_t kLarge = 2 * scratch_bytes() + 12344;

std::vector<int> roots() {
    std::vector<int> r{0};
    if (n() > 1) r.push_back(n() - 1);
    if (n() > 2) r.push_back(n() / 2);
    return r;
}

// --- broadcast -----------------------------------------------------------------------------

TEST(Coll, BroadcastSizesAndRootsBackToBack) {
    const size_t sizes[] = {0, 1, 7, 4097, 65536 + 3, 300001};
    const size_t maxsz = 300001;
    unsigned char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc(maxsz + 64, (void **)&dst));
    std::vector<unsigned char> src(maxsz);
    for (int root : roots()) {
        for (size_t sz : sizes) {
            // No barrier: the broadcast itself must not write dst before this rank entered it.
            std::memset(dst, 0xEE, maxsz + 64);
            if (me() == root)
                for (size_t i = 0; i < sz; ++i) src[i] = pattern(root, 0, i + sz);
            HGAS_OK_OR_FAIL(hgas_broadcast(dst, src.data(), sz, root)) << "size " << sz << " root " << root;
            for (size_t i = 0; i < sz; ++i)
                ASSERT_EQ(dst[i], pattern(root, 0, i + sz)) << "size " << sz << " root " << root << " byte " << i;
            for (size_t i = sz; i < maxsz + 64; ++i) ASSERT_EQ(dst[i], 0xEE) << "written past the end at " << i;
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(Coll, BroadcastInPlaceOnRoot) {
    const size_t sz = 100000;
    unsigned char *buf;
    HGAS_OK_OR_FAIL(hgas_malloc(sz, (void **)&buf));
    for (int root : roots()) {
        for (size_t i = 0; i < sz; ++i) buf[i] = me() == root ? pattern(root, 1, i) : 0;
        HGAS_OK_OR_FAIL(hgas_broadcast(buf, buf, sz, root));
        for (size_t i = 0; i < sz; ++i) ASSERT_EQ(buf[i], pattern(root, 1, i)) << "root " << root << " byte " << i;
    }
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

// --- reductions ----------------------------------------------------------------------------

// Inputs whose results are exact in every type, whatever the order of combination.
template <class T>
T input(int rank, size_t j, hgas_op_t op) {
    if (op == HGAS_OP_PROD) {
        // 1, 2 or (signed types) -1: products stay small powers of two.
        const int k = static_cast<int>((rank + j) % 5);
        if (k == 0) return T(2);
        if (k == 3 && std::is_signed_v<T>) return T(-1);
        return T(1);
    }
    long v = static_cast<long>((rank * 37 + j * 11) % 101);
    if (std::is_signed_v<T>) v -= 50;
    return static_cast<T>(v);
}

template <class T>
T expected(int nranks, size_t j, hgas_op_t op) {
    T acc = input<T>(0, j, op);
    for (int rk = 1; rk < nranks; ++rk) {
        const T x = input<T>(rk, j, op);
        switch (op) {
        case HGAS_OP_SUM: acc = acc + x; break;
        case HGAS_OP_PROD: acc = acc * x; break;
        case HGAS_OP_MIN: acc = x < acc ? x : acc; break;
        case HGAS_OP_MAX: acc = acc < x ? x : acc; break;
        default: break;  // the bitwise ops are tested in test_team
        }
    }
    return acc;
}

const hgas_op_t kOps[] = {HGAS_OP_SUM, HGAS_OP_MIN, HGAS_OP_MAX, HGAS_OP_PROD};

template <class T>
std::vector<size_t> counts(hgas_op_t op) {
    std::vector<size_t> c{0, 1, 7, 1001};
    if (op == HGAS_OP_SUM || op == HGAS_OP_MAX) c.push_back(kLarge / sizeof(T) + 3);
    return c;
}

template <class T>
void check_reduce(hgas_dtype_t type) {
    for (hgas_op_t op : kOps) {
        for (size_t count : counts<T>(op)) {
            std::vector<T> src(count + 1), dst(count + 1), want(count);
            for (size_t j = 0; j < count; ++j) src[j] = input<T>(me(), j, op);
            for (size_t j = 0; j < count; ++j) want[j] = expected<T>(n(), j, op);
            for (int root : roots()) {
                std::fill(dst.begin(), dst.end(), T(99));
                HGAS_OK_OR_FAIL(hgas_reduce(dst.data(), src.data(), count, type, op, root))
                    << "type " << type << " op " << op << " count " << count << " root " << root;
                if (me() != root) continue;
                for (size_t j = 0; j < count; ++j)
                    ASSERT_EQ(dst[j], want[j])
                        << "type " << type << " op " << op << " count " << count << " root " << root << " at " << j;
                ASSERT_EQ(dst[count], T(99)) << "written past the end";
            }
            // In place on the root.
            const int root = n() - 1;
            std::vector<T> inout(src);
            HGAS_OK_OR_FAIL(hgas_reduce(inout.data(), inout.data(), count, type, op, root));
            if (me() == root) {
                for (size_t j = 0; j < count; ++j) ASSERT_EQ(inout[j], want[j]) << "in place at " << j;
            } else {
                for (size_t j = 0; j < count; ++j) ASSERT_EQ(inout[j], src[j]) << "src changed on a non-root";
            }
        }
    }
}

template <class T>
void check_allreduce(hgas_dtype_t type) {
    for (hgas_op_t op : kOps) {
        for (size_t count : counts<T>(op)) {
            std::vector<T> src(count + 1), dst(count + 1, T(99)), want(count);
            for (size_t j = 0; j < count; ++j) src[j] = input<T>(me(), j, op);
            for (size_t j = 0; j < count; ++j) want[j] = expected<T>(n(), j, op);
            const std::vector<T> orig(src);
            HGAS_OK_OR_FAIL(hgas_allreduce(dst.data(), src.data(), count, type, op))
                << "type " << type << " op " << op << " count " << count;
            for (size_t j = 0; j < count; ++j)
                ASSERT_EQ(dst[j], want[j]) << "type " << type << " op " << op << " count " << count << " at " << j;
            ASSERT_EQ(dst[count], T(99)) << "written past the end";
            ASSERT_EQ(src, orig) << "src changed";
            // In place, straight after (no barrier).
            HGAS_OK_OR_FAIL(hgas_allreduce(src.data(), src.data(), count, type, op));
            for (size_t j = 0; j < count; ++j) ASSERT_EQ(src[j], want[j]) << "in place at " << j;
        }
    }
}

TEST(Coll, ReduceEveryTypeOpCountRoot) {
    check_reduce<int32_t>(HGAS_INT32);
    check_reduce<int64_t>(HGAS_INT64);
    check_reduce<uint32_t>(HGAS_UINT32);
    check_reduce<uint64_t>(HGAS_UINT64);
    check_reduce<float>(HGAS_FLOAT);
    check_reduce<double>(HGAS_DOUBLE);
}

TEST(Coll, AllreduceEveryTypeOpCount) {
    check_allreduce<int32_t>(HGAS_INT32);
    check_allreduce<int64_t>(HGAS_INT64);
    check_allreduce<uint32_t>(HGAS_UINT32);
    check_allreduce<uint64_t>(HGAS_UINT64);
    check_allreduce<float>(HGAS_FLOAT);
    check_allreduce<double>(HGAS_DOUBLE);
}

// Floating-point sums that are not exact: every rank must get the same bits, and the same
// bits on every call (the order of combination does not depend on timing).
TEST(Coll, AllreduceFloatIsDeterministic) {
    const size_t count = 5000;
    std::vector<double> src(count), first(count), again(count), all(count * n());
    for (size_t j = 0; j < count; ++j) src[j] = 1.0 / (3.0 + me() * 7.0 + j);
    HGAS_OK_OR_FAIL(hgas_allreduce(first.data(), src.data(), count, HGAS_DOUBLE, HGAS_OP_SUM));
    for (int rep = 0; rep < 5; ++rep) {
        HGAS_OK_OR_FAIL(hgas_allreduce(again.data(), src.data(), count, HGAS_DOUBLE, HGAS_OP_SUM));
        ASSERT_EQ(std::memcmp(first.data(), again.data(), count * sizeof(double)), 0) << "repetition " << rep;
    }
    // Every rank has the same bits: gather them all and compare.
    double *sym;
    HGAS_OK_OR_FAIL(hgas_malloc(count * sizeof(double) * n(), (void **)&sym));
    HGAS_OK_OR_FAIL(hgas_fcollect(sym, first.data(), count * sizeof(double)));
    for (int rk = 0; rk < n(); ++rk)
        ASSERT_EQ(std::memcmp(sym + count * rk, first.data(), count * sizeof(double)), 0) << "rank " << rk << " differs";
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

// --- fcollect and alltoall -------------------------------------------------------------------

TEST(Coll, FcollectSizesBackToBack) {
    const size_t sizes[] = {0, 1, 13, 4096, 70001};
    const size_t maxsz = 70001;
    unsigned char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc(maxsz * n() + 64, (void **)&dst));
    std::vector<unsigned char> src(maxsz);
    for (int rep = 0; rep < 2; ++rep) {
        for (size_t sz : sizes) {
            std::memset(dst, 0xEE, maxsz * n() + 64);
            for (size_t i = 0; i < sz; ++i) src[i] = pattern(me(), rep, i + sz);
            HGAS_OK_OR_FAIL(hgas_fcollect(dst, src.data(), sz)) << "size " << sz;
            for (int w = 0; w < n(); ++w)
                for (size_t i = 0; i < sz; ++i)
                    ASSERT_EQ(dst[sz * w + i], pattern(w, rep, i + sz)) << "size " << sz << " from " << w << " at " << i;
            for (size_t i = sz * n(); i < maxsz * n() + 64; ++i) ASSERT_EQ(dst[i], 0xEE) << "written past the end";
        }
    }
    // In place: this rank's block already sits in dst.
    const size_t sz = 1000;
    for (size_t i = 0; i < sz; ++i) dst[sz * me() + i] = pattern(me(), 7, i);
    HGAS_OK_OR_FAIL(hgas_fcollect(dst, dst + sz * me(), sz));
    for (int w = 0; w < n(); ++w)
        for (size_t i = 0; i < sz; ++i) ASSERT_EQ(dst[sz * w + i], pattern(w, 7, i)) << "in place, from " << w;
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(Coll, AlltoallSizesBackToBack) {
    const size_t sizes[] = {0, 1, 13, 5000, 70001};
    const size_t maxsz = 70001;
    unsigned char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc(maxsz * n() + 64, (void **)&dst));
    std::vector<unsigned char> src(maxsz * n());
    for (int rep = 0; rep < 2; ++rep) {
        for (size_t sz : sizes) {
            std::memset(dst, 0xEE, maxsz * n() + 64);
            for (int t = 0; t < n(); ++t)
                for (size_t i = 0; i < sz; ++i) src[sz * t + i] = pattern(me(), t, i + sz + rep);
            HGAS_OK_OR_FAIL(hgas_alltoall(dst, src.data(), sz)) << "size " << sz;
            for (int w = 0; w < n(); ++w)
                for (size_t i = 0; i < sz; ++i)
                    ASSERT_EQ(dst[sz * w + i], pattern(w, me(), i + sz + rep)) << "size " << sz << " from " << w;
            for (size_t i = sz * n(); i < maxsz * n() + 64; ++i) ASSERT_EQ(dst[i], 0xEE) << "written past the end";
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Every kind of collective after every other, with changing roots, and no barrier anywhere.
TEST(Coll, MixedSequenceWithoutBarriers) {
    const size_t sz = 3000;
    int64_t *sym;
    HGAS_OK_OR_FAIL(hgas_malloc(sz * sizeof(int64_t) * n(), (void **)&sym));
    std::vector<int64_t> src(sz * n()), dst(sz);
    for (int it = 0; it < 40; ++it) {
        const int root = (it * 7) % n();
        switch (it % 5) {
        case 0:
            for (size_t j = 0; j < sz; ++j) src[j] = it * 1000 + root + (int64_t)j;
            HGAS_OK_OR_FAIL(hgas_broadcast(sym, src.data(), sz * sizeof(int64_t), root));
            for (size_t j = 0; j < sz; ++j) ASSERT_EQ(sym[j], it * 1000 + root + (int64_t)j) << "it " << it;
            break;
        case 1:
            for (size_t j = 0; j < sz; ++j) src[j] = me() + it + (int64_t)j;
            HGAS_OK_OR_FAIL(hgas_allreduce(dst.data(), src.data(), sz, HGAS_INT64, HGAS_OP_SUM));
            for (size_t j = 0; j < sz; ++j)
                ASSERT_EQ(dst[j], (int64_t)n() * (n() - 1) / 2 + n() * (it + (int64_t)j)) << "it " << it;
            break;
        case 2:
            for (size_t j = 0; j < sz; ++j) src[j] = me() * 10 + it + (int64_t)j;
            HGAS_OK_OR_FAIL(hgas_fcollect(sym, src.data(), sz * sizeof(int64_t)));
            for (int w = 0; w < n(); ++w)
                for (size_t j = 0; j < sz; ++j) ASSERT_EQ(sym[sz * w + j], w * 10 + it + (int64_t)j) << "it " << it;
            break;
        case 3:
            for (int t = 0; t < n(); ++t)
                for (size_t j = 0; j < sz; ++j) src[sz * t + j] = me() * 100 + t + it + (int64_t)j;
            HGAS_OK_OR_FAIL(hgas_alltoall(sym, src.data(), sz * sizeof(int64_t)));
            for (int w = 0; w < n(); ++w)
                for (size_t j = 0; j < sz; ++j)
                    ASSERT_EQ(sym[sz * w + j], w * 100 + me() + it + (int64_t)j) << "it " << it;
            break;
        case 4:
            for (size_t j = 0; j < sz; ++j) src[j] = me() - (int64_t)j;
            HGAS_OK_OR_FAIL(hgas_reduce(dst.data(), src.data(), sz, HGAS_INT64, HGAS_OP_MAX, root));
            if (me() == root) {
                for (size_t j = 0; j < sz; ++j) ASSERT_EQ(dst[j], n() - 1 - (int64_t)j) << "it " << it;
            }
            break;
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

// --- bad input (every rank passes the same bad argument, so none waits for the others) -------

void expect_message(const char *needle) {
    EXPECT_NE(std::strstr(hgas_last_error(), needle), nullptr) << "message: " << hgas_last_error();
}

TEST(Coll, BadInput) {
    unsigned char *sym;
    HGAS_OK_OR_FAIL(hgas_malloc(64 * n(), (void **)&sym));
    unsigned char local[64] = {};
    int64_t v = 1, out = 0;

    EXPECT_EQ(hgas_broadcast(sym, local, 8, -1), HGAS_ERR_INVALID_ARG);
    expect_message("hgas_broadcast");
    EXPECT_EQ(hgas_broadcast(sym, local, 8, n()), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_broadcast(nullptr, local, 8, 0), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_broadcast(local, local, 8, 0), HGAS_ERR_INVALID_POINTER);
    expect_message("symmetric");
    EXPECT_EQ(hgas_broadcast(sym, nullptr, 8, me()), HGAS_ERR_INVALID_ARG);  // every rank is its own root: no wait

    EXPECT_EQ(hgas_reduce(&out, &v, 1, (hgas_dtype_t)99, HGAS_OP_SUM, 0), HGAS_ERR_INVALID_ARG);
    expect_message("hgas_reduce");
    EXPECT_EQ(hgas_reduce(&out, &v, 1, HGAS_INT64, (hgas_op_t)99, 0), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_reduce(&out, &v, 1, HGAS_INT64, HGAS_OP_SUM, n()), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_reduce(&out, nullptr, 1, HGAS_INT64, HGAS_OP_SUM, 0), HGAS_ERR_INVALID_ARG);

    EXPECT_EQ(hgas_allreduce(&out, &v, 1, (hgas_dtype_t)-1, HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);
    expect_message("hgas_allreduce");
    EXPECT_EQ(hgas_allreduce(&out, &v, 1, HGAS_INT64, (hgas_op_t)7), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_allreduce(nullptr, &v, 1, HGAS_INT64, HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_allreduce(&out, nullptr, 1, HGAS_INT64, HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);

    EXPECT_EQ(hgas_fcollect(local, local, 1), HGAS_ERR_INVALID_POINTER);
    expect_message("hgas_fcollect");
    EXPECT_EQ(hgas_fcollect(nullptr, local, 1), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_fcollect(sym, nullptr, 1), HGAS_ERR_INVALID_ARG);
    // n * bytes overflows (n > 1) or runs past the symmetric heap (n == 1).
    EXPECT_EQ(hgas_fcollect(sym, local, SIZE_MAX / 2 + 1), n() == 1 ? HGAS_ERR_INVALID_POINTER : HGAS_ERR_INVALID_ARG);

    EXPECT_EQ(hgas_alltoall(local, local, 1), HGAS_ERR_INVALID_POINTER);
    expect_message("hgas_alltoall");
    EXPECT_EQ(hgas_alltoall(sym, sym, 1), HGAS_ERR_INVALID_ARG);  // in place is refused
    EXPECT_EQ(hgas_alltoall(sym, nullptr, 1), HGAS_ERR_INVALID_ARG);

    // Zero sizes are no-ops, NULL pointers allowed.
    EXPECT_EQ(hgas_broadcast(nullptr, nullptr, 0, 0), HGAS_OK);
    EXPECT_EQ(hgas_allreduce(nullptr, nullptr, 0, HGAS_INT64, HGAS_OP_SUM), HGAS_OK);
    EXPECT_EQ(hgas_reduce(nullptr, nullptr, 0, HGAS_INT64, HGAS_OP_SUM, 0), HGAS_OK);
    EXPECT_EQ(hgas_fcollect(nullptr, nullptr, 0), HGAS_OK);
    EXPECT_EQ(hgas_alltoall(nullptr, nullptr, 0), HGAS_OK);

    // After all those failures, the collectives still work.
    HGAS_OK_OR_FAIL(hgas_allreduce(&out, &v, 1, HGAS_INT64, HGAS_OP_SUM));
    EXPECT_EQ(out, n());
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

}  // namespace
