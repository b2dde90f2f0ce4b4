/* Internal counters of the message layer for hgas's own tests (tests/ranks/test_msg.cpp): not
 * part of the public API. */
#ifndef HGAS_API_TESTING_MSG_H
#define HGAS_API_TESTING_MSG_H
#include <stdint.h>

#include <hgas/hgas.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t eager_sent, rndv_sent, rndv_one_sided, rndv_chunked;
    uint64_t unexpected, unexpected_bytes_peak, flow_stalls;
    uint64_t rndv_pool, pool_chunks, pool_send_peak, pool_bytes, ring_bytes;
} hgasi_msg_stats_t;

hgas_status_t hgasi_msg_stats(hgasi_msg_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
