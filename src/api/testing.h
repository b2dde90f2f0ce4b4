/* Internal queries for hgas's own tests (tests/ranks/test_reg_cache.cpp): not part of the
 * public API (not installed, no compatibility promise). Exported by libhgas like every symbol. */
#ifndef HGAS_API_TESTING_H
#define HGAS_API_TESTING_H
#include <stddef.h>
#include <stdint.h>

#include <hgas/hgas.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* The registration that overlaps the queried range (after applying recorded unmaps). */
    int found, cached, pinned;
    void *base;
    size_t size;
    /* The cache as a whole. */
    int active;         /* HGAS_REG_CACHE=auto with memory hooks */
    size_t entries, cached_bytes, explicit_bytes;
    uint64_t hits, added, merged, evicted, invalidated, skipped;
} hgasi_reg_info_t;

/* What the calling rank's registration cache holds for [ptr, ptr+bytes), and its counters. */
hgas_status_t hgasi_reg_cache_query(const void *ptr, size_t bytes, hgasi_reg_info_t *out);

/* Whether the calling rank has mapped rank `peer`'s segments yet (peers on the node are mapped
 * at their first use, HGAS_PEER_ATTACH=lazy): 1 or 0; -1 for no such rank or before init.
 * Asking does not map it. */
int hgasi_peer_attached(int peer);

#ifdef __cplusplus
}
#endif
#endif
