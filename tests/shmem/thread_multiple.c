/* SHMEM_THREAD_MULTIPLE: eight threads per PE, each with its own private context, issue
 * atomics and puts and quiet their context at once; a thread in shmem_wait_until does not keep
 * the PE's other threads out. The sums and the data must be exact. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define THREADS 8
#define ITERS 200
#define SLICE 512

static long *counter;       /* symmetric: every thread of every PE adds to every PE's */
static unsigned char *data; /* symmetric: THREADS slices, written by the left neighbour */
static long *flag;          /* symmetric: set by one thread of this PE, awaited by another */
static atomic_int failures;
static atomic_int waiting;

static unsigned char byte_of(int pe, int t, int i) { return (unsigned char)(pe * 37 + t * 11 + i); }

static void *worker(void *arg) {
    const int t = (int)(long)arg, me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        atomic_fetch_add(&failures, 1);
        return NULL;
    }
    for (int i = 0; i < ITERS; ++i) {
        long old = shmem_ctx_long_atomic_fetch_add(ctx, counter, 1, (me + t + i) % n);
        if (old < 0) atomic_fetch_add(&failures, 1);
    }
    unsigned char src[SLICE];
    for (int i = 0; i < SLICE; ++i) src[i] = byte_of(me, t, i);
    shmem_ctx_putmem_nbi(ctx, data + t * SLICE, src, SLICE, (me + 1) % n);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

static void *flag_waiter(void *arg) {
    (void)arg;
    atomic_store(&waiting, 1);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 5);
    return NULL;
}

int main(void) {
    int provided = -1;
    if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) return 1;
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    const int me = shmem_my_pe(), n = shmem_n_pes(), left = (me + n - 1) % n;
    counter = shmem_calloc(1, sizeof(long));
    data = shmem_calloc(THREADS, SLICE);
    flag = shmem_calloc(1, sizeof(long));
    CHECK(counter && data && flag, "shmem_calloc");

    pthread_t ts[THREADS], w;
    pthread_create(&w, NULL, flag_waiter, NULL);
    for (long t = 0; t < THREADS; ++t) pthread_create(&ts[t], NULL, worker, (void *)t);
    while (!atomic_load(&waiting)) sched_yield();
    shmem_long_atomic_set(flag, 5, me); /* the waiter is (likely) inside its wait by now */
    pthread_join(w, NULL);
    for (int t = 0; t < THREADS; ++t) pthread_join(ts[t], NULL);
    CHECK(atomic_load(&failures) == 0, "%d thread failures", atomic_load(&failures));
    shmem_barrier_all();

    long expected = 0;
    for (int pe = 0; pe < n; ++pe)
        for (int t = 0; t < THREADS; ++t)
            for (int i = 0; i < ITERS; ++i) expected += (pe + t + i) % n == me;
    CHECK(shmem_long_atomic_fetch(counter, me) == expected, "counter %ld, expected %ld",
          shmem_long_atomic_fetch(counter, me), expected);
    int bad = 0;
    for (int t = 0; t < THREADS; ++t)
        for (int i = 0; i < SLICE; ++i) bad += data[t * SLICE + i] != byte_of(left, t, i);
    CHECK(bad == 0, "%d bytes wrong", bad);
    int q = -1;
    shmem_query_thread(&q);
    CHECK(q == SHMEM_THREAD_MULTIPLE, "query_thread %d", q);
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(data);
    shmem_free(counter);
    FINISH();
}
