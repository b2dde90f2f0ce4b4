/* The OpenSHMEM environment variables (run by CMake with each in turn): SHMEM_SYMMETRIC_SIZE
 * sets the symmetric heap (HGAS_HEAP_SIZE), OpenSHMEM programs get a 256 MiB heap by default
 * (enough for the 200 MiB that common benchmarks allocate), SHMEM_DEBUG turns on hgas's debug
 * log level. SHMEM_INFO / SHMEM_VERSION output and bad values are matched by CMake.
 *   usage: heap_env <HGAS_HEAP_SIZE expected> <MiB that must fit> <MiB that must not fit, or 0> [debug] */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    shmem_init();
    const char *heap = getenv("HGAS_HEAP_SIZE");
    CHECK(heap && strcmp(heap, argv[1]) == 0, "HGAS_HEAP_SIZE is %s, expected %s", heap ? heap : "(unset)", argv[1]);
    const size_t fit = (size_t)atol(argv[2]) << 20, nofit = (size_t)atol(argv[3]) << 20;
    char *p = shmem_malloc(fit);
    CHECK(p != NULL, "shmem_malloc(%zu MiB) failed", fit >> 20);
    if (p) {
        p[fit - 1] = 1;  /* the whole block is usable */
        shmem_barrier_all();
        shmem_char_p(&p[fit - 1], 2, (shmem_my_pe() + 1) % shmem_n_pes());
        shmem_barrier_all();
        CHECK(p[fit - 1] == 2, "last byte %d", p[fit - 1]);
    }
    shmem_free(p);
    if (nofit) CHECK(shmem_malloc(nofit) == NULL, "shmem_malloc(%zu MiB) fit in the heap", nofit >> 20);
    if (argc > 4 && strcmp(argv[4], "debug") == 0) {
        const char *level = getenv("HGAS_LOG_LEVEL");
        CHECK(level && strcmp(level, "debug") == 0, "SHMEM_DEBUG: HGAS_LOG_LEVEL is %s", level ? level : "(unset)");
    }
    FINISH();
}
