/* impl/device_types.h — the plain data that the host runtime, device code and host-side test
 * producers share: the device context, the proxy ring's layout, operation and error codes.
 * C-compatible and trivially copyable; no functions. Humans read hgas/hgas_device.cuh and
 * hgas/hgas_device.h; this file is the implementation's. */
#ifndef HGAS_IMPL_DEVICE_TYPES_H
#define HGAS_IMPL_DEVICE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One symmetric heap as kernels of this rank address it. A symmetric address `a` of this rank
 * (what hgas_malloc_kind returned) names offset a - base on every rank; peer[r] is where rank r's
 * heap is mapped in this process for the GPU (NULL: not reachable by stores: the proxy). */
typedef struct hgas_device_window {
    char *base;            /* this rank's heap as the program sees it (the hgas_malloc_kind pointers) */
    char *const *peer;     /* [n] GPU-usable base of every rank's heap here, or NULL (device memory) */
    uint64_t size;         /* bytes of every rank's heap (0: no such heap) */
    uint16_t segment;      /* HGAS_SEG_* of the heap, named in proxy requests */
    uint16_t gpu_atomics;  /* 1: GPU atomics on this memory are atomic with the runtime's (device memory,
                              or host memory over a link with native atomics); 0: atomics go to the proxy */
    uint32_t reserved;
} hgas_device_window_t;

#define HGAS_DEVICE_WINDOWS 2 /* [0] the cuda symmetric heap, [1] the host symmetric heap */
#define HGAS_DEVICE_NEAR 8    /* ranks whose heap bases the context carries by value (below) */

/* Flags of the context. */
#define HGAS_DEVICE_FORCE_PROXY 1u /* every operation goes through the proxy (HGAS_DEVICE_PROXY=force) */
#define HGAS_DEVICE_NO_PROXY 2u    /* no proxy (HGAS_DEVICE_PROXY=off): unreachable targets are errors */

struct hgasi_proxy_ring;

/* What a kernel needs to communicate: pass it by value to kernels (hgas_device_ctx()). Valid
 * until hgas_finalize. */
typedef struct hgas_device_ctx_s {
    int32_t me, n;
    uint32_t flags;
    uint32_t slots;                     /* proxy ring slots (a power of two), 0: no proxy */
    hgas_device_window_t win[HGAS_DEVICE_WINDOWS];
    struct hgasi_proxy_ring *ring;      /* pinned host memory the GPU writes requests into */
    uint64_t *tail;                     /* device memory: proxy tickets claimed so far */
    uint64_t *state;                    /* device memory: [0] barrier epoch, [1..] reserved */
    uint64_t sync_offset;               /* offset of the device barrier's words in the cuda heap */
    uint64_t timeout_ns;                /* deadline of every device-side wait (HGAS_TIMEOUT) */
    /* win[w].peer[near_first + i] for i < HGAS_DEVICE_NEAR (ranks that exist), by value: a
     * kernel parameter is read from the constant bank, while the table in device memory is a
     * global load that every acquire (each signal wait) evicts from L1 -- about 0.2 us a
     * translation. near_first is this rank rounded down to a multiple of HGAS_DEVICE_NEAR. */
    int32_t near_first;
    int32_t near_count; /* ranks of near[] that exist; 0 when every operation goes through the
                           proxy (HGAS_DEVICE_FORCE_PROXY): puts and gets take near[0][0..near_count)
                           without looking at the flags */
    char *near[HGAS_DEVICE_WINDOWS][HGAS_DEVICE_NEAR];
} hgas_device_ctx_t;

/* ---- the proxy ring (pinned host memory) ---------------------------------------------------
 * Slots follow the header. A bounded multi-producer queue (Vyukov's): slot i starts with seq = i.
 *  producer (GPU thread, or a host thread in the CPU tests):
 *    t = fetch_add(tail, 1); wait until slot[t % slots].seq == t (free for ticket t);
 *    write the request; seq = t + 1 with release (system scope).
 *  consumer (the rank's proxy thread): for t = 0, 1, ...: wait seq == t + 1 (acquire), execute;
 *    a request without a reply frees its slot (seq = t + slots); one with a reply writes
 *    result, then reply = t + 1 (release), and its producer frees the slot after reading it.
 *    After a batch the consumer completes what it issued (quiet) and sets done = last t + 1.
 *    After each request it sets taken = t + 1 (the proxy's heartbeat).
 *  completion: ticket t is complete (remotely, for puts) when done > t.
 *  deadlines: a producer's wait gives up once `taken` has not moved for the context's timeout
 *    (the proxy is stuck), not once its own ticket has waited that long: behind thousands of
 *    claimed tickets, or on a GPU that processes time-slice, the queue may take longer than
 *    HGAS_TIMEOUT in all while every request is served promptly. A ticket given up on is never
 *    published: the consumer stops there, and hgas_device_status() says so.        */

enum hgasi_proxy_op {
    HGASI_PX_PUT = 1,        /* bytes from `local` to (rank, seg, off) */
    HGASI_PX_PUT_SIGNAL = 2, /* PUT, then signal (rank, aux_seg, aux) op sig_op value */
    HGASI_PX_SIGNAL = 3,     /* signal only: (rank, seg, off) op sig_op value */
    HGASI_PX_GET = 4,        /* bytes from (rank, seg, off) to `local` */
    HGASI_PX_P = 5,          /* `width` bytes of `value` to (rank, seg, off) */
    HGASI_PX_G = 6,          /* `width` bytes from (rank, seg, off) into the reply */
    HGASI_PX_AMO = 7,        /* atomic `amo` (hgas_amo_t) of `width` bytes; old value in the reply */
    HGASI_PX_FENCE = 8       /* hgas_fence on the host paths */
};

typedef struct hgasi_proxy_slot {
    /* written by the producer (64 bytes) */
    uint64_t seq;
    uint32_t op;
    uint32_t rank;
    uint16_t seg;
    uint16_t aux_seg;   /* put_signal: the signal's segment */
    uint8_t width;      /* p, g, amo: 4 or 8 */
    uint8_t amo;        /* hgas_amo_t */
    uint8_t sig_op;     /* hgas_signal_op_t */
    uint8_t is_signed;  /* amo: the integer is signed */
    uint64_t off;
    uint64_t local;     /* put source / get destination: an address in this process */
    uint64_t bytes;
    uint64_t value;     /* p value, amo operand, signal value */
    uint64_t aux;       /* amo compare, put_signal signal offset */
    /* written by the consumer (64 bytes) */
    uint64_t reply;     /* t + 1 once `result` holds the answer of ticket t */
    uint64_t result;
    uint64_t pad[6];
} hgasi_proxy_slot_t;

typedef struct hgasi_proxy_ring {
    uint64_t done;       /* tickets completed (all below it) */
    uint64_t taken;      /* tickets the consumer has executed (advances per request): the
                          * producers' deadlines count from its last step */
    uint64_t pad0[6];
    uint64_t error;      /* first device-side error (HGAS_DEVICE_ERR_*), 0: none */
    uint64_t err_rank;   /* the rank it concerned */
    uint64_t err_arg;    /* what it concerned (an offset, a ticket, a value) */
    uint64_t pad1[5];
} hgasi_proxy_ring_t;

#define HGASI_PROXY_HEADER 128u /* bytes before slot 0 */

/* Errors a kernel records (first one wins; hgas_device_status() reports it). */
enum hgas_device_error {
    HGAS_DEVICE_ERR_NONE = 0,
    HGAS_DEVICE_ERR_TIMEOUT_SIGNAL = 1,   /* signal_wait_until passed HGAS_TIMEOUT */
    HGAS_DEVICE_ERR_TIMEOUT_PROXY = 2,    /* the proxy did not take or complete a request in time */
    HGAS_DEVICE_ERR_TIMEOUT_BARRIER = 3,  /* a rank did not reach the device barrier in time */
    HGAS_DEVICE_ERR_UNREACHABLE = 4,      /* target not mapped and the proxy is off */
    HGAS_DEVICE_ERR_BAD_ADDRESS = 5,      /* address outside the symmetric heaps, or bad rank */
    HGAS_DEVICE_ERR_PROXY_FAILED = 6,     /* the host path of a proxied request failed */
    HGAS_DEVICE_ERR_TIMEOUT_GRID = 7,     /* a grid barrier or grid-wide wait passed HGAS_TIMEOUT */
    HGAS_DEVICE_ERR_MISALIGNED = 8,       /* a signal or atomic word is not aligned to its width */
    HGAS_DEVICE_ERR_BAD_COLL = 9          /* a kernel collective's team, root or workspace is bad (arg: which,
                                             HGASI_COLL_BAD_*) */
};

/* What HGAS_DEVICE_ERR_BAD_COLL found bad (its argument). */
#define HGASI_COLL_BAD_TEAM 1      /* the team is outside the job, or this rank is not a member */
#define HGASI_COLL_BAD_ROOT 2      /* the root is not a member index of the team */
#define HGASI_COLL_BAD_WORKSPACE 3 /* the workspace is too small for the team, or not memory the GPU reaches */

#ifdef __cplusplus
}
#endif
#endif /* HGAS_IMPL_DEVICE_TYPES_H */
