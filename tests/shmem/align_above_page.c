/* Regression: shmem_align returned pointers misaligned for alignments above the page size
 * (16 KiB to 4 MiB), because hgas aligned the offset in the heap while the heap's base was
 * only page aligned. Every power of two up to 4 MiB must give an aligned, usable, symmetric
 * block; a non-power of two gives NULL on every PE. */
#include <stdint.h>
#include <string.h>

#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (size_t align = 1; align <= ((size_t)4 << 20); align *= 2) {
        long *p = shmem_align(align, 3 * sizeof(long));
        CHECK(p != NULL, "shmem_align(%zu) returned NULL", align);
        if (!p) continue;
        CHECK((uintptr_t)p % align == 0, "shmem_align(%zu) returned %p", align, (void *)p);
        /* Symmetric: a put into it lands in the right PE's copy. */
        shmem_long_p(&p[1], (long)(me * 1000 + (long)(align % 997)), (me + 1) % n);
        shmem_barrier_all();
        CHECK(p[1] == (long)(((me + n - 1) % n) * 1000 + (long)(align % 997)), "align %zu: p[1] = %ld", align, p[1]);
        /* shmem_realloc keeps the alignment. */
        long *q = shmem_realloc(p, 64 * sizeof(long));
        CHECK(q && (uintptr_t)q % align == 0 && q[1] == (long)(((me + n - 1) % n) * 1000 + (long)(align % 997)),
              "shmem_realloc of an align %zu block: %p", align, (void *)q);
        shmem_free(q);
    }
    /* Several live blocks with a large alignment at once. */
    void *big[3];
    for (int i = 0; i < 3; ++i) {
        big[i] = shmem_align((size_t)1 << 20, 100);
        CHECK(big[i] && (uintptr_t)big[i] % ((size_t)1 << 20) == 0, "1 MiB block %d: %p", i, big[i]);
    }
    for (int i = 0; i < 3; ++i) shmem_free(big[i]);
    CHECK(shmem_align(3000, 64) == NULL, "alignment 3000 must be refused");
    CHECK(shmem_align(0, 64) == NULL, "alignment 0 must be refused");
    FINISH();
}
