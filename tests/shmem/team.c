/* Teams: the specification's examples (split_strided, translate_pe, split_2d into 3D, team
 * contexts) with every value checked, and the team collectives on split teams (broadcast,
 * collect, fcollect, alltoall, alltoalls, reductions, sync), configuration, destruction with
 * open contexts, slot reuse and exhaustion, and SHMEM_TEAM_SHARED (run with --nodes too). */
#include <hgas/hgas.h>
#include <string.h>

#include "check.h"

static long inbox[8];          /* static data as a team RMA target */
static int isum;               /* the team-context example's accumulator */
static long coll_dest[64], coll_src[64];
static uint64_t alltoall_dest[64], alltoall_src[64];

/* The PEs with (p % stride == 0 && p / stride < size): the world split_strided(0, stride, size). */
static void check_strided(int me, int n) {
    shmem_team_t evens;
    const int size = (n + 1) / 2;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, size, NULL, 0, &evens) == 0, "split_strided");
    if (me % 2 == 0) {
        CHECK(evens != SHMEM_TEAM_INVALID, "even PE %d got no team", me);
        CHECK(shmem_team_my_pe(evens) == me / 2 && shmem_team_n_pes(evens) == size, "evens: %d of %d",
              shmem_team_my_pe(evens), shmem_team_n_pes(evens));
        CHECK(shmem_team_translate_pe(evens, shmem_team_my_pe(evens), SHMEM_TEAM_WORLD) == me, "translate to world");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens) == me / 2, "translate from world");
        CHECK(shmem_team_translate_pe(evens, size, SHMEM_TEAM_WORLD) == -1, "translate out of range");
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID, "odd PE %d got a team", me);
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_WORLD) == me, "world to world");
    }
    CHECK(shmem_team_my_pe(evens) == (me % 2 ? -1 : me / 2), "my_pe of INVALID is -1");
    shmem_team_destroy(evens); /* SHMEM_TEAM_INVALID on odd PEs: nothing */
}

/* The specification's 3D split: split_2d of the world by x, then of each yz team by y. */
static void check_3d(int me, int n) {
    const int xdim = 2, ydim = 2;
    shmem_team_t xteam, yzteam, yteam, zteam;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xdim, NULL, 0, &xteam, NULL, 0, &yzteam) == 0, "split_2d world");
    CHECK(shmem_team_split_2d(yzteam, ydim, NULL, 0, &yteam, NULL, 0, &zteam) == 0, "split_2d yz");
    shmem_team_destroy(yzteam);
    const int x = shmem_team_my_pe(xteam), y = shmem_team_my_pe(yteam), z = shmem_team_my_pe(zteam);
    const int yz = me / xdim;                               /* my number in my yz team */
    const int column = (n - me % xdim + xdim - 1) / xdim;   /* size of my yz team */
    CHECK(x == me % xdim && y == yz % ydim && z == yz / ydim, "PE %d at (%d, %d, %d), want (%d, %d, %d)", me, x, y,
          z, me % xdim, yz % ydim, yz / ydim);
    const int xn = shmem_team_n_pes(xteam), yn = shmem_team_n_pes(yteam), zn = shmem_team_n_pes(zteam);
    const int want_x = n - yz * xdim < xdim ? n - yz * xdim : xdim;
    const int want_y = column - (yz / ydim) * ydim < ydim ? column - (yz / ydim) * ydim : ydim;
    const int want_z = (column - yz % ydim + ydim - 1) / ydim;
    CHECK(xn == want_x && yn == want_y && zn == want_z, "team sizes %d %d %d, want %d %d %d", xn, yn, zn, want_x,
          want_y, want_z);
    CHECK(shmem_team_translate_pe(xteam, x, SHMEM_TEAM_WORLD) == me, "x-team numbering");
    shmem_team_destroy(xteam);
    shmem_team_destroy(yteam);
    shmem_team_destroy(zteam);
}

/* Collectives on the odd PEs (or on PE 0 alone in a job of one), with heap and static data. */
static void check_collectives(int me, int n) {
    shmem_team_t t;
    const int odd = n > 1, size = odd ? n / 2 : 1;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, odd, 2, size, NULL, 0, &t) == 0, "split odd");
    long *heap = shmem_calloc(64, sizeof(long));
    if (t != SHMEM_TEAM_INVALID) {
        const int tm = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
        CHECK(tn == size && tm == (odd ? me / 2 : 0), "odd team %d of %d", tm, tn);
        /* broadcast from the last member: its own dest is written too */
        long src[5];
        for (int i = 0; i < 5; ++i) src[i] = 1000 * tm + i;
        CHECK(shmem_long_broadcast(t, heap, src, 5, tn - 1) == 0, "broadcast");
        for (int i = 0; i < 5; ++i) CHECK(heap[i] == 1000 * (tn - 1) + i, "broadcast heap[%d] = %ld", i, heap[i]);
        /* collect: member k contributes k + 1 elements */
        for (int i = 0; i <= tm; ++i) coll_src[i] = 100 * tm + i;
        CHECK(shmem_long_collect(t, coll_dest, coll_src, (size_t)tm + 1) == 0, "collect");
        int at = 0;
        for (int k = 0; k < tn; ++k)
            for (int i = 0; i <= k; ++i, ++at) CHECK(coll_dest[at] == 100 * k + i, "collect [%d] = %ld", at, coll_dest[at]);
        /* fcollect */
        long two[2] = {tm, -tm};
        CHECK(shmem_long_fcollect(t, heap, two, 2) == 0, "fcollect");
        for (int k = 0; k < tn; ++k) CHECK(heap[2 * k] == k && heap[2 * k + 1] == -k, "fcollect %d", k);
        /* alltoall: block j of member i's source lands as block i of member j's dest */
        for (int j = 0; j < tn; ++j)
            for (int e = 0; e < 2; ++e) alltoall_src[2 * j + e] = (uint64_t)(tm * 100 + j * 10 + e);
        CHECK(shmem_uint64_alltoall(t, alltoall_dest, alltoall_src, 2) == 0, "alltoall");
        for (int i = 0; i < tn; ++i)
            for (int e = 0; e < 2; ++e)
                CHECK(alltoall_dest[2 * i + e] == (uint64_t)(i * 100 + tm * 10 + e), "alltoall [%d]", 2 * i + e);
        /* alltoalls with strides: dst 2, sst 3 */
        for (int i = 0; i < 64; ++i) alltoall_src[i] = (uint64_t)(tm * 1000 + i);
        memset(alltoall_dest, 0, sizeof alltoall_dest);
        CHECK(shmem_uint64_alltoalls(t, alltoall_dest, alltoall_src, 2, 3, 2) == 0, "alltoalls");
        for (int i = 0; i < tn; ++i)
            for (int k = 0; k < 2; ++k)
                CHECK(alltoall_dest[2 * (i * 2 + k)] == (uint64_t)(i * 1000 + 3 * (tm * 2 + k)), "alltoalls from %d", i);
        /* reductions: hgas types and front-end types, in place too */
        static int ival[3], isums[3]; /* reduction sources are symmetric */
        ival[0] = tm + 1, ival[1] = -tm, ival[2] = 7 * tm;
        CHECK(shmem_int_sum_reduce(t, isums, ival, 3) == 0, "int sum");
        CHECK(isums[0] == tn * (tn + 1) / 2 && isums[1] == -tn * (tn - 1) / 2 && isums[2] == 7 * tn * (tn - 1) / 2,
              "int sum %d %d %d", isums[0], isums[1], isums[2]);
        static double d, dmax;
        d = 0.5 + tm;
        CHECK(shmem_double_max_reduce(t, &dmax, &d, 1) == 0 && dmax == 0.5 + (tn - 1), "double max %g", dmax);
        static short sh, shprod;
        sh = (short)(tm + 2);
        CHECK(shmem_short_prod_reduce(t, &shprod, &sh, 1) == 0, "short prod");
        short want = 1;
        for (int k = 0; k < tn; ++k) want = (short)(want * (k + 2));
        CHECK(shprod == want, "short prod %d, want %d", shprod, want);
        unsigned long *bits = (unsigned long *)heap;
        bits[0] = 1UL << tm;
        CHECK(shmem_ulong_or_reduce(t, bits, bits, 1) == 0 && bits[0] == (1UL << tn) - 1, "in-place or %lu", bits[0]);
        /* put with team numbering through a team context, into static data */
        shmem_ctx_t ctx;
        shmem_team_config_t conf = {.num_contexts = 1}, got = {.num_contexts = -1};
        CHECK(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 0, "config");
        CHECK(shmem_team_create_ctx(t, 0, &ctx) == 0, "team ctx");
        shmem_team_t back;
        CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == t, "ctx_get_team");
        const long v = 500 + tm;
        shmem_ctx_long_put(ctx, &inbox[0], &v, 1, (tm + 1) % tn);
        shmem_ctx_quiet(ctx);
        CHECK(shmem_sync(t) == 0, "shmem_sync(team), the C11 name of team_sync");
        CHECK(shmem_team_ptr(t, inbox, tm) == inbox && shmem_team_ptr(t, inbox, tn) == NULL &&
                  shmem_team_ptr(SHMEM_TEAM_INVALID, inbox, 0) == NULL, "team_ptr");
        for (int k = 0; k < tn; ++k)
            CHECK(shmem_team_ptr(t, inbox, k) == shmem_ptr(inbox, shmem_team_translate_pe(t, k, SHMEM_TEAM_WORLD)),
                  "team_ptr of team PE %d", k);
        CHECK(inbox[0] == 500 + (tm + tn - 1) % tn, "team ctx put: inbox %ld", inbox[0]);
        CHECK(shmem_ctx_long_atomic_fetch_add(ctx, &inbox[1], 1, 0) >= 0, "team ctx atomic");
        shmem_ctx_quiet(ctx);
        CHECK(shmem_team_sync(t) == 0, "team_sync");
        if (tm == 0) CHECK(inbox[1] == tn, "atomics through the team context: %ld", inbox[1]);
        (void)conf;
        shmem_team_destroy(t); /* also destroys ctx */
    }
    shmem_free(heap);
}

/* The specification's team-context example, corrected: PEs 0, 2, 4, ... and 0, 3, 6, ...;
 * each sends its number to its right neighbour in both teams, then PE 4 of the 3s team gets
 * the sum of what it holds through the 2s team's context. */
static void check_team_context_example(int me, int n) {
    static int ival2, ival3;
    shmem_team_t team_2s, team_3s;
    shmem_team_config_t conf = {.num_contexts = 1};
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &conf, SHMEM_TEAM_NUM_CONTEXTS, &team_2s);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 3, (n + 2) / 3, &conf, SHMEM_TEAM_NUM_CONTEXTS, &team_3s);
    shmem_ctx_t ctx_2s = SHMEM_CTX_INVALID, ctx_3s = SHMEM_CTX_INVALID;
    if (team_2s != SHMEM_TEAM_INVALID) {
        shmem_team_config_t got;
        CHECK(shmem_team_get_config(team_2s, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 1, "config");
        CHECK(shmem_team_create_ctx(team_2s, 0, &ctx_2s) == 0, "ctx 2s");
        const int pe = shmem_team_my_pe(team_2s), np = shmem_team_n_pes(team_2s);
        shmem_ctx_int_put(ctx_2s, &ival2, &pe, 1, (pe + 1) % np);
    }
    if (team_3s != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_create_ctx(team_3s, 0, &ctx_3s) == 0, "ctx 3s");
        const int pe = shmem_team_my_pe(team_3s), np = shmem_team_n_pes(team_3s);
        shmem_ctx_int_put(ctx_3s, &ival3, &pe, 1, (pe + 1) % np);
    }
    if (ctx_2s != SHMEM_CTX_INVALID) shmem_ctx_quiet(ctx_2s);
    if (ctx_3s != SHMEM_CTX_INVALID) shmem_ctx_quiet(ctx_3s);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    const int pe4 = shmem_team_translate_pe(team_3s, 1, team_2s); /* world PE 3 is odd: not in 2s */
    CHECK(pe4 == -1, "PE 1 of the 3s team (world 3) is not in the 2s team: %d", pe4);
    /* The PEs in both teams (world 0, 6, ...) add what they received to world PE 6 (PE 2 of
     * the 3s team), through the 2s team's context, which numbers it 3. */
    const int both = team_2s != SHMEM_TEAM_INVALID && team_3s != SHMEM_TEAM_INVALID;
    const int target = both && n > 6 ? shmem_team_translate_pe(team_3s, 2, team_2s) : -1;
    if (both && n > 6) CHECK(target == 3, "world PE 6 is PE 3 of the 2s team: %d", target);
    if (target >= 0) shmem_ctx_int_atomic_add(ctx_2s, &isum, ival2 + ival3, target);
    if (ctx_2s != SHMEM_CTX_INVALID) shmem_ctx_quiet(ctx_2s);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    if (n > 6 && me == 6) {
        int want = 0;
        const int n2 = (n + 1) / 2, n3 = (n + 2) / 3;
        for (int w = 0; w < n; w += 6) /* ival2, ival3 of w: its left neighbours' numbers */
            want += (w / 2 + n2 - 1) % n2 + (w / 3 + n3 - 1) % n3;
        CHECK(isum == want, "isum on world PE 6: %d, want %d", isum, want);
    }
    shmem_ctx_destroy(ctx_2s);
    shmem_team_destroy(team_2s);
    shmem_ctx_destroy(ctx_3s);
    shmem_team_destroy(team_3s);
}

/* 62 teams at once use every slot; the 63rd fails on every PE; destroyed slots are reused. */
static void check_slots(int me, int n) {
    shmem_team_t teams[62];
    for (int i = 0; i < 62; ++i)
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &teams[i]) == 0 &&
                  teams[i] != SHMEM_TEAM_INVALID, "team %d", i);
    shmem_team_t extra;
    if (me == 0) fprintf(stderr, "(an error about team slots is expected next)\n");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &extra) != 0 && extra == SHMEM_TEAM_INVALID,
          "the 63rd team must fail");
    for (int i = 0; i < 62; ++i) shmem_team_destroy(teams[i]);
    for (int i = 0; i < 70; ++i) { /* create/destroy keeps reusing slots */
        shmem_team_t t;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, 1, 1, NULL, 0, &t) == 0, "team %d", i);
        if (me == n - 1) CHECK(t != SHMEM_TEAM_INVALID && shmem_team_n_pes(t) == 1, "singleton team %d", i);
        shmem_team_destroy(t);
    }
    /* pairs that share no PE share a slot: 40 rounds of n/2 disjoint pair teams */
    for (int i = 0; i < 40 && n >= 2; ++i) {
        shmem_team_t row, col;
        CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &row, NULL, 0, &col) == 0, "pairs %d", i);
        CHECK(shmem_team_sync(row) == 0 && shmem_team_sync(col) == 0, "sync pairs");
        shmem_team_destroy(row);
        shmem_team_destroy(col);
    }
}

static void check_shared(int me, int n) {
    int want = 0, my_index = 0;
    for (int r = 0; r < n; ++r)
        if (hgas_node_of(r) == hgas_node_me()) {
            if (r == me) my_index = want;
            ++want;
        }
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == want && shmem_team_my_pe(SHMEM_TEAM_SHARED) == my_index,
          "shared team %d of %d, want %d of %d", shmem_team_my_pe(SHMEM_TEAM_SHARED),
          shmem_team_n_pes(SHMEM_TEAM_SHARED), my_index, want);
    static long one = 1, count;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_SHARED, &count, &one, 1) == 0 && count == want, "shared count %ld", count);
    /* split of the shared team into its first member alone */
    shmem_team_t first;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_SHARED, 0, 1, 1, NULL, 0, &first) == 0, "split shared");
    CHECK((first != SHMEM_TEAM_INVALID) == (my_index == 0), "first of the node");
    if (first != SHMEM_TEAM_INVALID)
        CHECK(shmem_team_translate_pe(first, 0, SHMEM_TEAM_WORLD) == me, "first's world PE");
    shmem_team_destroy(first);
    static long ps[SHMEM_BARRIER_SYNC_SIZE]; /* SHMEM_SYNC_VALUE (0) as a static */
    shmem_sync(0, 0, n, ps);                  /* four arguments: the deprecated active-set form */
}

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    check_strided(me, n);
    check_3d(me, n);
    check_collectives(me, n);
    check_team_context_example(me, n);
    check_slots(me, n);
    check_shared(me, n);
    FINISH();
}
