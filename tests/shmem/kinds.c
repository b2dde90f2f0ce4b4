/* shmemx.h: symmetric memory of a device kind (HGAS_TEST_KIND: sim, the default, or cuda) as the
 * target and the local buffer of the usual OpenSHMEM calls, with values checked through the
 * same calls (the CPU never touches device memory here). */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                      \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "PE %d: FAILED %s: ", shmem_my_pe(), #c);      \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            ++failures;                                                    \
        }                                                                  \
    } while (0)

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    const char *e = getenv("HGAS_TEST_KIND");
    const shmemx_kind_t kind = e && !strcmp(e, "cuda") ? SHMEMX_KIND_CUDA : SHMEMX_KIND_SIM;
    if (!shmemx_kind_available(kind)) {
        fprintf(stderr, "PE %d: kind %d is not available\n", me, (int)kind);
        shmem_global_exit(1);
    }
    enum { N = 1000 };
    long *dev = shmemx_calloc_kind((size_t)N * n, sizeof(long), kind); /* one row per writer */
    long *counter = shmemx_calloc_kind(1, sizeof(long), kind);
    long *flag = shmem_calloc(1, sizeof(long)); /* host: the wait routines read with the CPU */
    CHECK(dev && counter && flag, "allocation");
    CHECK(shmemx_ptr_kind(dev) == kind, "kind of the device buffer is %d", (int)shmemx_ptr_kind(dev));
    CHECK(shmemx_ptr_kind(flag) == SHMEMX_KIND_HOST, "kind of the host flag");
    if (kind == SHMEMX_KIND_SIM) CHECK(shmem_ptr(dev, me) == NULL, "shmem_ptr of sim memory must be NULL");

    /* put from host memory into every PE's device row, with a signal to the host flag */
    long src[N];
    for (int i = 0; i < N; ++i) src[i] = 1000000L * me + i;
    const int right = (me + 1) % n;
    shmem_long_put_signal(dev + (size_t)N * me, src, N, (uint64_t *)flag, 1, SHMEM_SIGNAL_ADD, right);
    shmem_uint64_wait_until((uint64_t *)flag, SHMEM_CMP_EQ, 1);
    const int left = (me + n - 1) % n;
    long got[N];
    shmem_long_get(got, dev + (size_t)N * left, N, me); /* read my own device row back */
    for (int i = 0; i < N; ++i) CHECK(got[i] == 1000000L * left + i, "row of PE %d at %d: %ld", left, i, got[i]);

    /* device to device: copy my row at the right PE into the right PE's row at the left PE */
    shmem_barrier_all();
    shmem_long_get(got, dev + (size_t)N * me, N, right);
    for (int i = 0; i < N; ++i) CHECK(got[i] == 1000000L * me + i, "get back from PE %d at %d", right, i);

    /* atomics on device memory */
    for (int i = 0; i < 10; ++i) shmem_long_atomic_add(counter, 1, 0);
    shmem_barrier_all();
    CHECK(shmem_long_atomic_fetch(counter, 0) == 10L * n, "counter %ld", shmem_long_atomic_fetch(counter, 0));
    shmem_barrier_all(); /* every PE has read the count before any swaps it */
    long old = shmem_long_atomic_compare_swap(counter, 10L * n, -1, 0);
    shmem_barrier_all();
    CHECK(shmem_long_atomic_fetch(counter, 0) == -1, "compare_swap: one PE must have swapped (old %ld)", old);

    shmem_free(flag);
    shmem_free(counter);
    shmem_free(dev);
    shmem_finalize();
    if (failures) fprintf(stderr, "PE %d: %d failures\n", me, failures);
    return failures ? 1 : 0;
}
