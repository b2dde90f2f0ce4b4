/* Contexts: create (world and team forms), RMA/atomics/signals through a context, ctx_fence and
 * ctx_quiet ordering and completing them, get_team, destroy; SHMEM_CTX_DEFAULT everywhere. */
#include "check.h"

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    shmem_ctx_t ctx = SHMEM_CTX_INVALID, tctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED, &ctx) == 0 && ctx != SHMEM_CTX_INVALID,
          "ctx_create");
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &tctx) == 0, "team_create_ctx");
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID, "unknown options refused");
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(tctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "get_team");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD, "get_team default");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID, "get_team invalid");

    long *data = shmem_calloc(8, sizeof(long));
    long *flag = shmem_calloc(1, sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    int *ctr = shmem_calloc(1, sizeof(int));
    long src[8];
    for (int i = 0; i < 8; ++i) src[i] = 10 * me + i;

    /* put_nbi on a context, ctx_fence, flag: the data arrives first; ctx_quiet completes. */
    shmem_ctx_long_put_nbi(ctx, data, src, 4, right);
    shmem_ctx_fence(ctx);
    shmem_ctx_long_p(ctx, flag, 1, right);
    shmem_ctx_quiet(ctx);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 4; ++i) CHECK(data[i] == 10 * left + i, "ctx put data[%d] = %ld", i, data[i]);

    /* Signals, gets, sized and atomics through contexts (the default one too). */
    shmem_ctx_putmem_signal(tctx, &data[4], &src[4], 4 * sizeof(long), sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    for (int i = 4; i < 8; ++i) CHECK(data[i] == 10 * left + i, "ctx put_signal data[%d]", i);
    shmem_barrier_all(); /* every PE's data has arrived before anyone reads its neighbours' */
    long back[8];
    shmem_ctx_get64(SHMEM_CTX_DEFAULT, back, data, 8, right);
    for (int i = 0; i < 8; ++i) CHECK(back[i] == 10 * me + i, "ctx get64 back[%d]", i);
    CHECK(shmem_ctx_long_g(ctx, &data[7], left) == 10 * ((left + n - 1) % n) + 7, "ctx g");
    (void)shmem_ctx_int_atomic_fetch_add(ctx, ctr, 2, 0);
    shmem_ctx_int_atomic_inc(tctx, ctr, 0);
    int fetched = -1;
    shmem_ctx_int_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &fetched, ctr, 0);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    CHECK(fetched >= 3, "ctx fetch_nbi %d", fetched);
    shmem_barrier_all();
    if (me == 0) CHECK(*ctr == 3 * n, "ctx atomics: %d", *ctr);

    shmem_ctx_destroy(tctx);
    shmem_ctx_destroy(ctx);
    shmem_ctx_destroy(SHMEM_CTX_INVALID); /* nothing */
    shmem_barrier_all();
    shmem_free(ctr);
    shmem_free(sig);
    shmem_free(flag);
    shmem_free(data);
    FINISH();
}
