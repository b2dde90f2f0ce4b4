/* Library setup, queries and symmetric memory management. */
#include <stdint.h>
#include <string.h>

#include "check.h"

int main(void) {
    int provided = -1, queried = -1;
    if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) return 1;
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    shmem_query_thread(&queried);
    CHECK(queried == provided, "query_thread %d, init_thread %d", queried, provided);
    shmem_init(); /* already initialized: nothing happens */

    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(n >= 1 && me >= 0 && me < n, "me %d n %d", me, n);
    CHECK(_my_pe() == me && _num_pes() == n && shmem_num_pes() == n, "old names disagree");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world team");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "invalid team");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == n, "one node: the shared team is the world");
    CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "team_sync on an invalid team reports it");
    CHECK(shmem_team_sync(SHMEM_TEAM_SHARED) == 0, "team_sync on the shared team");
    CHECK(shmem_pe_accessible(n - 1) && !shmem_pe_accessible(n) && !shmem_pe_accessible(-1), "pe_accessible");

    int major = 0, minor = 0;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s'", name);

    long *x = shmem_malloc(10 * sizeof(long));
    CHECK(x != NULL && (uintptr_t)x % 64 == 0, "malloc %p", (void *)x);
    long local = 0;
    CHECK(shmem_addr_accessible(x, right) && !shmem_addr_accessible(&local, right), "addr_accessible");
    CHECK(shmem_ptr(x, me) == x, "shmem_ptr to self");
    CHECK(shmem_ptr(&local, right) == NULL, "shmem_ptr of a non-symmetric address");

    /* Store through shmem_ptr where the neighbour is load/store reachable, else put. */
    x[0] = -1;
    shmem_barrier_all();
    long *peer = shmem_ptr(x, right);
    if (peer) *peer = me;
    else shmem_long_p(x, me, right);
    shmem_barrier_all();
    CHECK(x[0] == left, "x[0] = %ld, want %d", x[0], left);

    int *z = shmem_calloc(1000, sizeof(int));
    int zeros = 1;
    for (int i = 0; i < 1000; ++i) zeros &= z[i] == 0;
    CHECK(z && zeros, "calloc not zeroed");

    double *a = shmem_align(4096, 3 * sizeof(double));
    CHECK(a && (uintptr_t)a % 4096 == 0, "align 4096: %p", (void *)a);
    a[2] = 2.5;
    shmem_barrier_all();
    CHECK(shmem_double_g(&a[2], right) == 2.5, "aligned block not reachable");

    int *r = shmem_malloc(4 * sizeof(int));
    for (int i = 0; i < 4; ++i) r[i] = 10 * me + i;
    r = shmem_realloc(r, 1000 * sizeof(int));
    CHECK(r != NULL, "realloc");
    for (int i = 0; i < 4; ++i) CHECK(r[i] == 10 * me + i, "realloc lost r[%d] = %d", i, r[i]);
    shmem_int_p(&r[999], me, right);
    shmem_barrier_all();
    CHECK(r[999] == left, "r[999] = %d, want %d", r[999], left);
    r = shmem_realloc(r, 2 * sizeof(int)); /* shrink keeps the first elements */
    CHECK(r && r[0] == 10 * me && r[1] == 10 * me + 1, "shrinking realloc");

    void *h = shmem_malloc_with_hints(128, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    CHECK(h != NULL, "malloc_with_hints");
    CHECK(shmem_malloc(0) == NULL, "malloc(0) is NULL");
    CHECK(shmem_realloc(NULL, 0) == NULL, "realloc(NULL, 0) is NULL");

    int *old = shmalloc(8 * sizeof(int));
    CHECK(old != NULL, "shmalloc");
    shmem_int_p(&old[7], 700 + me, right);
    shmem_barrier_all();
    CHECK(old[7] == 700 + left, "shmalloc block old[7] = %d", old[7]);
    shfree(old);

    shmem_free(h);
    shmem_free(r);
    shmem_free(a);
    shmem_free(z);
    shmem_free(x);
    shmem_free(NULL);
    FINISH();
}
