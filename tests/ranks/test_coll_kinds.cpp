// Collectives on device memory (HGAS_TEST_KIND: sim, the default, cuda or host): every reduction
// type (the 8- to 64-bit integers, float, double, float16, bfloat16) x op on the world team and
// an odd team, in place and not, against a CPU reference; reduce at several roots; broadcast,
// fcollect, alltoall, reduce_scatter and collect with device buffers. Device memory is never
// touched by the CPU here (sim memory faults if it is): buffers are filled and read through
// hgas_put / hgas_get, and the combines run on the device (the sim engine, a CUDA kernel).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

// The kind the buffers come from: sim (the default), cuda, or host (symmetric host memory: the
// direct algorithms forced on host heaps, test_coll_kinds_direct).
hgas_kind_t device_kind() {
    const char *e = std::getenv("HGAS_TEST_KIND");
    if (e && std::strcmp(e, "cuda") == 0) return HGAS_KIND_CUDA;
    if (e && std::strcmp(e, "host") == 0) return HGAS_KIND_HOST;
    return HGAS_KIND_SIM;
}

size_t scratch_bytes() {
    const char *e = std::getenv("HGAS_COLL_SCRATCH");
    if (!e || !*e) return 1u << 20;
    char *end;
    size_t v = std::strtoull(e, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    if (*end == 'M' || *end == 'm') v <<= 20;
    return v;
}

void put_own(void *sym, const void *src, size_t bytes) {
    if (bytes) {
        HGAS_OK_OR_FAIL(hgas_put(gp(sym, me()), src, bytes));
    }
}
std::vector<unsigned char> get_own(const void *sym, size_t bytes) {
    std::vector<unsigned char> v(bytes);
    if (bytes) {
        EXPECT_EQ(hgas_get(v.data(), gp(sym, me()), bytes), HGAS_OK) << hgas_last_error();
    }
    return v;
}

// --- element types as the test sees them: every value is a small integer, so that sums and
// products are exact in every float type whatever the order of combination ------------------

struct dtype_info {
    hgas_dtype_t t;
    const char *name;
    size_t size;
    bool is_float, is_signed;
};
const dtype_info kTypes[] = {
    {HGAS_INT8, "int8", 1, false, true},       {HGAS_INT16, "int16", 2, false, true},
    {HGAS_INT32, "int32", 4, false, true},     {HGAS_INT64, "int64", 8, false, true},
    {HGAS_UINT8, "uint8", 1, false, false},    {HGAS_UINT16, "uint16", 2, false, false},
    {HGAS_UINT32, "uint32", 4, false, false},  {HGAS_UINT64, "uint64", 8, false, false},
    {HGAS_FLOAT, "float", 4, true, true},      {HGAS_DOUBLE, "double", 8, true, true},
    {HGAS_FLOAT16, "float16", 2, true, true},  {HGAS_BFLOAT16, "bfloat16", 2, true, true},
};
const hgas_op_t kOps[] = {HGAS_OP_SUM, HGAS_OP_PROD, HGAS_OP_MIN, HGAS_OP_MAX, HGAS_OP_AND, HGAS_OP_OR, HGAS_OP_XOR};
const char *op_name(hgas_op_t o) {
    static const char *names[] = {"sum", "min", "max", "prod", "and", "or", "xor"};
    return names[o];
}

// Exact encodings of small integers (|k| <= 2048).
uint16_t half_of(int k) {
    if (k == 0) return 0;
    const uint16_t sign = k < 0 ? 0x8000 : 0;
    unsigned m = static_cast<unsigned>(k < 0 ? -k : k);
    int e = 0;
    while ((m >> (e + 1)) != 0) ++e;
    return static_cast<uint16_t>(sign | (e + 15) << 10 | ((m << (10 - e)) & 0x3ff));
}
double half_value(uint16_t h) {
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}
uint16_t bf16_of(int k) {
    const float f = static_cast<float>(k);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);  // exact for |k| <= 256
}
double bf16_value(uint16_t b) {
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Rank r's element i: integers anywhere in their range (wrapping sums and products are what is
// tested); floats in -2..2 (products of 8 ranks stay within 2^8, exact in bfloat16).
int64_t value(const dtype_info &d, hgas_op_t o, int r, size_t i) {
    if (d.is_float) return static_cast<int64_t>((r * 7 + i * 3 + (i >> 5)) % 5) - 2;
    uint64_t x = (static_cast<uint64_t>(r) + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    if (o == HGAS_OP_PROD) x = (x & 7) + 1;  // keep 64-bit products away from all-zero
    return static_cast<int64_t>(x);
}

void store(const dtype_info &d, unsigned char *p, int64_t v) {
    switch (d.t) {
    case HGAS_FLOAT: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case HGAS_DOUBLE: { double f = static_cast<double>(v); std::memcpy(p, &f, 8); return; }
    case HGAS_FLOAT16: { uint16_t h = half_of(static_cast<int>(v)); std::memcpy(p, &h, 2); return; }
    case HGAS_BFLOAT16: { uint16_t h = bf16_of(static_cast<int>(v)); std::memcpy(p, &h, 2); return; }
    default: std::memcpy(p, &v, d.size); return;  // little endian: the low bytes
    }
}

// The element at p as a double (floats) or as its integer bits widened with the type's sign.
double as_float(const dtype_info &d, const unsigned char *p) {
    switch (d.t) {
    case HGAS_FLOAT: { float f; std::memcpy(&f, p, 4); return f; }
    case HGAS_DOUBLE: { double f; std::memcpy(&f, p, 8); return f; }
    case HGAS_FLOAT16: { uint16_t h; std::memcpy(&h, p, 2); return half_value(h); }
    default: { uint16_t h; std::memcpy(&h, p, 2); return bf16_value(h); }
    }
}
int64_t as_int(const dtype_info &d, int64_t v) {
    const int bits = static_cast<int>(d.size * 8);
    if (bits == 64) return v;
    const uint64_t mask = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & mask;
    if (d.is_signed && (u >> (bits - 1))) return static_cast<int64_t>(u | ~mask);
    return static_cast<int64_t>(u);
}
int64_t load_int(const dtype_info &d, const unsigned char *p) {
    int64_t v = 0;
    std::memcpy(&v, p, d.size);
    return as_int(d, v);
}

// The reference: combine the values of `ranks` (job ranks) in any order (all exact).
bool less(const dtype_info &d, int64_t a, int64_t b) {
    if (d.is_signed || d.is_float) return a < b;
    return static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
}
int64_t reference(const dtype_info &d, hgas_op_t o, const std::vector<int> &ranks, size_t i) {
    int64_t acc = d.is_float ? value(d, o, ranks[0], i) : as_int(d, value(d, o, ranks[0], i));
    for (size_t k = 1; k < ranks.size(); ++k) {
        const int64_t v = d.is_float ? value(d, o, ranks[k], i) : as_int(d, value(d, o, ranks[k], i));
        switch (o) {
        case HGAS_OP_SUM: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v)); break;
        case HGAS_OP_PROD: acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v)); break;
        case HGAS_OP_MIN: acc = less(d, v, acc) ? v : acc; break;
        case HGAS_OP_MAX: acc = less(d, acc, v) ? v : acc; break;
        case HGAS_OP_AND: acc &= v; break;
        case HGAS_OP_OR: acc |= v; break;
        case HGAS_OP_XOR: acc ^= v; break;
        }
        if (!d.is_float) acc = as_int(d, acc);
    }
    return acc;
}

::testing::AssertionResult matches(const dtype_info &d, hgas_op_t o, const std::vector<int> &ranks,
                                   const std::vector<unsigned char> &got, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        const int64_t want = reference(d, o, ranks, i);
        const unsigned char *p = got.data() + i * d.size;
        const bool ok = d.is_float ? as_float(d, p) == static_cast<double>(want) : load_int(d, p) == want;
        if (!ok)
            return ::testing::AssertionFailure()
                   << d.name << " " << op_name(o) << " element " << i << " of " << count << ": got "
                   << (d.is_float ? as_float(d, p) : static_cast<double>(load_int(d, p))) << " (bits "
                   << load_int(d, p) << "), want " << want;
    }
    return ::testing::AssertionSuccess();
}

// The teams to run on: the world, and (n >= 3) the odd-sized team of ranks 1 .. n-1.
struct team_case {
    hgas_team_t team;
    std::vector<int> ranks;  // job ranks, in team order
};
std::vector<team_case> teams() {
    std::vector<team_case> v;
    team_case w{HGAS_TEAM_WORLD, {}};
    for (int i = 0; i < n(); ++i) w.ranks.push_back(i);
    v.push_back(w);
    if (n() >= 3) {
        team_case t{HGAS_TEAM_INVALID, {}};
        EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 1, 1, n() - 1, &t.team), HGAS_OK) << hgas_last_error();
        for (int i = 1; i < n(); ++i) t.ranks.push_back(i);
        v.push_back(t);
    }
    return v;
}
void destroy(std::vector<team_case> &ts) {
    for (auto &t : ts)
        if (t.team != HGAS_TEAM_WORLD && t.team != HGAS_TEAM_INVALID) {
            EXPECT_EQ(hgas_team_destroy(t.team), HGAS_OK);
        }
}

#define REQUIRE_KIND()                                                                          \
    ASSERT_TRUE(hgas_kind_available(device_kind()))                                             \
        << "kind " << hgas_kind_name(device_kind()) << " is not available on rank " << me()

TEST(CollKinds, AllreduceEveryTypeAndOp) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    auto ts = teams();
    const size_t maxbytes = 2 * scratch_bytes() + 4096;
    void *src, *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxbytes, D, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(maxbytes, D, &dst));
    std::vector<unsigned char> in(maxbytes);
    for (const auto &tc : ts) {
        if (tc.team == HGAS_TEAM_INVALID) continue;  // rank 0 is not in the odd team
        for (const auto &d : kTypes) {
            for (hgas_op_t o : kOps) {
                if (d.is_float && o >= HGAS_OP_AND) continue;
                // Counts: 1, odd, and (SUM) more than twice the scratch, so that it runs in chunks.
                std::vector<size_t> counts{1, 1001};
                if (o == HGAS_OP_SUM) counts.push_back((2 * scratch_bytes() + 1000) / d.size);
                for (size_t count : counts) {
                    for (int in_place = 0; in_place < 2; ++in_place) {
                        for (size_t i = 0; i < count; ++i) store(d, in.data() + i * d.size, value(d, o, me(), i));
                        void *out = in_place ? src : dst;
                        put_own(src, in.data(), count * d.size);
                        const hgas_status_t st = tc.team == HGAS_TEAM_WORLD
                                                     ? hgas_allreduce(out, src, count, d.t, o)
                                                     : hgas_team_allreduce(tc.team, out, src, count, d.t, o);
                        ASSERT_EQ(st, HGAS_OK) << d.name << " " << op_name(o) << " count " << count << ": "
                                               << hgas_last_error();
                        ASSERT_TRUE(matches(d, o, tc.ranks, get_own(out, count * d.size), count))
                            << (in_place ? "in place" : "") << " team of " << tc.ranks.size();
                    }
                }
            }
        }
    }
    destroy(ts);
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(CollKinds, ReduceAtEveryRoot) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    auto ts = teams();
    const size_t count = scratch_bytes() / 4 + 77;  // more than a chunk of the tree
    void *src, *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8, D, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8, D, &dst));
    std::vector<unsigned char> in(count * 8);
    for (const auto &tc : ts) {
        if (tc.team == HGAS_TEAM_INVALID) continue;
        const int tn = static_cast<int>(tc.ranks.size());
        for (const dtype_info &d : {kTypes[2], kTypes[9], kTypes[10], kTypes[11], kTypes[0]}) {
            for (hgas_op_t o : {HGAS_OP_SUM, HGAS_OP_MAX}) {
                for (int root : {0, tn - 1, tn / 2}) {
                    for (size_t i = 0; i < count; ++i) store(d, in.data() + i * d.size, value(d, o, me(), i));
                    put_own(src, in.data(), count * d.size);
                    const hgas_status_t st = tc.team == HGAS_TEAM_WORLD
                                                 ? hgas_reduce(dst, src, count, d.t, o, root)
                                                 : hgas_team_reduce(tc.team, dst, src, count, d.t, o, root);
                    ASSERT_EQ(st, HGAS_OK) << hgas_last_error();
                    if (tc.ranks[static_cast<size_t>(root)] == me()) {
                        ASSERT_TRUE(matches(d, o, tc.ranks, get_own(dst, count * d.size), count)) << "root " << root;
                    }
                }
            }
        }
    }
    destroy(ts);
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(CollKinds, DataMovementOnDeviceBuffers) {
    REQUIRE_KIND();
    const hgas_kind_t D = device_kind();
    const size_t bytes = 70001;  // > one 64 KiB broadcast chunk
    void *src, *dst;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * n(), D, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(bytes * n(), D, &dst));
    std::vector<unsigned char> in(bytes * n());
    for (size_t i = 0; i < in.size(); ++i) in[i] = pattern(me(), static_cast<int>(i / bytes), i);
    put_own(src, in.data(), in.size());

    for (int root : {0, n() - 1}) {
        HGAS_OK_OR_FAIL(hgas_broadcast(dst, src, bytes, root));
        auto got = get_own(dst, bytes);
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], pattern(root, 0, i)) << "broadcast root " << root;
    }
    HGAS_OK_OR_FAIL(hgas_fcollect(dst, src, bytes));
    auto got = get_own(dst, bytes * n());
    for (int r = 0; r < n(); ++r)
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[r * bytes + i], pattern(r, 0, i)) << "fcollect block " << r;
    HGAS_OK_OR_FAIL(hgas_alltoall(dst, src, bytes));
    got = get_own(dst, bytes * n());
    for (int r = 0; r < n(); ++r)
        for (size_t i = 0; i < bytes; ++i)
            ASSERT_EQ(got[r * bytes + i], pattern(r, me(), me() * bytes + i)) << "alltoall block " << r;

    // reduce_scatter of int32 SUM: member i gets block i of the sum.
    const dtype_info &d = kTypes[2];
    const size_t count = 1000;
    for (size_t i = 0; i < count * n(); ++i) store(d, in.data() + i * 4, value(d, HGAS_OP_SUM, me(), i));
    put_own(src, in.data(), count * n() * 4);
    HGAS_OK_OR_FAIL(hgas_team_reduce_scatter(HGAS_TEAM_WORLD, dst, src, count, HGAS_INT32, HGAS_OP_SUM));
    got = get_own(dst, count * 4);
    std::vector<int> all;
    for (int i = 0; i < n(); ++i) all.push_back(i);
    for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(load_int(d, got.data() + i * 4), reference(d, HGAS_OP_SUM, all, me() * count + i)) << i;

    // collect: member r contributes r + 1 bytes.
    for (size_t i = 0; i < bytes; ++i) in[i] = pattern(me(), 1, i);
    put_own(src, in.data(), bytes);
    size_t total = 0;
    HGAS_OK_OR_FAIL(hgas_team_collect(HGAS_TEAM_WORLD, dst, src, static_cast<size_t>(me()) + 1, &total));
    ASSERT_EQ(total, static_cast<size_t>(n() * (n() + 1) / 2));
    got = get_own(dst, total);
    size_t at = 0;
    for (int r = 0; r < n(); ++r)
        for (size_t i = 0; i <= static_cast<size_t>(r); ++i, ++at) ASSERT_EQ(got[at], pattern(r, 1, i)) << "collect";
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(CollKinds, BadTypesAndOpsAreRefused) {
    REQUIRE_KIND();
    void *buf;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(64, device_kind(), &buf));
    EXPECT_EQ(hgas_allreduce(buf, buf, 4, HGAS_FLOAT16, HGAS_OP_XOR), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("HGAS_FLOAT16"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_allreduce(buf, buf, 4, HGAS_BFLOAT16, HGAS_OP_AND), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("bitwise"), std::string::npos) << hgas_last_error();
    EXPECT_EQ(hgas_allreduce(buf, buf, 4, static_cast<hgas_dtype_t>(12), HGAS_OP_SUM), HGAS_ERR_INVALID_ARG);
    EXPECT_NE(std::string(hgas_last_error()).find("type 12 is not an hgas_dtype_t"), std::string::npos)
        << hgas_last_error();
    HGAS_OK_OR_FAIL(hgas_free(buf));
}

}  // namespace
