/* shmemx.h — hgas extensions to OpenSHMEM: symmetric memory of a given kind.
 *
 * Memory of kind cuda is the PE's GPU memory (device pointers); sim is hgas's simulated device
 * memory (a name for hgas calls only: a CPU load faults). Every RMA, atomic and put-with-signal
 * call of shmem.h accepts such memory as its target and as its local buffer, between any two
 * kinds, and moves the bytes over the best path hgas has (docs/paths.md). Memory of a device kind
 * is freed with shmem_free. Not for device memory: shmem_realloc, the wait/test routines on a
 * variable in device memory (they read it with the CPU), and collectives (host memory only). */
#ifndef HGAS_SHMEMX_H
#define HGAS_SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shmemx_kind { SHMEMX_KIND_HOST = 0, SHMEMX_KIND_CUDA = 1, SHMEMX_KIND_SIM = 2 } shmemx_kind_t;

/** 1 if this PE has memory of `kind` (cuda: a GPU is visible and HGAS_CUDA_HEAP_SIZE > 0; sim:
 *  HGAS_SIM_HEAP_SIZE > 0). */
int shmemx_kind_available(shmemx_kind_t kind);
/** Collective symmetric allocation of `size` bytes of `kind` (like shmem_malloc). NULL with a
 *  message on stderr, on every PE, when the kind is not available everywhere or the heap is full. */
void *shmemx_malloc_kind(size_t size, shmemx_kind_t kind);
/** As shmemx_malloc_kind, zero-filled. */
void *shmemx_calloc_kind(size_t count, size_t size, shmemx_kind_t kind);
/** Kind of the memory at `ptr` (SHMEMX_KIND_HOST for anything that is not device memory). */
shmemx_kind_t shmemx_ptr_kind(const void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* HGAS_SHMEMX_H */
