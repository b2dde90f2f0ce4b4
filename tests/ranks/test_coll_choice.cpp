// Which algorithm each collective ran, read from the collectives' counters (coll/testing_coll.h):
// HGAS_COLL_BCAST / HGAS_COLL_REDUCE / HGAS_COLL_FCOLLECT = auto picks what docs/collectives.md
// says at every (team size, message size) class on both sides of each cut-over, and a forced
// value is obeyed at every size (the same test runs under auto and under each forced value:
// the expectation follows the environment). Every result is checked too.
//
// Then the device scratch (HGAS_TEST_KIND=sim, or cuda on a GPU): reductions of device vectors cross the
// device scratch (device -> device, no byte through the host heap) once it has been taken at
// the first world reduction of a device vector, and the host scratch before that, on other
// teams, and with HGAS_COLL_DEVICE_SCRATCH=0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "coll/testing_coll.h"
#include "rank_test.hpp"

namespace {

int me() { return hgas_rank_me(); }
int n() { return hgas_rank_n(); }

std::string env(const char *name, const char *dflt) {
    const char *e = std::getenv(name);
    return e && *e ? e : dflt;
}

hgasi_coll_stats_t stats() {
    hgasi_coll_stats_t s{};
    EXPECT_EQ(hgasi_coll_stats(&s), HGAS_OK) << hgas_last_error();
    return s;
}

// What docs/collectives.md says each setting picks.
bool expect_bcast_scatter(int members, size_t bytes) {
    const std::string c = env("HGAS_COLL_BCAST", "auto");
    if (c == "scatter") return true;
    if (c == "tree" || c == "flat") return false;
    return members >= 8 && bytes >= (size_t{16} << 20);
}
// Whether a non-scatter broadcast is flat (the root puts to every member).
bool expect_bcast_flat(int members, size_t bytes, bool across_nodes) {
    const std::string c = env("HGAS_COLL_BCAST", "auto");
    if (c == "flat") return true;
    if (c != "auto") return false;
    return members <= 8 && bytes <= 1024 && !across_nodes;
}
// "tree", "chain" or "doubling".
std::string expect_reduce(int members, size_t bytes) {
    const std::string c = env("HGAS_COLL_REDUCE", "auto");
    if (c != "auto") return c;
    if (members >= 4 && bytes >= (size_t{512} << 10)) return "chain";
    if (members >= 4 && bytes < 16 * 1024) return "doubling";
    return "tree";
}
bool expect_allreduce_rsag(int members, size_t bytes) {
    const std::string c = env("HGAS_COLL_ALLREDUCE", "auto");
    if (c == "rsag") return true;
    if (c == "doubling") return false;
    return members >= 4 && bytes >= 16 * 1024;
}
// "doubling", "rsag" or "direct" for a symmetric dst (`mapped`: every member on this node).
std::string expect_allreduce_sym(int members, size_t bytes, bool mapped) {
    const std::string c = env("HGAS_COLL_ALLREDUCE", "auto");
    if (mapped && (c == "direct" || (c == "auto" && members <= 8 &&
                                     bytes >= (members == 2 ? size_t{1024} : size_t{4096}))))
        return "direct";
    return expect_allreduce_rsag(members, bytes) ? "rsag" : "doubling";
}
bool expect_fcollect_ring(bool spans_nodes, size_t bytes) {
    const std::string c = env("HGAS_COLL_FCOLLECT", "auto");
    if (c == "ring") return true;
    if (c == "direct") return false;
    return spans_nodes && bytes >= 32 * 1024;
}

// Whether some member of `team` is on another node than this rank (reached over the network).
bool spans_nodes(hgas_team_t team) {
    for (int i = 0; i < hgas_team_n(team); ++i)
        if (hgas_team_translate(team, i, HGAS_TEAM_NODE) < 0) return true;
    return false;
}

// The teams to try: the world, and strided splits of 2, 4 and 8 members (every other rank
// where there are enough, so that the team is not the world's prefix).
struct team_case {
    hgas_team_t t;
    bool owned;
};
std::vector<team_case> teams() {
    std::vector<team_case> v{{HGAS_TEAM_WORLD, false}};
    for (int size : {2, 4, 8}) {
        if (size >= n()) continue;
        const int stride = size * 2 <= n() ? 2 : 1;
        hgas_team_t t = HGAS_TEAM_INVALID;
        EXPECT_EQ(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, stride, size, &t), HGAS_OK) << hgas_last_error();
        v.push_back({t, true});
    }
    return v;
}
void destroy(std::vector<team_case> &v) {
    for (auto &c : v)
        if (c.owned && c.t != HGAS_TEAM_INVALID) {
            HGAS_EXPECT_OK(hgas_team_destroy(c.t));
        }
}

// Sizes on both sides of each cut-over.
const size_t kBcastSizes[] = {8, 1024, 1025, size_t{1} << 20, (size_t{16} << 20) - 64, size_t{16} << 20};
const size_t kReduceSizes[] = {8, 16 * 1024 - 8, 16 * 1024, (size_t{512} << 10) - 8, size_t{512} << 10, size_t{1} << 20};
const size_t kAllreduceSizes[] = {8, 16 * 1024 - 8, 16 * 1024, size_t{1} << 20};
const size_t kFcollectSizes[] = {8, 32 * 1024 - 8, 32 * 1024};

TEST(CollChoice, BroadcastPicksTheDocumentedAlgorithm) {
    const size_t maxb = size_t{16} << 20;
    unsigned char *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(maxb, reinterpret_cast<void **>(&dst)));
    std::vector<unsigned char> src(maxb);
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        if (tn < 2) continue;
        for (size_t bytes : kBcastSizes) {
            const int root = tn - 1;
            for (size_t i = 0; i < bytes; i += 4093) src[i] = static_cast<unsigned char>(i * 7 + bytes + tn);
            const hgasi_coll_stats_t a = stats();
            HGAS_OK_OR_FAIL(hgas_team_broadcast(tc.t, dst, src.data(), bytes, root));
            const hgasi_coll_stats_t b = stats();
            const bool scatter = expect_bcast_scatter(tn, bytes);
            const bool flat = !scatter && expect_bcast_flat(tn, bytes, spans_nodes(tc.t));
            EXPECT_EQ(b.bcast_scatter - a.bcast_scatter, scatter ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.bcast_flat - a.bcast_flat, flat ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.bcast_tree - a.bcast_tree, scatter || flat ? 0u : 1u) << tn << " members, " << bytes << " B";
            bool ok = true;
            for (size_t i = 0; i < bytes; i += 4093)
                ok = ok && dst[i] == static_cast<unsigned char>(i * 7 + bytes + tn);
            EXPECT_TRUE(ok) << "wrong broadcast data at member " << tme << ", " << bytes << " B";
        }
    }
    destroy(tv);
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

TEST(CollChoice, ReducePicksTheDocumentedAlgorithm) {
    const size_t maxb = size_t{1} << 20, maxc = maxb / 8;
    std::vector<int64_t> src(maxc), dst(maxc);
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        if (tn < 2) continue;
        for (size_t bytes : kReduceSizes) {
            const size_t count = bytes / 8;
            for (size_t i = 0; i < count; ++i) src[i] = static_cast<int64_t>(i % 1000) * (tme + 1);
            const hgasi_coll_stats_t a = stats();
            HGAS_OK_OR_FAIL(hgas_team_reduce(tc.t, dst.data(), src.data(), count, HGAS_INT64, HGAS_OP_SUM, 0));
            const hgasi_coll_stats_t b = stats();
            const std::string algo = expect_reduce(tn, bytes);
            EXPECT_EQ(b.reduce_chain - a.reduce_chain, algo == "chain" ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.reduce_tree - a.reduce_tree, algo == "tree" ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.reduce_doubling - a.reduce_doubling, algo == "doubling" ? 1u : 0u)
                << tn << " members, " << bytes << " B";
            if (tme == 0) {
                const int64_t k = static_cast<int64_t>(tn) * (tn + 1) / 2;
                size_t bad = 0;
                for (size_t i = 0; i < count; ++i) bad += dst[i] != static_cast<int64_t>(i % 1000) * k;
                EXPECT_EQ(bad, 0u) << "wrong reduce result, " << tn << " members, " << bytes << " B";
            }
        }
    }
    destroy(tv);
}

TEST(CollChoice, AllreducePicksTheDocumentedAlgorithm) {
    const size_t maxc = kAllreduceSizes[sizeof kAllreduceSizes / sizeof kAllreduceSizes[0] - 1] / 8;
    std::vector<int64_t> src(maxc), dst(maxc);
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        if (tn < 2) continue;
        for (size_t bytes : kAllreduceSizes) {
            const size_t count = bytes / 8;
            for (size_t i = 0; i < count; ++i) src[i] = static_cast<int64_t>(i % 1000) * (tme + 1);
            const hgasi_coll_stats_t a = stats();
            HGAS_OK_OR_FAIL(hgas_team_allreduce(tc.t, dst.data(), src.data(), count, HGAS_INT64, HGAS_OP_SUM));
            const hgasi_coll_stats_t b = stats();
            const bool rsag = expect_allreduce_rsag(tn, bytes);
            EXPECT_EQ(b.allreduce_rsag - a.allreduce_rsag, rsag ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.allreduce_doubling - a.allreduce_doubling, rsag ? 0u : 1u) << tn << " members, " << bytes << " B";
            const int64_t k = static_cast<int64_t>(tn) * (tn + 1) / 2;
            size_t bad = 0;
            for (size_t i = 0; i < count; ++i) bad += dst[i] != static_cast<int64_t>(i % 1000) * k;
            EXPECT_EQ(bad, 0u) << "wrong allreduce result, " << tn << " members, " << bytes << " B";
        }
    }
    destroy(tv);
}

// Host vectors in the symmetric heap: the direct allreduce (members reading each other's dst)
// from 1 KiB on 2 members and 4 KiB on 3 to 8, where every member is on this node.
const size_t kAllreduceSymSizes[] = {8, 1024 - 8, 1024, 4096 - 8, 4096, 16 * 1024, size_t{1} << 20};
TEST(CollChoice, AllreduceOfSymmetricVectorsPicksTheDocumentedAlgorithm) {
    const size_t maxc = kAllreduceSymSizes[sizeof kAllreduceSymSizes / sizeof kAllreduceSymSizes[0] - 1] / 8;
    int64_t *src = nullptr, *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(maxc * 8, reinterpret_cast<void **>(&src)));
    HGAS_OK_OR_FAIL(hgas_malloc(maxc * 8, reinterpret_cast<void **>(&dst)));
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        if (tn < 2) continue;
        const bool mapped = !spans_nodes(tc.t);
        for (size_t bytes : kAllreduceSymSizes) {
            const size_t count = bytes / 8;
            for (size_t i = 0; i < count; ++i) src[i] = static_cast<int64_t>(i % 1000) * (tme + 1);
            const hgasi_coll_stats_t a = stats();
            HGAS_OK_OR_FAIL(hgas_team_allreduce(tc.t, dst, src, count, HGAS_INT64, HGAS_OP_SUM));
            const hgasi_coll_stats_t b = stats();
            const std::string want = expect_allreduce_sym(tn, bytes, mapped);
            const std::string what = std::to_string(tn) + " members, " + std::to_string(bytes) + " B";
            EXPECT_EQ(b.allreduce_direct - a.allreduce_direct, want == "direct" ? 1u : 0u) << what;
            EXPECT_EQ(b.allreduce_rsag - a.allreduce_rsag, want == "rsag" ? 1u : 0u) << what;
            EXPECT_EQ(b.allreduce_doubling - a.allreduce_doubling, want == "doubling" ? 1u : 0u) << what;
            const int64_t k = static_cast<int64_t>(tn) * (tn + 1) / 2;
            size_t bad = 0;
            for (size_t i = 0; i < count; ++i) bad += dst[i] != static_cast<int64_t>(i % 1000) * k;
            EXPECT_EQ(bad, 0u) << "wrong allreduce result, " << what;
        }
    }
    destroy(tv);
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Members may pass different symmetric buffers (any memory is allowed): the direct allreduce
// reads each member's vector where that member says it is (w_vec_off), not at its own offset.
TEST(CollChoice, DirectAllreduceWithDifferentSymmetricBuffers) {
    // 156 KiB: direct by auto on one node; several of the host combine's 32 KiB blocks in
    // every member's part, and an odd count so that the parts differ in length
    const size_t count = 20003;
    int64_t *a = nullptr, *b = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(count * 8, reinterpret_cast<void **>(&a)));
    HGAS_OK_OR_FAIL(hgas_malloc(count * 8, reinterpret_cast<void **>(&b)));
    int64_t *mine = me() % 2 ? b : a;  // odd ranks use the second buffer
    int64_t *other = me() % 2 ? a : b;
    for (size_t i = 0; i < count; ++i) {
        mine[i] = static_cast<int64_t>(i % 1000) * (me() + 1);
        other[i] = -1;  // what a reader at the wrong offset would add
    }
    const hgasi_coll_stats_t s0 = stats();
    HGAS_OK_OR_FAIL(hgas_allreduce(mine, mine, count, HGAS_INT64, HGAS_OP_SUM));
    const hgasi_coll_stats_t s1 = stats();
    const std::string c = env("HGAS_COLL_ALLREDUCE", "auto");
    const bool direct = n() > 1 && !spans_nodes(HGAS_TEAM_WORLD) && (c == "direct" || (c == "auto" && n() <= 8));
    EXPECT_EQ(s1.allreduce_direct - s0.allreduce_direct, direct ? 1u : 0u);
    const int64_t k = static_cast<int64_t>(n()) * (n() + 1) / 2;
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += mine[i] != static_cast<int64_t>(i % 1000) * k;
    EXPECT_EQ(bad, 0u) << "wrong allreduce result with different buffers on different ranks";

    // Not in place, src symmetric on odd ranks (read where it lies) and private on even ones
    // (copied into dst and read there), dst the rank's other buffer.
    std::vector<int64_t> priv(count);
    for (size_t i = 0; i < count; ++i) {
        mine[i] = static_cast<int64_t>(i % 777) * (me() + 1);
        priv[i] = mine[i];
        other[i] = -1;
    }
    const int64_t *src = me() % 2 ? mine : priv.data();
    const hgasi_coll_stats_t s2 = stats();
    HGAS_OK_OR_FAIL(hgas_allreduce(other, src, count, HGAS_INT64, HGAS_OP_SUM));
    const hgasi_coll_stats_t s3 = stats();
    EXPECT_EQ(s3.allreduce_direct - s2.allreduce_direct, direct ? 1u : 0u);
    bad = 0;
    for (size_t i = 0; i < count; ++i) bad += other[i] != static_cast<int64_t>(i % 777) * k;
    EXPECT_EQ(bad, 0u) << "wrong allreduce result with symmetric and private sources mixed";
    bad = 0;
    for (size_t i = 0; i < count; ++i) bad += mine[i] != static_cast<int64_t>(i % 777) * (me() + 1);
    EXPECT_EQ(bad, 0u) << "the allreduce wrote into a symmetric src";
    HGAS_OK_OR_FAIL(hgas_free(b));
    HGAS_OK_OR_FAIL(hgas_free(a));
}

// A member whose dst is private (a std::vector) runs another algorithm than the members whose
// dst is symmetric: every member of the pair fails with a message instead of waiting.
TEST(CollChoice, DirectAllreduceMixedWithAPrivateBufferFailsWithAMessage) {
    const std::string c = env("HGAS_COLL_ALLREDUCE", "auto");
    // direct needs the members mapped here, and a setting that lets auto take it
    if (n() < 2 || spans_nodes(HGAS_TEAM_WORLD) || (c != "auto" && c != "direct")) return;
    const size_t count = 4096;
    int64_t *sym = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(count * 8, reinterpret_cast<void **>(&sym)));
    hgas_team_t pair = HGAS_TEAM_INVALID;
    HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, 2, &pair));
    if (pair != HGAS_TEAM_INVALID) {
        std::vector<int64_t> priv(count, 1);
        for (size_t i = 0; i < count; ++i) sym[i] = 1;
        int64_t *dst = hgas_team_my_rank(pair) == 0 ? priv.data() : sym;
        const hgas_status_t st = hgas_team_allreduce(pair, dst, dst, count, HGAS_INT64, HGAS_OP_SUM);
        EXPECT_EQ(st, HGAS_ERR_INVALID_ARG);
        EXPECT_NE(std::string(hgas_last_error()).find("symmetric heap and one not"), std::string::npos)
            << hgas_last_error();
        HGAS_EXPECT_OK(hgas_team_destroy(pair));
    }
    HGAS_OK_OR_FAIL(hgas_barrier());
    HGAS_OK_OR_FAIL(hgas_free(sym));
}

TEST(CollChoice, FcollectPicksTheDocumentedAlgorithm) {
    const size_t maxb = 32 * 1024;
    unsigned char *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(maxb * static_cast<size_t>(n()), reinterpret_cast<void **>(&dst)));
    std::vector<unsigned char> src(maxb);
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        if (tn < 2) continue;
        for (size_t bytes : kFcollectSizes) {
            for (size_t i = 0; i < bytes; ++i) src[i] = pattern(tme, 0, i);
            const hgasi_coll_stats_t a = stats();
            HGAS_OK_OR_FAIL(hgas_team_fcollect(tc.t, dst, src.data(), bytes));
            const hgasi_coll_stats_t b = stats();
            const bool ring = expect_fcollect_ring(spans_nodes(tc.t), bytes);
            EXPECT_EQ(b.fcollect_ring - a.fcollect_ring, ring ? 1u : 0u) << tn << " members, " << bytes << " B";
            EXPECT_EQ(b.fcollect_direct - a.fcollect_direct, ring ? 0u : 1u) << tn << " members, " << bytes << " B";
            size_t bad = 0;
            for (int j = 0; j < tn; ++j)
                for (size_t i = 0; i < bytes; ++i) bad += dst[static_cast<size_t>(j) * bytes + i] != pattern(j, 0, i);
            EXPECT_EQ(bad, 0u) << "wrong fcollect data, " << tn << " members, " << bytes << " B";
        }
    }
    destroy(tv);
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// collect: the size of a member's slot in the scratch (docs/collectives.md), 0 where the sizes
// go through an allreduce; and which algorithm a call with these block sizes runs.
size_t expect_collect_slot(int members) {
    if (env("HGAS_COLL_COLLECT", "auto") == "allreduce") return 0;
    const std::string sc = env("HGAS_COLL_SCRATCH", "1M");
    size_t scratch = std::strtoull(sc.c_str(), nullptr, 10);
    if (sc.back() == 'K') scratch <<= 10;
    if (sc.back() == 'M') scratch <<= 20;
    scratch = std::max<size_t>(scratch, 4096);
    const size_t slot = std::min<size_t>(4096, scratch / static_cast<size_t>(members)) & ~size_t{63};
    return slot >= 128 ? slot : 0;
}

// Blocks of sizes that differ by member (one of them empty), all within a slot, at a slot's
// edge (16 bytes of header), one member's block past it, every block past it, all empty, and
// in place: the counters say which algorithm ran, and every byte of dst (and nothing after
// it) is checked.
TEST(CollChoice, CollectPicksTheDocumentedAlgorithm) {
    const size_t maxb = 10000;
    unsigned char *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(maxb * static_cast<size_t>(n()) + 64, reinterpret_cast<void **>(&dst)));
    std::vector<unsigned char> src(maxb);
    auto tv = teams();
    for (auto &tc : tv) {
        if (tc.t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(tc.t), tme = hgas_team_my_rank(tc.t);
        const size_t slot = expect_collect_slot(tn);
        const size_t edge = slot ? slot - 16 : 100;
        struct shape {
            const char *what;
            size_t (*of)(int k, size_t edge);
        };
        const shape shapes[] = {
            {"varying", [](int k, size_t) { return k == 1 ? size_t{0} : size_t(7 * k + 3); }},
            {"at the edge", [](int, size_t e) { return e; }},
            {"one past the edge", [](int k, size_t e) { return k == 0 ? e + 1 : size_t(k); }},
            {"all large", [](int k, size_t) { return size_t(9000 + k); }},
            {"all empty", [](int, size_t) { return size_t{0}; }},
        };
        for (const shape &sh : shapes) {
            for (int in_place = 0; in_place < 2; ++in_place) {
                size_t want_total = 0, at = 0;
                bool large = false;
                for (int k = 0; k < tn; ++k) {
                    if (k == tme) at = want_total;
                    want_total += sh.of(k, edge);
                    large |= slot && sh.of(k, edge) + 16 > slot;
                }
                const size_t mine = sh.of(tme, edge);
                std::memset(dst, 0xEE, want_total + 64);
                for (size_t i = 0; i < mine; ++i) src[i] = pattern(tme, 8, i);
                if (in_place) std::memcpy(dst + at, src.data(), mine);
                const hgasi_coll_stats_t a = stats();
                size_t total = 0;
                HGAS_OK_OR_FAIL(hgas_team_collect(tc.t, dst, in_place ? dst + at : src.data(), mine, &total))
                    << tn << " members, " << sh.what;
                const hgasi_coll_stats_t b = stats();
                EXPECT_EQ(total, want_total) << tn << " members, " << sh.what;
                if (tn > 1) {
                    EXPECT_EQ(b.collect_allreduce - a.collect_allreduce, slot ? 0u : 1u) << tn << ", " << sh.what;
                    EXPECT_EQ(b.collect_slots - a.collect_slots, slot && !large ? 1u : 0u) << tn << ", " << sh.what;
                    EXPECT_EQ(b.collect_slots_large - a.collect_slots_large, large ? 1u : 0u) << tn << ", " << sh.what;
                }
                size_t bad = 0, pos = 0;
                for (int k = 0; k < tn; ++k)
                    for (size_t i = 0; i < sh.of(k, edge); ++i, ++pos) bad += dst[pos] != pattern(k, 8, i);
                EXPECT_EQ(bad, 0u) << "wrong collect data, " << tn << " members, " << sh.what << (in_place ? ", in place" : "");
                EXPECT_EQ(dst[want_total], 0xEE) << "collect wrote past the end, " << tn << " members, " << sh.what;
            }
        }
    }
    destroy(tv);
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// A member whose dst is not symmetric fails with a message. Where every block fits its slot,
// nobody writes to that dst, so the others complete with every block; where a block goes
// straight to the peers' dst, every member fails (nothing written into the bad dst). A collect
// after it works everywhere.
TEST(CollChoice, CollectWithABadDstOnOneMember) {
    if (n() < 2) GTEST_SKIP() << "needs 2 ranks";
    const size_t slot = expect_collect_slot(n());
    unsigned char *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc(20000 * static_cast<size_t>(n()), reinterpret_cast<void **>(&dst)));
    std::vector<unsigned char> priv(20000 * static_cast<size_t>(n()), 0xEE), src(20000);
    for (size_t i = 0; i < src.size(); ++i) src[i] = pattern(me(), 9, i);
    const int bad = n() - 1;
    for (size_t bytes : {size_t{8}, size_t{20000}}) {
        const bool one_round = slot && bytes + 16 <= slot;
        unsigned char *d = me() == bad ? priv.data() : dst;
        size_t total = 0;
        const hgas_status_t st = hgas_team_collect(HGAS_TEAM_WORLD, d, src.data(), bytes, &total);
        if (me() == bad) {
            EXPECT_EQ(st, HGAS_ERR_INVALID_POINTER) << bytes << " B";
            EXPECT_NE(std::string(hgas_last_error()).find("hgas_team_collect"), std::string::npos) << hgas_last_error();
            size_t touched = 0;
            for (unsigned char c : priv) touched += c != 0xEE;
            EXPECT_EQ(touched, 0u) << "a peer wrote into the bad dst, " << bytes << " B";
        } else if (one_round) {
            ASSERT_EQ(st, HGAS_OK) << bytes << " B: " << hgas_last_error();
            size_t wrong = 0;
            for (int k = 0; k < n(); ++k)
                for (size_t i = 0; i < bytes; ++i) wrong += dst[k * bytes + i] != pattern(k, 9, i);
            EXPECT_EQ(wrong, 0u) << bytes << " B";
        } else {
            EXPECT_EQ(st, HGAS_ERR_INVALID_ARG) << bytes << " B";
            EXPECT_NE(std::string(hgas_last_error()).find("rank " + std::to_string(bad)), std::string::npos)
                << hgas_last_error();
        }
    }
    size_t total = 0;
    HGAS_OK_OR_FAIL(hgas_team_collect(HGAS_TEAM_WORLD, dst, src.data(), 8, &total));
    EXPECT_EQ(total, 8u * static_cast<size_t>(n()));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Regression (reduce allocated its accumulator per call): an inner node of the reduce tree took
// a chunk-sized buffer (128-256 KiB, at malloc's mmap threshold) at every call. The rank now
// keeps one: after the first call of the largest size at every root, reduces of any size and
// root allocate nothing, and the results stay right.
TEST(CollChoice, ReduceAllocatedAnAccumulatorPerCall) {
    const size_t maxc = 128;  // 512 B of int32
    std::vector<int32_t> src(maxc), dst(maxc);
    for (size_t i = 0; i < maxc; ++i) src[i] = static_cast<int32_t>(i % 13) + me();
    // Warm-up at every root: which ranks are inner nodes depends on the root.
    for (int root = 0; root < n(); ++root)
        HGAS_OK_OR_FAIL(hgas_reduce(dst.data(), src.data(), maxc, HGAS_INT32, HGAS_OP_SUM, root));
    const hgasi_coll_stats_t a = stats();
    // From 4 ranks on some rank keeps a buffer (auto: every non-root, the doubling reduce;
    // forced tree: the inner nodes, relative rank 2 combining rank 3's chunk); the warm-up made
    // them.
    uint64_t allocs = a.host_acc_allocs, total = 0;
    HGAS_OK_OR_FAIL(hgas_allreduce(&total, &allocs, 1, HGAS_UINT64, HGAS_OP_SUM));
    if (n() >= 4) {
        EXPECT_GE(total, 1u) << "no inner node counted an accumulator";
    }
    size_t bad = 0;
    for (int it = 0; it < 200; ++it) {
        const size_t count = size_t{1} << (it % 8);  // 1 .. 128 elements
        const int root = it % n();
        HGAS_OK_OR_FAIL(hgas_reduce(dst.data(), src.data(), count, HGAS_INT32, HGAS_OP_SUM, root));
        if (me() == root)
            for (size_t i = 0; i < count; ++i)
                bad += dst[i] != static_cast<int32_t>(i % 13) * n() + n() * (n() - 1) / 2;
    }
    EXPECT_EQ(bad, 0u) << "wrong reduce results on rank " << me();
    EXPECT_EQ(stats().host_acc_allocs - a.host_acc_allocs, 0u) << "rank " << me() << " allocated per reduce";
}

// --- the device scratch (sim or cuda memory; the CPU never touches it: hgas_put / hgas_get) --

void put_own(void *sym, const void *src, size_t bytes) { HGAS_OK_OR_FAIL(hgas_put(gp(sym, me()), src, bytes)); }
std::vector<int64_t> get_own(const void *sym, size_t count) {
    std::vector<int64_t> v(count);
    EXPECT_EQ(hgas_get(v.data(), gp(sym, me()), count * 8), HGAS_OK) << hgas_last_error();
    return v;
}

// Allreduce of `count` int64 (value i % 997 + member) on `team` in sim memory; checks the sum.
void sim_allreduce(hgas_team_t team, size_t count, void *src, void *dst) {
    const int tn = hgas_team_n(team), tme = hgas_team_my_rank(team);
    std::vector<int64_t> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<int64_t>(i % 997) + tme;
    put_own(src, v.data(), count * 8);
    HGAS_OK_OR_FAIL(hgas_team_allreduce(team, dst, src, count, HGAS_INT64, HGAS_OP_SUM));
    const auto got = get_own(dst, count);
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i)
        bad += got[i] != static_cast<int64_t>(i % 997) * tn + static_cast<int64_t>(tn) * (tn - 1) / 2;
    EXPECT_EQ(bad, 0u) << "wrong allreduce result on " << tn << " members";
}

TEST(CollChoice, DeviceVectorsCrossTheDeviceScratch) {
    // Run with HGAS_TEST_KIND=sim (CI) or cuda (label gpu) and that kind's heap
    // (tests/ranks/CMakeLists.txt); the host runs filter this test out.
    const std::string kname = env("HGAS_TEST_KIND", "");
    ASSERT_TRUE(kname == "sim" || kname == "cuda") << "this test needs device memory: HGAS_TEST_KIND=sim or cuda";
    const hgas_kind_t kind = kname == "cuda" ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
    const bool enabled = env("HGAS_COLL_DEVICE_SCRATCH", "1M") != "0";
    const size_t count = 100000;  // 800 KB: several chunks of a 64 KiB scratch
    void *src = nullptr, *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8, kind, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8, kind, &dst));
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());

    // A team (not the world) first: no device scratch exists yet, so the host scratch.
    hgas_team_t pair = HGAS_TEAM_INVALID;
    if (n() >= 2) {
        HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 0, 1, 2, &pair));
        if (pair != HGAS_TEAM_INVALID) sim_allreduce(pair, count, src, dst);
        const hgasi_coll_stats_t s = stats();
        EXPECT_EQ(s.device_scratch_allocs, 0u);
        EXPECT_EQ(s.dev_bytes_device_scratch, 0u);
        EXPECT_EQ(s.dev_reductions_host_scratch, pair != HGAS_TEAM_INVALID ? 1u : 0u);
        if (pair != HGAS_TEAM_INVALID) {
            EXPECT_EQ(s.dev_bytes_host_scratch, count * 8);
        }
    }

    // The world: the device scratch is taken (if enabled) and every byte crosses it.
    HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
    sim_allreduce(HGAS_TEAM_WORLD, count, src, dst);
    HGAS_OK_OR_FAIL(hgas_team_reduce(HGAS_TEAM_WORLD, dst, src, count, HGAS_INT64, HGAS_OP_SUM, n() - 1));
    hgasi_coll_stats_t s = stats();
    // The figures (tools/gpu-check.sh's coll step collects these lines).
    std::printf("devscratch: kind %s, rank %d of %d, world allreduce + reduce of %zu B: %llu B device->device "
                "scratch, %llu B device->host scratch, %llu device scratch blocks\n",
                kname.c_str(), me(), n(), count * 8, static_cast<unsigned long long>(s.dev_bytes_device_scratch),
                static_cast<unsigned long long>(s.dev_bytes_host_scratch),
                static_cast<unsigned long long>(s.device_scratch_allocs));
    if (n() >= 2) {
        // Allreduce: each of ranks 0 .. p2-1 sends the vector once per round (and to its fold
        // partner); reduce: every rank but the root sends it once.
        const uint64_t reductions = 2;
        EXPECT_EQ(enabled ? s.dev_reductions_device_scratch : s.dev_reductions_host_scratch, reductions);
        EXPECT_EQ(enabled ? s.dev_reductions_host_scratch : s.dev_reductions_device_scratch, 0u);
        EXPECT_EQ(s.device_scratch_allocs, enabled ? 1u : 0u);
        EXPECT_GE(enabled ? s.dev_bytes_device_scratch : s.dev_bytes_host_scratch, count * 8);
        EXPECT_EQ(enabled ? s.dev_bytes_host_scratch : s.dev_bytes_device_scratch, 0u);
        EXPECT_EQ(s.host_bytes_host_scratch, 0u);
    }
    if (me() == n() - 1) {
        const auto got = get_own(dst, count);
        size_t bad = 0;
        // src holds i % 997 + world rank (from the world allreduce above).
        for (size_t i = 0; i < count; ++i)
            bad += got[i] != static_cast<int64_t>(i % 997) * n() + static_cast<int64_t>(n()) * (n() - 1) / 2;
        EXPECT_EQ(bad, 0u) << "wrong reduce result";
    }

    // The team again: now the device scratch exists, so it uses it too (no second block).
    if (pair != HGAS_TEAM_INVALID) {
        HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
        sim_allreduce(pair, count, src, dst);
        s = stats();
        EXPECT_EQ(s.device_scratch_allocs, 0u);
        EXPECT_EQ(enabled ? s.dev_bytes_device_scratch : s.dev_bytes_host_scratch, count * 8);
        EXPECT_EQ(enabled ? s.dev_bytes_host_scratch : s.dev_bytes_device_scratch, 0u);
    }
    // Host vectors still use the host scratch.
    if (n() >= 2) {
        HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
        int64_t one = 1, sum = 0;
        HGAS_OK_OR_FAIL(hgas_allreduce(&sum, &one, 1, HGAS_INT64, HGAS_OP_SUM));
        EXPECT_EQ(sum, n());
        s = stats();
        EXPECT_GT(s.host_bytes_host_scratch, 0u);
        EXPECT_EQ(s.dev_bytes_device_scratch + s.dev_bytes_host_scratch, 0u);
    }
    if (pair != HGAS_TEAM_INVALID) {
        HGAS_EXPECT_OK(hgas_team_destroy(pair));
    }
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Allreduce and reduce_scatter of device vectors read the members' mapped vectors directly
// (algorithm "direct", auto for device vectors) where every member's heap is mapped here, and
// pass through the scratch where one is not (HGAS_TEST_EXPECT_DIRECT says which the config
// gives: 1 on shm, 0 without peer access). Results are checked either way.
TEST(CollChoice, DeviceVectorsReduceDirectlyWhereMapped) {
    const std::string kname = env("HGAS_TEST_KIND", "");
    ASSERT_TRUE(kname == "sim" || kname == "cuda") << "this test needs device memory: HGAS_TEST_KIND=sim or cuda";
    const hgas_kind_t kind = kname == "cuda" ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
    const bool expect = env("HGAS_TEST_EXPECT_DIRECT", "1") == "1" && n() > 1;
    const size_t count = 100000;
    void *src = nullptr, *dst = nullptr;
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8 * static_cast<size_t>(n()), kind, &src));
    HGAS_OK_OR_FAIL(hgas_malloc_kind(count * 8 * static_cast<size_t>(n()), kind, &dst));
    hgas_team_t pair = HGAS_TEAM_INVALID;
    if (n() >= 3) {
        HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 1, 1, 2, &pair));
    }
    for (hgas_team_t t : {HGAS_TEAM_WORLD, pair}) {
        if (t == HGAS_TEAM_INVALID) continue;
        const int tn = hgas_team_n(t), tme = hgas_team_my_rank(t);
        // Parts empty, short and whole; 4096 (32 KiB blocks): on a GPU the copy agent serves
        // copies of that size, unordered with the combines (a copy that landed after them broke
        // reduce_scatter once).
        for (size_t c : {size_t{1}, size_t{33}, size_t{4096}, count}) {
            HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
            std::vector<int64_t> v(c);
            for (size_t i = 0; i < c; ++i) v[i] = static_cast<int64_t>(i % 997) * (tme + 1);
            HGAS_OK_OR_FAIL(hgas_put(gp(src, me()), v.data(), c * 8));
            HGAS_OK_OR_FAIL(hgas_team_allreduce(t, dst, src, c, HGAS_INT64, HGAS_OP_SUM));
            hgasi_coll_stats_t s = stats();
            EXPECT_EQ(s.allreduce_direct, expect ? 1u : 0u) << tn << " members, " << c << " elements";
            EXPECT_EQ(s.allreduce_doubling + s.allreduce_rsag, expect || tn == 1 ? 0u : 1u);
            if (expect) {
                EXPECT_EQ(s.dev_bytes_device_scratch + s.dev_bytes_host_scratch, 0u);
            }
            const int64_t k = static_cast<int64_t>(tn) * (tn + 1) / 2;
            auto got = get_own(dst, c);
            size_t bad = 0;
            for (size_t i = 0; i < c; ++i) bad += got[i] != static_cast<int64_t>(i % 997) * k;
            EXPECT_EQ(bad, 0u) << "wrong allreduce result, " << tn << " members, " << c << " elements";
            // In place: dst is src.
            HGAS_OK_OR_FAIL(hgas_team_allreduce(t, src, src, c, HGAS_INT64, HGAS_OP_SUM));
            got = get_own(src, c);
            bad = 0;
            for (size_t i = 0; i < c; ++i) bad += got[i] != static_cast<int64_t>(i % 997) * k;
            EXPECT_EQ(bad, 0u) << "wrong in-place allreduce result, " << tn << " members, " << c << " elements";

            // reduce_scatter: member j's block of src is j * c + i ... scaled by (member + 1).
            std::vector<int64_t> w(c * static_cast<size_t>(tn));
            for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>(i % 1009) * (tme + 1);
            HGAS_OK_OR_FAIL(hgas_put(gp(src, me()), w.data(), w.size() * 8));
            HGAS_OK_OR_FAIL(hgasi_coll_stats_reset());
            HGAS_OK_OR_FAIL(hgas_team_reduce_scatter(t, dst, src, c, HGAS_INT64, HGAS_OP_SUM));
            s = stats();
            EXPECT_EQ(s.reduce_scatter_direct, expect ? 1u : 0u) << tn << " members, " << c << " elements";
            got = get_own(dst, c);
            bad = 0;
            for (size_t i = 0; i < c; ++i)
                bad += got[i] != static_cast<int64_t>((c * static_cast<size_t>(tme) + i) % 1009) * k;
            EXPECT_EQ(bad, 0u) << "wrong reduce_scatter result, " << tn << " members, " << c << " elements";
            // In place: dst is this member's own block of src.
            HGAS_OK_OR_FAIL(hgas_put(gp(src, me()), w.data(), w.size() * 8));
            char *mine = static_cast<char *>(src) + c * 8 * static_cast<size_t>(tme);
            HGAS_OK_OR_FAIL(hgas_team_reduce_scatter(t, mine, src, c, HGAS_INT64, HGAS_OP_SUM));
            got = get_own(mine, c);
            bad = 0;
            for (size_t i = 0; i < c; ++i)
                bad += got[i] != static_cast<int64_t>((c * static_cast<size_t>(tme) + i) % 1009) * k;
            EXPECT_EQ(bad, 0u) << "wrong in-place reduce_scatter result, " << tn << " members, " << c << " elements";
        }
    }
    if (pair != HGAS_TEAM_INVALID) {
        HGAS_EXPECT_OK(hgas_team_destroy(pair));
    }
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

// Small device vectors by one kernel per member (HGAS_COLL_KERNEL_MAX, docs/collectives.md):
// where the GPUs do not time-slice between processes (a GPU per rank process, or ranks as
// threads) auto runs allreduce of cuda vectors up to 64 KiB as one kernel, elsewhere (sim, or
// processes sharing a GPU) as before: HGAS_TEST_EXPECT_KERNEL=1 or 0 (the default) says which
// to expect, `any` checks only the results (rank processes on however many GPUs there are). Every result is checked bit
// for bit against the combination in member order on the CPU: in place and not, src where it lies and copied, 16-byte
// aligned and not (the kernel's two load paths), one block and several (8 KiB slices), the largest size where members
// share a GPU (64 KiB) and where each has its own (1 MiB), one element over each, many calls back to back (the kernel's
// flags only grow), counts that differ between members (a message, not a hang), and a team made again in a destroyed
// team's slot (flags cleared). Member `member`'s vector for call `salt` (every call's values differ, so a stale read or
// a slice in the wrong place shows).
template <class T>
std::vector<T> member_values(size_t count, int member, hgas_op_t op, unsigned salt) {
    std::vector<T> v(count);
    for (size_t i = 0; i < count; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            if (op == HGAS_OP_PROD)
                v[i] = static_cast<T>(1.0 + 0.01 * static_cast<double>((i + salt) % 17) + 0.003 * member);
            else
                v[i] = static_cast<T>(0.1 * static_cast<double>((i + salt) % 113) + 1.37 * member);
        } else {
            v[i] = static_cast<T>(((i + salt * 7919u) * 2654435761u + static_cast<size_t>(member) * 40503u) >> 3);
        }
    }
    return v;
}
template <class T>
T combine_ref(T a, T b, hgas_op_t op) {
    switch (op) {
    case HGAS_OP_SUM: return static_cast<T>(a + b);
    case HGAS_OP_PROD: return static_cast<T>(a * b);
    case HGAS_OP_MIN: return b < a ? b : a;
    case HGAS_OP_MAX: return a < b ? b : a;
    default: break;
    }
    if constexpr (std::is_integral_v<T>) {
        if (op == HGAS_OP_XOR) return static_cast<T>(a ^ b);
        if (op == HGAS_OP_AND) return static_cast<T>(a & b);
        if (op == HGAS_OP_OR) return static_cast<T>(a | b);
    }
    return a;
}
// One allreduce of `count` T on `team`, this member's vector at src + shift (symmetric) or in
// a private host vector; returns the number of wrong elements (bitwise) and adds the calls
// that ran as a kernel to *kernels.
template <class T>
size_t kernel_case(hgas_team_t team, char *src, char *dst, size_t shift, size_t count, hgas_dtype_t type,
                   hgas_op_t op, int mode, uint64_t *kernels, unsigned call = 0) {
    const int tn = hgas_team_n(team), tme = hgas_team_my_rank(team);
    const size_t bytes = count * sizeof(T);
    // The values differ from call to call (`call`: back-to-back calls of one shape), alike on
    // every member.
    const unsigned salt = static_cast<unsigned>(count * 31 + shift * 7 + static_cast<size_t>(mode) * 3 +
                                                static_cast<size_t>(type) * 13 + static_cast<size_t>(op)) +
                          call * 101;
    std::vector<T> mine = member_values<T>(count, tme, op, salt);
    char *d = dst + shift;
    const void *from = nullptr;
    if (mode == 0) {  // src symmetric, apart from dst
        EXPECT_EQ(hgas_put(gp(src + shift, me()), mine.data(), bytes), HGAS_OK) << hgas_last_error();
        from = src + shift;
    } else if (mode == 1) {  // in place
        EXPECT_EQ(hgas_put(gp(d, me()), mine.data(), bytes), HGAS_OK) << hgas_last_error();
        from = d;
    } else {  // a private host vector, copied into dst
        from = mine.data();
    }
    EXPECT_EQ(hgasi_coll_stats_reset(), HGAS_OK);
    EXPECT_EQ(hgas_team_allreduce(team, d, from, count, type, op), HGAS_OK) << hgas_last_error();
    *kernels += stats().allreduce_kernel;
    std::vector<T> want = member_values<T>(count, 0, op, salt), got(count);
    for (int m = 1; m < tn; ++m) {
        const std::vector<T> v = member_values<T>(count, m, op, salt);
        for (size_t i = 0; i < count; ++i) want[i] = combine_ref<T>(want[i], v[i], op);
    }
    EXPECT_EQ(hgas_get(got.data(), gp(d, me()), bytes), HGAS_OK) << hgas_last_error();
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
        if constexpr (std::is_floating_point_v<T>)  // the direct algorithm's order differs by part
            bad += !(std::fabs(static_cast<double>(got[i] - want[i])) <= 1e-5 * std::fabs(static_cast<double>(want[i])));
        else
            bad += got[i] != want[i];
    }
    // Every member holds the same bits (FNV-1a of the result, its minimum and maximum).
    uint64_t h = 1469598103934665603ull, lo = 0, hi = 0;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ reinterpret_cast<const unsigned char *>(got.data())[i]) * 1099511628211ull;
    EXPECT_EQ(hgas_team_allreduce(team, &lo, &h, 1, HGAS_UINT64, HGAS_OP_MIN), HGAS_OK) << hgas_last_error();
    EXPECT_EQ(hgas_team_allreduce(team, &hi, &h, 1, HGAS_UINT64, HGAS_OP_MAX), HGAS_OK) << hgas_last_error();
    return bad + (lo != hi);
}

TEST(CollChoice, DeviceVectorsSmallAllreduceInOneKernel) {
    const std::string kname = env("HGAS_TEST_KIND", "");
    ASSERT_TRUE(kname == "sim" || kname == "cuda") << "this test needs device memory: HGAS_TEST_KIND=sim or cuda";
    const hgas_kind_t kind = kname == "cuda" ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
    const std::string expect_env = env("HGAS_TEST_EXPECT_KERNEL", "0");
    const bool expect = expect_env == "1", any = expect_env == "any";
    const size_t area = (size_t{1} << 20) + 64;
    // Past 64 KiB only teams whose members are on GPUs of their own take the kernel: here
    // counted only where no two ranks share one (else only the results are checked).
    int sharing = hgas_team_n(HGAS_TEAM_GPU), most = 0;
    HGAS_OK_OR_FAIL(hgas_allreduce(&most, &sharing, 1, HGAS_INT32, HGAS_OP_MAX));
    const bool own_gpus = most == 1;
    char *src = nullptr, *dst = nullptr;
    {
        void *a = nullptr, *b = nullptr;
        HGAS_OK_OR_FAIL(hgas_malloc_kind(area, kind, &a));
        HGAS_OK_OR_FAIL(hgas_malloc_kind(area, kind, &b));
        src = static_cast<char *>(a);
        dst = static_cast<char *>(b);
    }
    for (int round = 0; round < 2; ++round) {
        // The world, and a pair made again in the slot of the one destroyed in round 0.
        hgas_team_t pair = HGAS_TEAM_INVALID;
        if (n() >= 3) {
            HGAS_OK_OR_FAIL(hgas_team_split_strided(HGAS_TEAM_WORLD, 1, 1, 2, &pair));
        }
        for (hgas_team_t t : {HGAS_TEAM_WORLD, pair}) {
            if (t == HGAS_TEAM_INVALID) continue;
            const int tn = hgas_team_n(t);
            const bool k = expect && tn > 1;
            struct size_case {
                size_t bytes;
                bool fits;
            };
            const size_case sizes[] = {{8, true},
                                       {264, true},
                                       {8192, true},
                                       {8200, true},
                                       {size_t{64} << 10, true},
                                       {(size_t{64} << 10) + 8, own_gpus},
                                       {(size_t{200} << 10) + 24, own_gpus},
                                       {size_t{1} << 20, own_gpus},
                                       {(size_t{1} << 20) + 8, false}};
            for (const size_case &sc : sizes) {
                for (int mode = 0; mode < 3; ++mode) {
                    for (size_t shift : {size_t{0}, size_t{8}}) {
                        if (sc.bytes + shift > area) continue;
                        uint64_t kernels = 0;
                        size_t bad = 0;
                        if (shift == 0) {
                            bad += kernel_case<int64_t>(t, src, dst, shift, sc.bytes / 8, HGAS_INT64, HGAS_OP_SUM, mode,
                                                        &kernels);
                            bad += kernel_case<float>(t, src, dst, shift, sc.bytes / 4, HGAS_FLOAT, HGAS_OP_SUM, mode,
                                                      &kernels);
                        } else {
                            bad += kernel_case<double>(t, src, dst, shift, sc.bytes / 8, HGAS_DOUBLE, HGAS_OP_MAX, mode,
                                                       &kernels);
                            bad += kernel_case<uint8_t>(t, src, dst, shift + 3, sc.bytes - 3, HGAS_UINT8, HGAS_OP_XOR,
                                                        mode, &kernels);
                        }
                        EXPECT_EQ(bad, 0u) << "wrong allreduce result: " << tn << " members, " << sc.bytes
                                           << " bytes, mode " << mode << ", shift " << shift;
                        if (!any && (own_gpus || sc.bytes <= (size_t{64} << 10) || t == HGAS_TEAM_WORLD)) {
                            EXPECT_EQ(kernels, k && sc.fits ? 2u : 0u)
                                << tn << " members, " << sc.bytes << " bytes, mode " << mode << ", shift " << shift;
                        }
                    }
                }
            }
            // Back to back, no barrier between: products of floats and int16 minima.
            uint64_t kernels = 0;
            size_t bad = 0;
            for (int i = 0; i < 40; ++i) {
                bad += i % 2 ? kernel_case<float>(t, src, dst, 0, 100 + static_cast<size_t>(i), HGAS_FLOAT,
                                                  HGAS_OP_PROD, i % 3, &kernels, static_cast<unsigned>(i))
                             : kernel_case<int16_t>(t, src, dst, 0, 3000, HGAS_INT16, HGAS_OP_MIN, i % 3, &kernels,
                                                    static_cast<unsigned>(i));
            }
            EXPECT_EQ(bad, 0u) << "wrong result in back-to-back calls on " << tn << " members";
            if (!any) {
                EXPECT_EQ(kernels, k ? 40u : 0u);
            }
            if (k) {
                // Counts that differ: every member's host finds a fingerprint unlike its own at
                // entry (before any kernel) and fails with a message; the next call is whole.
                const int tme = hgas_team_my_rank(t);
                EXPECT_EQ(hgas_team_allreduce(t, dst, src, tme == 0 ? 10 : 11, HGAS_INT32, HGAS_OP_SUM),
                          HGAS_ERR_INVALID_ARG);
                EXPECT_NE(std::string(hgas_last_error()).find("other arguments"), std::string::npos)
                    << hgas_last_error();
                uint64_t again = 0;
                EXPECT_EQ(kernel_case<int64_t>(t, src, dst, 0, 77, HGAS_INT64, HGAS_OP_SUM, 0, &again), 0u);
                EXPECT_EQ(again, 1u);
            }
        }
        if (pair != HGAS_TEAM_INVALID) {
            HGAS_EXPECT_OK(hgas_team_destroy(pair));
        }
    }
    HGAS_OK_OR_FAIL(hgas_free(src));
    HGAS_OK_OR_FAIL(hgas_free(dst));
}

}  // namespace
