/* Regression: shmem_ctx_quiet(SHMEM_CTX_INVALID) ended the job. OpenSHMEM 1.5 makes fence and
 * quiet on SHMEM_CTX_INVALID perform no operation: the specification's team-context example
 * quiets the context of a team a PE is not in. Also what 1.5 defines for the other calls on
 * it: ctx_destroy does nothing, ctx_get_team returns nonzero and SHMEM_TEAM_INVALID, and
 * team_create_ctx on SHMEM_TEAM_INVALID fails with ctx = SHMEM_CTX_INVALID. */
#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    if (n > 1) CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd) == 0, "split");
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    const int rc = shmem_team_create_ctx(odd, 0, &ctx);
    CHECK((odd == SHMEM_TEAM_INVALID) == (rc != 0), "team_create_ctx returned %d", rc);
    CHECK((rc != 0) == (ctx == SHMEM_CTX_INVALID), "ctx after team_create_ctx");
    long *v = shmem_calloc(1, sizeof(long));
    if (ctx != SHMEM_CTX_INVALID) shmem_ctx_long_atomic_inc(ctx, v, 0);  /* team PE 0 = world PE 1 */
    shmem_ctx_fence(ctx);   /* no-ops on SHMEM_CTX_INVALID, completion on the others */
    shmem_ctx_quiet(ctx);
    shmem_ctx_fence(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_team_t t = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID, "ctx_get_team(INVALID)");
    shmem_ctx_destroy(SHMEM_CTX_INVALID);
    shmem_barrier_all();
    if (n > 1 && me == 1) CHECK(*v == n / 2, "increments through the team context: %ld of %d", *v, n / 2);
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(odd);
    FINISH();
}
