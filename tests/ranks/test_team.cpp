// Teams in the core API: predefined teams, strided and 2-D splits, translate, destroy, every
// collective on teams of 1, 2, 3, 4 and 8 ranks (contiguous, odd and strided) in place and not
// against a CPU reference, concurrent collectives on disjoint teams, slot reuse, and bad
// arguments (destroyed teams, mismatched splits, mismatched sizes) with their messages.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

struct spec {
    int start, stride, size;
};

// The splits every test runs over: sizes n, 1, about n/2 strided (twice), 3 (odd) and 2 (stride 3).
std::vector<spec> specs() {
    std::vector<spec> s{{0, 1, n()}, {n() - 1, 1, 1}};
    if (n() >= 2) s.push_back({1, 2, n() / 2});
    if (n() >= 3) s.push_back({0, 2, (n() + 1) / 2});
    if (n() >= 3) s.push_back({0, 1, 3});
    if (n() >= 4) s.push_back({0, 3, 2});
    return s;
}

std::string text(const spec &s) {
    return "(start " + std::to_string(s.start) + ", stride " + std::to_string(s.stride) + ", size " +
           std::to_string(s.size) + ")";
}

// Integer and float inputs whose reductions are exact in any order.
template <class T>
T input(int trank, size_t j, hgas_op_t op) {
    if (op == HGAS_OP_PROD) return T((trank + j) % 4 == 0 ? 2 : 1);
    long v = static_cast<long>((trank * 37 + j * 11) % 101);
    if (std::is_signed_v<T>) v -= 50;
    return static_cast<T>(v);
}

template <class T>
T combine(T a, T b, hgas_op_t op) {
    switch (op) {
    case HGAS_OP_SUM: return a + b;
    case HGAS_OP_PROD: return a * b;
    case HGAS_OP_MIN: return b < a ? b : a;
    case HGAS_OP_MAX: return a < b ? b : a;
    default: break;
    }
    if constexpr (std::is_integral_v<T>) {
        if (op == HGAS_OP_AND) return a & b;
        if (op == HGAS_OP_OR) return a | b;
        return a ^ b;
    }
    return a;
}

template <class T>
T expected(int tn, size_t j, hgas_op_t op) {
    T acc = input<T>(0, j, op);
    for (int k = 1; k < tn; ++k) acc = combine(acc, input<T>(k, j, op), op);
    return acc;
}

template <class T>
std::vector<hgas_op_t> ops() {
    std::vector<hgas_op_t> o{HGAS_OP_SUM, HGAS_OP_MIN, HGAS_OP_MAX, HGAS_OP_PROD};
    if (std::is_integral_v<T>) o.insert(o.end(), {HGAS_OP_AND, HGAS_OP_OR, HGAS_OP_XOR});
    return o;
}

template <class T>
void check_reductions(hgas_team_t t, hgas_dtype_t type, const std::string &what) {
    const int tn = hgas_team_n(t), tme = hgas_team_my_rank(t);
    for (hgas_op_t op : ops<T>()) {
        for (size_t count : {size_t{1}, size_t{7}, size_t{3001}}) {
            const std::string where = what + " type " + std::to_string(type) + " op " + std::to_string(op) +
                                      " count " + std::to_string(count);
            std::vector<T> src(count), dst(count + 1, T(99)), want(count);
            for (size_t j = 0; j < count; ++j) src[j] = input<T>(tme, j, op), want[j] = expected<T>(tn, j, op);
            HGAS_OK_OR_FAIL(hgas_team_allreduce(t, dst.data(), src.data(), count, type, op)) << where;
            for (size_t j = 0; j < count; ++j) ASSERT_EQ(dst[j], want[j]) << where << " allreduce at " << j;
            ASSERT_EQ(dst[count], T(99)) << where << " allreduce wrote past the end";
            std::vector<T> inout(src);
            HGAS_OK_OR_FAIL(hgas_team_allreduce(t, inout.data(), inout.data(), count, type, op)) << where;
            ASSERT_EQ(inout, std::vector<T>(want.begin(), want.end())) << where << " allreduce in place";
            for (int root : {0, tn - 1}) {
                std::fill(dst.begin(), dst.end(), T(99));
                HGAS_OK_OR_FAIL(hgas_team_reduce(t, dst.data(), src.data(), count, type, op, root)) << where;
                if (tme == root) {
                    for (size_t j = 0; j < count; ++j) ASSERT_EQ(dst[j], want[j]) << where << " reduce root " << root;
                }
                inout = src;
                HGAS_OK_OR_FAIL(hgas_team_reduce(t, inout.data(), inout.data(), count, type, op, root)) << where;
                ASSERT_EQ(inout, tme == root ? want : src) << where << " reduce in place, root " << root;
            }
        }
        // Reduce-scatter: block i of the reduction of count * tn elements to member i.
        const size_t count = 5;
        std::vector<T> src(count * tn), dst(count + 1, T(99));
        for (size_t j = 0; j < src.size(); ++j) src[j] = input<T>(tme, j, op);
        HGAS_OK_OR_FAIL(hgas_team_reduce_scatter(t, dst.data(), src.data(), count, type, op)) << what;
        for (size_t j = 0; j < count; ++j)
            ASSERT_EQ(dst[j], expected<T>(tn, count * tme + j, op)) << what << " reduce_scatter op " << op;
        ASSERT_EQ(dst[count], T(99)) << what << " reduce_scatter wrote past the end";
        // In place: this rank's block of src.
        HGAS_OK_OR_FAIL(hgas_team_reduce_scatter(t, src.data() + count * tme, src.data(), count, type, op)) << what;
        for (size_t j = 0; j < count; ++j)
            ASSERT_EQ(src[count * tme + j], expected<T>(tn, count * tme + j, op)) << what << " reduce_scatter in place";
    }
}

constexpr size_t kMaxB = 70000;  // more than one broadcast chunk
constexpr size_t kSym = kMaxB * 8 + 64;  // every team is at most 8 ranks here

// `sym`: kSym symmetric bytes.
void check_movement(hgas_team_t t, unsigned char *sym, const std::string &what) {
    const int tn = hgas_team_n(t), tme = hgas_team_my_rank(t);
    const size_t maxb = kMaxB;
    std::vector<unsigned char> src(maxb * 8);
    // Broadcast, from the first and last member, in place on the root and not.
    for (int root : {0, tn - 1})
        for (size_t b : {size_t{1}, size_t{13}, maxb}) {
            std::memset(sym, 0xEE, maxb + 64);
            for (size_t i = 0; i < b; ++i) src[i] = tme == root ? pattern(root, 5, i) : 0;
            HGAS_OK_OR_FAIL(hgas_team_broadcast(t, sym, src.data(), b, root)) << what;
            for (size_t i = 0; i < b; ++i) ASSERT_EQ(sym[i], pattern(root, 5, i)) << what << " broadcast byte " << i;
            ASSERT_EQ(sym[b], 0xEE) << what << " broadcast wrote past the end";
            if (tme == root) std::memcpy(sym, src.data(), b);
            else std::memset(sym, 0, b);
            HGAS_OK_OR_FAIL(hgas_team_broadcast(t, sym, sym, b, root)) << what;
            for (size_t i = 0; i < b; ++i) ASSERT_EQ(sym[i], pattern(root, 5, i)) << what << " broadcast in place";
        }
    // Fcollect, in place (own block already in dst) and not.
    for (size_t b : {size_t{3}, size_t{4096}}) {
        for (size_t i = 0; i < b; ++i) src[i] = pattern(tme, 6, i);
        std::memset(sym, 0xEE, b * tn + 64);
        HGAS_OK_OR_FAIL(hgas_team_fcollect(t, sym, src.data(), b)) << what;
        for (int k = 0; k < tn; ++k)
            for (size_t i = 0; i < b; ++i) ASSERT_EQ(sym[k * b + i], pattern(k, 6, i)) << what << " fcollect " << k;
        ASSERT_EQ(sym[b * tn], 0xEE) << what << " fcollect wrote past the end";
        std::memset(sym, 0, b * tn);
        std::memcpy(sym + b * tme, src.data(), b);
        HGAS_OK_OR_FAIL(hgas_team_fcollect(t, sym, sym + b * tme, b)) << what;
        for (int k = 0; k < tn; ++k)
            for (size_t i = 0; i < b; ++i) ASSERT_EQ(sym[k * b + i], pattern(k, 6, i)) << what << " fcollect in place";
    }
    // Collect: member k contributes 5 * k + 1 bytes (so sizes differ), and 0 for one of them.
    {
        auto bytes_of = [&](int k) { return k == 1 ? size_t{0} : size_t(5 * k + 1); };
        size_t want_total = 0;
        for (int k = 0; k < tn; ++k) want_total += bytes_of(k);
        for (size_t i = 0; i < bytes_of(tme); ++i) src[i] = pattern(tme, 7, i);
        std::memset(sym, 0xEE, want_total + 64);
        size_t total = 0;
        HGAS_OK_OR_FAIL(hgas_team_collect(t, sym, src.data(), bytes_of(tme), &total)) << what;
        ASSERT_EQ(total, want_total) << what;
        size_t at = 0;
        for (int k = 0; k < tn; ++k)
            for (size_t i = 0; i < bytes_of(k); ++i, ++at) ASSERT_EQ(sym[at], pattern(k, 7, i)) << what << " collect";
        ASSERT_EQ(sym[want_total], 0xEE) << what << " collect wrote past the end";
    }
    // Alltoall.
    {
        const size_t b = 1000;
        for (int k = 0; k < tn; ++k)
            for (size_t i = 0; i < b; ++i) src[k * b + i] = pattern(tme, k, i);
        std::memset(sym, 0xEE, b * tn + 64);
        HGAS_OK_OR_FAIL(hgas_team_alltoall(t, sym, src.data(), b)) << what;
        for (int k = 0; k < tn; ++k)
            for (size_t i = 0; i < b; ++i) ASSERT_EQ(sym[k * b + i], pattern(k, tme, i)) << what << " alltoall";
        ASSERT_EQ(sym[b * tn], 0xEE) << what;
    }
    // Alltoallv: member i sends i + 2 * j + 1 bytes to member j, laid out back to back, and
    // receives them in reverse order of senders with a gap of 3 bytes.
    {
        auto sz = [](int from, int to) { return size_t(from + 2 * to + 1); };
        std::vector<size_t> soff(tn), sb(tn), roff(tn), rb(tn);
        size_t at = 0;
        for (int j = 0; j < tn; ++j) soff[j] = at, sb[j] = sz(tme, j), at += sb[j];
        for (int j = 0; j < tn; ++j)
            for (size_t i = 0; i < sb[j]; ++i) src[soff[j] + i] = pattern(tme, j + 10, i);
        at = 0;
        for (int j = tn - 1; j >= 0; --j) roff[j] = at, rb[j] = sz(j, tme), at += rb[j] + 3;
        std::memset(sym, 0xEE, at + 64);
        HGAS_OK_OR_FAIL(hgas_team_alltoallv(t, sym, roff.data(), rb.data(), src.data(), soff.data(), sb.data())) << what;
        for (int j = 0; j < tn; ++j) {
            for (size_t i = 0; i < rb[j]; ++i) ASSERT_EQ(sym[roff[j] + i], pattern(j, tme + 10, i)) << what << " alltoallv";
            ASSERT_EQ(sym[roff[j] + rb[j]], 0xEE) << what << " alltoallv wrote into the gap";
        }
    }
    HGAS_OK_OR_FAIL(hgas_team_barrier(t)) << what;
}

}  // namespace

TEST(Team, Predefined) {
    EXPECT_EQ(hgas_team_n(HGAS_TEAM_WORLD), n());
    EXPECT_EQ(hgas_team_my_rank(HGAS_TEAM_WORLD), me());
    const int nn = hgas_team_n(HGAS_TEAM_NODE);
    ASSERT_GE(nn, 1);
    ASSERT_LE(nn, n());
    const int nme = hgas_team_my_rank(HGAS_TEAM_NODE);
    ASSERT_GE(nme, 0);
    // Node members are job ranks in order, and this rank is among them.
    EXPECT_EQ(hgas_team_translate(HGAS_TEAM_NODE, nme, HGAS_TEAM_WORLD), me());
    for (int i = 1; i < nn; ++i)
        EXPECT_LT(hgas_team_translate(HGAS_TEAM_NODE, i - 1, HGAS_TEAM_WORLD),
                  hgas_team_translate(HGAS_TEAM_NODE, i, HGAS_TEAM_WORLD));
    // The node team's size is the number of ranks on this node: count them with a node allreduce.
    int one = 1, count = 0;
    HGAS_OK_OR_FAIL(hgas_team_allreduce(HGAS_TEAM_NODE, &count, &one, 1, HGAS_INT32, HGAS_OP_SUM));
    EXPECT_EQ(count, nn);
    // Without a GPU, this rank is alone in its GPU team.
    EXPECT_GE(hgas_team_n(HGAS_TEAM_GPU), 1);
    EXPECT_EQ(hgas_team_translate(HGAS_TEAM_GPU, hgas_team_my_rank(HGAS_TEAM_GPU), HGAS_TEAM_WORLD), me());
    EXPECT_EQ(hgas_team_n(HGAS_TEAM_INVALID), -1);
    EXPECT_EQ(hgas_team_my_rank(12345), -1);
    EXPECT_EQ(hgas_team_translate(HGAS_TEAM_WORLD, n(), HGAS_TEAM_WORLD), -1);
    HGAS_OK_OR_FAIL(hgas_team_barrier(HGAS_TEAM_NODE));
    HGAS_OK_OR_FAIL(hgas_team_barrier(HGAS_TEAM_GPU));
}

TEST(Team, EveryCollectiveOnSplits) {
    unsigned char *sym;
    HGAS_OK_OR_FAIL(hgas_malloc(kSym, (void **)&sym));
    for (const spec &s : specs()) {
        hgas_team_t t = 12345;
        HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, s.start, s.stride, s.size, &t)) << text(s);
        const int rel = me() - s.start;
        const bool member = rel >= 0 && rel % s.stride == 0 && rel / s.stride < s.size;
        if (!member) {
            ASSERT_EQ(t, HGAS_TEAM_INVALID) << text(s);
        } else {
            ASSERT_NE(t, HGAS_TEAM_INVALID) << text(s);
            ASSERT_EQ(hgas_team_n(t), s.size);
            ASSERT_EQ(hgas_team_my_rank(t), rel / s.stride);
            ASSERT_EQ(hgas_team_translate(t, hgas_team_my_rank(t), HGAS_TEAM_WORLD), me());
            ASSERT_EQ(hgas_team_translate(HGAS_TEAM_WORLD, me(), t), rel / s.stride);
            if (s.start > 0) {
                ASSERT_EQ(hgas_team_translate(HGAS_TEAM_WORLD, 0, t), -1) << "rank 0 is not a member";
            }
            check_reductions<int32_t>(t, HGAS_INT32, text(s));
            check_reductions<uint64_t>(t, HGAS_UINT64, text(s));
            check_reductions<double>(t, HGAS_DOUBLE, text(s));
            check_reductions<float>(t, HGAS_FLOAT, text(s));
            check_movement(t, sym, text(s));
            HGAS_OK_OR_FAIL(hgas_team_destroy(t)) << text(s);
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

// Rows and columns of a 2-D split run their collectives at the same time as the other rows
// (columns), back to back with world collectives, with no barrier between.
TEST(Team, Split2dConcurrentRowsAndColumns) {
    for (int xrange : {1, 2, 3, n() + 5}) {
        hgas_team_t row = 12345, col = 12345;
        HGAS_OK_OR_FAIL(hgas_team_split_2d(HGAS_TEAM_WORLD, xrange, &row, &col)) << "xrange " << xrange;
        const int xr = std::min(xrange, n());
        const int x = me() % xr, y = me() / xr;
        ASSERT_EQ(hgas_team_my_rank(row), x);
        ASSERT_EQ(hgas_team_n(row), std::min(n(), (y + 1) * xr) - y * xr);
        ASSERT_EQ(hgas_team_my_rank(col), y);
        ASSERT_EQ(hgas_team_n(col), (n() - x + xr - 1) / xr);
        for (int rep = 0; rep < 20; ++rep) {
            // Row sum of world ranks, column sum of world ranks, world sum: all exact.
            int64_t v = me() + rep, rs = 0, cs = 0, ws = 0, want_r = 0, want_c = 0;
            HGAS_OK_OR_FAIL(hgas_team_allreduce(row, &rs, &v, 1, HGAS_INT64, HGAS_OP_SUM));
            HGAS_OK_OR_FAIL(hgas_team_allreduce(col, &cs, &v, 1, HGAS_INT64, HGAS_OP_SUM));
            HGAS_OK_OR_FAIL(hgas_allreduce(&ws, &v, 1, HGAS_INT64, HGAS_OP_SUM));
            for (int i = 0; i < hgas_team_n(row); ++i) want_r += hgas_team_translate(row, i, HGAS_TEAM_WORLD) + rep;
            for (int i = 0; i < hgas_team_n(col); ++i) want_c += hgas_team_translate(col, i, HGAS_TEAM_WORLD) + rep;
            ASSERT_EQ(rs, want_r) << "row, xrange " << xrange << " rep " << rep;
            ASSERT_EQ(cs, want_c) << "column, xrange " << xrange << " rep " << rep;
            ASSERT_EQ(ws, int64_t(n()) * (n() - 1) / 2 + int64_t(n()) * rep);
            if (rep % 5 == 0) {
                HGAS_OK_OR_FAIL(hgas_team_barrier(rep % 2 ? row : col));
            }
        }
        HGAS_OK_OR_FAIL(hgas_team_destroy(row));
        HGAS_OK_OR_FAIL(hgas_team_destroy(col));
    }
}

// A slot freed by destroy is taken again with its words cleared: more splits than slots, each
// used and destroyed; then teams kept alive until the slots run out, which fails clearly.
TEST(Team, SlotsAreReusedAndRunOut) {
    for (int i = 0; i < 100; ++i) {
        hgas_team_t t;
        HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n(), &t)) << "split " << i;
        // A varying number of collectives per team, so that the words a team leaves behind
        // (epochs ahead of the next team's) would mislead the next team in the slot, and rank 0
        // late into each, so that its peers reach its words first.
        for (int rep = 0; rep < 1 + i % 4; ++rep) {
            if (me() == 0 && i < 24) usleep(1000);
            int v = i + rep + me(), sum = 0;
            HGAS_OK_OR_FAIL(hgas_team_allreduce(t, &sum, &v, 1, HGAS_INT32, HGAS_OP_SUM)) << "split " << i;
            ASSERT_EQ(sum, (i + rep) * n() + n() * (n() - 1) / 2) << "split " << i << " rep " << rep;
        }
        HGAS_OK_OR_FAIL(hgas_team_destroy(t));
    }
    std::vector<hgas_team_t> kept;
    hgas_status_t st = HGAS_OK;
    for (int i = 0; i < 90 && st == HGAS_OK; ++i) {
        hgas_team_t t;
        st = hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n(), &t);
        if (st == HGAS_OK) kept.push_back(t);
    }
    ASSERT_EQ(st, HGAS_ERR_NO_MEMORY);
    EXPECT_NE(std::string(hgas_last_error()).find("no team slot is free"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(kept.size(), 77u);  // 80 slots less the three predefined teams
    for (hgas_team_t t : kept) HGAS_OK_OR_FAIL(hgas_team_destroy(t));
}

TEST(Team, BadArguments) {
    hgas_team_t t;
    // A destroyed team, HGAS_TEAM_INVALID, a handle never given.
    HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n(), &t));
    HGAS_OK_OR_FAIL(hgas_team_destroy(t));
    int v = 1, out = 0;
    EXPECT_EQ(hgas_team_allreduce(t, &out, &v, 1, HGAS_INT32, HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("was destroyed"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_team_barrier(t), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_team_destroy(t), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_team_barrier(HGAS_TEAM_INVALID), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("HGAS_TEAM_INVALID"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_team_barrier(9999), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_team_destroy(HGAS_TEAM_WORLD), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("cannot be destroyed"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n(), nullptr), HGAS_ERR_INVALID_ARG);
    // A bad split fails on every rank alike.
    t = 7;
    EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 0, 1, &t), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("not a subset"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(t, HGAS_TEAM_INVALID);
    EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, n() + 1, &t), HGAS_ERR_INVALID_ARG);
    EXPECT_EQ(hgas_team_split_2d(HGAS_TEAM_WORLD, 0, &t, &t), HGAS_ERR_INVALID_ARG);
    // Bitwise ops take integers only; roots are team numbers.
    double d = 1, dd;
    EXPECT_EQ(hgas_team_allreduce(HGAS_TEAM_WORLD, &dd, &d, 1, HGAS_DOUBLE, HGAS_OP_XOR), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("integer types only"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_team_reduce(HGAS_TEAM_GPU, &out, &v, 1, HGAS_INT32, HGAS_OP_SUM, hgas_team_n(HGAS_TEAM_GPU)),
              HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("is not a rank of"), std::string::npos) << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_barrier());
}

// Ranks that pass different split arguments all fail, saying so (not a hang, not two teams).
TEST(Team, MismatchedSplitArgumentsFailEverywhere) {
    if (n() < 2) return;  // needs two ranks (the n >= 3 runs cover it)
    hgas_team_t t = 7;
    EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, me() == 0 ? 1 : 2, &t), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("different arguments"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(t, HGAS_TEAM_INVALID);
    HGAS_OK_OR_FAIL(hgas_barrier());
}

// Sizes that differ across the ranks of a team are detected and reported, naming the ranks.
TEST(Team, MismatchedSizesAreReported) {
    if (n() < 2) return;  // needs two ranks (the n >= 3 runs cover it)
    char *dst;
    HGAS_OK_OR_FAIL(hgas_malloc(256, (void **)&dst));
    hgas_team_t t;
    HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, n() - 2, 1, 2, &t));
    if (t != HGAS_TEAM_INVALID) {
        const int tme = hgas_team_my_rank(t);
        std::vector<char> src(64, 1);
        // fcollect: every member reads every peer's entry before writing, so both fail.
        EXPECT_EQ(hgas_team_fcollect(t, dst, src.data(), tme == 0 ? 8 : 16), HGAS_ERR_INVALID_ARG);
        EXPECT_NE(std::string(hgas_last_error()).find("other arguments"), std::string::npos) << hgas_last_error();
        // alltoallv: the pair disagrees on a block's size; both fail, naming both ranks.
        size_t off[2] = {0, 32}, sb[2] = {4, 4}, rb[2] = {size_t(tme == 0 ? 4 : 5), 4};
        EXPECT_EQ(hgas_team_alltoallv(t, dst, off, rb, src.data(), off, sb), HGAS_ERR_INVALID_ARG);
        EXPECT_NE(std::string(hgas_last_error()).find("disagree on the sizes"), std::string::npos)
            << hgas_last_error();
        // The team still works afterwards.
        int v = 1, out = 0;
        HGAS_OK_OR_FAIL(hgas_team_allreduce(t, &out, &v, 1, HGAS_INT32, HGAS_OP_SUM));
        EXPECT_EQ(out, 2);
        HGAS_OK_OR_FAIL(hgas_team_destroy(t));
    }
    HGAS_OK_OR_FAIL(hgas_free(dst));
}
