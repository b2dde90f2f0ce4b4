/* Bad input: each case (argv[1]) misuses one routine; the job must end with a message that
 * names the routine (checked by the test's PASS_REGULAR_EXPRESSION). Run with 2 PEs.
 * Built twice: shmem_bad_input_other has a different data layout, so that a job whose PE 1
 * runs it (two_programs.sh) has PEs running different executables. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

long global_target; /* symmetric, unless the PEs run different executables */
#ifdef HGAS_TEST_OTHER_LAYOUT
char other_layout[1 << 16] = {1};
#endif

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    long *pSync = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_SYNC_SIZE; ++i) pSync[i] = SHMEM_SYNC_VALUE;
    long *sym = shmem_calloc(16, sizeof(long));
    shmem_barrier_all();

    if (!strcmp(c, "null_psync")) {
        shmem_barrier(0, 0, n, NULL);
    } else if (!strcmp(c, "set_range")) {
        shmem_broadcast64(sym, sym + 8, 1, 0, 0, 0, n + 1, pSync);
    } else if (!strcmp(c, "not_member")) {
        if (me == 1) shmem_fcollect32(sym, sym + 8, 1, 0, 0, 1, pSync); /* PE 1 is outside {0} */
    } else if (!strcmp(c, "root_range")) {
        shmem_broadcast32(sym, sym + 8, 1, 5, 0, 0, n, pSync);
    } else if (!strcmp(c, "not_symmetric")) {
        long local = 0;
        shmem_long_p(&local, 1, 0);
    } else if (!strcmp(c, "static_mismatch")) {
        shmem_long_p(&global_target, 1, (me + 1) % n);
    } else if (!strcmp(c, "static_psync")) {
        long local_psync[SHMEM_SYNC_SIZE] = {0}; /* on the stack: not symmetric */
        if (me == 0) shmem_barrier(0, 0, 1, local_psync);
    } else if (!strcmp(c, "team_ctx_pe")) {
        shmem_team_t alone, all; /* rows of one PE each (xrange 1), and the column of all */
        shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &alone, NULL, 0, &all);
        shmem_ctx_t ctx;
        shmem_team_create_ctx(alone, 0, &ctx);
        shmem_ctx_long_put(ctx, sym, sym + 8, 1, 1); /* team PE 1 does not exist */
    } else if (!strcmp(c, "split_range")) {
        shmem_team_t t;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &t) != 0 && t == SHMEM_TEAM_INVALID)
            shmem_global_exit(3);
    } else if (!strcmp(c, "destroy_world")) {
        shmem_team_destroy(SHMEM_TEAM_WORLD);
    } else if (!strcmp(c, "destroyed_team")) {
        shmem_team_t t;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t);
        shmem_team_destroy(t);
        if (shmem_long_broadcast(t, sym, sym + 8, 1, 0) != 0) shmem_global_exit(3);
    } else if (!strcmp(c, "bad_pe")) {
        int v = 0;
        shmem_int_put((int *)sym, &v, 1, 7);
    } else if (!strcmp(c, "bad_cmp")) {
        shmem_int_wait_until((int *)sym, 42, 0);
    } else if (!strcmp(c, "bad_free")) {
        shmem_free(sym + 1);
    } else if (!strcmp(c, "double_free")) {
        long *p = shmem_malloc(256);
        shmem_free(p);
        shmem_free(p);
    } else if (!strcmp(c, "huge_malloc")) {
        /* Too large for the heap (or for size_t arithmetic): NULL on every PE, with a message,
         * and the heap still works. */
        if (shmem_malloc((size_t)-1) != NULL || shmem_malloc((size_t)-1 / 2) != NULL ||
            shmem_calloc((size_t)-1 / 2, 4) != NULL || shmem_align((size_t)1 << 62, 64) != NULL)
            shmem_global_exit(3);
        long *p = shmem_malloc(64);
        if (p == NULL) shmem_global_exit(4);
        shmem_free(p);
        shmem_finalize();
        return 0;
    } else if (!strcmp(c, "put_past_end")) {
        /* 16 longs, 24 put at the next PE (run with HGAS_CHECK=1): past the allocation's end. */
        long src[24] = {0};
        shmem_long_put(sym, src, 24, (me + 1) % n);
    } else if (!strcmp(c, "put_before_heap")) {
        /* Far before the first allocation: hgas's own objects, in any mode. */
        long src[2] = {0};
        shmem_long_put(pSync - 4096, src, 2, (me + 1) % n);
    } else if (!strcmp(c, "invalid_ctx")) {
        shmem_ctx_long_put(SHMEM_CTX_INVALID, sym, sym + 8, 1, 0);
    } else if (!strcmp(c, "clear_unheld")) {
        shmem_clear_lock(sym);
    } else {
        fprintf(stderr, "unknown case '%s'\n", c);
        return 2;
    }
    shmem_barrier_all();
    fprintf(stderr, "PE %d: case '%s' was not reported as an error\n", me, c);
    shmem_finalize();
    return 1;
}
