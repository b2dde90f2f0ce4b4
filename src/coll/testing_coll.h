/* Internal counters of the collectives for hgas's own tests (tests/ranks/test_coll_choice.cpp):
 * not part of the public API (not installed, no compatibility promise). Exported by libhgas
 * like every symbol. Every counter is this rank's, since its init (or the last reset). */
#ifndef HGAS_COLL_TESTING_COLL_H
#define HGAS_COLL_TESTING_COLL_H
#include <stdint.h>

#include <hgas/hgas.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* Calls that ran each algorithm (on any team, with more than one member). */
    uint64_t bcast_tree, bcast_scatter;
    uint64_t reduce_tree, reduce_chain;
    uint64_t fcollect_direct, fcollect_ring;
    uint64_t allreduce_doubling;
    /* Reductions (reduce, allreduce) of device vectors, by the scratch they crossed. */
    uint64_t dev_reductions_host_scratch, dev_reductions_device_scratch;
    /* Bytes this rank put into its peers' scratch in reductions: of host memory, and of
     * device vectors into host scratch (device -> host heap) or device scratch (device ->
     * device). */
    uint64_t host_bytes_host_scratch, dev_bytes_host_scratch, dev_bytes_device_scratch;
    /* Device scratch blocks taken from the symmetric device heaps (at most one per kind). */
    uint64_t device_scratch_allocs;
    /* Times reduce (re)allocated the rank's kept host accumulator of inner tree nodes: once
     * per new largest chunk, not once per call. */
    uint64_t host_acc_allocs;
    /* Allreduce calls that ran reduce-scatter + allgather (recursive halving, then doubling). */
    uint64_t allreduce_rsag;
    /* Reduce calls that ran the allreduce's recursive doubling (small vectors). */
    uint64_t reduce_doubling;
    /* Broadcasts whose tree was flat (the root put to every member; small messages). */
    uint64_t bcast_flat;
    /* Allreduce and reduce_scatter calls that read the members' mapped vectors directly
     * (algorithm "direct": no scratch). */
    uint64_t allreduce_direct, reduce_scatter_direct;
    /* Collect calls: sizes and every block through the scratch slots (one round); sizes (and
     * the blocks that fit) through the slots, then the larger blocks into dst (two rounds);
     * sizes by an allreduce, then the blocks (two rounds). */
    uint64_t collect_slots, collect_slots_large, collect_allreduce;
    /* Allreduce calls of device vectors that ran as one kernel per member (algorithm "kernel",
     * counted in allreduce_direct too: it reads the members' vectors where they lie), or as
     * one kernel for all members (group_kernel). */
    uint64_t allreduce_kernel;
    /* Stream-ordered broadcast and fcollect calls of device vectors that ran as one kernel on
     * the stream (per member, or for all members: group_kernel). */
    uint64_t bcast_kernel, fcollect_kernel;
    /* Collectives of teams of rank threads on one GPU that one kernel ran for every member
     * after the members met on the host (docs/threads.md); barriers: no kernel, the streams'
     * order only. */
    uint64_t group_kernel;
    /* Stream-ordered alltoall calls of device vectors that ran as one kernel on the stream (per
     * member, or for all members: group_kernel). */
    uint64_t alltoall_kernel;
    /* The same for reduce_scatter. */
    uint64_t reduce_scatter_kernel;
} hgasi_coll_stats_t;

/* Copies the calling rank's counters into *out (HGAS_ERR_INVALID_ARG for NULL, HGAS_ERR_NOT_INITIALIZED
 * before init). */
hgas_status_t hgasi_coll_stats(hgasi_coll_stats_t *out);
/* Sets the calling rank's counters to zero. */
hgas_status_t hgasi_coll_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
