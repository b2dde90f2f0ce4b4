/* Private contexts are completion domains of their own (OpenSHMEM 1.5, contexts): at
 * SHMEM_THREAD_MULTIPLE, thread A of PE 0 issues _nbi puts to PE 1 on its context while PE 1
 * makes no progress (it is outside every OpenSHMEM call until PE 0 lets it go, through a file).
 * Over UCX active messages (HGAS_UCX_MODE=am) a put then cannot complete, because PE 1 must
 * execute and acknowledge it. Meanwhile thread B's shmem_ctx_fence / shmem_ctx_quiet on its own
 * context, and the default context's shmem_quiet, must return: they complete their own
 * operations only. Then PE 1 is let go and A's quiet (and A's destroy, for a second batch) must
 * complete A's puts, which PE 1 checks value by value. Before contexts had their own domains,
 * B's quiet was the PE's quiet and waited for A's puts: it failed with HGAS_TIMEOUT.
 * Then PE 1 issues more _nbi puts on one context than its pending list holds before it is
 * compacted, and PE 0 checks them. Over shared memory and UCX RMA the puts complete at once;
 * the values are checked the same way. Two PEs. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define PUTS 16     /* per batch from thread A: few and small, so each is one eager message */
#define LONGS 8     /* longs per put */
#define MANY 5000   /* PE 1's puts on one context (more than the pending list's first limit) */
#define GATE_WAIT_S 100

static long *dst_a;   /* symmetric: on PE 1, 2 * PUTS * LONGS longs from thread A */
static long *dst_b;   /* symmetric: on PE 0, PUTS * LONGS longs from thread B to its own PE */
static long *many;    /* symmetric: on PE 0, MANY longs from PE 1 */
static long *pe0_pid; /* symmetric: PE 0's process id, which names the gate file */
static atomic_int a_issued, go_a, b_done;
static atomic_int failures;

static long value_a(int i) { return 1000003L * (i + 1); }
static long value_b(int i) { return -7L * (i + 1); }

static void gate_path(char *buf, size_t n, long pid) {
    snprintf(buf, n, "/tmp/hgas-shmem-ctx-private-%ld", pid);
}

static void *thread_a(void *arg) {
    (void)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED, &ctx) != 0) {
        atomic_fetch_add(&failures, 1);
        atomic_store(&a_issued, 1);
        return NULL;
    }
    long src[2 * PUTS * LONGS];
    for (int i = 0; i < 2 * PUTS * LONGS; ++i) src[i] = value_a(i);
    for (int k = 0; k < PUTS; ++k) shmem_ctx_long_put_nbi(ctx, dst_a + k * LONGS, src + k * LONGS, LONGS, 1);
    atomic_store(&a_issued, 1);
    while (!atomic_load(&go_a)) sched_yield();
    shmem_ctx_quiet(ctx); /* completes the first batch: PE 1 now makes progress */
    for (int k = PUTS; k < 2 * PUTS; ++k) shmem_ctx_long_put_nbi(ctx, dst_a + k * LONGS, src + k * LONGS, LONGS, 1);
    shmem_ctx_destroy(ctx); /* completes the second batch */
    return NULL;
}

static void *thread_b(void *arg) {
    (void)arg;
    const int me = shmem_my_pe();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        atomic_fetch_add(&failures, 1);
        atomic_store(&b_done, 1);
        return NULL;
    }
    long src[PUTS * LONGS], back[PUTS * LONGS];
    for (int i = 0; i < PUTS * LONGS; ++i) src[i] = value_b(i);
    for (int k = 0; k < PUTS; ++k) shmem_ctx_long_put_nbi(ctx, dst_b + k * LONGS, src + k * LONGS, LONGS, me);
    shmem_ctx_fence(ctx);
    shmem_ctx_quiet(ctx);
    shmem_ctx_long_get_nbi(ctx, back, dst_b, PUTS * LONGS, me);
    shmem_ctx_quiet(ctx);
    int bad = 0;
    for (int i = 0; i < PUTS * LONGS; ++i) bad += back[i] != value_b(i) || dst_b[i] != value_b(i);
    if (bad) {
        fprintf(stderr, "PE %d: thread B read %d wrong longs back\n", me, bad);
        atomic_fetch_add(&failures, 1);
    }
    shmem_ctx_destroy(ctx);
    atomic_store(&b_done, 1);
    return NULL;
}

/* PE 1: waits outside OpenSHMEM (no progress) until PE 0 creates the gate file. */
static int wait_for_gate(const char *path) {
    const struct timespec nap = {0, 1000000};
    for (long waited_ms = 0; waited_ms < GATE_WAIT_S * 1000L; ++waited_ms) {
        struct stat st;
        if (stat(path, &st) == 0) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

int main(void) {
    int provided = -1;
    if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) return 1;
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    const int me = shmem_my_pe(), n = shmem_n_pes();
    if (n != 2) {
        if (me == 0) fprintf(stderr, "ctx_private: run with 2 PEs (got %d)\n", n);
        shmem_finalize();
        return 1;
    }
    dst_a = shmem_calloc(2 * PUTS * LONGS, sizeof(long));
    dst_b = shmem_calloc(PUTS * LONGS, sizeof(long));
    many = shmem_calloc(MANY, sizeof(long));
    pe0_pid = shmem_calloc(1, sizeof(long));
    CHECK(dst_a && dst_b && many && pe0_pid, "shmem_calloc");
    if (me == 0) {
        *pe0_pid = (long)getpid();
        char stale[96];
        gate_path(stale, sizeof stale, *pe0_pid);
        unlink(stale); /* left by an aborted run whose PE 0 had this process id */
    }
    shmem_barrier_all();
    char gate[96];
    gate_path(gate, sizeof gate, shmem_long_g(pe0_pid, 0));
    shmem_barrier_all(); /* PE 0's pid read before anything below */

    if (me == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, thread_a, NULL);
        while (!atomic_load(&a_issued)) sched_yield();
        pthread_create(&b, NULL, thread_b, NULL);
        pthread_join(b, NULL); /* B's fence and quiets returned while A's puts may be held */
        shmem_quiet();         /* the default context's quiet: its own operations (none) */
        shmem_fence();
        FILE *f = fopen(gate, "w");
        CHECK(f != NULL, "cannot create %s: %s", gate, strerror(errno));
        if (f) fclose(f);
        atomic_store(&go_a, 1);
        pthread_join(a, NULL);
        CHECK(atomic_load(&failures) == 0, "%d thread failures", atomic_load(&failures));
    } else {
        CHECK(wait_for_gate(gate), "PE 0 did not open %s within %d s", gate, GATE_WAIT_S);
    }
    shmem_barrier_all(); /* PE 1 makes progress here; PE 0 arrives after A's destroy */
    if (me == 0) unlink(gate);
    if (me == 1) {
        int bad = 0, first = -1;
        for (int i = 0; i < 2 * PUTS * LONGS; ++i)
            if (dst_a[i] != value_a(i) && bad++ == 0) first = i;
        CHECK(bad == 0, "%d of thread A's longs wrong, the first at %d: %ld, expected %ld", bad, first,
              first >= 0 ? dst_a[first] : 0L, first >= 0 ? value_a(first) : 0L);
        /* More _nbi puts on one context than its pending list holds before compaction. */
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create");
        static long src[MANY];
        for (int i = 0; i < MANY; ++i) src[i] = value_a(i) ^ 0x5a5a;
        for (int i = 0; i < MANY; ++i) shmem_ctx_long_put_nbi(ctx, many + i, src + i, 1, 0);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    if (me == 0) {
        int bad = 0;
        for (int i = 0; i < MANY; ++i) bad += many[i] != (value_a(i) ^ 0x5a5a);
        CHECK(bad == 0, "%d of PE 1's %d context puts wrong", bad, MANY);
    }
    FINISH();
}
