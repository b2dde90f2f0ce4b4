// hgas-bench-msg-footprint — the pinned memory of tagged messages as the number of peers grows.
// Every rank sends a message of `--bytes` from sim (device) memory to every other rank at once
// and receives one from each, with no one-sided path (run with HGAS_SIM_PEER_ACCESS=0, or
// across nodes), so every message goes through the fixed pinned pools. Rank 0 prints one JSON
// record: the pool's bytes (fixed), the rings' bytes (per peer), the most send chunks in use
// at once, the chunks sent, and whether every byte arrived intact.
//   hgasrun -n 64 hgas-bench-msg-footprint [--bytes N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <hgas/hgas.h>

#include "api/testing_msg.h"

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        if ((call) != HGAS_OK) {                                                                          \
            std::fprintf(stderr, "hgas-bench-msg-footprint: %s: %s\n", #call, hgas_last_error());        \
            hgas_abort(1, "benchmark call failed");                                                       \
        }                                                                                                 \
    } while (0)

static hgas_gptr_t at(const void *sym, int rank) {
    hgas_gptr_t g;
    CHECK(hgas_ptr(sym, rank, &g));
    return g;
}

static unsigned char pat(int from, int to, size_t i) { return static_cast<unsigned char>(from * 37 + to * 11 + i * 7); }

int main(int argc, char **argv) {
    size_t bytes = 128 << 10;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 0);
    CHECK(hgas_init());
    const int me = hgas_rank_me(), n = hgas_rank_n();
    if (!hgas_kind_available(HGAS_KIND_SIM)) {
        std::fprintf(stderr, "hgas-bench-msg-footprint: needs sim memory (HGAS_SIM_HEAP_SIZE > 0)\n");
        hgas_abort(1, "no sim memory");
    }
    // Sources and destinations in sim memory, one per peer; filled through hgas_put (the CPU
    // must not touch sim memory).
    std::vector<void *> src(n), dst(n);
    std::vector<unsigned char> host(bytes);
    for (int p = 0; p < n; ++p) {
        CHECK(hgas_malloc_kind(bytes, HGAS_KIND_SIM, &src[p]));
        CHECK(hgas_malloc_kind(bytes, HGAS_KIND_SIM, &dst[p]));
        if (p == me) continue;
        for (size_t i = 0; i < bytes; ++i) host[i] = pat(me, p, i);
        CHECK(hgas_put(at(src[p], me), host.data(), bytes));
    }
    CHECK(hgas_barrier());
    hgasi_msg_stats_t before, after;
    CHECK(hgasi_msg_stats(&before));
    std::vector<hgas_handle_t> h;
    h.reserve(2 * n);
    for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        h.emplace_back();
        CHECK(hgas_irecv(dst[p], bytes, p, 5, nullptr, &h.back()));
    }
    for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        h.emplace_back();
        CHECK(hgas_isend(src[p], bytes, p, 5, &h.back()));
    }
    CHECK(hgas_wait_all(h.data(), h.size()));
    CHECK(hgasi_msg_stats(&after));
    size_t bad = 0;
    for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        CHECK(hgas_get(host.data(), at(dst[p], me), bytes));
        for (size_t i = 0; i < bytes; ++i) bad += host[i] != pat(p, me, i);
    }
    // The largest over the ranks.
    uint64_t mine[4] = {after.pool_send_peak, after.rndv_pool - before.rndv_pool, bad, after.pool_chunks - before.pool_chunks},
             most[4];
    CHECK(hgas_allreduce(most, mine, 4, HGAS_UINT64, HGAS_OP_MAX));
    if (me == 0)
        std::printf("{\"bench\":\"msg_footprint\",\"ranks\":%d,\"peers\":%d,\"bytes_per_peer\":%zu,\"pool_bytes\":%llu,"
                    "\"ring_bytes\":%llu,\"pool_send_peak_chunks\":%llu,\"pool_messages_max\":%llu,\"pool_chunks_max\":%llu,"
                    "\"bad_bytes_max\":%llu}\n",
                    n, n - 1, bytes, (unsigned long long)after.pool_bytes, (unsigned long long)after.ring_bytes,
                    (unsigned long long)most[0], (unsigned long long)most[1], (unsigned long long)most[3],
                    (unsigned long long)most[2]);
    for (int p = 0; p < n; ++p) {
        CHECK(hgas_free(src[p]));
        CHECK(hgas_free(dst[p]));
    }
    CHECK(hgas_finalize());
    return most[2] ? 1 : 0;
}
